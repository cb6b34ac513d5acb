// Trends answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb and answering trends
// from it, one on its own engine, fed the same events. The same trends requests (legacy endpoint and TrendsQuery)
// must answer the same on both, in UTC and in New York (a DST change inside the data); a second project's events in
// the same database are never counted; what ClickHouse does not compute yet falls back and says so.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';
import { insightQuery } from '../helpers/insight-compare.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);
const DATES = { date_from: '2026-10-25', date_to: '2026-11-09' };

/**
 * Dates as properties carry them (src/domain/analytics/property-date.ts): with an offset, without one (the project's
 * zone: New York's repeated hour on 2026-11-01 and skipped one on 2026-03-08), a bare date, Unix seconds and
 * milliseconds (a number and a text), and texts that are no date to either engine.
 */
const PAID_AT: unknown[] = [
  '2026-10-30T12:00:00Z', '2026-10-30T08:00:00-04:00', '2026-10-30 12:00', '2026-10-30', '2026-11-01T01:30:00', '2026-03-08T02:30',
  1761825600, '1761825600000', '2026-10-30T12:00:00.999999+0530', '2026-02-30', 'Oct 30 2026', '2026-10-30T24:00:00',
];

/** 24 visitors over two weeks across the end of DST in New York, some identified, some purchases with a price. */
function dataset(): ReturnType<typeof event>[][] {
  const browsers = ['Chrome', 'Safari', 'Firefox'];
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 24; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const batch: ReturnType<typeof event>[] = [];
    for (let k = 0; k < 10; k++) {
      const at = new Date(START + ((u * 37 + k * 29) % 14) * DAY + ((u * 13 + k * 7) % 24) * 3_600_000 + k * 61_000).toISOString();
      const id = u % 3 !== 0 && k >= 5 ? user : anon;
      const props: Record<string, unknown> = { $browser: browsers[(u + k) % 3], $current_url: `https://example.com/${['docs', 'blog', 'app'][k % 3]}` };
      if (k % 5 !== 2) props.$session_id = k % 5 === 4 ? '' : `s-${u}-${k % 3}`;
      if (k === 0) props.$set = { plan: u % 2 ? 'pro' : 'free', signup: PAID_AT[u % PAID_AT.length] };
      if (k === 7) delete props.$browser;
      if (k % 3 === 1) props.$groups = { company: `company-${u % 5}` };
      const name = k % 4 === 3 ? 'purchase' : '$pageview';
      if (name === 'purchase') {
        props.price = (u * 37 + k * 11) % 250;
        props.paid_at = PAID_AT[(u + k) % PAID_AT.length];
      }
      batch.push(event(id, name, props, { timestamp: at }));
      if (u % 3 !== 0 && k === 4) batch.push(event(user, '$identify', { $anon_distinct_id: anon }, { timestamp: at }));
    }
    batches.push(batch);
  }
  // Events without a person (each distinct id a personless actor, counted as a user) and breakdown values the local engine keys by
  // their JSON text: null, a number, a boolean, quotes and backslashes, a large number's exponent.
  const odd: unknown[] = [null, 12, true, 'say "hi" \\ there', 1e21, 2.5];
  batches.push(odd.flatMap((browser, i) => [
    event(`guest-${i}`, '$pageview', { $browser: browser, $process_person_profile: false }, { timestamp: new Date(START + i * DAY + 3_600_000).toISOString() }),
    event(`anon-${i}`, '$pageview', { $browser: browser }, { timestamp: new Date(START + i * DAY + 7_200_000).toISOString() }),
  ]));
  // Groups: companies 0-3 stored with properties (company 1's industry changed later: its latest row counts),
  // company 4 named by events but never stored.
  const group = (key: string, set: Record<string, unknown>, at: number) =>
    event('admin', '$groupidentify', { $group_type: 'company', $group_key: key, $group_set: set }, { timestamp: new Date(START + at * DAY).toISOString() });
  batches.push([
    group('company-0', { industry: 'tech', seats: 40 }, 0), group('company-1', { industry: 'retail', seats: 5 }, 0),
    group('company-2', { industry: 'tech' }, 1), group('company-3', { seats: 12 }, 1),
  ]);
  batches.push([group('company-1', { industry: 'tech' }, 2)]);
  return batches;
}

const engines = twoEngines(t, dataset);

