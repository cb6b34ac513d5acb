// The analytics bench's ClickHouse cases on a dataset loaded straight into ClickHouse (`npm run bench:analytics-direct`):
// for sizes too large to send through Quill (issue 33: 100M events). chdb behind ClickHouse's HTTP interface
// (bench/lib/clickhouse-process.ts) gets the export's tables and `INSERT … SELECT … FROM numbers(n)` of events of
// the analytics dataset's shape (bench/lib/clickhouse-direct-dataset.ts: same distribution, not the same events),
// then the persons and distinct ids derived from them; a fresh Quill with QUILL_ANALYTICS=clickhouse on that chdb
// (its project's team id is the one loaded; it acknowledged no event, so the export counts as caught up) answers the
// trends, retention, lifecycle, stickiness, funnels, paths and HogQL cases of `QUILL_BENCH_ANALYTICS=clickhouse npm
// run bench:analytics`: one warm-up round and QUILL_BENCH_REPEATS timed rounds each, the median, which executor
// answered, and the error when it failed (a memory or time limit is recorded, the run goes on). Four answers are
// checked against plain SQL on the same tables (`checks`). Also: the load's time, chdb's data size, the peak RSS of
// chdb and Quill during the load and during the cases, the load average at start and end.
//
// Environment: QUILL_BENCH_EVENTS (default 1,000,000), QUILL_BENCH_PERSONS (default 3 % of the events: the
// default dataset's 300,000 per 10M), QUILL_BENCH_DAYS, QUILL_BENCH_SEED, QUILL_BENCH_REPEATS (5),
// QUILL_BENCH_WARMUP (1 untimed round first), QUILL_BENCH_CASES (a regular expression: only the cases it matches),
// QUILL_QUERY_MEMORY_MB / QUILL_QUERY_TIMEOUT_S (passed to Quill: ClickHouse's bound per query), QUILL_BENCH_OUT,
// QUILL_BENCH_KEEP_DATA=1 (keep chdb's directory). JSON on stdout and in
// bench/results/analytics-clickhouse-<events, e.g. 100m>-<commit>.json (`bench` says analytics-clickhouse-direct); the
// cases done so far in <that file>.partial while it runs.
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DATASET, type DatasetOptions } from './lib/analytics-dataset.js';
import { ClickHouseProcess } from './lib/clickhouse-process.js';
import { dayEventsSql, distinctIdsSql, eventsPerDay, extraEventsSql, personCreatedAtSql, personsSql, signUpEventsSql } from './lib/clickhouse-direct-dataset.js';
import { commit, machine } from './lib/machine.js';
import { PERSONAL_KEY, RESULTS_DIR } from './lib/paths.js';
import { personCases } from './lib/person-cases.js';
import { duMb, loadAverage, memoryMb, round1 } from './lib/proc-stats.js';
import { publishResult } from './lib/results.js';
import { FUNNEL_STEPS } from './lib/sequence-cases.js';
import { startQuill } from './lib/server-process.js';
import { trendsCases } from './lib/trends-cases.js';
import { hogqlCases } from './lib/hogql-cases.js';
import { schemaStatements } from '../src/stores/clickhouse/schema.js';

