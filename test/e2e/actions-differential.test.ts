/**
 * Actions against DuckDB on the same events: a generated dataset (bench/lib/analytics-dataset.ts, with
 * autocapture chains and identify merges across shards) goes in through /batch/ and into DuckDB; every action of
 * bench/lib/action-cases.ts is created through the API, and trends over it (counts, distinct persons, weekly
 * actives, a property sum, a breakdown), a funnel of two actions and a retention between two actions are compared
 * with the SQL that selects the same events by PostHog's definitions. Every analysis is asked of a Quill answering
 * from ClickHouse too, fed the same events, and must answer as its own local engine does on the same data
 * (test/helpers/executor-mirror.ts).
 */
import t from 'tap';
import { ACTION_CASES, BENCH_ACTION, PURCHASED, actionFunnelSql } from '../../bench/lib/action-cases.js';
import type { DuckReference } from '../../bench/lib/duckdb-reference.js';
import { differences } from '../../bench/lib/trends-cases.js';
import { ExecutorMirror } from '../helpers/executor-mirror.js';
import { quillForFile } from '../helpers/quill.js';
import { loadReferenceDataset } from '../helpers/reference-dataset.js';
import { restartOnLocalEngine, startOnClickHouse, stopOnClickHouse, type OnClickHouse } from '../helpers/two-engines.js';

const END = Date.UTC(2026, 10, 8);
const OPTIONS = { events: Number(process.env.QUILL_TEST_DATASET_EVENTS ?? 30_000), persons: 2_000, days: 10, end: END, seed: 11 };
const FROM = '2026-10-30';
const TO = '2026-11-07';
const RANGE = `ts >= TIMESTAMP '${FROM}' AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
const DAY = "date_trunc('day', ts)";

const server = quillForFile(t, { workers: 2 });
let onClickHouse: Partial<OnClickHouse> = {};
/** The local Quill's client, asking every analysis of the Quill on ClickHouse too. */
let api: ExecutorMirror;
let duck: DuckReference;
const ids = new Map<string, number>();

t.before(async () => {
  onClickHouse = await startOnClickHouse();
  api = new ExecutorMirror(server.api, onClickHouse.chApi!);
  ({ duck } = await loadReferenceDataset(server.q.base, api, OPTIONS, [api.twin]));
  await api.exportCaughtUp();
  for (const c of ACTION_CASES) {
    const res = await api.post('/api/projects/@current/actions/', { name: c.name, steps: c.steps });
    if (res.status !== 201) throw new Error(`action ${c.name}: ${res.status} ${res.text}`);
    ids.set(c.name, res.body.id);
  }
});
t.teardown(async () => {
  duck?.close();
  await stopOnClickHouse(onClickHouse, t.passing());
});

const enc = encodeURIComponent;
async function get(path: string, params: Record<string, unknown>): Promise<any> {
  const qs = Object.entries({ refresh: true, ...params }).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  const res = await api.get(`/api/projects/@current/${path}?${qs}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body.result;
}
const entity = (name: string, extra: object = {}) => ({ id: ids.get(name), type: 'actions', ...extra });

/** Quill's series as `day[|breakdown]` → value. */
function quillValues(result: any[], breakdown = false): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of result) s.days.forEach((d: string, i: number) => {
    if (s.data[i] !== 0) out.set(breakdown ? `${d}|${s.breakdown_value}` : d, s.data[i]);
  });
  return out;
}

async function duckValues(sql: string, breakdown = false): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const r of await duck.rows(sql)) {
    const v = Number(r.v);
    if (v !== 0) out.set(`${new Date(r.day as number).toISOString().slice(0, 10)}${breakdown ? `|${r.b}` : ''}`, v);
  }
  return out;
}

t.test('trends over every action, against DuckDB', async (t) => {
  for (const c of ACTION_CASES) {
    const got = quillValues(await get('insights/trend/', { actions: [entity(c.name)], date_from: FROM, date_to: TO }));
    const want = await duckValues(`SELECT ${DAY} AS day, count(*) AS v FROM events WHERE (${c.sql}) AND ${RANGE} GROUP BY 1`);
    t.same(differences(got, want), [], `${c.name}: events per day`);
    t.ok(want.size > 0, `${c.name}: matches something`);
  }
  const b = BENCH_ACTION;
  const cases: [string, Record<string, unknown>, string, boolean][] = [
    ['distinct persons', { actions: [entity(b.name, { math: 'dau' })] }, `SELECT ${DAY} AS day, count(DISTINCT person) AS v FROM events WHERE (${b.sql}) AND ${RANGE} GROUP BY 1`, false],
    ['weekly actives', { actions: [entity(b.name, { math: 'weekly_active' })] },
      `WITH active AS (SELECT DISTINCT ${DAY} AS d, person FROM events WHERE ${b.sql}),
            spine AS (SELECT unnest(generate_series(TIMESTAMP '${FROM}', TIMESTAMP '${TO}', INTERVAL 1 DAY)) AS day)
       SELECT day, count(DISTINCT person) AS v FROM spine JOIN active ON d > day - INTERVAL 7 DAY AND d <= day GROUP BY 1`, false],
    ['sum of price', { actions: [entity(PURCHASED.name, { math: 'sum', math_property: 'price' })] }, `SELECT ${DAY} AS day, sum(price) AS v FROM events WHERE (${PURCHASED.sql}) AND ${RANGE} GROUP BY 1`, false],
    ['by $browser', { actions: [entity(b.name)], breakdown: '$browser' }, `SELECT ${DAY} AS day, browser AS b, count(*) AS v FROM events WHERE (${b.sql}) AND ${RANGE} GROUP BY 1, 2`, true],
  ];
  for (const [name, params, sql, breakdown] of cases) {
    const got = quillValues(await get('insights/trend/', { ...params, date_from: FROM, date_to: TO }), breakdown);
    t.same(differences(got, await duckValues(sql, breakdown)), [], `${b.name}: ${name}`);
  }
});

