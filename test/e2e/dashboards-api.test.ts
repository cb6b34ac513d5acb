// Saved insights with a `query` (PostHog's stored form) or legacy `filters`, their results through the query cache,
// and dashboards: tiles placed by PATCH insights/:id {dashboards}, moved or removed by PATCH dashboards/:id, results
// on retrieval, the dashboard's date range override, soft deletion, validation errors and scopes.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const T = (day: number, h = 12) => new Date(Date.UTC(2026, 10, day, h)).toISOString();
let P = '';
let token = '';

t.before(async () => {
  const created = await server.api.post('/api/projects/', { name: 'dashboards' });
  P = `/api/projects/${created.body.id}`;
  token = created.body.api_token;
  const batch: object[] = [];
  for (const [id, days] of Object.entries({ a: [10, 11, 12], b: [10, 12], c: [11] })) for (const d of days) {
    batch.push({ event: '$pageview', distinct_id: id, timestamp: T(d) });
    if (id !== 'c') batch.push({ event: 'signup', distinct_id: id, timestamp: T(d, 13) });
  }
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
});

const range = { date_from: '2026-11-10', date_to: '2026-11-12' };
const trendsQuery = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange: range } };

t.test('an insight saved with a query has its result on retrieval, computed once then cached', async (t) => {
  const created = await server.api.post(`${P}/insights/`, { name: 'DAU', query: trendsQuery });
  t.equal(created.status, 201, created.text);
  t.same(created.body.query, trendsQuery);
  t.same(created.body.filters, {});
  const first = await server.api.get(`${P}/insights/${created.body.id}/`);
  t.equal(first.status, 200);
  t.same(first.body.result[0].data, [2, 2, 2]);
  t.equal(first.body.is_cached, false);
  t.type(first.body.last_refresh, 'string');
  // Each worker thread keeps its own cache: ask until the one that computed it answers.
  let again = await server.api.get(`${P}/insights/${created.body.id}/`);
  for (let i = 0; i < 8 && again.body.is_cached !== true; i++) again = await server.api.get(`${P}/insights/${created.body.id}/`);
  t.equal(again.body.is_cached, true);
  t.same(again.body.result, first.body.result);
  const forced = await server.api.get(`${P}/insights/${created.body.id}/?refresh=true`);
  t.equal(forced.body.is_cached, false);
  // The list only shows cached results: this one is cached now (by the worker thread that computed it).
  let listed;
  for (let i = 0; i < 8 && !listed?.result; i++) listed = (await server.api.get(`${P}/insights/`)).body.results.find((x: any) => x.id === created.body.id);
  t.same(listed.result[0].data, [2, 2, 2]);

  // Fresh events change the answer (the cache is per data version).
  const res = await fetch(`${server.q.base}/capture/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, event: '$pageview', distinct_id: 'd', timestamp: T(12, 15) }) });
  t.equal(res.status, 200);
  const fresh = await server.api.get(`${P}/insights/${created.body.id}/`);
  t.same(fresh.body.result[0].data, [2, 2, 3]);
});

t.test('legacy filters become the query form and answer the same', async (t) => {
  const filters = { insight: 'FUNNELS', events: [{ id: '$pageview', order: 0 }, { id: 'signup', order: 1 }], funnel_window_days: 1, ...range };
  const created = await server.api.post(`${P}/insights/`, { name: 'Signup funnel', filters });
  t.equal(created.status, 201, created.text);
  t.match(created.body.query, { kind: 'InsightVizNode', source: { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], funnelsFilter: { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' } } });
  const got = await server.api.get(`${P}/insights/${created.body.id}/`);
  const viaQuery = await server.api.post(`${P}/query/`, { query: created.body.query.source });
  t.same(got.body.result.map((s: any) => s.count), viaQuery.body.results.map((s: any) => s.count));
  t.same(got.body.result.map((s: any) => s.count), [4, 2]);
  // New filters replace what the insight runs.
  const patched = await server.api.patch(`${P}/insights/${created.body.id}/`, { filters: { insight: 'TRENDS', events: [{ id: 'signup' }], ...range } });
  t.equal(patched.status, 200);
  t.equal(patched.body.query.source.kind, 'TrendsQuery');
  const trend = await server.api.get(`${P}/insights/${created.body.id}/`);
  t.same(trend.body.result[0].data, [2, 1, 2]);
});

t.test('invalid queries and filters are refused with the documented body', async (t) => {
  const unknownKind = await server.api.post(`${P}/insights/`, { query: { kind: 'InsightVizNode', source: { kind: 'NoSuchQuery' } } });
  t.equal(unknownKind.status, 400);
  t.match(unknownKind.body, { type: 'validation_error', code: 'invalid_input', attr: 'query', detail: /NoSuchQuery/ });
  const badFilters = await server.api.post(`${P}/insights/`, { filters: { insight: 'SANKEY' } });
  t.equal(badFilters.status, 400);
  t.match(badFilters.body, { type: 'validation_error', attr: 'filters' });
  const badRefresh = await server.api.get(`${P}/insights/1/?refresh=sometimes`);
  t.equal(badRefresh.status, 400);
  t.equal(badRefresh.body.attr, 'refresh');
  const noDashboard = await server.api.post(`${P}/insights/`, { query: trendsQuery, dashboards: [999999] });
  t.equal(noDashboard.status, 400);
  t.match(noDashboard.body, { attr: 'dashboards', code: 'does_not_exist' });
});

t.test('dashboards: tiles with results, layout edits, removal and soft deletion', async (t) => {
  const dash = await server.api.post(`${P}/dashboards/`, { name: ' Growth ', description: 'weekly', pinned: true });
  t.equal(dash.status, 201, dash.text);
  t.match(dash.body, { name: 'Growth', description: 'weekly', pinned: true, deleted: false, tiles: [] });
  const other = await server.api.post(`${P}/dashboards/`, { name: 'Alpha' });

  const insight = await server.api.post(`${P}/insights/`, { name: 'On dashboards', query: trendsQuery, dashboards: [dash.body.id] });
  t.equal(insight.status, 201, insight.text);
  t.same(insight.body.dashboards, [dash.body.id]);
  const withTile = await server.api.get(`${P}/dashboards/${dash.body.id}/`);
  t.equal(withTile.body.tiles.length, 1);
  const tile = withTile.body.tiles[0];
  t.equal(tile.insight.id, insight.body.id);
  t.same(tile.insight.result[0].data, [2, 2, 3]);
  t.same(tile.insight.dashboards, [dash.body.id]);

  // Moving the insight to the other dashboard too, then off the first.
  const both = await server.api.patch(`${P}/insights/${insight.body.id}/`, { dashboards: [dash.body.id, other.body.id] });
  t.same(both.body.dashboards.sort(), [dash.body.id, other.body.id].sort());
  const laidOut = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { tiles: [{ id: tile.id, layouts: { sm: { x: 0, y: 0, w: 6, h: 5 } }, color: 'blue' }] });
  t.equal(laidOut.status, 200, laidOut.text);
  t.match(laidOut.body.tiles[0], { id: tile.id, layouts: { sm: { w: 6 } }, color: 'blue' });
  const removed = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { tiles: [{ id: tile.id, deleted: true }] });
  t.same(removed.body.tiles, []);
  const after = await server.api.get(`${P}/insights/${insight.body.id}/`);
  t.same(after.body.dashboards, [other.body.id]);

  const list = await server.api.get(`${P}/dashboards/`);
  t.same(list.body.results.map((d: any) => d.name), ['Growth', 'Alpha'], 'pinned first');
  t.equal(list.body.count, 2);

  const badTile = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { tiles: [{ id: 424242 }] });
  t.equal(badTile.status, 400);
  t.match(badTile.body, { type: 'validation_error', attr: 'tiles', code: 'does_not_exist' });
  const badPinned = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { pinned: 'yes' });
  t.equal(badPinned.status, 400);
  t.equal(badPinned.body.attr, 'pinned');

  const hard = await server.api.delete(`${P}/dashboards/${other.body.id}/`);
  t.equal(hard.status, 405);
  t.equal(hard.body.code, 'method_not_allowed');
  const soft = await server.api.patch(`${P}/dashboards/${other.body.id}/`, { deleted: true });
  t.equal(soft.status, 200);
  t.equal((await server.api.get(`${P}/dashboards/${other.body.id}/`)).status, 404);
  t.same((await server.api.get(`${P}/insights/${insight.body.id}/`)).body.dashboards, [], 'a deleted dashboard shows nothing');
  // A deleted insight leaves its tiles.
  await server.api.patch(`${P}/insights/${insight.body.id}/`, { dashboards: [dash.body.id] });
  await server.api.patch(`${P}/insights/${insight.body.id}/`, { deleted: true });
  t.same((await server.api.get(`${P}/dashboards/${dash.body.id}/`)).body.tiles, []);
});

t.test("a dashboard's date range override: tiles compute over it and say so, until it is cleared", async (t) => {
  const dash = await server.api.post(`${P}/dashboards/`, { name: 'Override' });
  t.same(dash.body.filters, {}, 'no override at first');
  const legacy = await server.api.post(`${P}/insights/`, { name: 'Legacy', filters: { insight: 'TRENDS', events: [{ id: 'signup' }], ...range }, dashboards: [dash.body.id] });
  const viaQuery = await server.api.post(`${P}/insights/`, { name: 'Query', query: trendsQuery, dashboards: [dash.body.id] });
  t.equal(legacy.status, 201, legacy.text);
  const own = await server.api.get(`${P}/dashboards/${dash.body.id}/`);
  const byName = (d: any) => Object.fromEntries(d.tiles.map((x: any) => [x.insight.name, x]));
  t.same(byName(own.body).Legacy.insight.result[0].data, [2, 1, 2], 'signups on the 10th, 11th and 12th');
  t.same(byName(own.body).Query.insight.result[0].data, [2, 2, 3]);
  t.type(own.body.last_refresh, 'string');
  t.type(byName(own.body).Legacy.last_refresh, 'string');

  const patched = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { filters: { date_from: '2026-11-11', date_to: '2026-11-12' } });
  t.equal(patched.status, 200, patched.text);
  t.same(patched.body.filters, { date_from: '2026-11-11', date_to: '2026-11-12' });
  const over = await server.api.get(`${P}/dashboards/${dash.body.id}/`);
  t.same(over.body.filters, { date_from: '2026-11-11', date_to: '2026-11-12' });
  const tiles = byName(over.body);
  t.same(tiles.Legacy.insight.result[0].data, [1, 2], 'two days now');
  t.match(tiles.Legacy.insight.filters, { date_from: '2026-11-11', date_to: '2026-11-12' }, "the tile's filters say the dashboard's range");
  t.same(tiles.Query.insight.result[0].data, [2, 3]);
  t.same(tiles.Query.insight.query.source.dateRange, { date_from: '2026-11-11', date_to: '2026-11-12' });
  // The insights themselves keep their own range.
  const mine = await server.api.get(`${P}/insights/${legacy.body.id}/`);
  t.match(mine.body.filters, range);
  t.same(mine.body.result[0].data, [2, 1, 2]);
  // A relative range with no end: up to now, where these 2026 events fall within the last year.
  await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { filters: { date_from: 'all' } });
  const all = byName((await server.api.get(`${P}/dashboards/${dash.body.id}/`)).body);
  t.match(all.Legacy.insight.filters, { date_from: 'all', date_to: null });
  t.equal(all.Legacy.insight.result[0].data.reduce((a: number, b: number) => a + b, 0), 5, 'every signup');

  const forced = await server.api.get(`${P}/dashboards/${dash.body.id}/?refresh=true`);
  t.equal(forced.status, 200);
  t.equal(forced.body.tiles[0].insight.is_cached, false, 'refresh=true computes again');

  const bad = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { filters: { date_from: 'yesterday-ish' } });
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', code: 'invalid_input', attr: 'filters' });
  const toOnly = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { filters: { date_to: '2026-11-12' } });
  t.equal(toOnly.status, 400);
  t.equal(toOnly.body.attr, 'filters');
  const notObject = await server.api.post(`${P}/dashboards/`, { name: 'x', filters: 'last week' });
  t.equal(notObject.status, 400);
  t.equal(notObject.body.attr, 'filters');

  const cleared = await server.api.patch(`${P}/dashboards/${dash.body.id}/`, { filters: {} });
  t.same(cleared.body.filters, {});
  const back = byName((await server.api.get(`${P}/dashboards/${dash.body.id}/`)).body);
  t.same(back.Legacy.insight.result[0].data, [2, 1, 2], 'the own range again');
  t.match(back.Legacy.insight.filters, range);
});

t.test('dashboards need the dashboard scope', async (t) => {
  const key = await server.api.post('/api/personal_api_keys/', { label: 'insights only', scopes: ['insight:read'] });
  t.equal(key.status, 201, key.text);
  const headers = { authorization: `Bearer ${key.body.value}` };
  const denied = await fetch(`${server.q.base}${P}/dashboards/`, { headers });
  t.equal(denied.status, 403);
  t.equal((await denied.json()).type, 'authentication_error');
  const allowed = await fetch(`${server.q.base}${P}/insights/`, { headers });
  t.equal(allowed.status, 200);
});