const events = Number(process.env.QUILL_BENCH_EVENTS ?? 1_000_000);
const opts: DatasetOptions = {
  events,
  persons: Number(process.env.QUILL_BENCH_PERSONS ?? Math.round(events * 0.03)),
  days: Number(process.env.QUILL_BENCH_DAYS ?? DEFAULT_DATASET.days),
  end: DEFAULT_DATASET.end,
  seed: Number(process.env.QUILL_BENCH_SEED ?? DEFAULT_DATASET.seed),
};
const REPEATS = Number(process.env.QUILL_BENCH_REPEATS ?? 5);
/** Untimed rounds before the timed ones (0 at 100M: one timed round is what the time allows). */
const WARMUP = Number(process.env.QUILL_BENCH_WARMUP ?? 1);
const MEMORY_MB = process.env.QUILL_QUERY_MEMORY_MB ?? '1024';
const TIMEOUT_S = process.env.QUILL_QUERY_TIMEOUT_S ?? '60';
const DATABASE = 'posthog';
const AUTH = { authorization: `Bearer ${PERSONAL_KEY}` };
const { commit: hash, dirty } = commit();
const FILE = `analytics-clickhouse-${events >= 1e6 ? `${events / 1e6}m` : `${events / 1e3}k`}-${hash}.json`;
const OUT = process.env.QUILL_BENCH_OUT ?? join(RESULTS_DIR, FILE);

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[direct ${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seconds = (since: number) => round1((performance.now() - since) / 1000);

/**
 * A statement on chdb over plain HTTP, without a client-side timeout (a day's insert at 100M takes minutes). Without
 * insert deduplication and with an empty token: the shim keeps an insert's settings as SETs of its one session, so
 * the token of Quill's own last insert (its schema version row) made the generated blocks duplicates of each other.
 * (The load also runs before Quill starts.)
 */
function exec(url: string, sql: string, settings = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/?default_format=JSONEachRow&insert_deduplicate=0&insert_deduplication_token=${settings}`, { method: 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(text);
        else reject(new Error(`ClickHouse ${res.statusCode}: ${text.slice(0, 500)}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(sql);
  });
}
const rows = async <T>(url: string, sql: string): Promise<T[]> =>
  (await exec(url, sql)).split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as T);

/** Peak RSS of chdb and Quill, sampled every 250 ms (and the kernel's high-water mark at the end of each phase). */
class PeakRss {
  peaks = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly pids: Record<string, () => number>) {}
  start(): void {
    this.peaks.clear();
    const sample = () => {
      for (const [name, pid] of Object.entries(this.pids)) {
        if (pid() === 0) continue;
        const rss = memoryMb(pid()).rss_mb ?? 0;
        this.peaks.set(name, Math.max(this.peaks.get(name) ?? 0, rss));
      }
    };
    sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(sample, 250);
  }
  /** The peaks so far (and stops sampling unless `keep`). */
  stop(keep = false): Record<string, number> {
    if (this.timer && !keep) clearInterval(this.timer);
    return Object.fromEntries([...this.peaks].map(([k, v]) => [`${k}_peak_rss_mb`, round1(v)]));
  }
}

const host = machine();
const ch = new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-bench-ch-direct-')));
await ch.start();
// The shim is not one of startQuill's children, which are stopped if the bench throws: this one must be too.
process.once('exit', () => void ch.stop());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
let quillPid = 0;
const rss = new PeakRss({ chdb: () => ch.pid, quill: () => quillPid });
log(`chdb (pid ${ch.pid}) at ${ch.url} on ${ch.dataDir}; ${opts.events} events, ${opts.persons} persons, ${opts.days} days, seed ${opts.seed}`);

// The load first, before Quill talks to chdb; the team is the project a fresh Quill makes at its first start (1),
// checked once it runs.
const team = Number(process.env.QUILL_BENCH_TEAM ?? 1);
// The load: the tables (idempotent; Quill's export makes the same), the visits a day at a time, sign-ups, persons.
const loadStarted = performance.now();
rss.start();
for (const sql of schemaStatements({ database: DATABASE, cluster: null })) await exec(ch.url, sql);
const extra = Number((await rows<{ extra: string }>(ch.url, extraEventsSql(opts)))[0]!.extra);
const perDay = eventsPerDay(opts, opts.events - extra);
const dayTimes: number[] = [];
for (let day = 0; day < opts.days; day++) {
  const started = performance.now();
  await exec(ch.url, dayEventsSql(opts, team, DATABASE, day, perDay[day]!));
  dayTimes.push(seconds(started));
  log(`day ${day + 1}/${opts.days}: ${perDay[day]} events in ${dayTimes.at(-1)} s`);
}
await exec(ch.url, signUpEventsSql(opts, team, DATABASE));
const eventsS = seconds(loadStarted);
let started = performance.now();
await exec(ch.url, personsSql(team, DATABASE));
await exec(ch.url, distinctIdsSql(team, DATABASE));
const personsS = seconds(started);
started = performance.now();
for (const sql of personCreatedAtSql(team, DATABASE)) await exec(ch.url, sql, '&mutations_sync=2');
const personCreatedAtS = seconds(started);
const loadMemory = rss.stop();
const counted = (await rows<Record<string, string>>(ch.url, `SELECT
  (SELECT count() FROM ${DATABASE}.events) AS events, (SELECT count() FROM ${DATABASE}.person) AS persons,
  (SELECT count() FROM ${DATABASE}.person_distinct_id2) AS distinct_ids,
  (SELECT countIf(person_created_at <= toDateTime64(0, 3)) FROM ${DATABASE}.events) AS without_person_created_at,
  (SELECT count() FROM system.parts WHERE database = '${DATABASE}' AND table = 'events' AND active) AS event_parts,
  (SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '${DATABASE}' AND active) AS bytes_on_disk`))[0]!;
