// Paths answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb and answering paths from
// it, one on its own engine, fed the same events. The same path requests (legacy endpoint and PathsQuery) must
// answer the same on both — edges, weights, average times — in UTC and in New York (a DST change inside the data,
// and the range's ends move with the zone); what ClickHouse does not gather yet falls back and says so.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';
import { aligned, insightQuery } from '../helpers/insight-compare.js';

const MIN = 60_000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);
const DATES = { date_from: '2026-10-25', date_to: '2026-11-09' };
const PAGES = ['https://x.test/', 'https://x.test/pricing', 'https://x.test/pricing/', 'https://x.test/docs/1', 'https://x.test/docs/2?ref=mail', 'https://x.test/signup', null];
const SCREENS = ['Home', 'Settings', 'Checkout'];
const CUSTOM = ['clicked', 'signup', '$autocapture'];

/**
 * 24 visitors over two weeks across the end of DST in New York, each with three sessions (gaps of hours) of page
 * views (a trailing slash, a query string, one without a URL), screens and custom events, some repeated in a row;
 * two thirds identified in the second session (merges); browsers varying; one event of no person (a personless actor). No two events of
 * a person share an instant (ties' order is not defined across engines).
 */
function dataset(): ReturnType<typeof event>[][] {
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 24; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const batch: ReturnType<typeof event>[] = [];
    for (let s = 0; s < 3; s++) {
      let at = START + ((u * 5 + s * 4) % 14) * DAY + ((u * 7 + s * 5) % 20) * 3_600_000 + u * 1000;
      const id = u % 3 !== 0 && s >= 1 ? user : anon;
      if (u % 3 !== 0 && s === 1) batch.push(event(user, '$identify', { $anon_distinct_id: anon }, { timestamp: new Date(at - 7).toISOString() }));
      for (let k = 0; k < 7; k++) {
        at += ((u + k * 3 + s) % 9 + 1) * MIN + k * 13;
        const pick = (u * 11 + s * 7 + k * 5) % 10;
        const browser = ['Chrome', 'Safari', 'Firefox'][(u + k) % 3];
        let name = '$pageview';
        const props: Record<string, unknown> = { $browser: browser };
        if (pick < 6) {
          const url = PAGES[(u + s * 3 + k * 2 + (k === 3 ? 0 : pick)) % PAGES.length];
          if (url !== null) props.$current_url = url;
        } else if (pick < 8) {
          name = '$screen';
          props.$screen_name = SCREENS[(u + k + s) % SCREENS.length];
        } else name = CUSTOM[(u + k) % CUSTOM.length]!;
        batch.push(event(id, name, props, { timestamp: new Date(at).toISOString() }));
      }
    }
    batches.push(batch);
  }
  batches.push([event('ghost', '$pageview', { $current_url: 'https://x.test/', $process_person_profile: false }, { timestamp: new Date(START + DAY).toISOString() })]);
  return batches;
}

const engines = twoEngines(t, dataset);

