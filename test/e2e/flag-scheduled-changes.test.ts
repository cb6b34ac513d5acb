// Scheduled flag changes (PostHog's /scheduled_changes/ resource): applied by the node when due, visible in the
// flag's activity log, editable and cancellable until they run, recurring ones moved to their next time, and
// exactly once across restarts: a change due while the node was down is applied at the next start, and logged.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { Client, logLines, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const SC = '/api/projects/@current/scheduled_changes/';

let q: QuillProcess;
let api: Client;
t.before(async () => {
  q = await startQuill();
  api = new Client(q.base);
});
t.teardown(async () => {
  await q.stop();
  removeDir(q.dataDir);
});

async function flag(key: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(FF, { key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] }, ...extra });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.id as number;
}

const enabled = async (key: string): Promise<boolean> => {
  const res = await new Client(q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'someone' });
  return res.body.flags[key]?.enabled === true;
};

t.test('a change is applied when due and shows in the flag\'s activity', async (t) => {
  const id = await flag('launch', { active: false });
  const at = new Date(Date.now() + 1500).toISOString();
  const created = await api.post(SC, { record_id: String(id), model_name: 'FeatureFlag', payload: { operation: 'update_status', value: true }, scheduled_at: at });
  t.equal(created.status, 201);
  t.match(created.body, { id: Number, record_id: String(id), model_name: 'FeatureFlag', scheduled_at: at, executed_at: null, failure_reason: null, created_by: { email: String }, is_recurring: false });
  t.notOk(await enabled('launch'), 'off before its time');
  await eventually('the scheduled change to switch the flag on', () => enabled('launch'));
  const after = await api.get(`${SC}${created.body.id}/`);
  t.match(after.body, { executed_at: String, failure_reason: null });
  t.ok(Date.parse(after.body.executed_at) >= Date.parse(at), 'not before its time');
  const activity = await api.get(`${FF}${id}/activity/`);
  t.match(activity.body.results[0], {
    activity: 'updated', scope: 'FeatureFlag', item_id: String(id),
    detail: { changes: [{ field: 'active', before: false, after: true, action: 'changed' }], trigger: { job_type: 'scheduled_change', job_id: String(created.body.id), payload: { operation: 'update_status', value: true } } },
  });
  const listed = await api.get(`${SC}?model_name=FeatureFlag&record_id=${id}`);
  t.equal(listed.body.results.length, 1);
  t.match(await api.patch(`${SC}${created.body.id}/`, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }), { status: 400, body: { detail: /already executed/ } }, 'a change that ran cannot be edited');
  t.equal((await api.delete(`${SC}${created.body.id}/`)).status, 400, 'nor cancelled');
});

t.test('add_release_condition and update_variants', async (t) => {
  const id = await flag('conditions', { filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } } });
  const soon = () => new Date(Date.now() + 300).toISOString();
  const add = await api.post(SC, { record_id: id, model_name: 'FeatureFlag', scheduled_at: soon(), payload: { operation: 'add_release_condition', value: { groups: [{ properties: [], rollout_percentage: 10 }] } } });
  t.equal(add.status, 201);
  await eventually('the condition to be added', async () => (await api.get(`${FF}${id}/`)).body.filters.groups.length === 2);
  const variants = await api.post(SC, { record_id: id, model_name: 'FeatureFlag', scheduled_at: soon(), payload: { operation: 'update_variants', value: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }], payloads: { b: '"B"' } } } });
  t.equal(variants.status, 201);
  const updated = await eventually('the variants to change', async () => {
    const f = (await api.get(`${FF}${id}/`)).body;
    return f.filters.multivariate.variants.length === 2 ? f : null;
  });
  t.same(updated.filters.payloads, { b: '"B"' });
  t.equal(updated.filters.groups.length, 2, 'the first change is not applied again');
});

