// GET /_stats: organization owners and the operator key only; an owner sees the node-wide
// counters and their own organization's projects, never another organization's.
import t from 'tap';
import { Client, quillForFile } from '../helpers/quill.js';

const OPERATOR_KEY = 'quill-operator-secret-0123456789';
const server = quillForFile(t, { env: { QUILL_OPERATOR_KEY: OPERATOR_KEY } });

t.test('who may read /_stats', async (t) => {
  const api = server.api;
  const ownProject = (await api.get('/api/projects/@current/')).body;
  const owner = await api.get('/_stats');
  t.equal(owner.status, 200, 'the first organization\'s owner');
  t.ok(Array.isArray(owner.body.shards) && owner.body.shards.length > 0, 'node-wide shard counters');
  t.same(owner.body.event_loop.map((w: { worker: number }) => w.worker).sort(), Array.from({ length: owner.body.workers }, (_, i) => i), 'an event-loop delay per worker thread');
  t.ok(owner.body.event_loop.every((w: { p50_ms: number; p99_ms: number; max_ms: number }) => w.p50_ms > 0 && w.p50_ms <= w.p99_ms && w.p99_ms <= w.max_ms), 'sampled, in milliseconds, percentiles in order');
  t.match(owner.body.organization, { projects: [ownProject.id] });
  t.notOk('organizations' in owner.body, 'no list of every organization');

  const member = await api.post('/api/organizations/@current/members/', { email: 'member@example.com', level: 1 });
  const admin = await api.post('/api/organizations/@current/members/', { email: 'admin2@example.com', level: 8 });
  for (const [who, key] of [['member', member.body.personal_api_key], ['admin', admin.body.personal_api_key]] as const) {
    const res = await api.withKey(key).get('/_stats');
    t.equal(res.status, 403, who);
    t.same(res.body, { type: 'authentication_error', code: 'permission_denied', detail: 'Only organization owners (or the operator key) can read /_stats.', attr: null });
  }

  const other = await api.post('/api/organizations/', { name: 'Tenant B', email: 'owner-b@example.com' });
  t.equal(other.status, 201);
  const tenant = await new Client(server.q.base, other.body.personal_api_key).get('/_stats');
  t.equal(tenant.status, 200, 'another organization\'s owner');
  t.same(tenant.body.organization.projects, [other.body.project.id], 'only their own projects');
  t.notOk(tenant.text.includes('Default organization'), 'nothing of the first organization');

  const scoped = await api.post('/api/personal_api_keys/', { label: 'flags only', scopes: ['feature_flag:read'] });
  const noScope = await api.withKey(scoped.body.value).get('/_stats');
  t.same(noScope.body, { type: 'authentication_error', code: 'permission_denied', detail: "API key missing required scope 'organization:read'", attr: null });
  t.equal((await api.withKey(null).get('/_stats')).status, 401);
});

t.test('the operator key reads every organization, and nothing but /_stats', async (t) => {
  const operator = server.api.withKey(OPERATOR_KEY);
  const res = await operator.get('/_stats');
  t.equal(res.status, 200);
  t.ok(Array.isArray(res.body.shards));
  t.same(res.body.organizations.map((o: { name: string }) => o.name).sort(), ['Default organization', 'Tenant B']);
  for (const path of ['/api/users/@me/', '/api/projects/@current/feature_flags/', '/api/organizations/@current/members/']) {
    const denied = await operator.get(path);
    t.equal(denied.status, 401, path);
    t.equal(denied.body.code, 'invalid_personal_api_key');
  }
});
