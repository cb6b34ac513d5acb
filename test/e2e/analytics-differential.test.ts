/**
 * The analyses against DuckDB on the same events: a generated dataset (bench/lib/analytics-dataset.ts, with
 * identify merges whose distinct ids live on different shards) goes in through /batch/ and into DuckDB, and every
 * trends, retention, lifecycle and stickiness case is compared with the SQL that computes the same thing. Two time
 * zones: UTC, and New York across the daylight-saving change of 2026-11-01. Every analysis is asked of a second Quill
 * too, fed the same events and answering from ClickHouse (chdb), and must answer as its own local engine does on
 * the same data (test/helpers/executor-mirror.ts).
 */
import t from 'tap';
import type { Dataset, ReferenceRow } from '../../bench/lib/analytics-dataset.js';
import type { DuckReference } from '../../bench/lib/duckdb-reference.js';
import { FUNNEL_STEPS, browserFunnelSql, correlationSql, orderedFunnelSql, pathEdgesSql, sameEventFunnelSql, strictFunnelSql, unorderedFunnelSql } from '../../bench/lib/sequence-cases.js';
import { correlate } from '../../src/domain/analytics/correlation.js';
import { ExecutorMirror } from '../helpers/executor-mirror.js';
import { quillForFile } from '../helpers/quill.js';
import { loadReferenceDataset } from '../helpers/reference-dataset.js';
import { restartOnLocalEngine, startOnClickHouse, stopOnClickHouse, type OnClickHouse } from '../helpers/two-engines.js';
import { nearlyEqual } from '../helpers/insight-compare.js';

const END = Date.UTC(2026, 10, 8);
const OPTIONS = { events: Number(process.env.QUILL_TEST_DATASET_EVENTS ?? 70_000), persons: 4_000, days: 14, end: END, seed: 7 };
const FROM = '2026-10-26';
const TO = '2026-11-07';

const GATHER_ROWS = 20_000;

const server = quillForFile(t, { workers: 2 });
const quill = () => server.q;
let onClickHouse: Partial<OnClickHouse> = {};
/** The local Quill's client, asking every analysis of the Quill on ClickHouse too. */
let api: ExecutorMirror;
let duck: DuckReference;
let datasetRef: Dataset;
let rows: ReferenceRow[] = [];

async function load(): Promise<void> {
  const loaded = await loadReferenceDataset(quill().base, api, OPTIONS, [api.twin]);
  datasetRef = loaded.dataset;
  duck = loaded.duck;
  rows = loaded.rows;
}

t.before(async () => {
  // Sequence analyses bring their events back in parts of this many (the default, 2,000,000, is past this dataset):
  // every funnel, path and correlation of the suite is then folded from several parts of persons.
  onClickHouse = await startOnClickHouse({ QUILL_CLICKHOUSE_GATHER_ROWS: String(GATHER_ROWS) });
  api = new ExecutorMirror(server.api, onClickHouse.chApi!);
  await load();
  await api.exportCaughtUp();
});
t.teardown(async () => {
  duck?.close();
  await stopOnClickHouse(onClickHouse, t.passing());
});

const enc = encodeURIComponent;

async function trend(params: Record<string, unknown>): Promise<any[]> {
  const qs = Object.entries({ date_from: FROM, date_to: TO, refresh: true, ...params })
    .map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  const res = await api.get(`/api/projects/@current/insights/trend/?${qs}`);
  if (res.status !== 200) throw new Error(`trend ${qs}: ${res.status} ${res.text}`);
  return res.body.result;
}

/** Local day of an event in SQL: DuckDB's time zone conversion of the stored UTC timestamp. */
const localTs = (tz: string) => (tz === 'UTC' ? 'ts' : `timezone('${tz}', ts AT TIME ZONE 'UTC')`);
const inRange = (tz: string) => `${localTs(tz)} >= TIMESTAMP '${FROM} 00:00:00' AND ${localTs(tz)} < TIMESTAMP '${TO} 00:00:00' + INTERVAL 1 DAY`;

/** DuckDB's per-day values as a map day (YYYY-MM-DD) -> value. */
async function perDay(sql: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const r of await duck.rows(sql)) out.set(new Date(r.day as number).toISOString().slice(0, 10), Number(r.v));
  return out;
}

function sameSeries(tt: { same(a: unknown, b: unknown, m: string): void; ok(a: unknown, m: string): void }, series: any, expected: Map<string, number>, what: string): void {
  const got = new Map<string, number>(series.days.map((d: string, i: number) => [d, series.data[i]]));
  const diffs: string[] = [];
  for (const [day, v] of got) {
    const want = expected.get(day) ?? 0;
    if (!nearlyEqual(v, want)) diffs.push(`${day}: quill ${v}, duckdb ${want}`);
  }
  for (const day of expected.keys()) if (!got.has(day)) diffs.push(`${day}: missing from quill`);
  tt.same(diffs, [], what);
  tt.ok(series.data.some((v: number) => v !== 0), `${what}: not all zero`);
}

