// A flag's usage (evaluations per day by /flags/ and /decide/, $feature_flag_called events, last_called_at),
// PostHog's stale rule on the flag list (`?active=STALE`), and its history: the activity log field by field and a
// revert to an earlier version, itself in the log.
import t from 'tap';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const FF = '/api/projects/@current/feature_flags/';
const today = () => new Date().toISOString().slice(0, 10);
const DAY = 86_400_000;

const create = async (body: Record<string, unknown>) => {
  const res = await server.api.post(FF, body);
  if (res.status !== 201) throw new Error(res.text);
  return res.body as { id: number; key: string; version: number };
};
const publicClient = () => new Client(server.q.base, null);

t.test('evaluations and $feature_flag_called events are counted per day', async (t) => {
  const a = await create({ key: 'counted-a', filters: { groups: [{ rollout_percentage: 100 }] } });
  const b = await create({ key: 'counted-b', filters: { groups: [{ rollout_percentage: 0 }] } });
  const fresh = await server.api.get(`${FF}${a.id}/`);
  t.match(fresh.body, { last_called_at: null, status: 'active' });
  for (let i = 0; i < 5; i++) await publicClient().post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: `u${i}` });
  for (let i = 0; i < 2; i++) await publicClient().post('/decide/?v=3', { token: PROJECT_KEY, distinct_id: `u${i}` });
  const sent = await publicClient().post('/batch/', {
    api_key: PROJECT_KEY,
    batch: [
      { event: '$feature_flag_called', distinct_id: 'u1', properties: { $feature_flag: 'counted-b', $feature_flag_response: false } },
      { event: '$feature_flag_called', distinct_id: 'u2', properties: { $feature_flag: 'counted-b', $feature_flag_response: false } },
      { event: '$feature_flag_called', distinct_id: 'u2', properties: { $feature_flag: 'no-such-flag' } },
    ],
  });
  t.equal(sent.status, 200);
  const usageA = await server.api.get(`${FF}${a.id}/usage/?days=7`);
  t.equal(usageA.status, 200);
  t.equal(usageA.body.results.length, 7, 'every day of the range, oldest first');
  t.same(usageA.body.results.at(-1), { date: today(), evaluations: 7, called: 0 });
  t.same(usageA.body.total, { evaluations: 7, called: 0 });
  const usageB = await server.api.get(`${FF}${b.id}/usage/`);
  t.equal(usageB.body.results.length, 30, '30 days by default');
  t.same(usageB.body.total, { evaluations: 7, called: 2 }, 'an evaluation that answers false is an evaluation too');
  const listed = await server.api.get(`${FF}?search=counted-a`);
  t.match(listed.body.results[0], { key: 'counted-a', last_called_at: String, status: 'active' });
  t.ok(Date.now() - Date.parse(listed.body.results[0].last_called_at) < DAY);
  t.match(await server.api.get(`${FF}${a.id}/usage/?days=0`), { status: 400, body: { attr: 'days' } });
  t.equal((await server.api.get(`${FF}987654/usage/`)).status, 404);
});

t.test('PostHog\'s stale rule and ?active=STALE', async (t) => {
  const old = new Date(Date.now() - 40 * DAY).toISOString();
  const unused = await create({ key: 'old-unused', created_at: old, filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }], rollout_percentage: 30 }] } });
  const rolledOut = await create({ key: 'old-rolled-out', created_at: old, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  const variant = await create({
    key: 'old-variant', created_at: old,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'winner', rollout_percentage: 100 }] } },
  });
  await create({ key: 'young-rolled-out', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  // Evaluated now: the rolled-out flags are used, so they are stale (not inactive).
  await publicClient().post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'stale-check', flag_keys_to_evaluate: ['old-rolled-out', 'old-variant', 'young-rolled-out'] });
  t.match((await server.api.get(`${FF}${unused.id}/`)).body, { status: 'inactive', status_reason: /never been evaluated/ });
  t.match((await server.api.get(`${FF}${rolledOut.id}/`)).body, { status: 'stale', status_reason: 'This boolean flag will always evaluate to "true"' });
  t.match((await server.api.get(`${FF}${variant.id}/`)).body, { status: 'stale', status_reason: /variant "winner"/ });
  const stale = await server.api.get(`${FF}?active=STALE&limit=100`);
  t.same(stale.body.results.map((f: { key: string }) => f.key).sort(), ['old-rolled-out', 'old-unused', 'old-variant']);
  const onlyInactive = await server.api.get(`${FF}?status=inactive`);
  t.same(onlyInactive.body.results.map((f: { key: string }) => f.key), ['old-unused']);
});

t.test('the activity log field by field, and a revert to an earlier version', async (t) => {
  const flag = await create({ key: 'history', name: 'First', filters: { groups: [{ properties: [], rollout_percentage: 10 }] } });
  t.equal(flag.version, 1);
  await server.api.patch(`${FF}${flag.id}/`, { filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
  const v3 = await server.api.patch(`${FF}${flag.id}/`, { name: 'Second', active: false });
  t.equal(v3.body.version, 3);
  const log = await server.api.get(`${FF}${flag.id}/activity/`);
  t.match(log.body.results[0], {
    user: { email: String }, activity: 'updated',
    detail: { version: 3, changes: [{ type: 'FeatureFlag', action: 'changed', field: 'name', before: 'First', after: 'Second' }, { field: 'active', before: true, after: false }] },
  });
  t.match(log.body.results[1].detail, { version: 2, changes: [{ field: 'filters', before: { groups: [{ rollout_percentage: 10 }] }, after: { groups: [{ rollout_percentage: 50 }] } }] });
  t.match(log.body.results[2], { activity: 'created', detail: { version: 1 } });

  const reverted = await server.api.post(`${FF}${flag.id}/revert/`, { version: 1 });
  t.equal(reverted.status, 200);
  t.match(reverted.body, { version: 4, name: 'First', active: true, filters: { groups: [{ rollout_percentage: 10 }] } });
  const evaluated = await publicClient().post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'anyone' });
  t.match(evaluated.body.flags.history, { metadata: { version: 4 } }, 'every worker evaluates the reverted version');
  const after = await server.api.get(`${FF}${flag.id}/activity/`);
  t.match(after.body.results[0], {
    activity: 'updated',
    detail: { version: 4, trigger: { job_type: 'revert', payload: { version: 1 } } },
  });
  const fields = (after.body.results[0].detail.changes as { field: string }[]).map((c) => c.field).sort();
  t.same(fields, ['active', 'filters', 'name']);
  t.match(await server.api.post(`${FF}${flag.id}/revert/`, { version: 99 }), { status: 400, body: { attr: 'version' } });
  t.match(await server.api.post(`${FF}${flag.id}/revert/`, { version: 'one' }), { status: 400 });
});
