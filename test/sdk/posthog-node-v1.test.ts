// Proof with a real legacy client: posthog-node 1.3.0 (the last 1.x, installed as the devDependency alias
// `posthog-node-v1`) polls `GET /api/feature_flag/?token=<project key>` with a personal key for its local
// evaluation: it keeps the active flags of `results`, answers `is_simple_flag` ones itself and asks `POST /decide/`
// (v1: a list of enabled keys) for the others.
//
// A known bug of every 1.x release: it reads `rolloutPercentage`, a field PostHog never sent (its list says
// `rollout_percentage`), so a simple flag is on for everyone whatever its rollout (posthog-node PR #57, fixed only
// in 2.x). Quill answers exactly what PostHog does, so this suite uses 100 % simple flags.
import { createRequire } from 'node:module';
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { PERSONAL_KEY, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

interface LegacyPostHog {
  isFeatureEnabled(key: string, distinctId: string, defaultResult?: boolean, groups?: Record<string, string>): Promise<boolean>;
  reloadFeatureFlags(): Promise<void>;
  shutdown(): void;
}
type LegacyPostHogClass = new (apiKey: string, options: Record<string, unknown>) => LegacyPostHog;
// CommonJS, and its type declarations claim the module name 'posthog-node': loaded with require, typed here.
const PostHogV1 = createRequire(import.meta.url)('posthog-node-v1') as LegacyPostHogClass;

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t);

t.test('the legacy flag list: PostHog\'s list shape on the project-less path, project picked by token', async (t) => {
  await server.api.post(FF, { key: 'legacy-list-a', filters: { groups: [{ properties: [], rollout_percentage: 40 }] } });
  const res = await server.api.get(`/api/feature_flag/?token=${PROJECT_KEY}`);
  t.equal(res.status, 200);
  t.match(res.body, { count: Number, next: null, previous: null, results: Array });
  t.match(res.body.results.find((f: { key: string }) => f.key === 'legacy-list-a'), {
    id: Number, key: 'legacy-list-a', active: true, deleted: false, is_simple_flag: true, rollout_percentage: 40,
    filters: { groups: [{ properties: [], rollout_percentage: 40 }] },
  });
  const same = await server.api.get(FF);
  t.same(res.body.results, same.body.results, 'the same list as the project path');
  t.same((await server.api.get('/api/feature_flag')).body.results, same.body.results, 'no token: the current project');

  const other = await server.api.post('/api/projects/', { name: 'Legacy elsewhere' });
  await server.api.post(`/api/projects/${other.body.id}/feature_flags/`, { key: 'legacy-elsewhere' });
  const elsewhere = await server.api.get(`/api/feature_flag/?token=${other.body.api_token}`);
  t.same(elsewhere.body.results.map((f: { key: string }) => f.key), ['legacy-elsewhere'], 'token picks the project');
  t.equal((await server.api.withKey(null).get(`/api/feature_flag/?token=${PROJECT_KEY}`)).status, 401, 'personal key required');
  t.equal((await server.api.get('/api/feature_flag/?token=phc_unknown')).status, 401, 'unknown project token');
  const org = await server.api.post('/api/organizations/', { name: 'Legacy org', email: 'legacy@example.com' });
  t.equal((await server.api.withKey(org.body.personal_api_key).get(`/api/feature_flag/?token=${PROJECT_KEY}`)).status, 403, 'key of another organization');
});

t.test('posthog-node 1.3.0 evaluates flags from the legacy list and /decide/', async (t) => {
  await server.api.post(FF, { key: 'v1-everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  await server.api.post(FF, { key: 'v1-off', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  await server.api.post(FF, {
    key: 'v1-acme', filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.io' }], rollout_percentage: 100 }] },
  });
  // The person flag needs a stored person: /decide/ evaluates against it (1.x sends no person properties).
  t.equal((await sendBatch(server.q.base, [event('v1-acme-user', '$identify', { $set: { email: 'ann@acme.io' } })])).status, 200);
  t.equal((await server.api.get('/api/projects/@current/persons/?distinct_id=v1-acme-user')).body.results.length, 1);

  const sdk = new PostHogV1(PROJECT_KEY, { host: server.q.base, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 600_000, flushAt: 1 });
  t.teardown(() => sdk.shutdown());
  await sdk.reloadFeatureFlags();
  t.equal(await sdk.isFeatureEnabled('v1-everyone', 'v1-someone'), true, 'a simple flag, evaluated by the SDK');
  t.equal(await sdk.isFeatureEnabled('v1-off', 'v1-someone'), false, 'an inactive flag is dropped from the list: the default');
  t.equal(await sdk.isFeatureEnabled('v1-off', 'v1-someone', true), true, '(the default the caller gave)');
  t.equal(await sdk.isFeatureEnabled('v1-acme', 'v1-acme-user'), true, 'a property flag, asked of /decide/: the stored person matches');
  t.equal(await sdk.isFeatureEnabled('v1-acme', 'v1-someone'), false, 'and another person does not');
  t.equal(await sdk.isFeatureEnabled('v1-no-such-flag', 'v1-someone'), false, 'an unknown flag: the default');
});
