// Flag evaluation against what ingestion stored: person properties, group properties, experience continuity
// across identify, static cohorts via stored persons, and the management helpers.
import t from 'tap';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t);

async function capture(events: Record<string, unknown>[]) {
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) });
  if (res.status !== 200) throw new Error(await res.text());
}
/** evaluation_reasons waits until every acknowledged event is applied: a read-your-writes barrier. */
async function applied() {
  await server.api.get(`${FF}evaluation_reasons/?distinct_id=barrier`);
}
async function flags(body: Record<string, unknown>) {
  const res = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, ...body });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.flags;
}

t.test('stored person properties, overlaid by request person_properties', async (t) => {
  await server.api.post(FF, { key: 'pro-users', filters: { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }] }] } });
  await capture([{ event: '$set', distinct_id: 'stored-1', properties: { $set: { plan: 'pro', email: 'p@x.io' } } }]);
  await applied();
  t.equal((await flags({ distinct_id: 'stored-1' }))['pro-users'].enabled, true, 'stored property matches');
  t.equal((await flags({ distinct_id: 'stored-1', person_properties: { plan: 'free' } }))['pro-users'].enabled, false, 'request overrides stored');
  t.equal((await flags({ distinct_id: 'unknown-person' }))['pro-users'].enabled, false);
});

t.test('a captured person reaches /flags/ with no API read forcing the apply', async (t) => {
  // /flags/ never waits for the apply loop; a lone event must still be applied on its own (the apply loop
  // delays partial chunks briefly, and once forgot to apply them at all when nobody was waiting).
  await server.api.post(FF, { key: 'beta-testers', filters: { groups: [{ properties: [{ key: 'beta', type: 'person', operator: 'exact', value: ['yes'] }] }] } });
  await capture([{ event: '$set', distinct_id: 'lone-1', properties: { $set: { beta: 'yes' } } }]);
  let enabled = false;
  const deadline = Date.now() + 10_000;
  while (!enabled && Date.now() < deadline) {
    enabled = (await flags({ distinct_id: 'lone-1' }))['beta-testers'].enabled;
    if (!enabled) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(enabled, true, 'the stored property is seen by /flags/ within 10 s');
});

t.test('a person changed after /flags/ read it is answered anew on every worker (no stale cache)', async (t) => {
  // Workers keep the persons they evaluated; every write of a person (API, ingestion, merge) must be seen at once.
  await server.api.post(FF, { key: 'gold-tier', filters: { groups: [{ properties: [{ key: 'tier', type: 'person', operator: 'exact', value: ['gold'] }] }] } });
  await capture([{ event: '$set', distinct_id: 'cached-1', properties: { $set: { tier: 'silver' } } }]);
  await applied();
  const everywhere = async (distinctId: string) => {
    const answers = new Set<boolean>();
    // Requests are spread over both workers; enough of them reach each.
    for (let i = 0; i < 8; i++) answers.add((await flags({ distinct_id: distinctId }))['gold-tier'].enabled);
    return [...answers];
  };
  t.same(await everywhere('cached-1'), [false], 'silver: off everywhere (and now cached everywhere)');

  const person = (await server.api.get('/api/projects/@current/persons/?distinct_id=cached-1')).body.results[0];
  t.equal((await server.api.patch(`/api/projects/@current/persons/${person.id}/`, { properties: { tier: 'gold' } })).status, 200);
  t.same(await everywhere('cached-1'), [true], 'an API update is answered at once by every worker');

  await capture([{ event: '$set', distinct_id: 'cached-1', properties: { $set: { tier: 'bronze' } } }]);
  await applied();
  t.same(await everywhere('cached-1'), [false], 'an ingested $set is answered once applied');

  // An anonymous id that was evaluated alone, then merged into an identified gold person.
  await capture([{ event: '$set', distinct_id: 'cached-anon', properties: { $set: { tier: 'none' } } }]);
  await capture([{ event: '$set', distinct_id: 'cached-user', properties: { $set: { tier: 'gold' } } }]);
  await applied();
  t.same(await everywhere('cached-anon'), [false]);
  await capture([{ event: '$identify', distinct_id: 'cached-user', properties: { $anon_distinct_id: 'cached-anon' } }]);
  await applied();
  t.same(await everywhere('cached-anon'), [true], 'after the merge the anonymous id answers for the merged person');
});

t.test('group flags use stored group properties and the group type mapping', async (t) => {
  await capture([
    { event: '$groupidentify', distinct_id: 'g-user', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { tier: 'enterprise' } } },
    { event: 'clicked', distinct_id: 'g-user', properties: { $groups: { company: 'acme' } } },
  ]);
  await applied();
  const created = await server.api.post(FF, {
    key: 'enterprise-companies',
    filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'tier', type: 'group', group_type_index: 0, operator: 'exact', value: 'enterprise' }], rollout_percentage: 100 }] },
  });
  t.equal(created.status, 201, created.text);
  t.equal((await flags({ distinct_id: 'anyone', groups: { company: 'acme' } }))['enterprise-companies'].enabled, true);
  t.equal((await flags({ distinct_id: 'anyone', groups: { company: 'other' } }))['enterprise-companies'].enabled, false);
  t.equal((await flags({ distinct_id: 'anyone', groups: { company: 'other' }, group_properties: { company: { tier: 'enterprise' } } }))['enterprise-companies'].enabled, true, 'request group_properties');
  t.equal((await flags({ distinct_id: 'anyone' }))['enterprise-companies'].reason.code, 'no_group_type');
  const defs = await server.api.get(`${FF}local_evaluation/`);
  t.same(defs.body.group_type_mapping, { 0: 'company' });
});

