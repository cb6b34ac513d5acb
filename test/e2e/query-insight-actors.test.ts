// InsightActorsQuery through POST /query/: the persons behind one point of each insight kind are the persons its
// legacy persons/* endpoint lists for the same point, as actor rows; the selectors and paging are checked.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';
import { novemberAt, threeVisitors } from '../helpers/three-visitors.js';

const server = quillForFile(t);
const enc = encodeURIComponent;
let P = '';

t.before(async () => {
  // A short tour on the 12th, in one session: a finishes it, b leaves after the start.
  P = await threeVisitors(server, 'insight actors', [
    { event: 'tour_start', distinct_id: 'a', timestamp: novemberAt(12, 15) }, { event: 'tour_end', distinct_id: 'a', timestamp: novemberAt(12, 15, 5) },
    { event: 'tour_start', distinct_id: 'b', timestamp: novemberAt(12, 15) },
  ]);
});

const pv = { kind: 'EventsNode', event: '$pageview' };
const signup = { kind: 'EventsNode', event: 'signup' };
const range = { date_from: '2026-11-10', date_to: '2026-11-12' };

async function actors(source: object, selectors: object = {}) {
  const res = await server.api.post(`${P}/query/`, { query: { kind: 'InsightActorsQuery', source, ...selectors } });
  if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`);
  return res.body;
}
/** The first distinct id of each actor row, in order. */
const ids = (body: any) => body.results.map((row: any[]) => row[0].distinct_ids[0]);

async function legacyPeople(path: string, params: Record<string, unknown>): Promise<any[]> {
  const qs = Object.entries(params).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  const res = await server.api.get(`${P}/persons/${path}/?${qs}`);
  if (res.status !== 200) throw new Error(`persons/${path}: ${res.status} ${res.text}`);
  return res.body.results ? res.body.results[0].people : res.body.result.map((r: any) => r.person);
}
const legacyIds = async (path: string, params: Record<string, unknown>) => (await legacyPeople(path, params)).map((p) => p.distinct_ids[0]);

t.test('trends: a day of a series, a breakdown value, a second series', async (t) => {
  const source = { kind: 'TrendsQuery', series: [{ ...pv, math: 'dau' }, signup], dateRange: range, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } };
  const day10 = await actors(source, { day: '2026-11-10', series: 0 });
  t.same(ids(day10).sort(), ['a', 'b']);
  t.same(ids(day10), await legacyIds('trends', { events: [{ id: '$pageview', math: 'dau', order: 0 }], breakdown: '$browser', date_from: '2026-11-10', entity_id: '$pageview', entity_type: 'events', entity_math: 'dau' }));
  t.same(day10.columns, ['actor', 'event_count']);
  t.match(day10, { hasMore: false, limit: 100, offset: 0, types: ['Person', 'UInt64'] });
  t.same(ids(await actors(source, { day: '2026-11-11', series: 0, breakdown: 'Chrome' })), ['a'], 'the breakdown value narrows the point');
  t.same(ids(await actors(source, { day: '2026-11-11', series: 0, breakdown: 'Safari' })), ['c']);
  t.same(ids(await actors(source, { day: '2026-11-12', series: 1 })).sort(), ['a', 'b'], 'the second series is signup');
  t.same(ids(await actors(source, { day: '2026-11-11', series: 1 })), ['a']);
  const bad = await server.api.post(`${P}/query/`, { query: { kind: 'InsightActorsQuery', source, day: '2026-11-10', series: 5 } });
  t.match([bad.status, bad.body], [400, { type: 'validation_error', attr: 'series' }]);
});

t.test('stickiness, lifecycle and retention', async (t) => {
  const sticky = { kind: 'StickinessQuery', series: [pv], dateRange: range };
  for (const [day, want] of [[3, ['a']], [2, ['b']], [1, ['c']]] as const) {
    const got = await actors(sticky, { day, series: 0 });
    t.same(ids(got), want, `active on exactly ${day} days`);
    t.same(ids(got), await legacyIds('stickiness', { events: [{ id: '$pageview' }], insight: 'STICKINESS', ...range, stickiness_days: day, entity_id: '$pageview', entity_type: 'events' }));
  }
  const lifecycle = { kind: 'LifecycleQuery', series: [pv], dateRange: range };
  t.same(ids(await actors(lifecycle, { day: '2026-11-11', status: 'dormant' })), ['b'], 'b skipped the 11th');
  t.same(ids(await actors(lifecycle, { day: '2026-11-12', status: 'resurrecting' })), ['b']);
  for (const status of ['new', 'returning', 'resurrecting', 'dormant']) for (const day of ['2026-11-11', '2026-11-12']) {
    t.same(ids(await actors(lifecycle, { day, status })), await legacyIds('lifecycle', { events: [{ id: '$pageview' }], insight: 'LIFECYCLE', ...range, target_date: day, lifecycle_type: status }), `${status} on ${day}`);
  }
  const retention = { kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, period: 'Day', totalIntervals: 3 }, dateRange: { date_to: '2026-11-12' } };
  const cohort = await actors(retention, { interval: 0 });
  t.same(cohort.columns, ['actor', 'appearances']);
  t.same(cohort.results.map((r: any[]) => [r[0].distinct_ids[0], r[1]]), [['a', [1, 1, 1]], ['b', [1, 0, 1]]], 'most appearances first');
  t.same(ids(cohort), await legacyIds('retention', { target_entity: { id: '$pageview', type: 'events' }, total_intervals: 3, date_to: '2026-11-12', selected_interval: 0 }));
  t.same(ids(await actors(retention, { interval: 1 })), ['a', 'c'], 'recurring: a is in the cohort of the 11th too');
});

t.test('funnels and paths', async (t) => {
  const funnel = { kind: 'FunnelsQuery', series: [pv, signup], dateRange: range, funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' } };
  const legacyFunnel = { events: [{ id: '$pageview', order: 0 }, { id: 'signup', order: 1 }], funnel_window_interval: 1, funnel_window_interval_unit: 'day', ...range };
  t.same(ids(await actors(funnel, { funnelStep: 2 })).sort(), ['a', 'b']);
  t.same(ids(await actors(funnel, { funnelStep: -2 })), ['c'], 'dropped before the signup');
  t.same(ids(await actors(funnel, { funnelStep: 1 })), await legacyIds('funnel', { ...legacyFunnel, funnel_step: 1 }));
  const paths = { kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['custom_event'] }, dateRange: range };
  const edges = (await server.api.post(`${P}/query/`, { query: paths })).body.results as any[];
  t.same(edges.map((e) => [e.source, e.target, e.value]), [['1_tour_start', '2_tour_end', 1]]);
  const legacyPaths = { include_event_types: ['custom_event'], ...range };
  const finished = await actors({ ...paths, pathsFilter: { ...paths.pathsFilter, pathEndKey: '2_tour_end' } });
  t.same(ids(finished), ['a'], 'the persons reaching the end of the tour');
  t.same(ids(finished), await legacyIds('path', { ...legacyPaths, path_end_key: '2_tour_end' }));
  const left = await actors({ ...paths, pathsFilter: { ...paths.pathsFilter, pathDropoffKey: '1_tour_start' } });
  t.same(ids(left), ['b'], 'the persons leaving after the start');
  t.same(ids(left), await legacyIds('path', { ...legacyPaths, path_dropoff_key: '1_tour_start' }));
});

t.test('paging, wrapped sources and mistakes', async (t) => {
  const source = { kind: 'TrendsQuery', series: [pv], dateRange: range, interval: 'day' };
  const first = await actors(source, { day: '2026-11-10', series: 0, limit: 1 });
  const second = await actors(source, { day: '2026-11-10', series: 0, limit: 1, offset: 1 });
  t.match([first.hasMore, second.hasMore], [true, false]);
  t.same([...ids(first), ...ids(second)].sort(), ['a', 'b'], 'two pages of one make the whole point');
  const wrapped = await actors({ kind: 'InsightVizNode', source }, { day: '2026-11-10', series: 0 });
  t.same(ids(wrapped).sort(), ['a', 'b'], 'an InsightVizNode source is unwrapped');
  for (const [query, attr] of [
    [{ kind: 'InsightActorsQuery' }, 'source'],
    [{ kind: 'InsightActorsQuery', source: { kind: 'EventsQuery', select: ['*'] } }, 'source'],
    [{ kind: 'InsightActorsQuery', source, day: '2026-11-10', limit: 0 }, 'limit'],
  ] as const) {
    const res = await server.api.post(`${P}/query/`, { query });
    t.match([res.status, res.body], [400, { type: 'validation_error', attr }], JSON.stringify(query));
  }
});

t.test('ActorsQuery with an InsightActorsQuery source: columns, search, paging', async (t) => {
  const source = { kind: 'InsightActorsQuery', source: { kind: 'TrendsQuery', series: [pv], dateRange: range, interval: 'day' }, day: '2026-11-10', series: 0 };
  const res = await server.api.post(`${P}/query/`, { query: { kind: 'ActorsQuery', source, select: ['actor', 'distinct_id', 'event_count'] } });
  t.equal(res.status, 200, res.text);
  t.same(res.body.columns, ['actor', 'distinct_id', 'event_count']);
  t.same(res.body.results.map((r: any[]) => r[1]).sort(), ['a', 'b']);
  t.same(res.body.results.map((r: any[]) => r[2]), [1, 1], 'one pageview each that day');
  const searched = await server.api.post(`${P}/query/`, { query: { kind: 'ActorsQuery', source, select: ['distinct_id'], search: 'b' } });
  t.same(searched.body.results, [['b']], 'search narrows the actors');
  const paged = await server.api.post(`${P}/query/`, { query: { kind: 'ActorsQuery', source, select: ['distinct_id'], limit: 1 } });
  t.match(paged.body, { hasMore: true, limit: 1, offset: 0 });
  const bad = await server.api.post(`${P}/query/`, { query: { kind: 'ActorsQuery', source, select: ['properties.email'] } });
  t.match([bad.status, bad.body], [400, { type: 'validation_error', attr: 'select' }]);
});
