// Funnels answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb and answering funnels
// from it, one on its own engine, fed the same events. The same funnel requests (legacy endpoint and FunnelsQuery)
// must answer the same on both — step counts, conversion times, breakdown values — in UTC and in New York (a DST
// change inside the data); a second project's events in the same database are never counted; what ClickHouse does
// not gather yet falls back and says so.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';
import { aligned, insightQuery } from '../helpers/insight-compare.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);
const DATES = { date_from: '2026-10-25', date_to: '2026-11-09' };
const NAMES = ['$pageview', 'signup', 'signup', 'pay', 'cancel', 'pay', '$pageview'];

/**
 * 30 visitors over two weeks across the end of DST in New York: page views, signups (some with plan "pro", so a
 * `signup {plan: pro}` step and a later plain `signup` step need two events), payments, cancellations (the
 * exclusion), browsers varying from event to event (breakdown attribution), two thirds identified midway (merges).
 * No two events of a person share an instant (ties' order is not defined across engines).
 */
function dataset(): ReturnType<typeof event>[][] {
  const browsers = ['Chrome', 'Safari', 'Firefox'];
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 30; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const batch: ReturnType<typeof event>[] = [];
    for (let k = 0; k < 12; k++) {
      const at = new Date(START + ((u * 5 + k * 3) % 14) * DAY / (k % 3 === 0 ? 1 : 7) + ((u * 13 + k * 7) % 24) * 3_600_000 + k * 61_000).toISOString();
      const id = u % 3 !== 0 && k >= 6 ? user : anon;
      const name = NAMES[(u * 3 + k * 5) % NAMES.length]!;
      const props: Record<string, unknown> = { $browser: browsers[(u + 2 * k) % 3] };
      if (k % 4 === 1) delete props.$browser;
      // Breakdown values that are not strings: numbers, booleans, null.
      props.rank = k % 5 === 0 ? null : (u + k) % 3 === 0 ? 2.5 : (u + k) % 3;
      if (k % 3 === 0) props.vip = u % 4 === 0;
      if (name === 'signup' && (u + k) % 2 === 0) props.plan = 'pro';
      if (k === 0) props.$set = { tier: u % 2 ? 'gold' : 'basic' };
      batch.push(event(id, name, props, { timestamp: at }));
      if (u % 3 !== 0 && k === 5) batch.push(event(user, '$identify', { $anon_distinct_id: anon }, { timestamp: new Date(Date.parse(at) + 17).toISOString() }));
    }
    batches.push(batch);
  }
  return batches;
}

const engines = twoEngines(t, dataset);