async function paths(api: Client, params: Record<string, unknown>): Promise<any> {
  const res = await api.get(`/api/projects/@current/insights/path/?${insightQuery({ ...DATES, ...params })}`);
  if (res.status !== 200) throw new Error(`${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const ALL_TYPES = { include_event_types: ['$pageview', '$screen', 'custom_event'] };
const SUPPORTED: [string, Record<string, unknown>][] = [
  ['pageviews', {}],
  ['screens', { include_event_types: ['$screen'] }],
  ['custom events', { include_event_types: ['custom_event'] }],
  ['every type', ALL_TYPES],
  ['pageviews and a named custom event', { include_custom_events: ['signup', '$autocapture'] }],
  ['a start point', { start_point: 'https://x.test/pricing' }],
  ['an end point', { ...ALL_TYPES, end_point: 'https://x.test/signup' }],
  ['start and end points, step limit 3 ("...")', { ...ALL_TYPES, start_point: 'https://x.test', end_point: 'Checkout', step_limit: 3 }],
  ['step limit 2', { ...ALL_TYPES, step_limit: 2 }],
  ['step limit 10', { ...ALL_TYPES, step_limit: 10 }],
  ['excluded items', { ...ALL_TYPES, exclude_events: ['https://x.test/pricing', 'clicked'] }],
  ['groupings', { path_groupings: ['https://x.test/docs/*'] }],
  ['local cleaning rules', { local_path_cleaning_filters: [{ regex: '\\?.*$', alias: '' }, { regex: '/docs/[0-9]+', alias: '/docs/:id' }] }],
  ['edge weights', { ...ALL_TYPES, min_edge_weight: 2, max_edge_weight: 6 }],
  ['an edge limit', { ...ALL_TYPES, edge_limit: 5 }],
  ['a property filter', { ...ALL_TYPES, properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }] }],
  ['a narrow range', { ...ALL_TYPES, date_from: '2026-10-31', date_to: '2026-11-02' }],
  ['all time (from the first event)', { ...ALL_TYPES, date_from: 'all' }],
  ['a person property filter (the person at the event)', { ...ALL_TYPES, properties: [{ key: 'email', value: 'x', operator: 'is_not', type: 'person' }] }],
];

async function compareAll(tt: Tap.Test, zone: string): Promise<void> {
  for (const [name, params] of SUPPORTED) {
    const [fromCh, fromLocal] = await Promise.all([paths(engines.chApi, params), paths(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: true }, `${zone}, ${name}: computed on ClickHouse`);
    tt.equal(fromCh.clickhouse_export?.caught_up, true, `${zone}, ${name}: after the export caught up`);
    tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, `${zone}, ${name}: the local engine's answer`);
    tt.equal(fromCh.timezone, fromLocal.timezone);
  }
}

t.test('paths in UTC: ClickHouse answers as the local engine', async (tt) => {
  const edges = (await paths(engines.localApi, ALL_TYPES)).result;
  tt.ok(edges.length > 10, 'many edges (not empty on both sides)');
  tt.ok(edges.some((e: any) => e.source.startsWith('3_')), 'paths of three steps and more');
  tt.ok(edges.some((e: any) => e.source.includes('Home')) && edges.some((e: any) => e.target.includes('clicked')), 'screens and custom events are items');
  const anchored = (await paths(engines.localApi, SUPPORTED[7]![1])).result;
  tt.ok(anchored.some((e: any) => e.target === '2_...'), 'a path cut between its start and end points');
  await compareAll(tt, 'UTC');
});

t.test('paths in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  await compareAll(tt, 'New York');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test("the project's test-account filters and path cleaning rules", async (tt) => {
  const settings = {
    test_account_filters: [{ key: '$browser', value: 'Firefox', operator: 'is_not', type: 'event' }],
    path_cleaning_filters: [{ regex: 'https://x\\.test', alias: '' }],
  };
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', settings)).status, 200);
  const params = { ...ALL_TYPES, filter_test_accounts: true, path_replacements: true };
  const [fromCh, fromLocal] = await Promise.all([paths(engines.chApi, params), paths(engines.localApi, params)]);
  tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'computed on ClickHouse');
  tt.ok(fromLocal.result.some((e: any) => e.source === '1_/pricing'), "the project's rule cleaned the URLs");
  tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, "the local engine's answer");
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { test_account_filters: [], path_cleaning_filters: [] })).status, 200);
});

t.test('the PathsQuery kind of /query/ is computed on ClickHouse too', async (tt) => {
  const query = {
    kind: 'PathsQuery', dateRange: DATES,
    pathsFilter: { includeEventTypes: ['$pageview', '$screen'], startPoint: 'https://x.test/pricing', stepLimit: 4 },
  };
  const [fromCh, fromLocal] = await Promise.all([engines.chApi, engines.localApi].map(async (api) => {
    const res = await api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' });
    tt.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    return res.body;
  }));
  tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'computed on ClickHouse');
  tt.ok((fromLocal.results as unknown[]).length > 0, 'edges');
  tt.same(aligned(fromCh.results, fromLocal.results), fromLocal.results, "the local engine's answer");
});

