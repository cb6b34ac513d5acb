// Subscriptions over HTTP (PostHog's `subscriptions` resource): CRUD and validation; subscriptions due now deliver
// their insight's headline numbers once, to a webhook and by e-mail (through an SMTP server started here), with the
// insight's share link, and their next delivery moves to the next occurrence; a dashboard's report delivered now by
// e-mail, one message per address; a failing target's attempts, each recorded.
import t, { type Test } from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { eventually } from '../helpers/eventually.js';
import { Client, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver, type WebhookReceiver } from '../helpers/receivers.js';

const S = '/api/projects/@current/subscriptions';
let quill: QuillProcess;
let api: Client;
let hooks: WebhookReceiver;
let smtp: SmtpReceiver;
let projectId: number;
let signups: number;

const DAY = 86_400_000;
const todayStart = Math.floor(Date.now() / DAY) * DAY;
const today = new Date(todayStart).toISOString().slice(0, 10);

function status(t: Test, res: { status: number; text: string }, expected: number, what: string): void {
  t.equal(res.status, expected, res.status === expected ? what : `${what}: ${res.text}`);
}

t.before(async () => {
  hooks = await startWebhookReceiver();
  smtp = await startSmtpReceiver();
  quill = await startQuill({
    env: {
      QUILL_ALERTS_TICK_MS: '100', QUILL_DELIVERY_RETRY_S: '0.2', QUILL_PUBLIC_URL: 'http://quill.test',
      QUILL_SMTP_URL: `smtp://quill:secret@127.0.0.1:${smtp.port}`, QUILL_SMTP_FROM: 'reports@quill.test',
    },
  });
  api = new Client(quill.base);
  projectId = (await api.get('/api/projects/@current/')).body.id;
  // Two sign-ups yesterday, three today: a daily trend's latest point is 3, its total 5.
  const yesterday = new Date(todayStart - DAY / 2).toISOString();
  const earlierToday = new Date(Math.max(todayStart + 1000, Date.now() - 60_000)).toISOString();
  const batch = [0, 1].map((i) => event(`u${i}`, 'signed_up', {}, { timestamp: yesterday })).concat([2, 3, 4].map((i) => event(`u${i}`, 'signed_up', {}, { timestamp: earlierToday })));
  if ((await sendBatch(quill.base, batch)).status !== 200) throw new Error('batch');
  const made = await api.post('/api/projects/@current/insights/', {
    name: 'Signups', query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', interval: 'day', dateRange: { date_from: '-7d' }, series: [{ kind: 'EventsNode', event: 'signed_up', math: 'total' }] } },
  });
  signups = made.body.id;
});

t.teardown(async () => {
  await quill?.stop();
  if (quill) removeDir(quill.dataDir);
  await hooks?.close();
  await smtp?.close();
});