const load = {
  events: Number(counted.events), persons: Number(counted.persons), distinct_ids: Number(counted.distinct_ids), signup_and_identify_events: extra,
  events_s: eventsS, events_per_s: Math.round(Number(counted.events) / eventsS), day_insert_s: { min: Math.min(...dayTimes), max: Math.max(...dayTimes) },
  persons_and_distinct_ids_s: personsS, events_person_created_at_s: personCreatedAtS, total_s: seconds(loadStarted),
  event_parts: Number(counted.event_parts), bytes_on_disk_mb: round1(Number(counted.bytes_on_disk) / 2 ** 20), data_dir_mb: duMb(ch.dataDir),
  ...loadMemory,
};
log(`loaded: ${JSON.stringify(load)}`);
if (Number(counted.without_person_created_at) !== 0) throw new Error(`${counted.without_person_created_at} events have no person_created_at`);
if (load.events !== opts.events) throw new Error(`chdb holds ${load.events} events, ${opts.events} were asked for`);

// Quill on a fresh directory: its first start makes the project, whose id must be the team the rows carry.
const quill = await startQuill({
  env: {
    QUILL_LOG_LEVEL: 'info', QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: DATABASE, QUILL_ANALYTICS: 'clickhouse',
    QUILL_QUERY_MEMORY_MB: MEMORY_MB, QUILL_QUERY_TIMEOUT_S: TIMEOUT_S,
  },
});
quillPid = quill.pid;
const project = (await (await fetch(`${quill.base}/api/projects/@current/`, { headers: AUTH })).json()) as { id: number };
if (project.id !== team) throw new Error(`Quill's project is ${project.id}, the rows were loaded for team ${team}`);
log(`quill pid ${quill.pid}, data in ${quill.dataDir}, team ${team}`);


const from = new Date(opts.end - opts.days * 86_400_000).toISOString().slice(0, 10);
const to = new Date(opts.end - 86_400_000).toISOString().slice(0, 10);
const qs = (params: Record<string, unknown>) => Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
interface Case { name: string; path: string; body?: unknown }
const funnelPath = (extraParams = '') => `insights/funnel/?events=${encodeURIComponent(JSON.stringify(FUNNEL_STEPS))}&date_from=${from}&date_to=${to}${extraParams}`;
const cases: Case[] = [
  ...trendsCases(from, to).map((c) => ({ name: c.name, path: `insights/trend/?${qs({ ...c.params, date_from: from, date_to: to })}` })),
  ...personCases(opts.end, opts.days).map((c) => ({ name: c.name, path: c.path })),
  { name: '3-step ordered funnel, 14-day window', path: funnelPath() },
  { name: '3-step strict funnel', path: funnelPath('&funnel_order_type=strict') },
  { name: '3-step unordered funnel', path: funnelPath('&funnel_order_type=unordered') },
  { name: '3-step funnel by $browser', path: funnelPath('&breakdown=%24browser') },
  { name: '3-step funnel by $browser, all events', path: funnelPath('&breakdown=%24browser&breakdown_attribution_type=all_events') },
  { name: '3-step funnel by $browser at step 2', path: funnelPath('&breakdown=%24browser&breakdown_attribution_type=step&breakdown_attribution_value=1') },
  { name: '3-step funnel: time to convert', path: funnelPath('&funnel_viz_type=time_to_convert') },
  // No persons lists here: the persons live only in ClickHouse, and a list is paged by the local persons store's ids
  // (a person it does not know sends the list to the local engine). test/e2e/analytics-differential.test.ts measures them.
  { name: 'correlation of event names with the 3-step funnel', path: `insights/funnel/correlation/?events=${encodeURIComponent(JSON.stringify(FUNNEL_STEPS))}&date_from=${from}&date_to=${to}` },
  { name: 'top 50 path edges over pageviews', path: `insights/path/?date_from=${from}&date_to=${to}` },
  ...hogqlCases(from, to).map((c) => ({ name: c.name, path: 'query/', body: { query: { kind: 'HogQLQuery', query: c.hogql }, refresh: 'force_blocking' } })),
];