for (const tz of ['UTC', 'America/New_York']) {
  t.test(`trends in ${tz}`, async (tt) => {
    tt.equal((await api.patch('/api/projects/@current/', { timezone: tz })).status, 200);
    const day = `date_trunc('day', ${localTs(tz)})`;
    const cases: [string, Record<string, unknown>, string][] = [
      ['count of $pageview per day', { events: [{ id: '$pageview' }] },
        `SELECT ${day} AS day, count(*) AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1`],
      ['all events per day', { events: [{ id: null }] },
        `SELECT ${day} AS day, count(*) AS v FROM events WHERE ${inRange(tz)} GROUP BY 1`],
      ['dau', { events: [{ id: '$pageview', math: 'dau' }] },
        `SELECT ${day} AS day, count(DISTINCT person) AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1`],
      ['event property filter (icontains)', { events: [{ id: '$pageview' }], properties: [{ key: '$current_url', value: '/docs', operator: 'icontains' }] },
        `SELECT ${day} AS day, count(*) AS v FROM events WHERE event = '$pageview' AND url ILIKE '%/docs%' AND ${inRange(tz)} GROUP BY 1`],
      ['person property filter', { events: [{ id: '$pageview', math: 'dau', properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] },
        `SELECT ${day} AS day, count(DISTINCT person) AS v FROM events WHERE event = '$pageview' AND plan = 'pro' AND ${inRange(tz)} GROUP BY 1`],
      ['sum of price', { events: [{ id: 'purchase', math: 'sum', math_property: 'price' }] },
        `SELECT ${day} AS day, sum(price) AS v FROM events WHERE event = 'purchase' AND ${inRange(tz)} GROUP BY 1`],
      ['avg of price', { events: [{ id: 'purchase', math: 'avg', math_property: 'price' }] },
        `SELECT ${day} AS day, avg(price) AS v FROM events WHERE event = 'purchase' AND ${inRange(tz)} GROUP BY 1`],
      ['max of price', { events: [{ id: 'purchase', math: 'max', math_property: 'price' }] },
        `SELECT ${day} AS day, max(price) AS v FROM events WHERE event = 'purchase' AND ${inRange(tz)} GROUP BY 1`],
      ['median of price', { events: [{ id: 'purchase', math: 'median', math_property: 'price' }] },
        `SELECT ${day} AS day, quantile_cont(price, 0.5) AS v FROM events WHERE event = 'purchase' AND ${inRange(tz)} GROUP BY 1`],
      ['p90 of price', { events: [{ id: 'purchase', math: 'p90', math_property: 'price' }] },
        `SELECT ${day} AS day, quantile_cont(price, 0.9) AS v FROM events WHERE event = 'purchase' AND ${inRange(tz)} GROUP BY 1`],
      ['unique sessions', { events: [{ id: '$pageview', math: 'unique_session' }] },
        `SELECT ${day} AS day, count(DISTINCT session) AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1`],
      ['unique groups', { events: [{ id: '$pageview', math: 'unique_group', math_group_type_index: 0 }] },
        `SELECT ${day} AS day, count(DISTINCT company) AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1`],
      ['avg count per actor', { events: [{ id: '$pageview', math: 'avg_count_per_actor' }] },
        `SELECT day, avg(c) AS v FROM (SELECT ${day} AS day, person, count(*) AS c FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1, 2) GROUP BY 1`],
      ['max count per actor', { events: [{ id: '$pageview', math: 'max_count_per_actor' }] },
        `SELECT day, max(c) AS v FROM (SELECT ${day} AS day, person, count(*) AS c FROM events WHERE event = '$pageview' AND ${inRange(tz)} GROUP BY 1, 2) GROUP BY 1`],
      ['weekly active', { events: [{ id: '$pageview', math: 'weekly_active' }] },
        `WITH active AS (SELECT DISTINCT ${day} AS d, person FROM events WHERE event = '$pageview'),
              spine AS (SELECT DISTINCT ${day} AS day FROM events WHERE ${inRange(tz)})
         SELECT day, count(DISTINCT person) AS v FROM spine JOIN active ON d > day - INTERVAL 7 DAY AND d <= day GROUP BY 1`],
    ];
    for (const [name, params, sql] of cases) {
      const [series] = await trend(params);
      sameSeries(tt, series, await perDay(sql), `${tz}: ${name}`);
    }

    // Breakdown by an event property and by a person property: every value's series.
    for (const [name, params, column] of [
      ['breakdown by $browser', { events: [{ id: '$pageview' }], breakdown: '$browser' }, 'browser'],
      ['breakdown by person plan', { events: [{ id: '$pageview', math: 'dau' }], breakdown: 'plan', breakdown_type: 'person' }, 'plan'],
    ] as const) {
      const result = await trend(params);
      const agg = (params.events[0] as { math?: string }).math === 'dau' ? 'count(DISTINCT person)' : 'count(*)';
      const values = (await duck.rows(`SELECT DISTINCT ${column} AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)}`)).map((r) => String(r.v));
      tt.same(result.map((r: any) => r.breakdown_value).sort(), values.sort(), `${tz}: ${name}: the values`);
      for (const series of result) {
        const expected = await perDay(`SELECT ${day} AS day, ${agg} AS v FROM events WHERE event = '$pageview' AND ${column} = '${series.breakdown_value}' AND ${inRange(tz)} GROUP BY 1`);
        sameSeries(tt, series, expected, `${tz}: ${name} = ${series.breakdown_value}`);
      }
    }

    // One number over the whole range (a table display): distinct persons over the range, not a sum of days.
    const [table] = await trend({ events: [{ id: '$pageview', math: 'dau' }], display: 'ActionsTable' });
    const [{ v }] = await duck.rows(`SELECT count(DISTINCT person) AS v FROM events WHERE event = '$pageview' AND ${inRange(tz)}`) as [{ v: number }];
    tt.equal(table.aggregated_value, v, `${tz}: distinct persons over the range`);

    // Weekly buckets start on Sunday (toStartOfWeek mode 0).
    const [weekly] = await trend({ events: [{ id: '$pageview' }], interval: 'week' });
    const week = `date_trunc('week', ${localTs(tz)} + INTERVAL 1 DAY) - INTERVAL 1 DAY`;
    const weekStart = `(date_trunc('week', TIMESTAMP '${FROM}' + INTERVAL 1 DAY) - INTERVAL 1 DAY)`;
    sameSeries(tt, weekly, await perDay(`SELECT ${week} AS day, count(*) AS v FROM events WHERE event = '$pageview'
      AND ${localTs(tz)} >= ${weekStart} AND ${localTs(tz)} < TIMESTAMP '${TO}' + INTERVAL 1 DAY GROUP BY 1`), `${tz}: weekly buckets`);
  });
}

t.test('the New York days around the daylight-saving change are local days', async (tt) => {
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  const [series] = await trend({ events: [{ id: null }], interval: 'hour', date_from: '2026-11-01T00:00:00', date_to: '2026-11-01T23:59:59' });
  // 2026-11-01 in New York has 25 hours (01:00 happens twice).
  tt.equal(series.data.length, 25, 'a 25-hour local day');
  const utcHours = new Map<number, number>();
  for (const r of rows) {
    const local = r.ts - (r.ts < Date.UTC(2026, 10, 1, 6) ? 4 : 5) * 3_600_000;
    if (new Date(local).toISOString().slice(0, 10) === '2026-11-01') utcHours.set(Math.floor(r.ts / 3_600_000), (utcHours.get(Math.floor(r.ts / 3_600_000)) ?? 0) + 1);
  }
  tt.same(series.data, [...utcHours.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n), 'each UTC hour its own bucket');
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

async function get(path: string): Promise<any> {
  const res = await api.get(`/api/projects/@current/${path}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
}

let createdLoaded = false;

/** Quill's persons' created_at, by the dataset's person number, into DuckDB's `persons` table. */
async function loadCreatedAt(): Promise<void> {
  if (createdLoaded) return;
  createdLoaded = true;
  const personOf = (distinctId: string) => {
    const [kind, p, d] = distinctId.split('-');
    return kind === 'user' ? Number(p) : datasetRef.personOfDevice(Number(p) * 2 + Number(d));
  };
  const created = new Map<number, string>();
  for (let offset = 0; ; offset += 1000) {
    const page = (await api.get(`/api/projects/@current/persons/?limit=1000&offset=${offset}`)).body;
    for (const person of page.results) created.set(personOf(person.distinct_ids[0]), person.created_at);
    if (!page.next) break;
  }
  await duck.db.run('CREATE TABLE persons (person INTEGER, created_at TIMESTAMP)');
  const values = [...created].map(([person, at]) => `(${person}, TIMESTAMP '${at.replace('T', ' ').replace('Z', '')}')`);
  for (let i = 0; i < values.length; i += 1000) await duck.db.run(`INSERT INTO persons VALUES ${values.slice(i, i + 1000).join(',')}`);
}

/** Local period start of an event in SQL, as a day number since the epoch (weeks start on Sunday). */
const periodSql = (tz: string, period: 'day' | 'week') => period === 'day'
  ? `date_trunc('day', ${localTs(tz)})`
  : `(date_trunc('week', ${localTs(tz)} + INTERVAL 1 DAY) - INTERVAL 1 DAY)`;

for (const tz of ['UTC', 'America/New_York']) {
  t.test(`retention, lifecycle and stickiness in ${tz}`, async (tt) => {
    tt.equal((await api.patch('/api/projects/@current/', { timezone: tz })).status, 200);
    const pv = `event = '$pageview'`;
    // Daily recurring retention, 7 cohorts ending 2026-11-07: the window is [11-01, 11-08) local.
    const window = `${localTs(tz)} >= TIMESTAMP '2026-11-01' AND ${localTs(tz)} < TIMESTAMP '2026-11-08'`;
    const daily = await get(`insights/retention/?date_to=2026-11-07&total_intervals=7&period=Day&refresh=true`);
    const dayIndex = `date_diff('day', TIMESTAMP '2026-11-01', ${periodSql(tz, 'day')})`;
    const recurring = await duck.rows(`WITH t AS (SELECT DISTINCT person, ${dayIndex} AS i FROM events WHERE ${pv} AND ${window})
      SELECT a.i AS i, b.i - a.i AS k, count(DISTINCT a.person) AS v FROM t a JOIN t b ON a.person = b.person AND b.i >= a.i GROUP BY 1, 2`);
    const matrix = (rows: Record<string, unknown>[], n: number) => Array.from({ length: n }, (_, i) => Array.from({ length: n - i }, (_, k) => Number(rows.find((r) => Number(r.i) === i && Number(r.k) === k)?.v ?? 0)));
    tt.same(daily.result.map((r: any) => r.values.map((v: any) => v.count)), matrix(recurring, 7), `${tz}: daily recurring retention`);
    tt.same(daily.result.map((r: any) => r.label), ['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4', 'Day 5', 'Day 6']);

    const firstTime = await get(`insights/retention/?date_to=2026-11-07&total_intervals=7&period=Day&retention_type=retention_first_time&refresh=true`);
    const firsts = await duck.rows(`WITH f AS (SELECT person, min(${localTs(tz)}) AS first FROM events WHERE ${pv} GROUP BY 1),
        t AS (SELECT person, date_diff('day', TIMESTAMP '2026-11-01', date_trunc('day', first)) AS i FROM f WHERE first >= TIMESTAMP '2026-11-01' AND first < TIMESTAMP '2026-11-08'),
        r AS (SELECT DISTINCT person, ${dayIndex} AS i FROM events WHERE ${pv} AND ${window})
      SELECT t.i AS i, r.i - t.i AS k, count(DISTINCT t.person) AS v FROM t JOIN r ON t.person = r.person AND r.i >= t.i GROUP BY 1, 2`);
    tt.same(firstTime.result.map((r: any) => r.values.map((v: any) => v.count)), matrix(firsts, 7), `${tz}: first-time retention`);

    // Weekly, 2 cohorts ending 2026-11-07: end = 11-14 00:00, start = 10-31, moved back to Sunday 10-25.
    const weekly = await get(`insights/retention/?date_to=2026-11-07&total_intervals=2&period=Week&refresh=true`);
    const weekIndex = `date_diff('week', TIMESTAMP '2026-10-25', ${periodSql(tz, 'week')})`;
    const weeks = await duck.rows(`WITH t AS (SELECT DISTINCT person, ${weekIndex} AS i FROM events WHERE ${pv} AND ${localTs(tz)} >= TIMESTAMP '2026-10-25' AND ${localTs(tz)} < TIMESTAMP '2026-11-14')
      SELECT a.i AS i, b.i - a.i AS k, count(DISTINCT a.person) AS v FROM t a JOIN t b ON a.person = b.person AND b.i >= a.i GROUP BY 1, 2`);
    tt.same(weekly.result.map((r: any) => r.values.map((v: any) => v.count)), matrix(weeks, 2), `${tz}: weekly retention`);
    tt.same(weekly.result.map((r: any) => r.date.slice(0, 10)), ['2026-10-25', '2026-11-01']);

    // Lifecycle per day over 11-01..11-07 (the day before is looked at too). "New" is the period of the person's
    // created_at: the time its first event was applied, which for a person whose distinct ids live on two shards
    // need not be its earliest event (the shards apply independently), so the reference takes Quill's persons.
    await loadCreatedAt();
    const lifecycle = await get(`insights/trend/?insight=LIFECYCLE&shown_as=Lifecycle&events=${enc('[{"id":"$pageview"}]')}&date_from=2026-11-01&date_to=2026-11-07&refresh=true`);
    const days = `date_diff('day', TIMESTAMP '2026-11-01', ${periodSql(tz, 'day')})`;
    const expected = await duck.rows(`WITH a AS (SELECT DISTINCT person, ${days} AS p FROM events WHERE ${pv} AND ${localTs(tz)} >= TIMESTAMP '2026-10-31' AND ${localTs(tz)} < TIMESTAMP '2026-11-08'),
        c AS (SELECT person, date_diff('day', TIMESTAMP '2026-11-01', date_trunc('day', ${tz === 'UTC' ? 'created_at' : `timezone('${tz}', created_at AT TIME ZONE 'UTC')`})) AS created FROM persons),
        cur AS (SELECT a.person, a.p, c.created, EXISTS (SELECT 1 FROM a b WHERE b.person = a.person AND b.p = a.p - 1) AS before FROM a JOIN c USING (person) WHERE a.p >= 0)
      SELECT p, 'new' AS s, count(*) AS v FROM cur WHERE created = p GROUP BY 1
      UNION ALL SELECT p, 'returning', count(*) FROM cur WHERE created <> p AND before GROUP BY 1
      UNION ALL SELECT p, 'resurrecting', count(*) FROM cur WHERE created <> p AND NOT before GROUP BY 1
      UNION ALL SELECT a.p + 1, 'dormant', -count(*) FROM a WHERE a.p + 1 BETWEEN 0 AND 6 AND NOT EXISTS (SELECT 1 FROM a b WHERE b.person = a.person AND b.p = a.p + 1) GROUP BY 1`);
    for (const series of lifecycle.result) {
      const want = Array.from({ length: 7 }, (_, p) => Number(expected.find((r) => Number(r.p) === p && r.s === series.status)?.v ?? 0));
      tt.same(series.data, want, `${tz}: lifecycle ${series.status}`);
    }

    // Stickiness per day over 11-01..11-07: persons active on exactly k days.
    const sticky = await get(`insights/trend/?insight=STICKINESS&events=${enc('[{"id":"$pageview"}]')}&date_from=2026-11-01&date_to=2026-11-07&refresh=true`);
    const ks = await duck.rows(`SELECT k, count(*) AS v FROM (SELECT person, count(DISTINCT ${periodSql(tz, 'day')}) AS k FROM events WHERE ${pv} AND ${window} GROUP BY 1) GROUP BY 1`);
    tt.same(sticky.result[0].data, Array.from({ length: 7 }, (_, i) => Number(ks.find((r) => Number(r.k) === i + 1)?.v ?? 0)), `${tz}: stickiness`);
  });
}

t.test('funnels against DuckDB', async (tt) => {
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
  const range = `ts >= TIMESTAMP '${FROM}' AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
  const funnel = (extra = '') => get(`insights/funnel/?events=${enc(JSON.stringify(FUNNEL_STEPS))}&date_from=${FROM}&date_to=${TO}&refresh=true${extra}`);
  const res = await funnel();
  const [row] = await duck.rows(orderedFunnelSql(range)) as [Record<string, number>];
  tt.same(res.result.map((s: any) => s.count), [row.c1, row.c2, row.c3], 'persons reaching each step of an ordered 14-day funnel');
  tt.ok(nearlyEqual(res.result[1].average_conversion_time, row.a1!) && nearlyEqual(res.result[2].average_conversion_time, row.a2!), `average conversion times (${res.result[1].average_conversion_time} / ${row.a1}, ${res.result[2].average_conversion_time} / ${row.a2})`);
  tt.ok(row.c3! > 0, 'some persons convert');
  for (const [order, sql] of [['strict', strictFunnelSql(range)], ['unordered', unorderedFunnelSql(range)]] as const) {
    const [want] = await duck.rows(sql) as [Record<string, number>];
    tt.same((await funnel(`&funnel_order_type=${order}`)).result.map((s: any) => s.count), [want.c1, want.c2, want.c3], `${order} funnel`);
  }
  // One event, one step: the same event name in both steps, the filter on one of them.
  const pricey = [{ key: 'price', value: 100, operator: 'gt', type: 'event' }];
  for (const narrowFirst of [true, false]) {
    const steps = [{ id: 'purchase', order: 0, ...(narrowFirst ? { properties: pricey } : {}) }, { id: 'purchase', order: 1, ...(narrowFirst ? {} : { properties: pricey }) }];
    const got = await get(`insights/funnel/?events=${enc(JSON.stringify(steps))}&date_from=${FROM}&date_to=${TO}&refresh=true`);
    const [want] = await duck.rows(sameEventFunnelSql(range, narrowFirst)) as [Record<string, number>];
    tt.same(got.result.map((s: any) => s.count), [want.c1, want.c2], `purchase ${narrowFirst ? 'over 100 then any' : 'then one over 100'}: a second step needs a later purchase`);
    tt.ok(want.c2! > 0 && want.c2! < want.c1!, `some persons but not all reach step 2 (${want.c1} → ${want.c2})`);
  }
  const byBrowser = await funnel('&breakdown=%24browser');
  const expected = await duck.rows(browserFunnelSql(range));
  const got = Object.fromEntries(byBrowser.result.map((r: any) => [r[0].breakdown_value[0], r.map((s: any) => s.count)]));
  tt.same(got, Object.fromEntries(expected.map((r) => [r.b, [r.c1, r.c2, r.c3]])), 'by first-touch $browser');
});

t.test('funnel correlation against DuckDB', async (tt) => {
  const range = `ts >= TIMESTAMP '${FROM}' AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
  const res = await get(`insights/funnel/correlation/?events=${enc(JSON.stringify(FUNNEL_STEPS))}&date_from=${FROM}&date_to=${TO}&refresh=true`);
  const rows = await duck.rows(correlationSql(range, `TIMESTAMP '${TO} 23:59:59.999'`));
  const totals = rows.find((r) => r.event === null)!;
  const candidates = new Map(rows.filter((r) => r.event !== null).map((r) => [String(r.event), { success: Number(r.s), failure: Number(r.f) }]));
  const want = correlate(candidates, Number(totals.s), Number(totals.f));
  tt.same(res.result.events.map((e: any) => [e.event.event, e.success_count, e.failure_count]), want.entries.map((e) => [e.name, e.success_count, e.failure_count]), 'the same entries with the same counts');
  tt.equal(res.result.skewed, want.skewed);
  tt.ok(want.entries.length > 0, 'something correlates');
});

t.test('path edges against DuckDB', async (tt) => {
  const range = `ts >= TIMESTAMP '${FROM}' AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
  const res = await get(`insights/path/?date_from=${FROM}&date_to=${TO}&edge_limit=10000&min_edge_weight=1&refresh=true`);
  const got = Object.fromEntries(res.result.map((e: any) => [`${e.source} > ${e.target}`, e.value]));
  const want = Object.fromEntries((await duck.rows(pathEdgesSql(range))).map((r) => [`${r.source} > ${r.target}`, Number(r.v)]));
  tt.same(got, want, 'every edge and its count');
  tt.ok(Object.keys(got).length > 100, `${Object.keys(got).length} edges`);
});

/**
 * Questions with no DuckDB reference, asked for the two executors alone (the mirror compares them; each zone of the
 * report asks them again): variants of the cases above that take other paths through the ClickHouse executors.
 */
const EXECUTORS_ONLY: [string, Record<string, unknown>][] = [
  ['insights/trend/', { events: [{ id: '$pageview' }, { id: 'purchase', math: 'dau', order: 1 }], compare: true, date_from: '2026-11-01', date_to: TO }],
  ['insights/trend/', { events: [{ id: '$pageview', math: 'dau' }], interval: 'hour', date_from: '2026-11-01', date_to: '2026-11-02' }],
  ['insights/trend/', { events: [{ id: '$pageview', math: 'monthly_active' }, { id: '$pageview', math: 'weekly_active', order: 1 }], interval: 'week', date_from: FROM, date_to: TO }],
  ['insights/trend/', { events: [{ id: '$pageview', math: 'dau' }], breakdown: '$browser', breakdown_limit: 2, display: 'ActionsLineGraphCumulative', date_from: FROM, date_to: TO }],
  ['insights/trend/', { events: [{ id: 'purchase', math: 'p99', math_property: 'price' }, { id: 'purchase', math: 'min', math_property: 'price', order: 1 }], formula: 'A - B', interval: 'month', date_from: FROM, date_to: TO }],
  ['insights/trend/', { events: [{ id: '$pageview', math: 'median_count_per_actor' }], breakdown: '$current_url', display: 'ActionsTable', date_from: FROM, date_to: TO }],
  ['insights/trend/', { events: [{ id: '$pageview', math: 'unique_session' }], properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact' }], smoothing_intervals: 3, date_from: FROM, date_to: TO }],
  ['insights/trend/', { insight: 'STICKINESS', events: [{ id: 'purchase' }], interval: 'week', date_from: FROM, date_to: TO }],
  ['insights/trend/', { insight: 'LIFECYCLE', shown_as: 'Lifecycle', events: [{ id: 'purchase' }], interval: 'week', date_from: FROM, date_to: TO }],
  ['insights/retention/', { target_entity: { id: 'signed_up', type: 'events' }, returning_entity: { id: 'purchase', type: 'events' }, date_to: TO, total_intervals: 10, period: 'Day' }],
  ['insights/retention/', { date_to: TO, total_intervals: 8, period: 'Day', breakdowns: [{ property: '$browser', type: 'event' }] }],
  ['insights/funnel/', { events: FUNNEL_STEPS, funnel_window_interval: 2, funnel_window_interval_unit: 'hour', date_from: FROM, date_to: TO }],
  ['insights/funnel/', { events: FUNNEL_STEPS, funnel_viz_type: 'trends', date_from: FROM, date_to: TO }],
  ['insights/funnel/', { events: FUNNEL_STEPS, funnel_viz_type: 'time_to_convert', date_from: FROM, date_to: TO }],
  ['insights/funnel/', { events: FUNNEL_STEPS, exclusions: [{ id: '$pageleave', funnel_from_step: 0, funnel_to_step: 1 }], breakdown: '$current_url', date_from: FROM, date_to: TO }],
  // The persons behind points: on one Quill's data the same persons, in the same order, on both executors.
  ['persons/trends/', { events: [{ id: '$pageview', math: 'dau' }], entity_id: '$pageview', entity_type: 'events', entity_math: 'dau', breakdown: '$browser', breakdown_value: 'Chrome',
    date_from: '2026-11-01', date_to: '2026-11-01', limit: 50 }],
  ['persons/stickiness/', { insight: 'STICKINESS', events: [{ id: 'purchase' }], entity_id: 'purchase', entity_type: 'events', stickiness_days: 2, date_from: FROM, date_to: TO }],
  ['persons/lifecycle/', { insight: 'LIFECYCLE', events: [{ id: '$pageview' }], target_date: '2026-11-03', lifecycle_type: 'resurrecting', date_from: '2026-11-01', date_to: TO }],
  ['persons/retention/', { target_entity: { id: '$pageview', type: 'events' }, returning_entity: { id: 'purchase', type: 'events' }, date_to: TO, total_intervals: 7, period: 'Day', selected_interval: 2 }],
  ['persons/funnel/', { events: FUNNEL_STEPS, funnel_step: -3, date_from: FROM, date_to: TO, limit: 100, offset: 20 }],
];

/** The same through `/query/`'s kinds (the other front door to the same internal queries). */
const pageviews = { kind: 'EventsNode', event: '$pageview' };
const dateRange = { date_from: FROM, date_to: TO };
const EXECUTORS_ONLY_QUERIES: Record<string, unknown>[] = [
  { kind: 'TrendsQuery', series: [{ ...pageviews, math: 'weekly_active' }, { kind: 'EventsNode', event: 'purchase', math: 'p75', math_property: 'price' }], dateRange,
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } },
  { kind: 'StickinessQuery', series: [pageviews], dateRange },
  { kind: 'LifecycleQuery', series: [pageviews], dateRange },
  { kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: 'purchase', type: 'events' }, totalIntervals: 5, period: 'Week' }, dateRange: { date_to: TO } },
  { kind: 'FunnelsQuery', series: [pageviews, { kind: 'EventsNode', event: 'purchase' }], dateRange, funnelsFilter: { funnelOrderType: 'strict' } },
];

t.test('more questions for the two executors alone', async (tt) => {
  for (const [path, params] of EXECUTORS_ONLY) {
    const qs = Object.entries({ refresh: true, ...params }).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
    const res = await api.get(`/api/projects/@current/${path}?${qs}`);
    tt.equal(res.status, 200, `${path} ${JSON.stringify(params)}`);
    // A list of persons to compare, not two empty ones (legacy bodies: results[0].people; retention: result[].person).
    if (path.startsWith('persons/')) tt.ok((res.body.results?.[0]?.people ?? res.body.result ?? []).length > 0, `${path}: persons listed`);
  }
  for (const query of EXECUTORS_ONLY_QUERIES) tt.equal((await api.post('/api/projects/@current/query/', { query, refresh: 'force_blocking' })).status, 200, String(query.kind));
});

t.test('the persons behind a path edge, a path drop-off and a correlation entry', async (tt) => {
  // Asked through the mirror: both executors must list the same persons in the same order (the report compares).
  const window = `date_from=${FROM}&date_to=${TO}`;
  const edges = await get(`insights/path/?${window}&edge_limit=20&refresh=true`);
  const edge = edges.result.find((e: any) => e.source.startsWith('2_')) ?? edges.result[0];
  const persons = async (path: string) => {
    const res = await api.get(`/api/projects/@current/${path}`);
    tt.equal(res.status, 200, path);
    return res.body.results[0].people;
  };
  tt.ok((await persons(`persons/path/?${window}&path_start_key=${enc(edge.source)}&path_end_key=${enc(edge.target)}&limit=500`)).length > 0, `persons of the edge ${edge.source} → ${edge.target}`);
  tt.ok((await persons(`persons/path/?${window}&path_dropoff_key=${enc(edge.target)}&limit=500`)).length > 0, `persons who stop at ${edge.target}`);
  const correlation = await get(`insights/funnel/correlation/?events=${enc(JSON.stringify(FUNNEL_STEPS))}&${window}&refresh=true`);
  const entry = correlation.result.events[0];
  for (const url of [entry.success_people_url, entry.failure_people_url]) {
    tt.ok((await persons(`${String(url).replace(/^\/api\/projects\/[^/]+\//, '')}&funnel_correlation_person_limit=500`)).length > 0, `persons of ${entry.event.event}: ${url.includes('converted=true') ? 'converted' : 'not converted'}`);
  }
});

t.test('sequence analyses folded inside ClickHouse send answers; those still gathered come in parts', async (tt) => {
  tt.equal((await api.twin.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
  const range = `event IN ('$pageview', 'signed_up', 'purchase') AND ts >= TIMESTAMP '${FROM}' AND ts < TIMESTAMP '${TO}' + INTERVAL 1 DAY`;
  const [{ n }] = await duck.rows(`SELECT count(*) AS n FROM events WHERE ${range}`) as [{ n: number }];
  tt.ok(Number(n) > 2 * GATHER_ROWS, `the funnel's events (${n}) fill more than two parts of ${GATHER_ROWS}`);
  const steps = enc(JSON.stringify(FUNNEL_STEPS));
  // An unordered funnel whose steps share an event (a pageview, then another) is still gathered; the funnel by first
  // touch is folded inside ClickHouse, which sends sums, ordered or unordered (its steps are distinct events), and by
  // step 1's value.
  const byBrowser = `insights/funnel/?events=${steps}&breakdown=%24browser`;
  const sharedSteps = `insights/funnel/?events=${enc(JSON.stringify([{ id: '$pageview', order: 0 }, { id: '$pageview', order: 1 }]))}&breakdown=%24browser&funnel_order_type=unordered`;
  const gathered = (await api.twin.get(`/api/projects/@current/${sharedSteps}&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
  tt.has(gathered.clickhouse, { fallback: null, folded_in_clickhouse: false }, 'two pageviews in any order: gathered');
  const folded = (await api.twin.get(`/api/projects/@current/${byBrowser}&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
  tt.has(folded.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'the steps by browser: folded inside ClickHouse');
  tt.ok(folded.clickhouse.bytes_received * 100 < gathered.clickhouse.bytes_received,
    `and ${folded.clickhouse.bytes_received} bytes came back for them, against ${gathered.clickhouse.bytes_received} for the gathered pageviews`);
  for (const form of ['&funnel_order_type=unordered', '&breakdown_attribution_type=step&breakdown_attribution_value=1']) {
    const other = (await api.twin.get(`/api/projects/@current/${byBrowser}${form}&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
    tt.has(other.clickhouse, { fallback: null, folded_in_clickhouse: true }, `${form}: folded too, ${other.clickhouse.bytes_received} bytes came back`);
  }
  const converted = (await api.twin.get(`/api/projects/@current/persons/funnel/?events=${steps}&funnel_step=3&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
  tt.has(converted.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'the persons of a step: folded inside ClickHouse');
  tt.ok(converted.clickhouse.bytes_received * 10 < gathered.clickhouse.bytes_received,
    `only the uuids of the persons who converted came back (${converted.clickhouse.bytes_received} bytes)`);
  const dropped = (await api.twin.get(`/api/projects/@current/persons/funnel/?events=${steps}&funnel_viz_type=trends&entrance_period_start=${enc(`${FROM} 00:00:00`)}&drop_off=true&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
  tt.has(dropped.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'the persons who dropped off in an entrance period: folded inside ClickHouse');
  tt.ok(dropped.results[0].people.length > 0, `and there are some (${dropped.results[0].people.length} on the first page)`);
  // Correlation and paths are folded inside ClickHouse too: the counts per event name or the heaviest edges come
  // back, or the persons of an entry, an edge or a drop-off.
  for (const path of [`insights/funnel/correlation/?events=${steps}`, `persons/funnel/correlation/?events=${steps}&funnel_correlation_person_entity=${enc('{"id":"$pageleave","type":"events"}')}`,
    'insights/path/?edge_limit=50', 'persons/path/?path_dropoff_key=2_%2F']) {
    const res = (await api.twin.get(`/api/projects/@current/${path}&date_from=${FROM}&date_to=${TO}&refresh=true`)).body;
    tt.has(res.clickhouse, { fallback: null, folded_in_clickhouse: true }, `${path}: folded inside ClickHouse`);
    tt.ok(res.clickhouse.bytes_received * 10 < gathered.clickhouse.bytes_received, `${path}: ${res.clickhouse.bytes_received} bytes came back`);
  }
  const sharedCorrelation = `insights/funnel/correlation/?events=${enc(JSON.stringify([{ id: '$pageview', order: 0 }, { id: '$pageview', order: 1 }]))}&funnel_order_type=unordered`;
  for (const path of [sharedSteps, sharedCorrelation]) {
    const res = await api.twin.get(`/api/projects/@current/${path}&date_from=${FROM}&date_to=${TO}&refresh=true`);
    tt.equal(res.status, 200, path);
    tt.equal(res.body.clickhouse?.fallback, null, `${path}: answered by ClickHouse`);
    tt.ok(res.body.clickhouse?.gathered_parts > 1, `${path}: in ${res.body.clickhouse?.gathered_parts} parts`);
  }
});

// Last: the ClickHouse Quill's answers to everything above.
t.test('the same analyses from ClickHouse', async (tt) => api.report(tt, ['UTC', 'America/New_York'], () => restartOnLocalEngine(onClickHouse as OnClickHouse)));