t.test('experience continuity keeps the anonymous variant after identify', async (t) => {
  const variants = Array.from({ length: 10 }, (_, i) => ({ key: `v${i}`, rollout_percentage: 10 }));
  await server.api.post(FF, { key: 'sticky', ensure_experience_continuity: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants } } });
  // Find an anonymous id whose variant differs from the identified id's own variant.
  let anon = '';
  let anonVariant = '';
  const identified = 'user-identified@x.io';
  const ownVariant = (await flags({ distinct_id: identified }))['sticky'].variant;
  for (let i = 0; i < 50 && !anon; i++) {
    const v = (await flags({ distinct_id: `anon-${i}` }))['sticky'].variant;
    if (v !== ownVariant) {
      anon = `anon-${i}`;
      anonVariant = v;
    }
  }
  t.ok(anon, 'found an anonymous id in another bucket');
  await capture([{ event: '$pageview', distinct_id: anon }]);
  await capture([{ event: '$identify', distinct_id: identified, properties: { $anon_distinct_id: anon } }]);
  await applied();
  const afterIdentify = await flags({ distinct_id: identified, $anon_distinct_id: anon });
  t.equal(afterIdentify['sticky'].variant, anonVariant, 'first call after identify keeps the anonymous variant');
  const later = await flags({ distinct_id: identified });
  t.equal(later['sticky'].variant, anonVariant, 'the hash key override is stored');
});

t.test('evaluation_reasons, my_flags, user_blast_radius', async (t) => {
  const reasons = await server.api.get(`${FF}evaluation_reasons/?distinct_id=stored-1`);
  t.equal(reasons.status, 200);
  t.match(reasons.body['pro-users'], { value: true, evaluation: { reason: 'condition_match', condition_index: 0 } });
  await server.api.post(FF, { key: 'switched-off', active: false });
  t.match((await server.api.get(`${FF}evaluation_reasons/?distinct_id=stored-1`)).body['switched-off'], { value: false, evaluation: { reason: 'disabled' } });
  const missing = await server.api.get(`${FF}evaluation_reasons/`);
  t.equal(missing.status, 400);
  t.equal(missing.body.detail, 'distinct_id is required');

  const mine = await server.api.get(`${FF}my_flags/`);
  t.equal(mine.status, 200);
  t.ok(mine.body.some((r: { feature_flag: { key: string }; value: unknown }) => r.feature_flag.key === 'pro-users' && r.value === false));

  await capture([
    { event: '$set', distinct_id: 'br-1', properties: { $set: { plan: 'pro' } } },
    { event: '$set', distinct_id: 'br-2', properties: { $set: { plan: 'free' } } },
  ]);
  const radius = await server.api.post(`${FF}user_blast_radius/`, { condition: { properties: [{ key: 'plan', type: 'person', value: 'pro', operator: 'exact' }], rollout_percentage: 50 } });
  t.equal(radius.status, 200);
  t.equal(radius.body.users_affected, 2, 'stored-1 and br-1 are pro');
  t.ok(radius.body.total_users >= 4);
  const groups = await server.api.post(`${FF}user_blast_radius/`, { condition: { properties: [] }, group_type_index: 0 });
  t.same(groups.body, { users_affected: 1, total_users: 1 });
  t.equal((await server.api.post(`${FF}user_blast_radius/`, {})).status, 400);
});