/** Which executor answered, from the answer's `clickhouse` field (a HogQL answer carries the SQL it ran instead). */
const answeredBy = (body: any) => body?.clickhouse == null ? 'local' : typeof body.clickhouse === 'string' || body.clickhouse.fallback === null ? 'clickhouse'
  : `local (fallback: ${body.clickhouse.fallback})`;

const answers = new Map<string, any>();
async function timeCase(c: Case) {
  const ms: number[] = [];
  let body: any = null;
  for (let i = 0; i < WARMUP + REPEATS; i++) {
    const started = performance.now();
    const res = c.body === undefined
      ? await fetch(`${quill.base}/api/projects/@current/${c.path}&refresh=true`, { headers: AUTH })
      : await fetch(`${quill.base}/api/projects/@current/${c.path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(c.body) });
    const elapsed = performance.now() - started;
    body = await res.json().catch(() => null);
    if (res.status !== 200) {
      const entry = { case: c.name, answered_by: 'clickhouse', error: `${res.status} ${JSON.stringify(body).slice(0, 400)}`, failed_after_ms: round1(elapsed), rounds_before_error: i };
      log(JSON.stringify(entry));
      return entry;
    }
    if (i >= WARMUP) ms.push(elapsed);
  }
  answers.set(c.name, body);
  const entry = {
    case: c.name, answered_by: answeredBy(body), median_ms: round1(median(ms)), rounds_ms: ms.map(round1),
    // Funnels say whether ClickHouse folded them (sums back) or sent their events, and how many bytes came back.
    ...(body?.clickhouse?.bytes_received !== undefined ? { folded_in_clickhouse: body.clickhouse.folded_in_clickhouse, bytes_received: body.clickhouse.bytes_received } : {}),
  };
  log(JSON.stringify(entry));
  return entry;
}

/** QUILL_BENCH_CASES: a regular expression; only the cases whose name it matches run (and the checks of those). */
const only = process.env.QUILL_BENCH_CASES ? new RegExp(process.env.QUILL_BENCH_CASES) : null;
const chosen = cases.filter((c) => only === null || only.test(c.name));
const loadAtCases = loadAverage();
rss.start();
const results = [];
for (const c of chosen) {
  results.push(await timeCase(c));
  // What is done so far, in case the run is stopped (a 100M run takes the better part of an hour).
  writeFileSync(`${OUT}.partial`, JSON.stringify({ bench: 'analytics-clickhouse-direct', complete: false, dataset: opts, load, cases: results, memory_during_cases: rss.stop(true) }, null, 2) + '\n');
}
const caseMemory = rss.stop();

// Answers against plain SQL on the same tables (events.person_id is the final person, as the distinct ids say).
const perDaySql = (value: string, where: string) => `SELECT toString(toDate(timestamp)) AS day, ${value} AS v FROM ${DATABASE}.events
  WHERE team_id = ${team} AND ${where} AND timestamp >= '${from}' AND timestamp < toDate('${to}') + 1 GROUP BY day ORDER BY day`;
const sqlDays = async (sql: string) => new Map((await rows<{ day: string; v: number | string }>(ch.url, sql)).map((r) => [r.day, Number(r.v)]));
const trendDays = (body: any) => body ? new Map<string, number>(body.result[0].days.map((d: string, i: number) => [d, body.result[0].data[i]])) : null;
const hogqlDays = (body: any) => body ? new Map<string, number>(body.results.map(([d, v]: [string, number]) => [new Date(Date.parse(d)).toISOString().slice(0, 10), Number(v)])) : null;
const checkList: [string, Map<string, number> | null, string][] = [
  ['count per day of $pageview', trendDays(answers.get('count per day of $pageview')), perDaySql('count()', `event = '$pageview'`)],
  ['DAU per day of $pageview', trendDays(answers.get('DAU per day of $pageview')), perDaySql('uniqExact(person_id)', `event = '$pageview'`)],
  ['sum of price per day', trendDays(answers.get('sum of price per day')), perDaySql(`round(sum(JSONExtractFloat(properties, 'price')), 2)`, `event = 'purchase'`)],
  ['HogQL: count of $pageview per day', hogqlDays(answers.get('HogQL: count of $pageview per day')), perDaySql('count()', `event = '$pageview'`)],
];
const checks: Record<string, unknown>[] = [];
/**
 * The ordered funnel's persons per step against ClickHouse's windowFunnel over the same events: its semantics are
 * Quill's here because no event matches two steps (three event names), the window is inclusive on both, and an
 * event at the same instant may be the next step on both.
 */
const FUNNEL_CHECK = '3-step ordered funnel, 14-day window';
if (only === null || only.test(FUNNEL_CHECK)) {
  const [a, b, c] = FUNNEL_STEPS.map((step) => `event = '${step.id}'`);
  const sql = `SELECT countIf(level >= 1) AS c1, countIf(level >= 2) AS c2, countIf(level >= 3) AS c3 FROM (
    SELECT person_id, windowFunnel(${14 * 86_400_000})(toUInt64(toUnixTimestamp64Milli(timestamp)), ${a}, ${b}, ${c}) AS level FROM ${DATABASE}.events
    WHERE team_id = ${team} AND timestamp >= '${from}' AND timestamp < toDate('${to}') + 1 AND (${a} OR ${b} OR ${c}) GROUP BY person_id)`;
  const [expected] = await rows<{ c1: number; c2: number; c3: number }>(ch.url, sql);
  const got = answers.get(FUNNEL_CHECK)?.result?.map((step: { count: number }) => step.count) ?? null;
  const want = [expected!.c1, expected!.c2, expected!.c3].map(Number);
  const entry = { case: `${FUNNEL_CHECK}: persons per step against windowFunnel`, quill: got, sql: want, same_answer: JSON.stringify(got) === JSON.stringify(want) };
  log(`check: ${JSON.stringify(entry)}`);
  checks.push(entry);
}
for (const [name, quillDays, sql] of checkList) {
  if (only !== null && !only.test(name)) continue;
  const expected = await sqlDays(sql);
  const differing = quillDays === null ? ['no answer'] : [...expected].filter(([d, v]) => Math.abs((quillDays.get(d) ?? 0) - v) > 1e-6 * Math.max(1, v)).map(([d, v]) => `${d}: quill ${quillDays.get(d)}, sql ${v}`);
  const entry = { case: name, days: expected.size, total: round1([...expected.values()].reduce((a, b) => a + b, 0)), same_answer: differing.length === 0, ...(differing.length ? { differences: differing.slice(0, 5) } : {}) };
  log(`check: ${JSON.stringify(entry)}`);
  checks.push(entry);
}

await quill.stop();
await ch.stop();
const dataDirs = { chdb: ch.dataDir, quill: quill.dataDir };
if (process.env.QUILL_BENCH_KEEP_DATA) log(`kept: ${JSON.stringify(dataDirs)}`);
else for (const dir of Object.values(dataDirs)) rmSync(dir, { recursive: true, force: true });

const report = {
  bench: 'analytics-clickhouse-direct', machine: host, commit: hash, dirty, at: new Date().toISOString(),
  dataset: { ...opts, generator: 'bench/lib/clickhouse-direct-dataset.ts: in ClickHouse, the shape of bench/lib/analytics-dataset.ts, not its events' },
  analytics: 'QUILL_ANALYTICS=clickhouse: chdb behind ClickHouse\'s HTTP interface, same machine; Quill acknowledged no event',
  query_memory_mb: Number(MEMORY_MB), query_timeout_s: Number(TIMEOUT_S), warmup_rounds: WARMUP, timed_rounds: REPEATS,
  load,
  loadavg: { at_start: host.loadavg_at_start, at_cases: loadAtCases, at_end: loadAverage() },
  memory_during_cases: caseMemory,
  cases: results,
  checks,
  every_case_on_clickhouse: results.every((r) => r.answered_by === 'clickhouse' && !('error' in r)),
  checks_equal: checks.every((c) => c.same_answer),
};
publishResult(report, FILE, log);
rmSync(`${OUT}.partial`, { force: true });
if (!report.checks_equal) {
  process.stderr.write('DIRECT BENCH FAILED: an answer differs from the SQL count (see "checks")\n');
  process.exit(1);
}