t.test('create, list, retrieve, update, soft delete; validation; scopes', async (t) => {
  const start = new Date(todayStart + DAY + 9 * 3_600_000).toISOString(); // tomorrow 09:00Z
  const body = { insight: signups, target_type: 'email', target_value: 'ann@example.com, bob@example.com', frequency: 'monthly', byweekday: ['friday'], bysetpos: -1, start_date: start, title: 'Signups, monthly' };
  const made = await api.post(`${S}/`, body);
  status(t, made, 201, 'created');
  t.match(made.body, {
    id: Number, insight: signups, dashboard: null, target_type: 'email', target_value: 'ann@example.com, bob@example.com', frequency: 'monthly', interval: 1,
    byweekday: ['friday'], bysetpos: -1, start_date: start, until_date: null, title: 'Signups, monthly', deleted: false, summary: 'sent every month on the last Friday',
    created_by: { email: 'admin@quill.local' }, next_delivery_date: String,
  });
  const next = new Date(made.body.next_delivery_date);
  t.ok(next.getUTCDay() === 5 && next.getUTCDate() + 7 > new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate() && next.getUTCHours() === 9,
    `the last Friday of a month at 09:00 (${made.body.next_delivery_date})`);
  t.ok(next.getTime() >= Date.parse(start), 'not before the start');
  const id = made.body.id as number;
  t.match((await api.get(`${S}/`)).body, { count: 1, results: [{ id }] });
  t.equal((await api.get(`${S}/?insight_id=${signups}`)).body.count, 1);
  t.match((await api.get(`${S}/${id}/`)).body, { id, title: 'Signups, monthly' });
  const weekly = await api.patch(`${S}/${id}/`, { frequency: 'weekly', interval: 2, byweekday: null, bysetpos: null });
  t.match(weekly.body, { summary: 'sent every 2 weeks', next_delivery_date: start }, 'a new schedule, the first occurrence its start');
  const board = (await api.post('/api/projects/@current/dashboards/', { name: 'Board' })).body;
  t.match((await api.patch(`${S}/${id}/`, { insight: null, dashboard: board.id })).body, { insight: null, dashboard: board.id }, 'moved to a dashboard');
  t.match((await api.patch(`${S}/${id}/`, { dashboard: null })).body, { type: 'validation_error', attr: null, detail: /Either dashboard or insight/ });
  t.equal((await api.patch(`${S}/${id}/`, { deleted: true })).body.deleted, true);
  t.equal((await api.get(`${S}/`)).body.count, 0, 'a deleted subscription is not listed');
  t.equal((await api.get(`${S}/?deleted=true`)).body.count, 1, 'unless asked for');
  t.equal((await api.delete(`${S}/${id}/`)).status, 405, 'no hard delete, as PostHog');

  const refused: [string, object, string | null][] = [
    ['neither insight nor dashboard', { ...body, insight: undefined }, null],
    ['both', { ...body, dashboard: 1 }, null],
    ['an unknown insight', { ...body, insight: 99_999 }, 'insight'],
    ['a bad address', { ...body, target_value: 'ann@example.com, not-an-address' }, 'target_value'],
    ['a webhook that is no URL', { ...body, target_type: 'webhook', target_value: 'somewhere' }, 'target_value'],
    ["PostHog's Slack app", { ...body, target_type: 'slack', target_value: 'C123' }, 'target_type'],
    ['no frequency', { ...body, frequency: undefined }, 'frequency'],
    ['an unknown frequency', { ...body, frequency: 'hourly' }, 'frequency'],
    ['a bad start', { ...body, start_date: 'soon' }, 'start_date'],
    ['an end before the start', { ...body, until_date: '2020-01-01T00:00:00Z' }, 'until_date'],
    ['bysetpos 0', { ...body, bysetpos: 0 }, 'bysetpos'],
    ['an unknown weekday', { ...body, byweekday: ['caturday'] }, 'byweekday__0'],
  ];
  for (const [what, b, attr] of refused) {
    const res = await api.post(`${S}/`, b);
    status(t, res, 400, what);
    t.match(res.body, { type: 'validation_error', attr, detail: String }, what);
  }
  const key = async (scopes: string[]) => api.withKey((await api.post('/api/personal_api_keys/', { label: `subs ${scopes}`, scopes })).body.value);
  const reader = await key(['subscription:read']);
  t.equal((await reader.get(`${S}/`)).status, 200);
  t.equal((await reader.post(`${S}/`, body)).status, 403);
  t.equal((await (await key(['alert:write'])).get(`${S}/`)).status, 403);
});