t.test('a funnel and a retention between two actions, against DuckDB', async (t) => {
  const funnel = await get('insights/funnel/', { actions: [entity(BENCH_ACTION.name, { order: 0 }), entity(PURCHASED.name, { order: 1 })], date_from: FROM, date_to: TO });
  const [row] = await duck.rows(actionFunnelSql(BENCH_ACTION.sql, PURCHASED.sql, RANGE)) as [Record<string, number>];
  t.same(funnel.map((s: any) => s.count), [row.c1, row.c2], 'persons entering and converting');
  t.ok(row.c2! > 0, 'some convert');

  const retention = await get('insights/retention/', { target_entity: entity(BENCH_ACTION.name), returning_entity: entity(PURCHASED.name), date_to: TO, total_intervals: 7, period: 'Day' });
  const window = `ts >= TIMESTAMP '${TO}' - INTERVAL 6 DAY AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
  const index = `date_diff('day', TIMESTAMP '${TO}' - INTERVAL 6 DAY, ${DAY})`;
  const rows = await duck.rows(`WITH t AS (SELECT DISTINCT person, ${index} AS i FROM events WHERE (${BENCH_ACTION.sql}) AND ${window}),
      r AS (SELECT DISTINCT person, ${index} AS i FROM events WHERE (${PURCHASED.sql}) AND ${window})
    SELECT t.i AS i, 0 AS k, count(*) AS v FROM t GROUP BY 1
    UNION ALL SELECT t.i, r.i - t.i, count(*) FROM t JOIN r ON t.person = r.person AND r.i > t.i GROUP BY 1, 2`);
  const want = Array.from({ length: 7 }, (_, i) => Array.from({ length: 7 - i }, (_, k) => Number(rows.find((r) => Number(r.i) === i && Number(r.k) === k)?.v ?? 0)));
  t.same(retention.map((r: any) => r.values.map((v: any) => v.count)), want, 'target an action, return with another');
});

t.test('actions without element conditions, for the two executors alone', async (t) => {
  // Stickiness, lifecycle, funnels with exclusions, retention, correlation and persons of actions whose steps are
  // events, URLs and properties (autocapture conditions: test/e2e/element-actions-clickhouse.test.ts).
  const [blog, home, big] = ['Blog posts 1x (url contains)', 'Home (url exact, any event)', 'Big purchases (step properties)'];
  const dates = { date_from: FROM, date_to: TO };
  for (const params of [
    { actions: [entity(blog, { math: 'weekly_active' }), entity(home, { math: 'dau', order: 1 })], breakdown: '$browser' },
    { insight: 'STICKINESS', actions: [entity(home)] },
    { insight: 'LIFECYCLE', shown_as: 'Lifecycle', actions: [entity(PURCHASED.name)] },
  ]) t.ok(await get('insights/trend/', { ...params, ...dates }), `trend ${JSON.stringify(params)}`);
  t.ok(await get('insights/funnel/', { actions: [entity(home, { order: 0 }), entity(big, { order: 1 })], exclusions: [{ id: ids.get(blog), type: 'actions', funnel_from_step: 0, funnel_to_step: 1 }], ...dates }), 'funnel with an action excluded');
  t.ok(await get('insights/retention/', { target_entity: entity(home), returning_entity: entity(big), date_to: TO, total_intervals: 7, period: 'Day' }), 'retention between actions');
  t.ok(await get('insights/funnel/correlation/', { actions: [entity(home, { order: 0 }), entity(PURCHASED.name, { order: 1 })], ...dates }), 'correlation of a funnel of actions');
  const point = { actions: [entity(blog)], entity_id: ids.get(blog), entity_type: 'actions', entity_math: 'total', date_from: '2026-11-03', date_to: '2026-11-03' };
  const persons = await api.get(`/api/projects/@current/persons/trends/?${Object.entries(point).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&')}`);
  t.ok(persons.body.results[0].people.length > 0, 'the persons of an action point');
  const node = (name: string, extra: object = {}) => ({ kind: 'ActionsNode', id: ids.get(name), ...extra });
  for (const query of [
    { kind: 'TrendsQuery', series: [node(blog, { math: 'dau' }), node(PURCHASED.name, { math: 'sum', math_property: 'price' })], interval: 'week', dateRange: dates },
    { kind: 'FunnelsQuery', series: [node(home), node(PURCHASED.name)], dateRange: dates },
  ]) t.equal((await api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' })).status, 200, query.kind);
});

// Last: the ClickHouse Quill's answers to everything above, in UTC and in New York.
t.test('the same analyses from ClickHouse', async (tt) => api.report(tt, ['UTC', 'America/New_York'], () => restartOnLocalEngine(onClickHouse as OnClickHouse)));
