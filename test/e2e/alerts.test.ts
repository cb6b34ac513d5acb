// Insight alerts over HTTP (PostHog's `alerts` resource): CRUD and validation; an alert on a daily trend fires when
// its value leaves the bounds and tells a webhook (generic and Slack bodies) and its subscribed user by e-mail
// (through an SMTP server started here), resolves when the value comes back, is told once per change; is checked
// once per interval across a restart; records an error when its insight is gone; snoozes; retries a failing
// webhook a bounded number of times with every attempt visible.
import t, { type Test } from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { eventually } from '../helpers/eventually.js';
import { Client, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver, type WebhookReceiver } from '../helpers/receivers.js';

const A = '/api/projects/@current/alerts';
let quill: QuillProcess;
let api: Client;
let hooks: WebhookReceiver;
let smtp: SmtpReceiver;
let env: Record<string, string>;
let me: { id: number; email: string };
let projectId: number;

const DAY = 86_400_000;
/** Midday yesterday (UTC, the project's time zone): the last complete interval of a daily trend. */
const yesterday = () => new Date(Math.floor(Date.now() / DAY) * DAY - DAY / 2).toISOString();
const dailyPageviews = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', interval: 'day', dateRange: { date_from: '-7d' }, series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }] } };

async function pageviews(n: number, at: string): Promise<void> {
  const res = await sendBatch(quill.base, Array.from({ length: n }, (_, i) => event(`visitor-${i}`, '$pageview', {}, { timestamp: at })));
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
}

async function insight(name: string, query: object = dailyPageviews): Promise<number> {
  const res = await api.post('/api/projects/@current/insights/', { name, query });
  if (res.status !== 201) throw new Error(`insight ${res.status} ${res.text}`);
  return res.body.id;
}

/** Asserts a status, showing the body only when it is not the one expected. */
function status(t: Test, res: { status: number; text: string }, expected: number, what: string): void {
  t.equal(res.status, expected, res.status === expected ? what : `${what}: ${res.text}`);
}

/** The alert once `done` holds for it. */
const alertWhen = (id: string, what: string, done: (a: any) => boolean) => eventually(what, async () => {
  const a = (await api.get(`${A}/${id}/`)).body;
  return done(a) ? a : null;
}, { timeoutMs: 20_000, intervalMs: 50 });

const start = async () => {
  quill = await startQuill({ dataDir: quill?.dataDir, env });
  api = new Client(quill.base);
};

t.before(async () => {
  hooks = await startWebhookReceiver();
  smtp = await startSmtpReceiver();
  env = {
    QUILL_ALERTS_TICK_MS: '100', QUILL_DELIVERY_RETRY_S: '0.2', QUILL_PUBLIC_URL: 'http://quill.test/',
    QUILL_SMTP_URL: `smtp://quill:secret@127.0.0.1:${smtp.port}`, QUILL_SMTP_FROM: 'Quill Alerts <alerts@quill.test>',
  };
  await start();
  me = (await api.get('/api/users/@me/')).body;
  projectId = (await api.get('/api/projects/@current/')).body.id;
});

t.teardown(async () => {
  await quill?.stop();
  if (quill) removeDir(quill.dataDir);
  await hooks?.close();
  await smtp?.close();
});

