// The persons of a point answered by ClickHouse (QUILL_ANALYTICS=clickhouse, issue 33): one Quill exporting into
// chdb and answering from it, one on its own engine, fed the same events (test/helpers/two-engines.ts). The persons
// behind a trends point (a breakdown value among them), a stickiness, lifecycle and retention point and a funnel step
// must be the same on both — the same persons, properties and distinct ids, in the same order, with the same pages
// and `next` — through the legacy persons/* endpoints and InsightActorsQuery, in UTC and in New York (a DST change
// inside the data); what ClickHouse cannot list falls back and says why.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);
const DATES = { date_from: '2026-10-25', date_to: '2026-11-09' };
const NAMES = ['$pageview', 'signup', '$pageview', 'pay', '$pageview', 'signup'];

/**
 * 24 visitors over two weeks across the end of DST in New York, active on 1-8 days each, two thirds identified
 * (merges). Each batch brings one new person (its anonymous events; the identification and the identified events
 * come in the next batch, all from one distinct id), and every batch is applied before the next: both Quills number
 * their persons alike, the order the persons of a point are listed in. One event has no person (a personless actor: counted in its
 * points, never listed, as PostHog lists persons only).
 */
function dataset(): ReturnType<typeof event>[][] {
  const browsers = ['Chrome', 'Safari', 'Firefox'];
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 24; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const visits = 1 + (u % 8);
    const anonymous: ReturnType<typeof event>[] = [];
    const identified: ReturnType<typeof event>[] = [];
    let identifiedFrom = Infinity;
    for (let k = 0; k < visits * 2; k++) {
      // Hours near midnight UTC land on another local day in New York: the zone changes the answer.
      const at = new Date(START + ((u * 5 + Math.floor(k / 2) * (1 + (u % 3))) % 15) * DAY + ((u * 7 + k * 5) % 24) * 3_600_000 + k * 60_000).toISOString();
      const name = NAMES[(u + k * 5) % NAMES.length]!;
      const props: Record<string, unknown> = { $browser: browsers[(u + k) % 3], rank: (u + k) % 4 === 0 ? 2.5 : (u + k) % 2 };
      if (k % 5 === 4) delete props.$browser;
      if (k === 0) props.$set = { email: `person${u}@example.com`, tier: u % 2 ? 'gold' : 'basic' };
      const later = u % 3 !== 0 && k >= visits;
      if (later) identifiedFrom = Math.min(identifiedFrom, Date.parse(at));
      (later ? identified : anonymous).push(event(later ? user : anon, name, props, { timestamp: at }));
    }
    batches.push(anonymous);
    if (identified.length > 0) {
      batches.push([event(user, '$identify', { $anon_distinct_id: anon }, { timestamp: new Date(identifiedFrom - 1000).toISOString() }), ...identified]);
    }
  }
  batches.push([event('ghost', '$pageview', { $process_person_profile: false, $browser: 'Chrome' }, { timestamp: new Date(START + 3 * DAY).toISOString() })]);
  return batches;
}

const engines = twoEngines(t, dataset, { appliedBetweenBatches: true });

// A null parameter is left out, as the insights' own persons URLs leave it (entity_id: all events).
const enc = (params: Record<string, unknown>) => Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
  .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');