async function funnel(api: Client, params: Record<string, unknown>, project = '@current'): Promise<any> {
  const res = await api.get(`/api/projects/${project}/insights/funnel/?${insightQuery({ ...DATES, ...params })}`);
  if (res.status !== 200) throw new Error(`${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** What must be equal: the whole result (steps, counts, conversion times, breakdown values, URLs). */
const essence = (body: any): unknown => body.result ?? body.results;

/** Persons who entered (the first step's count, summed over breakdown values). */
function entered(body: any): number {
  const r = body.result ?? body.results;
  const lists = Array.isArray(r[0]) ? r : [r];
  return lists.reduce((a: number, l: any[]) => a + l[0].count, 0);
}

const e = (id: string, order: number, properties?: unknown[]) => ({ id, type: 'events', name: id, order, ...(properties ? { properties } : {}) });
const PRO = [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }];
/** `signup {plan: pro}` then a plain `signup`: one event cannot be both steps. */
const NARROWING = [e('signup', 0, PRO), e('signup', 1), e('pay', 2)];
/** `signup {plan: pro}` and `signup {plan is not pro}`: one event name, but no event matches both. */
const PRO_OR_NOT = [e('signup', 0, PRO), e('signup', 1, [{ ...PRO[0], operator: 'is_not' }]), e('pay', 2)];
const VIEW_SIGNUP_PAY = [e('$pageview', 0), e('signup', 1), e('pay', 2)];
const CANCEL = (from: number, to: number) => [{ id: 'cancel', type: 'events', name: 'cancel', funnel_from_step: from, funnel_to_step: to }];
const BY_BROWSER = { breakdown: '$browser', breakdown_type: 'event' };

const SUPPORTED: [string, Record<string, unknown>][] = [
  ['ordered, a repeated event with a narrowing filter', { events: NARROWING }],
  ['strict, a repeated event with a narrowing filter', { events: NARROWING, funnel_order_type: 'strict' }],
  ['unordered, a repeated event with a narrowing filter', { events: NARROWING, funnel_order_type: 'unordered' }],
  ['unordered, one event name with filters no event matches both of', { events: PRO_OR_NOT, funnel_order_type: 'unordered' }],
  ['ordered, two-day window', { events: VIEW_SIGNUP_PAY, funnel_window_interval: 2, funnel_window_interval_unit: 'day' }],
  ['ordered, five-hour window', { events: VIEW_SIGNUP_PAY, funnel_window_interval: 5, funnel_window_interval_unit: 'hour' }],
  ['strict', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'strict' }],
  ['unordered', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'unordered' }],
  ['exclusion between steps 0 and 1', { events: VIEW_SIGNUP_PAY, exclusions: CANCEL(0, 1) }],
  ['exclusion over the whole funnel, unordered', { events: VIEW_SIGNUP_PAY, exclusions: CANCEL(0, 2), funnel_order_type: 'unordered' }],
  ['exclusion, three-day window', { events: VIEW_SIGNUP_PAY, exclusions: CANCEL(1, 2), funnel_window_days: 3 }],
  ['any event then pay', { events: [{ id: null, type: 'events', name: 'All events', order: 0 }, e('pay', 1)] }],
  ['property filter on the whole funnel', { events: VIEW_SIGNUP_PAY, properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }] }],
  ['strict with a property filter (the next event among those kept)', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'strict', properties: [{ key: '$browser', value: 'Firefox', operator: 'is_not', type: 'event' }] }],
  ['unordered, breakdown by step 2', { events: NARROWING, funnel_order_type: 'unordered', ...BY_BROWSER, breakdown_attribution_type: 'step', breakdown_attribution_value: 2 }],
  ['breakdown, first touch', { events: VIEW_SIGNUP_PAY, ...BY_BROWSER }],
  ['breakdown, last touch', { events: NARROWING, ...BY_BROWSER, breakdown_attribution_type: 'last_touch' }],
  ['breakdown, step 1', { events: VIEW_SIGNUP_PAY, ...BY_BROWSER, breakdown_attribution_type: 'step', breakdown_attribution_value: 1 }],
  ['breakdown, all events', { events: VIEW_SIGNUP_PAY, ...BY_BROWSER, breakdown_attribution_type: 'all_events' }],
  ['breakdown by a number property', { events: VIEW_SIGNUP_PAY, breakdown: 'rank', breakdown_type: 'event' }],
  ['breakdown by a boolean property, last touch', { events: VIEW_SIGNUP_PAY, breakdown: 'vip', breakdown_type: 'event', breakdown_attribution_type: 'last_touch' }],
  ['breakdown with a limit ("Other")', { events: VIEW_SIGNUP_PAY, ...BY_BROWSER, breakdown_limit: 1 }],
  ['breakdown with an exclusion, strict', { events: VIEW_SIGNUP_PAY, ...BY_BROWSER, exclusions: CANCEL(0, 2), funnel_order_type: 'strict' }],
  ['funnel trends per day', { events: VIEW_SIGNUP_PAY, funnel_viz_type: 'trends' }],
  ['funnel trends per day, steps 1 to 2, by browser with a limit', { events: VIEW_SIGNUP_PAY, funnel_viz_type: 'trends', funnel_from_step: 1, funnel_to_step: 2, ...BY_BROWSER, breakdown_limit: 1 }],
  ['funnel trends per week, unordered', { events: VIEW_SIGNUP_PAY, funnel_viz_type: 'trends', interval: 'week', funnel_order_type: 'unordered' }],
  ['time to convert', { events: NARROWING, funnel_viz_type: 'time_to_convert', funnel_from_step: 0, funnel_to_step: 2 }],
  ['time to convert, steps 1 to 2, 4 bins, exclusion', { events: VIEW_SIGNUP_PAY, funnel_viz_type: 'time_to_convert', funnel_from_step: 1, funnel_to_step: 2, bin_count: 4, exclusions: CANCEL(0, 1) }],
  ['time to convert, strict', { events: VIEW_SIGNUP_PAY, funnel_viz_type: 'time_to_convert', funnel_order_type: 'strict' }],
  // From Quill's own first event, as the local engine's range starts.
  ['date_from=all', { events: VIEW_SIGNUP_PAY, date_from: 'all' }],
];
const FALLBACKS: [string, Record<string, unknown>, RegExp][] = [
  ['an element condition not printed yet', { events: VIEW_SIGNUP_PAY, properties: [{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }] }, /operator is_date_after/],
];
/**
 * By the person's properties at the event (the snapshot the export writes with each event): computed on ClickHouse.
 * Compared with the other Quill by what does not depend on merges (which person's properties an event had after a
 * merge across shards depends on which shard applied first); exact answers on one Quill:
 * test/e2e/person-properties-clickhouse.test.ts.
 */
const BY_PERSON: [string, Record<string, unknown>][] = [
  ['person property filter', { events: VIEW_SIGNUP_PAY, properties: [{ key: 'tier', value: 'gold', operator: 'exact', type: 'person' }] }],
  ['person breakdown', { events: VIEW_SIGNUP_PAY, breakdown: 'tier', breakdown_type: 'person' }],
];

/**
 * Whether ClickHouse folds the funnel itself and sends back sums (funnel-fold-sql.ts): ordered and strict funnels,
 * and unordered ones whose steps are distinct events (steps, trends, time to convert), whatever the attribution; an
 * unordered funnel of `signup` twice is gathered and folded by Quill.
 */
const foldedThere = (p: Record<string, unknown>) => p.funnel_order_type !== 'unordered' || p.events !== NARROWING;

async function compareAll(tt: Tap.Test, zone: string): Promise<void> {
  for (const [name, params] of SUPPORTED) {
    const [fromCh, fromLocal] = await Promise.all([funnel(engines.chApi, params), funnel(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: foldedThere(params) }, `${zone}, ${name}: computed on ClickHouse, ${foldedThere(params) ? 'folded there' : 'gathered and folded by Quill'}`);
    tt.ok(fromCh.clickhouse.bytes_received > 0, `${zone}, ${name}: ${fromCh.clickhouse.bytes_received} bytes received`);
    tt.equal(fromCh.clickhouse_export?.caught_up, true, `${zone}, ${name}: after the export caught up`);
    tt.same(aligned(essence(fromCh), essence(fromLocal)), essence(fromLocal), `${zone}, ${name}: the local engine's answer`);
  }
}