t.test('create, list, retrieve, update, delete; validation; scopes', async (t) => {
  const watched = await insight('Pageviews');
  const body = {
    insight: watched, name: 'Traffic', subscribed_users: [me.id], enabled: false, calculation_interval: 'hourly',
    threshold: { configuration: { type: 'absolute', bounds: { lower: 1, upper: null } } }, condition: { type: 'absolute_value' },
    config: { type: 'TrendsAlertConfig', series_index: 0 },
  };
  const made = await api.post(`${A}/`, body);
  status(t, made, 201, 'created');
  t.match(made.body, {
    id: /^[0-9a-f-]{36}$/, name: 'Traffic', insight: { id: watched, name: 'Pageviews', short_id: String }, subscribed_users: [{ id: me.id, email: me.email }],
    threshold: { configuration: { type: 'absolute', bounds: { lower: 1, upper: null } } }, condition: { type: 'absolute_value' },
    config: { type: 'TrendsAlertConfig', series_index: 0 }, calculation_interval: 'hourly', enabled: false, state: 'Not firing',
    next_check_at: null, last_checked_at: null, last_notified_at: null, snoozed_until: null, checks: [], created_by: { email: me.email }, created_at: String,
  });
  const id = made.body.id as string;
  t.match((await api.get(`${A}/`)).body, { count: 1, results: [{ id }] });
  t.equal((await api.get(`${A}/?insight=${watched}`)).body.count, 1);
  t.equal((await api.get(`${A}/?insight=${watched + 1000}`)).body.count, 0, 'filtered by insight');
  t.match((await api.get(`${A}/${id}/`)).body, { id, name: 'Traffic' });
  const renamed = await api.patch(`${A}/${id}/`, { name: 'Traffic floor', subscribed_users: [] });
  t.match(renamed.body, { name: 'Traffic floor', enabled: false, next_check_at: null });
  t.same(renamed.body.subscribed_users, []);

  const funnel = await insight('A funnel', { kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: 'a' }, { kind: 'EventsNode', event: 'b' }] } });
  const refused: [string, object, string][] = [
    ['no insight', { ...body, insight: undefined }, 'insight'],
    ['an unknown insight', { ...body, insight: 999_999 }, 'insight'],
    ['a funnel', { ...body, insight: funnel }, 'insight'],
    ['a percentage for an absolute value', { ...body, threshold: { configuration: { type: 'percentage', bounds: { lower: 0.1 } } } }, 'threshold'],
    ['a series the insight has not', { ...body, config: { type: 'TrendsAlertConfig', series_index: 3 } }, 'config'],
    ['the ongoing interval without an upper bound', { ...body, config: { type: 'TrendsAlertConfig', series_index: 0, check_ongoing_interval: true } }, 'config'],
    ['an unknown condition', { ...body, condition: { type: 'sideways' } }, 'condition__type'],
    ['an unknown interval', { ...body, calculation_interval: 'yearly' }, 'calculation_interval'],
    ['an unknown user', { ...body, subscribed_users: [424_242] }, 'subscribed_users'],
    ['no subscribed_users', { ...body, subscribed_users: undefined }, 'subscribed_users'],
    ['a webhook that is not http', { ...body, webhook_url: 'ftp://example.com/x' }, 'webhook_url'],
  ];
  for (const [what, b, attr] of refused) {
    const res = await api.post(`${A}/`, b);
    status(t, res, 400, what);
    t.match(res.body, { type: 'validation_error', attr, detail: String }, what);
  }
  t.match((await api.patch(`${A}/${id}/`, { snoozed_until: 'yesterday' })).body, { type: 'validation_error', attr: 'snoozed_until' });
  t.equal((await api.get(`${A}/not-a-uuid/`)).status, 404);

  const key = async (scopes: string[]) => api.withKey((await api.post('/api/personal_api_keys/', { label: `alerts ${scopes}`, scopes })).body.value);
  const reader = await key(['alert:read']);
  t.equal((await reader.get(`${A}/`)).status, 200, 'alert:read lists');
  t.equal((await reader.patch(`${A}/${id}/`, { name: 'no' })).status, 403, 'but does not write');
  t.equal((await (await key(['insight:read'])).get(`${A}/`)).status, 403, 'insight:read is not alert:read');
  t.equal((await (await key(['alert:write'])).patch(`${A}/${id}/`, { name: 'yes' })).status, 200);

  t.equal((await api.delete(`${A}/${id}/`)).status, 204);
  t.equal((await api.get(`${A}/${id}/`)).status, 404);
});