t.test('editing and cancelling before the change runs; what is refused', async (t) => {
  const id = await flag('later');
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const created = await api.post(SC, { record_id: String(id), model_name: 'FeatureFlag', payload: { operation: 'update_status', value: false }, scheduled_at: later });
  const moved = new Date(Date.now() + 7_200_000).toISOString();
  const edited = await api.patch(`${SC}${created.body.id}/`, { scheduled_at: moved, payload: { operation: 'update_status', value: true } });
  t.match(edited, { status: 200, body: { scheduled_at: moved, payload: { value: true } } });
  t.match(await api.patch(`${SC}${created.body.id}/`, { record_id: '999' }), { status: 400, body: { attr: 'record_id' } });
  t.equal((await api.delete(`${SC}${created.body.id}/`)).status, 204);
  t.equal((await api.get(`${SC}${created.body.id}/`)).status, 404);

  const base = { record_id: String(id), model_name: 'FeatureFlag', scheduled_at: later };
  t.match(await api.post(SC, { ...base, payload: { operation: 'explode', value: 1 } }), { status: 400, body: { attr: 'payload' } });
  t.match(await api.post(SC, { ...base, payload: { operation: 'update_status', value: 'yes' } }), { status: 400, body: { attr: 'payload' } });
  t.match(await api.post(SC, { ...base, record_id: '424242', payload: { operation: 'update_status', value: true } }), { status: 400, body: { attr: 'record_id' } });
  t.match(await api.post(SC, { ...base, model_name: 'Survey', payload: { operation: 'update_status', value: true } }), { status: 400, body: { attr: 'model_name' } });
  t.match(await api.post(SC, { ...base, scheduled_at: 'tomorrow', payload: { operation: 'update_status', value: true } }), { status: 400, body: { attr: 'scheduled_at' } });
  t.match(await api.post(SC, { ...base, is_recurring: true, recurrence_interval: 'daily', payload: { operation: 'add_release_condition', value: { groups: [] } } }), { status: 400, body: { attr: 'payload' } });
  t.match(await api.post(SC, { ...base, is_recurring: true, payload: { operation: 'update_status', value: true } }), { status: 400, body: { attr: 'recurrence_interval' } });
  t.match(await api.post(SC, { ...base, is_recurring: true, cron_expression: '0 9 * * 1-5', payload: { operation: 'update_status', value: true } }), { status: 400, body: { attr: 'cron_expression' } });
});

t.test('a recurring change moves to its next time', async (t) => {
  const id = await flag('nightly');
  const at = new Date(Date.now() + 500);
  const created = await api.post(SC, { record_id: String(id), model_name: 'FeatureFlag', payload: { operation: 'update_status', value: false }, scheduled_at: at.toISOString(), is_recurring: true, recurrence_interval: 'daily' });
  t.equal(created.status, 201);
  const ran = await eventually('the recurring change to run once', async () => {
    const c = (await api.get(`${SC}${created.body.id}/`)).body;
    return c.last_executed_at ? c : null;
  });
  t.equal(ran.executed_at, null, 'still scheduled');
  t.equal(Date.parse(ran.scheduled_at), at.getTime() + 86_400_000, 'the same time tomorrow');
  t.equal((await api.get(`${FF}${id}/`)).body.active, false);
});

t.test('exactly once across restarts: a change due while the node was down is applied at start', async (t) => {
  const id = await flag('while-down', { filters: { groups: [{ properties: [], rollout_percentage: 20 }] } });
  const version = (await api.get(`${FF}${id}/`)).body.version as number;
  const at = Date.now() + 2_000;
  const created = await api.post(SC, { record_id: String(id), model_name: 'FeatureFlag', scheduled_at: new Date(at).toISOString(), payload: { operation: 'add_release_condition', value: { groups: [{ properties: [], rollout_percentage: 100 }] } } });
  t.equal(created.status, 201);
  t.equal(await q.stop(), 0);
  // The node is down while the change comes due.
  await eventually('the change to come due', () => Date.now() > at + 500);
  q = await startQuill({ dataDir: q.dataDir });
  api = new Client(q.base);
  const applied = await eventually('the overdue change to be applied at start', async () => {
    const c = (await api.get(`${SC}${created.body.id}/`)).body;
    return c.executed_at ? c : null;
  });
  t.ok(applied.executed_at);
  const late = await eventually('the late application to be logged', () => logLines(q.output()).find((l) => l.event === 'scheduled_change_late'));
  t.match(late, { scheduled_change_id: created.body.id, late_ms: Number });
  const after = (await api.get(`${FF}${id}/`)).body;
  t.equal(after.version, version + 1, 'one new version');
  t.equal(after.filters.groups.length, 2, 'the condition added once');
  // And once more: a restart after the change ran does not run it again.
  t.equal(await q.stop(), 0);
  q = await startQuill({ dataDir: q.dataDir });
  api = new Client(q.base);
  await eventually('flags to answer', async () => (await api.get(`${FF}${id}/`)).status === 200);
  const again = (await api.get(`${FF}${id}/`)).body;
  t.equal(again.version, version + 1);
  t.equal(again.filters.groups.length, 2);
  t.notOk(logLines(q.output()).some((l) => String(l.event).startsWith('scheduled_change_')), 'nothing applied at the second start');
});
