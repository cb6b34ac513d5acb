// POST /api/projects/:id/query/: every insight kind answers what its legacy endpoint answers for the same question,
// the refresh modes (blocking, force_blocking, force_cache, async with polling and cancel), errors, and scopes.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';
import { threeVisitors } from '../helpers/three-visitors.js';

const server = quillForFile(t);
const enc = encodeURIComponent;
let P = '';

t.before(async () => {
  P = await threeVisitors(server, 'queries');
});

async function query(q: object, extra: object = {}) {
  return server.api.post(`${P}/query/`, { query: q, ...extra });
}
async function legacy(path: string, params: Record<string, unknown>) {
  const qs = Object.entries(params).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  const res = await server.api.get(`${P}/${path}?${qs}&refresh=true`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body.result;
}
const pv = { kind: 'EventsNode', event: '$pageview' };
const range = { date_from: '2026-11-10', date_to: '2026-11-12' };

t.test('each insight kind answers as its legacy endpoint', async (t) => {
  const trends = await query({ kind: 'TrendsQuery', series: [{ ...pv, math: 'dau' }], dateRange: range, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' }, trendsFilter: { display: 'ActionsLineGraph' } }, { refresh: 'force_blocking' });
  t.equal(trends.status, 200);
  const same = (got: any[], want: any[]) => t.same(got.map((s) => [s.label, s.data, s.breakdown_value]), want.map((s) => [s.label, s.data, s.breakdown_value]));
  same(trends.body.results, await legacy('insights/trend/', { events: [{ id: '$pageview', math: 'dau', order: 0 }], breakdown: '$browser', ...range }));
  t.match(trends.body, { is_cached: false, last_refresh: String, timezone: 'UTC', resolved_date_range: { date_from: '2026-11-10T00:00:00+00:00', date_to: '2026-11-12T23:59:59+00:00' } });
  const formula = await query({ kind: 'TrendsQuery', series: [pv, { kind: 'EventsNode', event: 'signup' }], dateRange: range, trendsFilter: { formula: 'A - B' } });
  t.same(formula.body.results[0].data, [0, 1, 0]);
  const compared = await query({ kind: 'TrendsQuery', series: [pv], dateRange: range, compareFilter: { compare: true } });
  t.same(compared.body.results.map((s: any) => s.compare_label), ['current', 'previous']);

  const steps = [pv, { kind: 'EventsNode', event: 'signup' }];
  const funnel = await query({ kind: 'FunnelsQuery', series: steps, dateRange: range, funnelsFilter: { funnelOrderType: 'ordered', funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' } });
  t.same(funnel.body.results.map((s: any) => s.count), (await legacy('insights/funnel/', { events: [{ id: '$pageview', order: 0 }, { id: 'signup', order: 1 }], funnel_window_interval: 1, funnel_window_interval_unit: 'day', ...range })).map((s: any) => s.count));
  t.same(funnel.body.results.map((s: any) => s.count), [3, 2]);

  const retention = await query({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, period: 'Day', totalIntervals: 3 }, dateRange: { date_to: '2026-11-12' } });
  t.same(retention.body.results.map((r: any) => r.values.map((v: any) => v.count)), (await legacy('insights/retention/', { target_entity: { id: '$pageview', type: 'events' }, total_intervals: 3, date_to: '2026-11-12' })).map((r: any) => r.values.map((v: any) => v.count)));

  const lifecycle = await query({ kind: 'LifecycleQuery', series: [pv], dateRange: range });
  t.same(lifecycle.body.results.map((s: any) => [s.status, s.data]), (await legacy('insights/trend/', { insight: 'LIFECYCLE', events: [{ id: '$pageview' }], ...range })).map((s: any) => [s.status, s.data]));
  const stickiness = await query({ kind: 'StickinessQuery', series: [pv], dateRange: range });
  t.same(stickiness.body.results[0].data, [1, 1, 1]);
  const paths = await query({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['$pageview'] }, dateRange: range });
  t.same(paths.body.results, await legacy('insights/path/', { include_event_types: ['$pageview'], ...range }));
});

t.test('refresh modes and the cache', async (t) => {
  const q = { kind: 'TrendsQuery', series: [pv], dateRange: range, interval: 'day' };
  const cacheOnly = await query(q, { refresh: 'force_cache' });
  t.same([cacheOnly.status, cacheOnly.body.results, cacheOnly.body.is_cached], [200, null, false], 'force_cache with nothing cached');
  let cached = false;
  for (let i = 0; i < 8 && !cached; i++) cached = (await query(q)).body.is_cached === true;
  t.ok(cached, 'blocking answers from the cache once computed');
  t.equal((await query(q, { refresh: 'force_blocking' })).body.is_cached, false);
  t.equal((await query(q, { refresh: true })).body.is_cached, false, 'legacy refresh=true forces');
  const started = await query(q, { refresh: 'force_async', client_query_id: 'abc' });
  t.equal(started.status, 202);
  t.match(started.body, { query_status: { id: String, complete: false, query_async: true }, client_query_id: 'abc' });
  let status: any = null;
  for (let i = 0; i < 100; i++) {
    status = (await server.api.get(`${P}/query/${started.body.query_status.id}/`)).body.query_status;
    if (status.complete) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.match(status, { complete: true, error: false, results: { results: [{ data: [2, 2, 2] }] } });
  const cancelled = await query(q, { refresh: 'force_async' });
  t.equal((await server.api.delete(`${P}/query/${cancelled.body.query_status.id}/`)).status, 204);
  t.equal((await server.api.get(`${P}/query/00000000-0000-0000-0000-000000000000/`)).status, 404);
});

t.test('bad queries and scopes', async (t) => {
  for (const [body, attr] of [
    [{}, 'query'], [{ query: { kind: 'Nope' } }, 'query'], [{ query: 'SELECT 1' }, 'query'],
    // An ActionsNode naming no action of the project (actions: test/e2e/actions-analytics.test.ts).
    [{ query: { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: 999999 }] } }, 'actions'],
    [{ query: { kind: 'TrendsQuery', series: [pv] }, refresh: 'sometimes' }, 'refresh'],
    [{ query: { kind: 'TrendsQuery', series: [pv], interval: 'fortnight' } }, 'interval'],
  ] as const) {
    const res = await server.api.post(`${P}/query/`, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body, { type: 'validation_error', attr }, JSON.stringify(body));
  }
  const key = await server.api.post('/api/personal_api_keys/', { label: 'q', scopes: ['query:read'] });
  const scoped = server.api.withKey(key.body.value);
  t.equal((await scoped.post(`${P}/query/`, { query: { kind: 'TrendsQuery', series: [pv], dateRange: range } })).status, 200, 'query:read can query');
  t.equal((await scoped.get(`${P}/feature_flags/`)).status, 403, 'and nothing else');
  const noScope = await server.api.post('/api/personal_api_keys/', { label: 'f', scopes: ['feature_flag:read'] });
  t.equal((await server.api.withKey(noScope.body.value).post(`${P}/query/`, { query: { kind: 'TrendsQuery', series: [pv] } })).status, 403);
});