t.test('fires, tells a webhook (generic and Slack) and by e-mail, resolves, fires again; told once per change', async (t) => {
  const watched = await insight('Daily pageviews');
  const bounds = { lower: 2, upper: 6 };
  const common = { insight: watched, calculation_interval: 'daily', threshold: { configuration: { type: 'absolute', bounds } }, condition: { type: 'absolute_value' }, config: { type: 'TrendsAlertConfig', series_index: 0 } };
  const generic = (await api.post(`${A}/`, { ...common, name: 'Traffic band', subscribed_users: [me.id], webhook_url: `${hooks.url}/generic` })).body;
  const slack = (await api.post(`${A}/`, { ...common, name: 'Traffic to Slack', subscribed_users: [], webhook_url: `${hooks.url}/slack`, webhook_format: 'slack' })).body;
  t.ok(generic.id && slack.id, 'created');

  // A new alert is checked at once: yesterday had no pageviews, under the lower bound.
  const fired = await alertWhen(generic.id, 'the first check and its deliveries', (a) => a.checks.length === 1 && a.checks[0].deliveries.length === 2);
  t.match(fired, { state: 'Firing', last_checked_at: String, last_notified_at: String, last_value: 0 });
  t.match(fired.checks[0], {
    state: 'Firing', calculated_value: 0, error: null, targets_notified: true, notification: 'firing',
    breaches: ['The insight value ($pageview) for previous day (0) is less than lower threshold (2)'],
  });
  t.same(fired.checks[0].deliveries.map((d: any) => [d.target, d.attempt, d.ok, d.error]).sort(), [[`${hooks.url}/generic`, 1, true, null], [me.email, 1, true, null]].sort());
  const due = Date.parse(fired.next_check_at);
  const tomorrow1am = Math.floor(Date.parse(fired.last_checked_at) / DAY) * DAY + DAY + 3_600_000;
  t.ok(due >= tomorrow1am && due < tomorrow1am + 3_600_000, `daily: checked next tomorrow around 1 am (${fired.next_check_at})`);

  const firstHook = hooks.received.find((r) => r.path === '/generic');
  t.match(firstHook?.body, {
    event: 'alert_firing', state: 'Firing', alert: { id: generic.id, name: 'Traffic band', condition: { type: 'absolute_value' } },
    insight: { id: watched, name: 'Daily pageviews', url: `http://quill.test/console/project/${projectId}/insights/saved/${watched}` },
    project: { id: projectId }, check: { id: fired.checks[0].id, calculated_value: 0, breaches: [/less than lower threshold/] }, text: /less than lower threshold \(2\)/,
  }, 'the generic body');
  const slackHook = await eventually('the Slack body', () => hooks.received.find((r) => r.path === '/slack'), { timeoutMs: 20_000 });
  t.match(slackHook.body, { text: /^\*Quill alert Traffic to Slack is firing\*\n.*less than lower threshold/, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: /is firing/ } }] }, "Slack's incoming-webhook body");
  t.notOk('alert' in slackHook.body, 'only text and blocks for Slack');

  const mail = await eventually('the e-mail', () => smtp.mails.find((m) => m.headers.subject?.includes('Traffic band')), { timeoutMs: 20_000 });
  t.same(mail.to, [me.email]);
  t.equal(mail.from, 'alerts@quill.test');
  t.match(mail.headers, { subject: 'Quill alert Traffic band is firing', from: 'Quill Alerts <alerts@quill.test>', to: me.email, 'content-type': /text\/plain; charset=utf-8/ });
  t.match(mail.text, /less than lower threshold \(2\)[\s\S]*http:\/\/quill\.test\/console\/project\/\d+\/insights\/saved\//);
  t.ok(smtp.logins.includes('quill'), 'signed in with AUTH PLAIN');

  // Back inside the bounds: resolved, and told so.
  await pageviews(4, yesterday());
  const resolved = await api.post(`${A}/${generic.id}/check/`, {});
  status(t, resolved, 200, 'checked now');
  t.match(resolved.body, { state: 'Not firing', last_value: 4 });
  t.match(resolved.body.checks[0], { state: 'Not firing', calculated_value: 4, breaches: [], notification: 'resolved', targets_notified: true });
  t.equal(resolved.body.checks.length, 2, 'the two checks, newest first');
  t.match(hooks.received.filter((r) => r.path === '/generic').at(-1)?.body, { event: 'alert_resolved', state: 'Not firing', check: { calculated_value: 4 } });
  await eventually('the resolved e-mail', () => smtp.mails.find((m) => m.headers.subject === 'Quill alert Traffic band is resolved'), { timeoutMs: 20_000 });

  // Over the upper bound: fires again.
  await pageviews(4, yesterday());
  const over = (await api.post(`${A}/${generic.id}/check/`, {})).body;
  t.match(over, { state: 'Firing', last_value: 8 });
  t.match(over.checks[0].breaches, ['The insight value ($pageview) for previous day (8) is more than upper threshold (6)']);
  const told = hooks.received.filter((r) => r.path === '/generic').length;
  t.equal(told, 3, 'firing, resolved, firing');

  // Still over: checked, but nobody is told again.
  const again = (await api.post(`${A}/${generic.id}/check/`, {})).body;
  t.match(again.checks[0], { state: 'Firing', calculated_value: 8, notification: null, targets_notified: false });
  t.same(again.checks[0].deliveries, []);
  t.equal(hooks.received.filter((r) => r.path === '/generic').length, told, 'no message for a state that did not change');

  // A threshold change starts over: state reset, checked at once.
  const widened = await api.patch(`${A}/${generic.id}/`, { threshold: { configuration: { type: 'absolute', bounds: { lower: 2, upper: 100 } } } });
  t.equal(widened.body.state, 'Not firing');
  const rechecked = await alertWhen(generic.id, 'the check after the change', (a) => a.checks.length === 5);
  t.match(rechecked, { state: 'Not firing', last_value: 8 });
  t.equal(rechecked.checks[0].notification, null, 'from the reset state, nothing to resolve');
  await api.patch(`${A}/${slack.id}/`, { enabled: false });
});

