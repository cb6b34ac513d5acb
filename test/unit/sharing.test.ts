// Share links' pure parts: session tokens (signed per link, expiring, bound to a password that still exists) and
// the queries a shared web analytics page may run; the share answers' cache and turn (src/worker/share-answers.ts).
import t from 'tap';
import type { SharingConfiguration } from '../../src/domain/model.js';
import { newAccessToken, newSessionSecret, sharedWebQueryProblem, shareSessionToken, shareSessionValid, SHARE_SESSION_MS, looksLikeAccessToken } from '../../src/domain/sharing.js';
import { ShareAnswers } from '../../src/worker/share-answers.js';

const link = (): SharingConfiguration => ({
  project_id: 1, target: { kind: 'dashboard', id: 2 }, enabled: true, access_token: newAccessToken(), created_at: '', password_required: true,
  passwords: [{ id: 7, hash: '', note: '', created_at: '', created_by: null }], session_secret: newSessionSecret(), settings: null,
});

t.test('session tokens', async (t) => {
  const c = link();
  t.ok(looksLikeAccessToken(c.access_token));
  const now = 1_800_000_000_000;
  const token = shareSessionToken(c, 7, now);
  t.ok(shareSessionValid(c, token, now + 1000));
  t.notOk(shareSessionValid(c, token, now + SHARE_SESSION_MS), 'expired');
  t.notOk(shareSessionValid({ ...c, passwords: [] }, token, now), 'its password deleted');
  t.notOk(shareSessionValid({ ...c, session_secret: newSessionSecret() }, token, now), 'the link rotated');
  t.notOk(shareSessionValid({ ...c, access_token: newAccessToken() }, token, now), 'another link');
  const [id, exp, sig] = token.split('.');
  t.notOk(shareSessionValid(c, `${id}.${Number(exp) + 10}.${sig}`, now), 'a changed expiry');
  t.notOk(shareSessionValid(c, `${id}.${exp}.${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`, now), 'a changed signature');
  for (const junk of ['', 'x', '7..', `7.${exp}`, `${token}.1`]) t.notOk(shareSessionValid(c, junk, now), `junk: ${JSON.stringify(junk)}`);
});

t.test('what a shared web analytics page may ask', async (t) => {
  const ok = [
    { kind: 'WebOverviewQuery', dateRange: { date_from: '-30d', date_to: null }, properties: [], compareFilter: { compare: true } },
    { kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', limit: 10, properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }] },
    { kind: 'WebGoalsQuery', dateRange: { date_from: '-7d' } },
    { kind: 'WebExternalClicksTableQuery', stripQueryParams: true, limit: 10 },
    { kind: 'TrendsQuery', interval: 'hour', dateRange: { date_from: '-24h' }, series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', custom_name: 'Visitors' }] },
    { kind: 'WebVitalsQuery', properties: [], dateRange: { date_from: '-7d' }, source: { kind: 'TrendsQuery', interval: 'day', series: [{ kind: 'EventsNode', event: '$web_vitals', math: 'p90', math_property: '$web_vitals_LCP_value' }, { kind: 'EventsNode', event: '$web_vitals', math: 'total' }] } },
  ];
  for (const q of ok) t.equal(sharedWebQueryProblem(q), null, q.kind);
  const refused: [string, unknown][] = [
    ['not an object', 'select 1'],
    ['HogQL', { kind: 'HogQLQuery', query: 'select 1' }],
    ['unknown field', { kind: 'WebOverviewQuery', sampling: { enabled: true }, conversionGoal: { actionId: 1 } }],
    ['a fixed date', { kind: 'WebOverviewQuery', dateRange: { date_from: '2020-01-01' } }],
    ['an end date', { kind: 'WebOverviewQuery', dateRange: { date_from: '-7d', date_to: '-1d' } }],
    ['a person filter', { kind: 'WebOverviewQuery', properties: [{ type: 'person', key: '$browser', value: 'x' }] }],
    ['a session filter on trends', { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], properties: [{ type: 'session', key: '$channel_type', value: 'x' }] }],
    ['a limit too large', { kind: 'WebStatsTableQuery', breakdownBy: 'Page', limit: 100000 }],
    ['a vitals series of another property', { kind: 'WebVitalsQuery', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$web_vitals', math: 'p75', math_property: 'email' }] } }],
    ['a weekly interval', { kind: 'TrendsQuery', interval: 'week', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }] }],
    ['no series', { kind: 'TrendsQuery', series: [] }],
    ['a series with filters', { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', properties: [{ key: 'email', value: 'x' }] }] }],
  ];
  for (const [what, q] of refused) t.type(sharedWebQueryProblem(q), 'string', what);
});

t.test('share answers: cached for their period, one computation per question, one at a time', async (t) => {
  const answers = new ShareAnswers(60_000);
  let running = 0;
  let most = 0;
  let calls = 0;
  const compute = (n: number) => async () => {
    calls++;
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return { n };
  };
  const now = Date.now();
  const same = await Promise.all(Array.from({ length: 10 }, () => answers.answer('a', now, compute(1))));
  t.equal(calls, 1, 'ten askers, one computation');
  t.equal(same.filter((a) => !a.is_cached).length, 1);
  t.same(same.map((a) => a.value), Array(10).fill({ n: 1 }));
  await Promise.all(['b', 'c', 'd'].map((k, i) => answers.answer(k, now, compute(i))));
  t.equal(most, 1, 'different questions are computed in turn');
  t.equal((await answers.answer('a', now + 59_000, compute(9))).is_cached, true, 'still fresh');
  t.same((await answers.answer('a', now + 61_000, compute(9))).value, { n: 9 }, 'computed again after its period');
  const failing = await answers.answer('e', now, async () => {
    throw new Error('boom');
  }).catch((e: Error) => e.message);
  t.equal(failing, 'boom', 'a failure reaches its askers');
  t.same((await answers.answer('e', now, compute(5))).value, { n: 5 }, 'and is not cached');
});