async function trend(api: Client, params: Record<string, unknown>, project = '@current'): Promise<any> {
  const res = await api.get(`/api/projects/${project}/insights/trend/?${insightQuery({ ...DATES, ...params })}`);
  if (res.status !== 200) throw new Error(`${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** What must be equal between the two answers: per series its label, breakdown value, days, labels, data, count. */
function essence(body: any): unknown[] {
  const results = (body.result ?? body.results) as any[];
  return results.map((r) => ({ label: r.label, compare_label: r.compare_label ?? null, breakdown_value: r.breakdown_value ?? null, days: r.days, labels: r.labels,
    data: (r.data as number[]).map((v) => Number(v.toPrecision(12))), count: Number(Number(r.count).toPrecision(12)), aggregated_value: r.aggregated_value ?? null }));
}

const pageviews = { id: '$pageview', type: 'events', name: '$pageview' };
const purchases = { id: 'purchase', type: 'events', name: 'purchase' };
const SUPPORTED: [string, Record<string, unknown>][] = [
  ['total per day', { events: [pageviews] }],
  ['total of all events per day', { events: [{ id: null, type: 'events', name: 'All events' }] }],
  ['two series, unique users per day', { events: [pageviews, { ...purchases, math: 'dau', order: 1 }] }],
  ['per week', { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], interval: 'week' }],
  ['per month', { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], interval: 'month' }],
  ['per hour', { events: [pageviews], interval: 'hour', date_from: '2026-10-31', date_to: '2026-11-02' }],
  ['property filters', { events: [{ ...pageviews, properties: [{ key: '$current_url', value: 'docs', operator: 'icontains', type: 'event' }] }],
    properties: { type: 'OR', values: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }, { key: 'price', value: 100, operator: 'gt', type: 'event' }] } }],
  ['sum, avg, min, max, median, p75–p99 of a property', { events: ['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99'].map((math, order) => ({ ...purchases, math, math_property: 'price', order })) }],
  ['breakdown by an event property (with missing values)', { events: [pageviews], breakdown: '$browser', breakdown_type: 'event' }],
  ['breakdown with unique users and a limit', { events: [{ ...pageviews, math: 'dau' }], breakdown: '$current_url', breakdown_type: 'event', breakdown_limit: 2 }],
  ['unique sessions, with a breakdown', { events: [{ ...pageviews, math: 'unique_session' }], breakdown: '$browser', breakdown_type: 'event' }],
  ['a number display (one value over the range)', { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], display: 'BoldNumber' }],
  ['smoothing', { events: [pageviews], smoothing_intervals: 3 }],
  ['compare with the previous period', { events: [pageviews, { ...purchases, math: 'dau', order: 1 }], compare: true, date_from: '2026-11-02' }],
  ['compare with a breakdown per week', { events: [pageviews], compare: true, breakdown: '$browser', breakdown_type: 'event', interval: 'week', date_from: '2026-11-01' }],
  ['a formula', { events: [pageviews, { ...purchases, order: 1 }], formula: 'A/B' }],
  ['a formula with a breakdown and compare', { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], formula: 'A / B', breakdown: '$browser', breakdown_type: 'event', compare: true, date_from: '2026-11-02' }],
  ['cumulative counts and sums', { events: [pageviews, { ...purchases, math: 'sum', math_property: 'price', order: 1 }], display: 'ActionsLineGraphCumulative' }],
  ['cumulative unique users, with a breakdown and compare', { events: [{ ...pageviews, math: 'dau' }, { ...purchases, math: 'dau', order: 1 }], display: 'ActionsLineGraphCumulative',
    breakdown: '$browser', breakdown_type: 'event', compare: true, date_from: '2026-11-02' }],
  ['cumulative unique users per week', { events: [{ ...pageviews, math: 'dau' }], display: 'ActionsLineGraphCumulative', interval: 'week' }],
  ['weekly and monthly active users per day', { events: [{ ...pageviews, math: 'weekly_active' }, { ...pageviews, math: 'monthly_active', order: 1 }] }],
  ['weekly active users per hour and per week', { events: [{ ...pageviews, math: 'weekly_active' }], interval: 'hour', date_from: '2026-10-31', date_to: '2026-11-02' }],
  ['weekly active users with a breakdown, compare and a number display', { events: [{ ...purchases, math: 'weekly_active' }], breakdown: '$browser', breakdown_type: 'event', compare: true,
    date_from: '2026-11-02', display: 'BoldNumber' }],
  ['cumulative weekly active users', { events: [{ ...pageviews, math: 'weekly_active' }], display: 'ActionsLineGraphCumulative' }],
  ['events per person: average, minimum, maximum, median, p90', { events: ['avg', 'min', 'max', 'median', 'p90'].map((m, order) => ({ ...pageviews, math: `${m}_count_per_actor`, order })) }],
  ['events per person with a breakdown, per week', { events: [{ ...pageviews, math: 'avg_count_per_actor' }], breakdown: '$browser', breakdown_type: 'event', interval: 'week' }],
  ['unique groups', { events: [{ ...pageviews, math: 'unique_group', math_group_type_index: 0 }] }],
  // The event's company as it is now: a later change counts, an event without a company or of one never stored is
  // a company without the property.
  ['a group property filter', { events: [pageviews], properties: [{ key: 'industry', value: 'tech', operator: 'exact', type: 'group', group_type_index: 0 }] }],
  ['group property filters: is not, is not set, a number', { events: [
    { ...pageviews, properties: [{ key: 'industry', value: 'tech', operator: 'is_not', type: 'group', group_type_index: 0 }] },
    { ...pageviews, order: 1, properties: [{ key: 'industry', operator: 'is_not_set', type: 'group', group_type_index: 0 }] },
    { ...purchases, order: 2, properties: [{ key: 'seats', value: 10, operator: 'gt', type: 'group', group_type_index: 0 }] },
  ] }],
  ['date operators on an event property: after, before, exact', { events: [
    { ...purchases, properties: [{ key: 'paid_at', value: '2026-10-30', operator: 'is_date_after', type: 'event' }] },
    { ...purchases, order: 1, properties: [{ key: 'paid_at', value: '2026-11-01T01:45:00', operator: 'is_date_before', type: 'event' }] },
    { ...purchases, order: 2, properties: [{ key: 'paid_at', value: '2026-10-30T12:00:00Z', operator: 'is_date_exact', type: 'event' }] },
    { ...purchases, order: 3, properties: [{ key: 'paid_at', value: '2026-10-30', operator: 'is_date_after', type: 'event', negation: true }] },
  ] }],
  ['a group breakdown', { events: [pageviews, { ...purchases, order: 1 }], breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 }],
  ['a group breakdown by a number, weekly active users', { events: [{ ...pageviews, math: 'weekly_active' }], breakdown: 'seats', breakdown_type: 'group', breakdown_group_type_index: 0 }],
  // From Quill's own first event, as the local engine's range starts.
  ['all time, per week, with cumulative unique users', { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], date_from: 'all', interval: 'week', display: 'ActionsLineGraphCumulative' }],
  ['all time, a total', { events: [{ ...purchases, math: 'weekly_active' }], date_from: 'all', display: 'ActionsTable' }],
];
const FALLBACKS: [string, Record<string, unknown>, RegExp][] = [
  ['an element condition not printed yet', { events: [pageviews], properties: [{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }] }, /operator is_date_after/],
];
/**
 * By the person's properties at the event (the snapshot the export writes with each event). Compared with the other
 * Quill by what does not depend on merges: a person whose distinct ids live on two shards has, at an event, the
 * properties of whichever shard applied first, which may differ between two Quills fed the same events. Exact
 * answers on one Quill: test/e2e/person-properties-clickhouse.test.ts.
 */
const BY_PERSON: [string, Record<string, unknown>][] = [
  ['person property filter', { events: [pageviews], properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }],
  ['person breakdown', { events: [pageviews], breakdown: 'plan', breakdown_type: 'person' }],
  ['date operators on a person property, relative to now', { events: [{ ...pageviews, math: 'dau' }],
    properties: [{ key: 'signup', value: '-1d', operator: 'is_date_before', type: 'person' }, { key: 'signup', value: '2026-03-08T03:00', operator: 'is_date_after', type: 'person' }] }],
];

async function compareAll(tt: Tap.Test, zone: string): Promise<void> {
  for (const [name, params] of SUPPORTED) {
    const [fromCh, fromLocal] = await Promise.all([trend(engines.chApi, params), trend(engines.localApi, params)]);
    tt.same(fromCh.clickhouse, { fallback: null }, `${zone}, ${name}: computed on ClickHouse`);
    tt.equal(fromCh.clickhouse_export?.caught_up, true, `${zone}, ${name}: after the export caught up`);
    tt.same(essence(fromCh), essence(fromLocal), `${zone}, ${name}: the local engine's answer`);
    const path = (next: string | null) => (next === null ? null : new URL(next).search);
    tt.equal(path(fromCh.next), path(fromLocal.next), `${zone}, ${name}: the same next page`);
  }
}

