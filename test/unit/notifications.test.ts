// What alerts and subscriptions send, pure (src/domain/notifications/): the outbox's attempts and retries, webhook
// bodies and formats, the SMTP setting, addresses, the message as DATA carries it, SMTP replies, the messages and
// their links and headline numbers.
import t from 'tap';
import { bareAddress, emailsOf, isEmailAddress, mimeMessage, parseSmtpUrl, takeReply } from '../../src/domain/notifications/mail.js';
import { alertFiringMessage, alertResolvedMessage, dashboardLink, insightLink, subscriptionMessage, trendsHeadlines, type AlertFacts } from '../../src/domain/notifications/messages.js';
import {
  afterAttempt, dueTargets, MAX_ATTEMPTS, nextAttemptAt, notifiedAny, outgoing, targetLabel, webhookBody, webhookFormatOf, webhookUrlProblem, type Target,
} from '../../src/domain/notifications/outbox.js';

const message = { subject: 'S', text: 'line 1\nline 2', payload: { event: 'x' } };
const hook: Target = { kind: 'webhook', url: 'https://user:pw@example.com/hook?x=1', format: 'json' };
const mail: Target = { kind: 'email', to: 'ann@example.com' };

t.test('the outbox: due targets, attempts, retries that double, a bounded number of them', async (t) => {
  const now = 1_000_000;
  let m = outgoing(message, [hook, mail], now);
  t.same(dueTargets(m, now), [0, 1], 'both due at once');
  t.equal(nextAttemptAt([m]), now);
  m = afterAttempt(m, 0, { ok: true, error: null, retry: false }, now + 5, 1000);
  m = afterAttempt(m, 1, { ok: false, error: 'timeout', retry: true }, now + 6, 1000);
  t.match(m.targets, [{ attempts: 1, ok: true, done: true, next_at: null }, { attempts: 1, ok: false, done: false, next_at: now + 6 + 1000 }]);
  t.same(m.deliveries, [
    { at: new Date(now + 5).toISOString(), target: 'https://example.com/hook?x=1', attempt: 1, ok: true, error: null },
    { at: new Date(now + 6).toISOString(), target: 'ann@example.com', attempt: 1, ok: false, error: 'timeout' },
  ], 'every attempt recorded; no credentials of the URL in it');
  t.same(dueTargets(m, now + 500), [], 'not before the wait');
  t.same(dueTargets(m, now + 1006), [1]);
  m = afterAttempt(m, 1, { ok: false, error: 'timeout', retry: true }, now + 1006, 1000);
  t.equal(m.targets[1]!.next_at, now + 1006 + 2000, 'the wait doubles');
  m = afterAttempt(m, 1, { ok: false, error: 'timeout', retry: true }, now + 3006, 1000);
  t.match(m.targets[1], { attempts: MAX_ATTEMPTS, done: true, ok: false, next_at: null }, `given up after ${MAX_ATTEMPTS}`);
  t.equal(nextAttemptAt([m]), null, 'nothing left to send');
  t.equal(afterAttempt(m, 1, { ok: true, error: null, retry: false }, now + 9999, 1000), m, 'a done target takes no more attempts');
  t.ok(notifiedAny(m));
  const refused = afterAttempt(outgoing(message, [mail], now), 0, { ok: false, error: 'e-mail is off', retry: false }, now, 1000);
  t.match(refused.targets[0], { attempts: 1, done: true, ok: false }, 'a failure a retry cannot mend is final at once');
  t.notOk(notifiedAny(refused));
  t.notOk(notifiedAny(null));
});

t.test('webhooks: formats, bodies, URLs', async (t) => {
  t.equal(webhookFormatOf('https://hooks.slack.com/services/T/B/x', null), 'slack');
  t.equal(webhookFormatOf('https://HOOKS.SLACK.COM/services/T/B/x', null), 'slack');
  t.equal(webhookFormatOf('https://example.com/hooks.slack.com', null), 'json');
  t.equal(webhookFormatOf('https://example.com/x', 'slack'), 'slack', 'asked for');
  t.equal(webhookFormatOf('https://hooks.slack.com/services/x', 'json'), 'json');
  t.same(webhookBody(message, 'json'), { event: 'x' });
  t.same(webhookBody(message, 'slack'), { text: '*S*\nline 1\nline 2', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: '*S*\nline 1\nline 2' } }] });
  t.equal(webhookUrlProblem('https://example.com/x'), null);
  t.equal(webhookUrlProblem('http://127.0.0.1:9999/'), null);
  for (const bad of ['example.com', 'ftp://example.com/', 'javascript:alert(1)', '']) t.type(webhookUrlProblem(bad), 'string', JSON.stringify(bad));
  t.equal(targetLabel(mail), 'ann@example.com');
});

t.test('the SMTP setting and addresses', async (t) => {
  t.same(parseSmtpUrl('smtp://mail.example.com'), { secure: false, host: 'mail.example.com', port: 587, user: null, password: null });
  t.same(parseSmtpUrl('smtps://mail.example.com'), { secure: true, host: 'mail.example.com', port: 465, user: null, password: null });
  t.same(parseSmtpUrl('smtp://me%40example.com:p%3Ass@127.0.0.1:2525'), { secure: false, host: '127.0.0.1', port: 2525, user: 'me@example.com', password: 'p:ss' });
  for (const bad of ['mail.example.com', 'http://mail.example.com', 'smtp://']) t.throws(() => parseSmtpUrl(bad), Error, bad);
  for (const ok of ['ann@example.com', 'a.b+tag@sub.example.co.uk']) t.ok(isEmailAddress(ok), ok);
  for (const bad of ['ann', 'ann@', '@example.com', 'ann@example', 'a b@example.com', 'ann@example.com>\r\nRCPT TO:<x@y.z', 'a<b@example.com']) t.notOk(isEmailAddress(bad), JSON.stringify(bad));
  t.same(emailsOf(' ann@example.com, ,bob@example.com '), ['ann@example.com', 'bob@example.com']);
  t.equal(bareAddress('Quill Alerts <alerts@quill.test>'), 'alerts@quill.test');
  t.equal(bareAddress('alerts@quill.test'), 'alerts@quill.test');
});