t.test('funnels in UTC: ClickHouse answers as the local engine', async (tt) => {
  const narrowing = await funnel(engines.localApi, { events: NARROWING });
  tt.ok(narrowing.result[0].count > 5 && narrowing.result[1].count > 0, 'persons enter and convert (not zeros on both sides)');
  const same = await funnel(engines.localApi, { events: [e('signup', 0, PRO), e('signup', 1, PRO)] });
  tt.ok(same.result[1].count < same.result[0].count, 'a step repeated needs a second event (not everyone has two)');
  const converted = (body: any) => body.result[2].count;
  tt.ok(converted(await funnel(engines.localApi, { events: VIEW_SIGNUP_PAY, exclusions: CANCEL(0, 2) })) < converted(await funnel(engines.localApi, { events: VIEW_SIGNUP_PAY })),
    'the exclusion drops conversions');
  const valuesOf = async (property: string) => (await funnel(engines.localApi, { events: VIEW_SIGNUP_PAY, breakdown: property, breakdown_type: 'event' })).result
    .map((steps: any[]) => steps[0].breakdown_value[0]).sort();
  tt.same(await valuesOf('rank'), ['1', '2', '2.5'], 'number breakdown values as their text (first touch)');
  tt.same(await valuesOf('vip'), ['false', 'true'], 'boolean breakdown values as their text');
  await compareAll(tt, 'UTC');
});

t.test("the project's test-account filters (event properties) on ClickHouse", async (tt) => {
  const filters = [{ key: '$browser', value: 'Firefox', operator: 'is_not', type: 'event' }];
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { test_account_filters: filters })).status, 200);
  const params = { events: VIEW_SIGNUP_PAY, filter_test_accounts: true };
  const [fromCh, fromLocal] = await Promise.all([funnel(engines.chApi, params), funnel(engines.localApi, params)]);
  tt.has(fromCh.clickhouse, { fallback: null }, 'computed on ClickHouse');
  tt.same(aligned(essence(fromCh), essence(fromLocal)), essence(fromLocal), "the local engine's answer");
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { test_account_filters: [] })).status, 200);
});