t.test('relative: a percentage increase of the last complete day over the day before', async (t) => {
  const signups = await insight('Signups', { kind: 'TrendsQuery', interval: 'day', series: [{ kind: 'EventsNode', event: 'signed_up', math: 'total' }] });
  const dayBefore = new Date(Date.parse(yesterday()) - DAY).toISOString();
  const batch = [...Array.from({ length: 2 }, (_, i) => event(`s-${i}`, 'signed_up', {}, { timestamp: dayBefore })), ...Array.from({ length: 5 }, (_, i) => event(`s-${i}`, 'signed_up', {}, { timestamp: yesterday() }))];
  t.equal((await sendBatch(quill.base, batch)).status, 200);
  const made = await api.post(`${A}/`, {
    insight: signups, subscribed_users: [], condition: { type: 'relative_increase' }, threshold: { configuration: { type: 'percentage', bounds: { upper: 1 } } },
  });
  status(t, made, 201, 'created');
  const checked = await alertWhen(made.body.id, 'its first check', (a) => a.checks.length === 1);
  t.match(checked.checks[0], { state: 'Firing', calculated_value: 1.5, breaches: ['The insight value (signed_up) for previous day (150.00%) increased more than upper threshold (100.00%)'] });
  t.equal(checked.checks[0].targets_notified, false, 'no one to tell: no webhook, no users');
  await api.patch(`${A}/${made.body.id}/`, { enabled: false });
});

t.test('checked once per interval, across a restart', async (t) => {
  const watched = await insight('Hourly watch');
  const made = (await api.post(`${A}/`, {
    insight: watched, subscribed_users: [], calculation_interval: 'hourly', webhook_url: `${hooks.url}/hourly`,
    threshold: { configuration: { type: 'absolute', bounds: { lower: 1000 } } },
  })).body;
  const first = await alertWhen(made.id, 'the first check', (a) => a.checks.length === 1 && a.checks[0].deliveries.length === 1);
  t.equal(first.state, 'Firing');
  const next = Date.parse(first.next_check_at);
  t.ok(next - Date.parse(made.next_check_at) === 3_600_000, `hourly: an hour after it was due (${made.next_check_at} → ${first.next_check_at})`);

  await quill.stop();
  await start();
  // Many ticks of the restarted node's scheduler.
  await new Promise((r) => setTimeout(r, 1500));
  const after = (await api.get(`${A}/${made.id}/`)).body;
  t.equal(after.checks.length, 1, 'not checked again');
  t.equal(after.next_check_at, first.next_check_at, 'the next check stays where it was');
  t.equal(hooks.received.filter((r) => r.path === '/hourly').length, 1, 'nor told again');
  await api.patch(`${A}/${made.id}/`, { enabled: false });
});