async function get(api: Client, path: string, params: Record<string, unknown>): Promise<any> {
  const res = await api.get(`/api/projects/@current/${path}/?${enc(params)}`);
  if (res.status !== 200) throw new Error(`${path} ${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** What must be equal: the whole answer but when it was made, which executor made it and the host in its URLs. */
function essence(body: any): unknown {
  const { last_refresh: _r, is_cached: _c, clickhouse: _ch, clickhouse_export: _e, ...rest } = body;
  return JSON.parse(JSON.stringify(rest).replace(/http:\/\/127\.0\.0\.1:\d+/g, ''));
}

/** The persons listed (legacy bodies: `results[0].people`; retention: `result[].person`). */
function people(body: any): any[] {
  return body.results?.[0]?.people ?? body.result?.map((r: any) => r.person) ?? [];
}

const pageviews = { id: '$pageview', type: 'events', name: '$pageview', order: 0 };
const signups = { id: 'signup', type: 'events', name: 'signup', order: 1 };
const trendsPoint = (series: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...DATES, events: [pageviews, signups], entity_id: series.id, entity_type: 'events', entity_math: series.math ?? 'total', entity_order: series.order, ...extra,
});
const BY_BROWSER = { breakdown: '$browser', breakdown_type: 'event' };
const lifecycle = { ...DATES, insight: 'LIFECYCLE', events: [pageviews] };
const sticky = { ...DATES, insight: 'STICKINESS', events: [pageviews], entity_id: '$pageview', entity_type: 'events' };
const retention = { date_to: '2026-11-09', total_intervals: 8, period: 'Day', target_entity: { id: '$pageview', type: 'events' }, returning_entity: { id: 'signup', type: 'events' } };
const e = (id: string, order: number) => ({ id, type: 'events', name: id, order });
const funnel = { ...DATES, events: [e('$pageview', 0), e('signup', 1), e('pay', 2)] };

/** [name, persons path, parameters] of every point compared. */
const POINTS: [string, string, Record<string, unknown>][] = [
  ['trends: a day of a series', 'trends', trendsPoint(pageviews, { date_from: '2026-10-31' })],
  ['trends: a day of unique users of a second series', 'trends', trendsPoint({ ...signups, math: 'dau' }, { events: [pageviews, { ...signups, math: 'dau' }], date_from: '2026-11-02' })],
  ['trends: a breakdown value', 'trends', trendsPoint(pageviews, { ...BY_BROWSER, date_from: '2026-11-02', breakdown_value: 'Chrome' })],
  ['trends: the breakdown value "none"', 'trends', trendsPoint(pageviews, { ...BY_BROWSER, date_from: '2026-11-02', breakdown_value: '' })],
  ['trends: a number breakdown value', 'trends', trendsPoint(pageviews, { breakdown: 'rank', breakdown_type: 'event', date_from: '2026-11-05', breakdown_value: '2.5' })],
  ['trends: the whole range (a total), paged', 'trends', trendsPoint(pageviews, { display: 'ActionsTable', limit: 5, offset: 5 })],
  ['trends: cumulative, searched', 'trends', trendsPoint(pageviews, { display: 'ActionsLineGraphCumulative', date_from: '2026-11-01', search: 'person1' })],
  ['trends: a day with an event of no person', 'trends', trendsPoint(pageviews, { ...BY_BROWSER, date_from: '2026-10-29', breakdown_value: 'Chrome' })],
  ['trends: all events, a property filter', 'trends', trendsPoint({ id: null, order: 0 }, { events: [{ id: null, type: 'events', name: 'All events', order: 0 }], date_from: '2026-11-05', properties: [{ key: '$browser', value: 'Safari', operator: 'is_not', type: 'event' }] })],
  ['trends: all time (a total)', 'trends', trendsPoint(pageviews, { date_from: 'all', display: 'ActionsTable' })],
  ['stickiness: one day', 'stickiness', { ...sticky, stickiness_days: 1 }],
  ['stickiness: three days, paged', 'stickiness', { ...sticky, stickiness_days: 3, limit: 2 }],
  ['stickiness: weeks', 'stickiness', { ...sticky, interval: 'week', stickiness_days: 2 }],
  ['stickiness: all time, weeks', 'stickiness', { ...sticky, interval: 'week', date_from: 'all', stickiness_days: 1 }],
  ['lifecycle: all time, weeks, new', 'lifecycle', { ...lifecycle, interval: 'week', date_from: 'all', target_date: '2026-10-27', lifecycle_type: 'new' }],
  ['lifecycle: new', 'lifecycle', { ...lifecycle, target_date: '2026-10-31', lifecycle_type: 'new' }],
  ['lifecycle: returning', 'lifecycle', { ...lifecycle, target_date: '2026-10-29', lifecycle_type: 'returning' }],
  ['lifecycle: resurrecting', 'lifecycle', { ...lifecycle, target_date: '2026-11-06', lifecycle_type: 'resurrecting' }],
  ['lifecycle: dormant, paged', 'lifecycle', { ...lifecycle, target_date: '2026-11-05', lifecycle_type: 'dormant', limit: 2, offset: 1 }],
  ['retention: a cohort', 'retention', { ...retention, breakdown_values: [0] }],
  ['retention: a later cohort, paged', 'retention', { ...retention, selected_interval: 2, limit: 2 }],
  ['retention: first time', 'retention', { ...retention, retention_type: 'retention_first_time', breakdown_values: [3] }],
  ['funnel: entered', 'funnel', { ...funnel, funnel_step: 1 }],
  ['funnel: converted, paged', 'funnel', { ...funnel, funnel_step: 2, limit: 3, offset: 2 }],
  ['funnel: dropped before step 3', 'funnel', { ...funnel, funnel_step: -3 }],
  ['funnel: a breakdown value', 'funnel', { ...funnel, ...BY_BROWSER, funnel_step: 1, funnel_step_breakdown: ['Safari'] }],
  ['funnel: unordered, custom steps', 'funnel', { ...funnel, funnel_order_type: 'unordered', funnel_custom_steps: [2, 3] }],
  ['funnel trends: dropped off in an entrance period', 'funnel', { ...funnel, funnel_viz_type: 'trends', entrance_period_start: '2026-11-01 00:00:00', drop_off: true }],
  ['funnel trends: converted to step 2 in an entrance period', 'funnel', { ...funnel, funnel_viz_type: 'trends', funnel_from_step: 0, funnel_to_step: 1, entrance_period_start: '2026-11-01 00:00:00', drop_off: false }],
  ['funnel trends: a start that is no period\'s', 'funnel', { ...funnel, funnel_viz_type: 'trends', entrance_period_start: '2026-11-01 05:00:00', drop_off: true }],
  // The person's properties at the event (each visitor's anonymous events are applied before its $identify here, so
  // both Quills give every event the same ones).
  ['trends: the whole range, a person property filter', 'trends', trendsPoint(pageviews, { display: 'ActionsTable', properties: [{ key: 'tier', value: 'gold', operator: 'exact', type: 'person' }] })],
  ['trends: the whole range, a person breakdown value', 'trends', trendsPoint(pageviews, { breakdown: 'tier', breakdown_type: 'person', display: 'ActionsTable', breakdown_value: 'gold' })],
  ['funnel: a person breakdown value', 'funnel', { ...funnel, breakdown: 'tier', breakdown_type: 'person', funnel_step: 1, funnel_step_breakdown: ['gold'] }],
];

async function compareAll(tt: Tap.Test, zone: string): Promise<void> {
  for (const [name, path, params] of POINTS) {
    const [fromCh, fromLocal] = await Promise.all([get(engines.chApi, `persons/${path}`, params), get(engines.localApi, `persons/${path}`, params)]);
    tt.has(fromCh.clickhouse, { fallback: null }, `${zone}, ${name}: listed from ClickHouse`);
    tt.equal(fromCh.clickhouse_export?.caught_up, true, `${zone}, ${name}: after the export caught up`);
    tt.same(essence(fromCh), essence(fromLocal), `${zone}, ${name}: the local engine's persons, order and pages`);
  }
}