t.test('the message as DATA carries it', async (t) => {
  const data = mimeMessage({ from: 'Quill <q@x.test>', to: 'ann@example.com', subject: 'Réglé\r\nBcc: evil@x.test', text: 'é\n.line\n', date: new Date('2026-12-02T10:00:00Z'), messageId: 'id@x.test' });
  const [head, body] = data.split('\r\n\r\n');
  t.match(head, /^From: Quill <q@x\.test>\r\nTo: ann@example\.com\r\nSubject: =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=\r\nDate: Wed, 02 Dec 2026 10:00:00 \+0000\r\nMessage-ID: <id@x\.test>\r\nMIME-Version: 1\.0\r\nContent-Type: text\/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64$/);
  t.notMatch(head, /\r\nBcc:/, 'no header smuggled through the subject');
  const subject = /Subject: =\?UTF-8\?B\?([^?]+)\?=/.exec(head!)![1]!;
  t.equal(Buffer.from(subject, 'base64').toString('utf8'), 'Réglé Bcc: evil@x.test');
  t.equal(Buffer.from(body!.replace(/\s+/g, ''), 'base64').toString('utf8'), 'é\r\n.line\r\n', 'the text in CRLF lines');
  t.ok(body!.split('\r\n').every((l) => l.length <= 76), 'lines of 76 at most');
});

t.test('SMTP replies', async (t) => {
  t.same(takeReply('220 ready\r\n'), { reply: { code: 220, lines: ['ready'] }, rest: '' });
  t.same(takeReply('250-mail.example.com\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n354 go'), { reply: { code: 250, lines: ['mail.example.com', 'STARTTLS', 'AUTH PLAIN LOGIN'] }, rest: '354 go' });
  t.equal(takeReply('250-first\r\n250 sec'), null, 'incomplete');
  t.equal(takeReply(''), null);
  t.throws(() => takeReply('hello\r\n'), /not an SMTP reply/);
});

t.test('messages, links and headline numbers', async (t) => {
  t.equal(insightLink('http://q.test', 1, 7, null), 'http://q.test/console/project/1/insights/saved/7');
  t.equal(insightLink('http://q.test', 1, 7, 'tok'), 'http://q.test/shared/tok');
  t.equal(dashboardLink('http://q.test', 1, 3, null), 'http://q.test/console/project/1/dashboard/3');
  t.equal(dashboardLink('http://q.test', 1, 3, 'tok'), 'http://q.test/shared/tok');

  const facts: AlertFacts = {
    alert: { id: 'a1', name: '', condition: { type: 'absolute_value' }, threshold: { type: 'absolute' }, calculation_interval: 'daily' },
    insight: { id: 7, short_id: 'abc', name: 'Signups', url: 'http://q.test/i/7' }, project: { id: 1, name: 'P' },
    check: { id: 'c1', created_at: 'now', calculated_value: 2.5, breaches: ['too high'] },
  };
  const firing = alertFiringMessage(facts);
  t.equal(firing.subject, 'Quill alert Alert on Signups is firing', 'an unnamed alert is named after its insight');
  t.equal(firing.text, 'too high\n\nInsight: Signups — http://q.test/i/7');
  t.match(firing.payload, { event: 'alert_firing', state: 'Firing', alert: { id: 'a1' }, insight: { id: 7 }, check: { id: 'c1', breaches: ['too high'] } });
  t.match(alertResolvedMessage({ ...facts, alert: { ...facts.alert, name: 'Spike' } }), { subject: 'Quill alert Spike is resolved', text: /value \(2\.5\) is within/, payload: { event: 'alert_resolved', state: 'Not firing' } });

  const headlines = trendsHeadlines([
    { label: 'Pageviews', data: [1, 2, 3], days: ['2026-12-01', '2026-12-02', '2026-12-03'], count: 6 },
    { label: 'Total', aggregated_value: 42, data: [] },
    'junk',
  ]);
  t.same(headlines, [{ label: 'Pageviews', latest: 3, latest_date: '2026-12-03', total: 6 }, { label: 'Total', latest: 42, latest_date: null, total: 42 }]);
  t.same(trendsHeadlines(null), []);
  const report = subscriptionMessage({
    subscription: { id: 1, title: null, summary: 'sent every day' }, project: { id: 1, name: 'P' },
    resource: { kind: 'dashboard', id: 3, name: 'Growth', url: 'http://q.test/d/3' },
    items: [
      { id: 7, short_id: 'abc', name: 'Views', url: 'http://q.test/i/7', series: headlines, note: null },
      { id: 8, short_id: 'def', name: '', url: 'http://q.test/i/8', series: [], note: 'Open the insight to see it.' },
    ],
  });
  t.equal(report.subject, 'Quill report: Growth');
  t.equal(report.text, [
    'Dashboard "Growth" (sent every day):', '', 'Views', '  Pageviews: 3 on 2026-12-03, 6 in all', '  Total: 42', '  http://q.test/i/7',
    'def', '  Open the insight to see it.', '  http://q.test/i/8', '', 'Open: http://q.test/d/3',
  ].join('\n'));
  t.match(report.payload, { event: 'subscription_report', resource: { kind: 'dashboard' }, insights: [{ id: 7 }, { id: 8 }] });
});