t.test('an insight that is gone: the check records Errored with the error, and tells nobody', async (t) => {
  const watched = await insight('Soon gone');
  const made = (await api.post(`${A}/`, { insight: watched, subscribed_users: [me.id], webhook_url: `${hooks.url}/errored`, threshold: { configuration: { type: 'absolute', bounds: { upper: 1000 } } } })).body;
  await alertWhen(made.id, 'the first check', (a) => a.checks.length === 1);
  t.equal((await api.patch(`/api/projects/@current/insights/${watched}/`, { deleted: true })).status, 200);
  const checked = await api.post(`${A}/${made.id}/check/`, {});
  status(t, checked, 200, 'checked now');
  t.match(checked.body, { state: 'Errored', insight: { id: watched, deleted: true } });
  t.match(checked.body.checks[0], { state: 'Errored', calculated_value: null, error: { message: 'The insight of this alert no longer exists.' }, notification: null });
  t.equal(hooks.received.filter((r) => r.path === '/errored').length, 0);
});

t.test('snooze: no checks until it ends; null unsnoozes', async (t) => {
  const watched = await insight('Snoozed watch');
  const made = (await api.post(`${A}/`, { insight: watched, subscribed_users: [], threshold: { configuration: { type: 'absolute', bounds: { lower: 1000 } } } })).body;
  await alertWhen(made.id, 'the first check', (a) => a.checks.length === 1);
  const snoozed = await api.patch(`${A}/${made.id}/`, { snoozed_until: '2h' });
  status(t, snoozed, 200, 'snoozed');
  const until = Date.parse(snoozed.body.snoozed_until);
  t.ok(until > Date.now() + 3_600_000 && until <= Date.now() + 7_200_000 && until % 3_600_000 === 0, `two hours on, to the hour (${snoozed.body.snoozed_until})`);
  t.match(snoozed.body, { state: 'Snoozed', checks: [{ state: 'Snoozed', calculated_value: null }, { state: 'Firing' }] });
  t.match((await api.post(`${A}/${made.id}/check/`, {})).body, { type: 'validation_error', attr: 'snoozed_until' }, 'not checked while snoozed');
  const awake = await api.patch(`${A}/${made.id}/`, { snoozed_until: null });
  t.match(awake.body, { state: 'Not firing', snoozed_until: null, checks: [{ state: 'Not firing' }] });
  t.match((await api.post(`${A}/${made.id}/check/`, {})).body, { state: 'Firing', checks: [{ state: 'Firing', notification: 'firing' }] });
  t.match((await api.patch(`${A}/${made.id}/`, { snoozed_until: '2020-01-01T00:00:00Z' })).body, { attr: 'snoozed_until', detail: /future/ });
  await api.patch(`${A}/${made.id}/`, { enabled: false });
});

t.test('a failing webhook is tried 3 times, each attempt on the check', async (t) => {
  const watched = await insight('Failing hook');
  const made = (await api.post(`${A}/`, { insight: watched, subscribed_users: [], webhook_url: `${hooks.url}/fail`, threshold: { configuration: { type: 'absolute', bounds: { lower: 1000 } } } })).body;
  const done = await alertWhen(made.id, 'three attempts', (a) => a.checks[0]?.deliveries.length === 3);
  t.same(done.checks[0].deliveries.map((d: any) => [d.attempt, d.ok, d.error]), [[1, false, 'HTTP 500'], [2, false, 'HTTP 500'], [3, false, 'HTTP 500']]);
  t.equal(done.checks[0].targets_notified, false);
  const gaps = done.checks[0].deliveries.map((d: any) => Date.parse(d.at)).map((at: number, i: number, all: number[]) => (i === 0 ? 0 : at - all[i - 1]!)).slice(1);
  t.ok(gaps[0] >= 200 && gaps[1] >= 400, `the wait doubles (${gaps.join(', ')} ms)`);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(hooks.received.filter((r) => r.path === '/fail').length, 3, 'and no more');
  await api.patch(`${A}/${made.id}/`, { enabled: false });
});