t.test('trends in UTC: ClickHouse answers as the local engine', async (tt) => {
  const first = await trend(engines.localApi, { events: [pageviews] });
  tt.ok((first.result[0].count as number) > 50, 'the data set has pageviews (not zeros on both sides)');
  const tech = await trend(engines.localApi, SUPPORTED.find(([n]) => n === 'a group property filter')![1]);
  tt.ok(tech.result[0].count > 0 && tech.result[0].count < first.result[0].count, `pageviews of tech companies: some (${tech.result[0].count}), not all`);
  await compareAll(tt, 'UTC');
});

t.test("the project's test-account filters (event properties) on ClickHouse", async (tt) => {
  const filters = [{ key: '$current_url', value: 'blog', operator: 'not_icontains', type: 'event' }];
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { test_account_filters: filters })).status, 200);
  const params = { events: [pageviews], filter_test_accounts: true, breakdown: '$browser', breakdown_type: 'event' };
  const [fromCh, fromLocal, unfiltered] = await Promise.all([trend(engines.chApi, params), trend(engines.localApi, params), trend(engines.localApi, { ...params, filter_test_accounts: false })]);
  tt.same(fromCh.clickhouse, { fallback: null }, 'computed on ClickHouse');
  tt.same(essence(fromCh), essence(fromLocal), "the local engine's answer");
  const total = (body: any) => body.result.reduce((a: number, r: any) => a + r.count, 0);
  tt.ok(total(fromLocal) < total(unfiltered), 'the filters leave events out');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { test_account_filters: [] })).status, 200);
});