t.test('due: delivered once to a webhook with the headline numbers and the share link; the next delivery moves on', async (t) => {
  const token = (await api.patch(`/api/projects/@current/insights/${signups}/sharing/`, { enabled: true })).body.access_token as string;
  t.ok(token, 'the insight is shared');
  const start = Date.now() + 1500;
  const made = await api.post(`${S}/`, { insight: signups, target_type: 'webhook', target_value: `${hooks.url}/report`, frequency: 'daily', start_date: new Date(start).toISOString() });
  status(t, made, 201, 'created');
  t.equal(made.body.next_delivery_date, new Date(start).toISOString(), 'first due at its start');
  const byMail = await api.post(`${S}/`, { insight: signups, target_type: 'email', target_value: 'carol@example.com', frequency: 'daily', start_date: new Date(start).toISOString(), title: 'Signups today' });
  status(t, byMail, 201, 'created, by e-mail');

  const got = await eventually('the report', () => hooks.received.find((r) => r.path === '/report'), { timeoutMs: 20_000, intervalMs: 50 });
  const link = `http://quill.test/shared/${token}`;
  t.match(got.body, {
    event: 'subscription_report', subscription: { id: made.body.id, summary: 'sent every day' }, project: { id: projectId },
    resource: { kind: 'insight', id: signups, name: 'Signups', url: link },
    insights: [{ id: signups, name: 'Signups', url: link, series: [{ label: 'signed_up', latest: 3, latest_date: today, total: 5 }], note: null }],
    text: new RegExp(`signed_up: 3 on ${today}, 5 in all[\\s\\S]*Open: ${link.replace(/[/.]/g, '\\$&')}`),
  });
  const after = await eventually('its record', async () => {
    const s = (await api.get(`${S}/${made.body.id}/`)).body;
    return s.deliveries.length === 1 ? s : null;
  }, { timeoutMs: 20_000 });
  t.equal(after.next_delivery_date, new Date(start + 86_400_000).toISOString(), 'next: the same time tomorrow');
  t.match(after.deliveries, [{ report_id: 1, target: `${hooks.url}/report`, attempt: 1, ok: true, error: null }]);
  const mail = await eventually('the e-mail report', () => smtp.mails.find((m) => m.headers.subject === 'Quill report: Signups today'), { timeoutMs: 20_000 });
  t.same(mail.to, ['carol@example.com']);
  t.match(mail.text, new RegExp(`Insight "Signups" \\(sent every day\\):\\s+Signups\\s+signed_up: 3 on ${today}, 5 in all\\s+Open: ${link.replace(/[/.]/g, '\\$&')}$`));
  const mailed = await eventually('its record', async () => {
    const s = (await api.get(`${S}/${byMail.body.id}/`)).body;
    return s.deliveries.length === 1 ? s : null;
  }, { timeoutMs: 20_000 });
  t.match(mailed, { next_delivery_date: new Date(start + 86_400_000).toISOString(), deliveries: [{ report_id: 1, target: 'carol@example.com', attempt: 1, ok: true }] });
  await new Promise((r) => setTimeout(r, 800));
  t.equal(hooks.received.filter((r) => r.path === '/report').length, 1, 'delivered once');
  t.equal(smtp.mails.filter((m) => m.headers.subject === 'Quill report: Signups today').length, 1, 'e-mailed once');
  await api.patch(`/api/projects/@current/insights/${signups}/sharing/`, { enabled: false });
});

t.test("deliver now: a dashboard's report by e-mail, one message per address; the schedule stays", async (t) => {
  const dash = (await api.post('/api/projects/@current/dashboards/', { name: 'Growth' })).body;
  await api.patch(`/api/projects/@current/insights/${signups}/`, { dashboards: [dash.id] });
  const made = (await api.post(`${S}/`, {
    dashboard: dash.id, target_type: 'email', target_value: 'ann@example.com,bob@example.com', frequency: 'weekly', title: 'Weekly growth',
    start_date: new Date(todayStart - 3 * DAY + 8 * 3_600_000).toISOString(),
  })).body;
  const scheduled = made.next_delivery_date;
  t.ok(Date.parse(scheduled) > Date.now() && Date.parse(scheduled) <= Date.now() + 7 * DAY, `due within the week (${scheduled})`);
  const now = await api.post(`${S}/${made.id}/deliver/`, {});
  status(t, now, 200, 'delivered now');
  t.same(now.body.deliveries.map((d: any) => [d.target, d.ok]).sort(), [['ann@example.com', true], ['bob@example.com', true]]);
  t.equal(now.body.next_delivery_date, scheduled, 'the next scheduled delivery is unchanged');
  const mails = smtp.mails.filter((m) => m.headers.subject === 'Quill report: Weekly growth');
  t.same(mails.map((m) => m.to).sort(), [['ann@example.com'], ['bob@example.com']]);
  t.equal(mails[0]?.from, 'reports@quill.test');
  t.match(mails[0]?.text, new RegExp(`Dashboard "Growth" \\(sent every week\\):[\\s\\S]*Signups\\s+signed_up: 3 on ${today}, 5 in all\\s+http://quill\\.test/console/project/${projectId}/insights/saved/${signups}[\\s\\S]*Open: http://quill\\.test/console/project/${projectId}/dashboard/${dash.id}`));
});

t.test('a failing target: every attempt recorded, 3 in all', async (t) => {
  const made = (await api.post(`${S}/`, { insight: signups, target_type: 'webhook', target_value: `${hooks.url}/fail-report`, frequency: 'yearly', start_date: new Date(todayStart + DAY).toISOString() })).body;
  const first = await api.post(`${S}/${made.id}/deliver/`, {});
  t.match(first.body.deliveries, [{ attempt: 1, ok: false, error: 'HTTP 500' }]);
  const all = await eventually('three attempts', async () => {
    const s = (await api.get(`${S}/${made.id}/`)).body;
    return s.deliveries.length === 3 ? s : null;
  }, { timeoutMs: 20_000 });
  t.same(all.deliveries.map((d: any) => [d.attempt, d.ok]), [[3, false], [2, false], [1, false]], 'newest first');
});