t.test('the persons of each kind of point in UTC: ClickHouse lists them as the local engine', async (tt) => {
  // Not empty on both sides: each kind's point has persons to compare.
  for (const [name, path, params] of POINTS) {
    if (/paged|searched|no period/.test(name)) continue;
    tt.ok(people(await get(engines.localApi, `persons/${path}`, params)).length > 0, `${name}: persons to list`);
  }
  const paged = await get(engines.localApi, 'persons/trends', trendsPoint(pageviews, { display: 'ActionsTable', limit: 5 }));
  tt.match(paged.next, /offset=5/, 'the whole range has more than a page');
  await compareAll(tt, 'UTC');
});

t.test('following `next` walks the same pages on both', async (tt) => {
  let [ch, local] = [`persons/trends/?${enc(trendsPoint(pageviews, { display: 'ActionsTable', limit: 7 }))}`, ''];
  local = ch;
  for (let page = 0; page < 10 && ch; page++) {
    const [a, b] = await Promise.all([engines.chApi.get(`/api/projects/@current/${ch}`), engines.localApi.get(`/api/projects/@current/${local}`)]);
    tt.same(essence(a.body), essence(b.body), `page ${page}`);
    const rest = (url: string | null) => (url ? url.replace(/^.*\/persons\//, 'persons/') : '');
    [ch, local] = [rest(a.body.next), rest(b.body.next)];
  }
  tt.equal(ch, '', 'the last page says there is no next');
});

t.test('the persons of each kind of point in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  await compareAll(tt, 'New York');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test('InsightActorsQuery lists the same actors from ClickHouse', async (tt) => {
  const pv = { kind: 'EventsNode', event: '$pageview' };
  const dateRange = DATES;
  const queries: [string, Record<string, unknown>][] = [
    ['trends, a breakdown value', { source: { kind: 'TrendsQuery', series: [pv], dateRange, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }, day: '2026-11-02', series: 0, breakdown: 'Safari' }],
    ['stickiness', { source: { kind: 'StickinessQuery', series: [pv], dateRange }, day: 2, series: 0 }],
    ['lifecycle', { source: { kind: 'LifecycleQuery', series: [pv], dateRange }, day: '2026-10-29', status: 'returning' }],
    ['retention', { source: { kind: 'RetentionQuery', dateRange: { date_to: '2026-11-09' }, retentionFilter: { period: 'Day', totalIntervals: 8, targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } }, interval: 3 }],
    ['funnel, paged', { source: { kind: 'FunnelsQuery', series: [pv, { kind: 'EventsNode', event: 'signup' }], dateRange }, funnelStep: 2, limit: 3, offset: 1 }],
  ];
  for (const [name, query] of queries) {
    const [fromCh, fromLocal] = await Promise.all([engines.chApi, engines.localApi].map(async (api) => {
      const res = await api.post('/api/projects/@current/query/', { query: { kind: 'InsightActorsQuery', ...query } });
      tt.equal(res.status, 200, `${name}: ${JSON.stringify(res.body).slice(0, 300)}`);
      return res.body;
    }));
    tt.has(fromCh.clickhouse, { fallback: null }, `${name}: listed from ClickHouse`);
    tt.ok(fromLocal.results.length > 0, `${name}: actors to list`);
    tt.same(essence(fromCh), essence(fromLocal), `${name}: the local engine's actors`);
  }
});

t.test('what ClickHouse cannot list falls back to the local engine and says why', async (tt) => {
  const fallbacks: [string, string, Record<string, unknown>, RegExp][] = [
    ['an element condition not printed yet', 'trends', trendsPoint(pageviews, { date_from: '2026-11-03', properties: [{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }] }), /operator is_date_after/],
  ];
  for (const [name, path, params, reason] of fallbacks) {
    const [fromCh, fromLocal] = await Promise.all([get(engines.chApi, `persons/${path}`, params), get(engines.localApi, `persons/${path}`, params)]);
    tt.match(fromCh.clickhouse?.fallback, reason, `${name}: falls back, saying ${fromCh.clickhouse?.fallback}`);
    tt.same(essence(fromCh), essence(fromLocal), `${name}: the local engine's persons`);
  }
  tt.equal((await get(engines.localApi, 'persons/trends', POINTS[0]![2])).clickhouse, undefined, 'the local engine says nothing of ClickHouse');
});

t.test('a person deleted since its events: the local engine answers, ranking it as it does', async (tt) => {
  const point = trendsPoint(pageviews, { display: 'ActionsTable' });
  const before = await get(engines.localApi, 'persons/trends', point);
  const victim = people(before)[1];
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.delete(`/api/projects/@current/persons/${victim.uuid}/`)).status, 204);
  const [fromCh, fromLocal] = await Promise.all([get(engines.chApi, 'persons/trends', point), get(engines.localApi, 'persons/trends', point)]);
  tt.match(fromCh.clickhouse?.fallback, /deleted/, `falls back, saying ${fromCh.clickhouse?.fallback}`);
  // Beside the personless visitor (counted in the point, with no person to list: missing before already).
  tt.equal(fromLocal.missing_persons, before.missing_persons + 1, 'the deleted person counted as missing');
  tt.same(essence(fromCh), essence(fromLocal), "the local engine's persons");
});