t.test('trends in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  await compareAll(tt, 'New York');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test('the TrendsQuery kind of /query/ is computed on ClickHouse too', async (tt) => {
  const query = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], interval: 'week', dateRange: DATES,
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } };
  const [fromCh, fromLocal] = await Promise.all([engines.chApi, engines.localApi].map(async (api) => {
    const res = await api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' });
    tt.equal(res.status, 200);
    return res.body;
  }));
  tt.same(fromCh.clickhouse, { fallback: null }, 'computed on ClickHouse');
  tt.ok(essence(fromCh).length >= 3, 'one series per browser');
  tt.same(essence(fromCh), essence(fromLocal), "the local engine's answer");
});

t.test('what ClickHouse does not compute yet falls back to the local engine and says why', async (tt) => {
  for (const [name, params, reason] of FALLBACKS) {
    const [fromCh, fromLocal] = await Promise.all([trend(engines.chApi, params), trend(engines.localApi, params)]);
    tt.match(fromCh.clickhouse?.fallback, reason, `${name}: falls back, saying ${fromCh.clickhouse?.fallback}`);
    tt.same(essence(fromCh), essence(fromLocal), `${name}: the local engine's answer`);
  }
  const local = await trend(engines.localApi, { events: [pageviews] });
  tt.equal(local.clickhouse, undefined, 'the local engine says nothing of ClickHouse');
});

t.test("person properties at the event are computed on ClickHouse", async (tt) => {
  for (const [name, params] of BY_PERSON) {
    const [fromCh, fromLocal] = await Promise.all([trend(engines.chApi, params), trend(engines.localApi, params)]);
    tt.same(fromCh.clickhouse, { fallback: null }, `${name}: computed on ClickHouse`);
    // The days, and every pageview counted under exactly one breakdown value.
    const outline = (body: any) => ({ days: body.result[0].days, series: body.result.length > 0, total: name.includes('breakdown') ? body.result.reduce((a: number, r: any) => a + r.count, 0) : null });
    tt.same(outline(fromCh), outline(fromLocal), `${name}: the local engine's days${name.includes('breakdown') ? ' and total over the breakdown values' : ''}`);
  }
});

t.test("another project's events in the same ClickHouse database are never counted", async (tt) => {
  const before = await trend(engines.chApi, { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], breakdown: '$browser', breakdown_type: 'event' });
  const created = await engines.chApi.post('/api/projects/', { name: 'other team' });
  tt.equal(created.status, 201);
  const other = String(created.body.id);
  const at = new Date(START + 3 * DAY).toISOString();
  const batch = [
    event('b-visitor', '$pageview', { $browser: 'B-secret' }, { timestamp: at }),
    event('anon-1', '$pageview', { $browser: 'Chrome' }, { timestamp: at }), // a distinct id project A has too
  ];
  const sent = await fetch(`${engines.onClickHouse.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  tt.equal(sent.status, 200);
  // Project B sees its own events through the same path (so an unchanged A means guarded, not missing).
  const own = await trend(engines.chApi, { events: [pageviews], breakdown: '$browser', breakdown_type: 'event' }, other);
  tt.same(own.clickhouse, { fallback: null });
  tt.same(own.result.map((r: any) => [r.breakdown_value, r.count]).sort(), [['B-secret', 1], ['Chrome', 1]], "project B's two pageviews");
  const after = await trend(engines.chApi, { events: [pageviews, { ...pageviews, math: 'dau', order: 1 }], breakdown: '$browser', breakdown_type: 'event' });
  tt.same(essence(after), essence(before), 'project A: the same answer as before project B had events');
});