t.test('actions as path items are computed on ClickHouse', async (tt) => {
  const define = async (name: string, steps: unknown[]) => {
    const made = await Promise.all([engines.chApi, engines.localApi].map((api) => api.post('/api/projects/@current/actions/', { name, steps })));
    tt.same(made.map((a) => a.status), [201, 201], name);
    tt.equal(made[0]!.body.id, made[1]!.body.id, `${name}: the same action id on both`);
    return { id: made[0]!.body.id as number, type: 'actions' };
  };
  const signedUp = await define('Signed up', [{ event: 'signup' }]);
  // Overlapping: a pricing page view is both actions' event; the first action included is its item.
  const pricing = await define('Saw pricing', [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }]);
  const browsing = await define('Browsed in Chrome', [{ event: '$pageview', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] }, { event: 'clicked' }]);
  const cases: [string, Record<string, unknown>][] = [
    ['one action', { include_custom_events: [signedUp] }],
    ['actions beside pageviews', { include_event_types: ['$pageview'], include_custom_events: [pricing, signedUp] }],
    ['overlapping actions', { include_event_types: ['$screen'], include_custom_events: [pricing, browsing] }],
    ['overlapping actions, the other first', { include_event_types: ['$screen'], include_custom_events: [browsing, pricing], start_point: 'Saw pricing' }],
  ];
  for (const [name, params] of cases) {
    const [fromCh, fromLocal] = await Promise.all([paths(engines.chApi, params), paths(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: true }, `${name}: computed on ClickHouse`);
    tt.ok(fromLocal.result.length > 0, `${name}: edges`);
    tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, `${name}: the local engine's answer`);
  }
  const named = (await paths(engines.localApi, cases[2]![1])).result;
  tt.ok(named.some((e: any) => /Saw pricing/.test(e.source + e.target)) && named.some((e: any) => /Browsed in Chrome/.test(e.source + e.target)), 'both actions are items');
});

t.test('what ClickHouse does not gather yet falls back to the local engine and says why', async (tt) => {
  const fallbacks: [string, Record<string, unknown>, RegExp][] = [
    ['an element condition not printed yet', { properties: [{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }] }, /operator is_date_after/],
  ];
  for (const [name, params, reason] of fallbacks) {
    const [fromCh, fromLocal] = await Promise.all([paths(engines.chApi, params), paths(engines.localApi, params)]);
    tt.match(fromCh.clickhouse?.fallback, reason, `${name}: falls back, saying ${fromCh.clickhouse?.fallback}`);
    tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, `${name}: the local engine's answer`);
  }
  tt.equal((await paths(engines.localApi, {})).clickhouse, undefined, 'the local engine says nothing of ClickHouse');
});

t.test("another project's events in the same ClickHouse database never reach this project's paths", async (tt) => {
  const before = await paths(engines.chApi, ALL_TYPES);
  const created = await engines.chApi.post('/api/projects/', { name: 'other team' });
  tt.equal(created.status, 201);
  const at = (m: number) => new Date(START + 3 * DAY + m * MIN).toISOString();
  // The same distinct ids as project A, URLs of its own.
  const batch = [0, 1, 2].flatMap((k) => ['anon-1', 'user-2'].map((id, i) => event(id, '$pageview', { $current_url: `https://b-secret.test/${k}` }, { timestamp: at(k * 3 + i) })));
  const sent = await fetch(`${engines.onClickHouse.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  tt.equal(sent.status, 200);
  // Project B sees its own events through the same path (so an unchanged A means guarded, not missing).
  const own = await engines.chApi.get(`/api/projects/${created.body.id}/insights/path/?${insightQuery({ ...DATES, ...ALL_TYPES })}`);
  tt.equal(own.status, 200);
  tt.has(own.body.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'computed on ClickHouse');
  tt.same(own.body.result.map((e: any) => [e.source, e.target, e.value]).sort(),
    [['1_https://b-secret.test/0', '2_https://b-secret.test/1', 2], ['2_https://b-secret.test/1', '3_https://b-secret.test/2', 2]], "project B's two persons");
  const after = await paths(engines.chApi, ALL_TYPES);
  tt.has(after.clickhouse, { fallback: null, folded_in_clickhouse: true });
  tt.same(after.result, before.result, 'project A: the same answer as before project B had events');
});
