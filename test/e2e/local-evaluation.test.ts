// Local-evaluation definitions: auth, shapes, strong ETag / 304, and a differential test in which the real
// posthog-node SDK evaluates locally from Quill's own /flags/definitions and must agree with Quill's /flags/
// wherever its local result is conclusive.
import t from 'tap';
import { PostHog } from 'posthog-node';
import { Client, PERSONAL_KEY, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t);

t.test('definitions endpoints: auth, body, ETag and 304', async (t) => {
  await server.api.post(FF, { key: 'def-a', filters: { groups: [{ properties: [], rollout_percentage: 40 }] } });
  await server.api.post(FF, { key: 'def-inactive', active: false });
  const deleted = await server.api.post(FF, { key: 'def-deleted' });
  await server.api.patch(`${FF}${deleted.body.id}/`, { deleted: true });

  const path = `/flags/definitions?token=${PROJECT_KEY}&send_cohorts`;
  const first = await server.api.get(path);
  t.equal(first.status, 200);
  const etag = first.headers.get('etag');
  t.match(etag, /^"[0-9a-f]+"$/, 'strong ETag');
  const keys = first.body.flags.map((f: { key: string }) => f.key);
  t.ok(keys.includes('def-a') && keys.includes('def-inactive'), 'active and inactive flags');
  t.notOk(keys.includes('def-deleted'), 'deleted flags are excluded');
  t.match(first.body.flags.find((f: { key: string }) => f.key === 'def-a'), { id: Number, team_id: Number, key: 'def-a', active: true, deleted: false, ensure_experience_continuity: false, version: 1, filters: { groups: [{ rollout_percentage: 40 }] } });
  t.same(first.body.group_type_mapping, {});
  t.same(first.body.cohorts, {});

  const cached = await server.api.get(path, { 'if-none-match': etag! });
  t.equal(cached.status, 304);
  t.equal(cached.text, '');
  t.equal(cached.headers.get('etag'), etag);

  await server.api.post(FF, { key: 'def-b' });
  const changed = await server.api.get(path, { 'if-none-match': etag! });
  t.equal(changed.status, 200, 'a flag change invalidates the ETag');
  t.not(changed.headers.get('etag'), etag);

  const legacy = await server.api.get(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}&send_cohorts`);
  t.equal(legacy.status, 200);
  t.same(legacy.body.flags.map((f: { key: string }) => f.key).sort(), changed.body.flags.map((f: { key: string }) => f.key).sort());
  const project = await server.api.get(`${FF}local_evaluation/`);
  t.equal(project.status, 200);
  t.equal(project.headers.get('etag') !== null, true);

  t.equal((await server.api.withKey(null).get(path)).status, 401, 'no personal key');
  t.equal((await server.api.withKey('phx_bad').get(path)).status, 401, 'bad personal key');
  t.equal((await server.api.get('/flags/definitions?token=phc_unknown')).status, 401, 'unknown project token');
  t.equal((await server.api.get('/flags/definitions')).status, 401, 'no token');
  const other = await server.api.post('/api/organizations/', { name: 'Elsewhere' });
  t.equal((await server.api.withKey(other.body.personal_api_key).get(path)).status, 403, 'key of another organization');
});

// ---- differential test ----

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/**
 * Random flags over person and group properties, rollouts, variants, overrides, payloads and dependencies. The
 * generator avoids documented SDK/server differences (see flags.md §3.3: non-numeric gt/lt, exact on integers,
 * lists with text operators), where the SDK answers conclusively but unlike PostHog's server.
 */
function generateFlags(r: () => number) {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const person = (): Record<string, unknown> => {
    switch (pick(['email', 'plan', 'age', 'version', 'signup'])) {
      case 'email': {
        const operator = pick(['icontains', 'not_icontains', 'exact', 'is_not', 'regex', 'not_regex', 'is_set']);
        return { key: 'email', type: 'person', operator, value: operator === 'exact' || operator === 'is_not' ? pick(['a@acme.com', ['a@acme.com', 'c@other.org']]) : pick(['acme', '@other', '^[a-c]@']) };
      }
      case 'plan':
        return { key: 'plan', type: 'person', operator: pick(['exact', 'is_not']), value: pick(['pro', ['pro', 'enterprise'], 'true', ['free']]) };
      case 'age':
        return { key: 'age', type: 'person', operator: pick(['gt', 'gte', 'lt', 'lte']), value: pick(['18', '30', '17.5']) };
      case 'version':
        return { key: 'version', type: 'person', operator: pick(['semver_gt', 'semver_lt', 'semver_eq', 'semver_tilde', 'semver_caret']), value: pick(['1.2.3', '2.0.0', '0.9.0']) };
      default:
        return { key: 'signup', type: 'person', operator: pick(['is_date_before', 'is_date_after']), value: pick(['2024-06-01', '-30d', '2023-01-01T00:00:00Z']) };
    }
  };
  const flags: { key: string; filters: Record<string, unknown> }[] = [];
  for (let i = 0; i < 60; i++) {
    const isGroup = r() < 0.15;
    const multivariate = r() < 0.4;
    const property = (): Record<string, unknown> =>
      isGroup ? { key: 'size', type: 'group', group_type_index: 0, operator: pick(['gt', 'lt']), value: pick(['10', '50']) }
        : i > 5 && r() < 0.1 ? { key: `diff-${Math.floor(r() * 5)}`, type: 'flag', operator: 'flag_evaluates_to', value: pick([true, false]) }
          : person();
    const groups = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
      properties: Array.from({ length: Math.floor(r() * 3) }, property),
      rollout_percentage: pick([100, 50, 0, 25.5, null]),
      ...(multivariate && r() < 0.25 ? { variant: pick(['a', 'b']) } : {}),
    }));
    flags.push({
      key: `diff-${i}`,
      filters: {
        groups,
        ...(isGroup ? { aggregation_group_type_index: 0 } : {}),
        ...(multivariate ? { multivariate: { variants: [{ key: 'a', rollout_percentage: 30 }, { key: 'b', rollout_percentage: 70 }] }, payloads: { a: '{"x":1}', b: '"str"' } } : { payloads: { true: '{"on":true}' } }),
      },
    });
  }
  return flags;
}

function generatePerson(r: () => number, i: number) {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const props: Record<string, unknown> = {};
  for (const [key, values] of Object.entries({
    email: ['a@acme.com', 'B@Acme.COM', 'c@other.org'],
    plan: ['pro', 'free', 'Enterprise', 'true'],
    age: [5, 17.5, 30, 42, '30'],
    version: ['1.2.3', '2.0.0', '1.10.1', '0.9.4'],
    signup: ['2024-01-15', '2023-06-01T10:00:00Z', '2030-12-31'],
  })) if (r() < 0.8) props[key] = pick(values as unknown[]);
  const withGroup = r() < 0.5;
  return {
    distinctId: `diff-person-${i}`,
    personProperties: props,
    groups: withGroup ? { company: `co-${i}` } : {},
    groupProperties: withGroup ? { company: { size: pick([5, 20, 100]) } } : {},
  };
}

t.test('posthog-node local evaluation agrees with /flags/', async (t) => {
  // Group type "company" must exist (index 0) before group flags evaluate: ingest one group event.
  await fetch(`${server.q.base}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: '$groupidentify', distinct_id: 'setup', properties: { $group_type: 'company', $group_key: 'co-setup' } }) });
  await server.api.get(`${FF}evaluation_reasons/?distinct_id=barrier`);
  const r = rng(20261122);
  const generated = generateFlags(r);
  for (const flag of generated) {
    const res = await server.api.post(FF, flag);
    if (res.status !== 201) t.fail(`create ${flag.key}: ${res.text}`);
  }
  const sdk = new PostHog(PROJECT_KEY, { host: server.q.base, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 600_000, disableGeoip: true, flushAt: 1 });
  t.teardown(() => sdk.shutdown());
  t.equal(await sdk.waitForLocalEvaluationReady(10_000), true, 'the SDK loaded definitions from Quill');

  let conclusiveFlags = 0;
  const mismatches: string[] = [];
  for (let i = 0; i < 150; i++) {
    const p = generatePerson(r, i);
    const local = await sdk.getAllFlagsAndPayloads(p.distinctId, { personProperties: p.personProperties, groups: p.groups, groupProperties: p.groupProperties, onlyEvaluateLocally: true });
    const remote = await new Client(server.q.base, null).post('/flags/?v=2', {
      token: PROJECT_KEY, distinct_id: p.distinctId, person_properties: p.personProperties, groups: p.groups, group_properties: p.groupProperties,
    });
    // Every generated flag is active, so /flags/ answers each of them.
    const unanswered = remote.status === 200 ? generated.filter((f) => !(f.key in remote.body.flags)).length : generated.length;
    if (unanswered > 0) mismatches.push(`${p.distinctId}: /flags/ answered ${remote.status} without ${unanswered} of the ${generated.length} flags`);
    for (const [key, value] of Object.entries(local.featureFlags ?? {})) {
      if (value === undefined) continue;
      conclusiveFlags++;
      const detail = remote.body.flags?.[key];
      if (!detail) continue; // reported above
      const serverValue = detail.enabled ? (detail.variant ?? true) : false;
      if (serverValue !== value) mismatches.push(`${p.distinctId} ${key}: sdk=${JSON.stringify(value)} quill=${JSON.stringify(serverValue)}`);
      const localPayload = local.featureFlagPayloads?.[key];
      const serverPayload = detail.enabled && detail.metadata.payload !== null ? JSON.parse(detail.metadata.payload) : undefined;
      if (JSON.stringify(localPayload) !== JSON.stringify(serverPayload)) mismatches.push(`${p.distinctId} ${key} payload: sdk=${JSON.stringify(localPayload)} quill=${JSON.stringify(serverPayload)}`);
    }
  }
  t.ok(conclusiveFlags > 3000, `the SDK resolved ${conclusiveFlags} flag evaluations locally`);
  t.same(mismatches, [], 'no disagreement where the SDK is conclusive');
});