t.test('funnels in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  // The UTC answers are cached (refresh only recomputes): the project's time zone is part of the cache key.
  const trends = { ...DATES, events: VIEW_SIGNUP_PAY, funnel_viz_type: 'trends' };
  for (const api of [engines.chApi, engines.localApi]) {
    const cachedBody = (await api.get(`/api/projects/@current/insights/funnel/?${insightQuery({ ...trends, refresh: false })}`)).body;
    tt.same(cachedBody.result, (await funnel(api, trends)).result, 'a cached funnel is not an answer of the old time zone');
  }
  await compareAll(tt, 'New York');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test('the FunnelsQuery kind of /query/ is computed on ClickHouse too', async (tt) => {
  const query = {
    kind: 'FunnelsQuery', dateRange: DATES,
    series: [{ kind: 'EventsNode', event: 'signup', properties: PRO }, { kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'pay' }],
    funnelsFilter: { funnelWindowInterval: 3, funnelWindowIntervalUnit: 'day', exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }] },
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
  };
  const [fromCh, fromLocal] = await Promise.all([engines.chApi, engines.localApi].map(async (api) => {
    const res = await api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' });
    tt.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    return res.body;
  }));
  tt.has(fromCh.clickhouse, { fallback: null }, 'computed on ClickHouse');
  tt.ok((fromCh.results as unknown[]).length >= 2, 'one funnel per browser');
  tt.same(aligned(essence(fromCh), essence(fromLocal)), essence(fromLocal), "the local engine's answer");
});

t.test('what ClickHouse does not gather yet falls back to the local engine and says why', async (tt) => {
  for (const [name, params, reason] of FALLBACKS) {
    const [fromCh, fromLocal] = await Promise.all([funnel(engines.chApi, params), funnel(engines.localApi, params)]);
    tt.match(fromCh.clickhouse?.fallback, reason, `${name}: falls back, saying ${fromCh.clickhouse?.fallback}`);
    tt.same(aligned(essence(fromCh), essence(fromLocal)), essence(fromLocal), `${name}: the local engine's answer`);
  }
  tt.equal((await funnel(engines.localApi, { events: NARROWING })).clickhouse, undefined, 'the local engine says nothing of ClickHouse');
});

t.test('person properties at the event are computed on ClickHouse', async (tt) => {
  for (const [name, params] of BY_PERSON) {
    const [fromCh, fromLocal] = await Promise.all([funnel(engines.chApi, params), funnel(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null }, `${name}: computed on ClickHouse`);
    tt.ok(entered(fromCh) > 0 && entered(fromLocal) > 0, `${name}: both answer`);
  }
});

t.test("another project's events in the same ClickHouse database are never counted", async (tt) => {
  const params = { events: VIEW_SIGNUP_PAY, ...BY_BROWSER };
  const before = await funnel(engines.chApi, params);
  const created = await engines.chApi.post('/api/projects/', { name: 'other team' });
  tt.equal(created.status, 201);
  const other = String(created.body.id);
  const at = (h: number) => new Date(START + 3 * DAY + h * 3_600_000).toISOString();
  const batch = [
    event('b-visitor', '$pageview', { $browser: 'B-secret' }, { timestamp: at(1) }),
    event('b-visitor', 'signup', { $browser: 'B-secret' }, { timestamp: at(2) }),
    event('b-visitor', 'pay', { $browser: 'B-secret' }, { timestamp: at(3) }),
    // A distinct id project A has too.
    event('anon-1', '$pageview', { $browser: 'Chrome' }, { timestamp: at(1) }),
    event('anon-1', 'signup', { $browser: 'Chrome' }, { timestamp: at(2) }),
  ];
  const sent = await fetch(`${engines.onClickHouse.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  tt.equal(sent.status, 200);
  // Project B sees its own events through the same path (so an unchanged A means guarded, not missing).
  const own = await funnel(engines.chApi, params, other);
  tt.has(own.clickhouse, { fallback: null });
  tt.same(own.result.map((steps: any[]) => [steps[0].breakdown_value[0], steps.map((s) => s.count)]).sort(), [['B-secret', [1, 1, 1]], ['Chrome', [1, 1, 0]]], "project B's two persons");
  const after = await funnel(engines.chApi, params);
  tt.same(essence(after), essence(before), 'project A: the same answer as before project B had events');
});
