// The analytics benchmark (`npm run bench:analytics`): a generated dataset (bench/lib/analytics-dataset.ts; default
// 10,000,000 events, 300,000 persons, 30 days) goes through `/batch/` into a fresh Quill and into DuckDB (2 threads)
// in the same run; then every trends case is answered by both, five times each (Quill with refresh=true), medians
// reported, and the answers compared: the bench fails loudly if they differ. The same for retention, lifecycle,
// stickiness, funnels, paths, and SQL (a HogQLQuery count-by-day and DAU against DuckDB's same SQL); the query API's
// insight kinds against the legacy endpoints for the same questions (times and answers). Actions: a
// trend over a three-step action (URL regex, autocapture text, plain event) beside the same trend over one event
// name, both against DuckDB. An experiment's results over the dataset beside a trend of the same event (Quill
// alone; bench/lib/experiment-case.ts). Also reported: the load (acknowledged and end-to-end events/s), the scan layout (bytes
// per event, the time a restart takes to open them) and Quill's memory while
// answering. One JSON document on stdout (and in bench/results/analytics-latest.json), progress on stderr.
//
// With QUILL_BENCH_ANALYTICS=clickhouse, Quill exports into ClickHouse (chdb behind ClickHouse's HTTP interface,
// bench/lib/clickhouse-process.ts, 2 threads on the same machine) and answers with QUILL_ANALYTICS=clickhouse:
// the timed rounds start once the export holds every event, and each case says which executor answered it (what
// ClickHouse does not compute yet is answered by the local engine and named as a fallback).
//
// Environment: QUILL_BENCH_EVENTS, QUILL_BENCH_PERSONS, QUILL_BENCH_DAYS, QUILL_BENCH_SEED, QUILL_BENCH_OUT,
// QUILL_BENCH_KEEP_DATA=1 (Quill's data directory and ClickHouse's), QUILL_BENCH_ANALYTICS=local|clickhouse.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DATASET, Dataset } from './lib/analytics-dataset.js';
import { BENCH_ACTION } from './lib/action-cases.js';
import { ClickHouseProcess } from './lib/clickhouse-process.js';
import { exportCaughtUp } from './lib/export-stats.js';
import { loadDataset } from './lib/dataset-load.js';
import { DuckReference } from './lib/duckdb-reference.js';
import { commit, machine } from './lib/machine.js';
import { PERSONAL_KEY, PROJECT_KEY, RESULTS_DIR } from './lib/paths.js';
import { memoryMb, round1, round2 } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';
import { experimentBesideTrend } from './lib/experiment-case.js';
import { differences, duckValues, quillValues, trendsCases } from './lib/trends-cases.js';
import { hogqlCases, hogqlValues } from './lib/hogql-cases.js';
import { webCases, webPageQueries } from './lib/web-cases.js';
import { LoadGenerator, type Load } from './lib/load.js';
import { loadPersonsCreatedAt, personCases } from './lib/person-cases.js';
import { FUNNEL_STEPS, browserFunnelSql, correlationSql, orderedFunnelSql, pathEdgesSql, strictFunnelSql, unorderedFunnelSql } from './lib/sequence-cases.js';
import { correlate } from '../src/domain/analytics/correlation.js';
import { rankEdges } from '../src/domain/analytics/paths.js';

const opts = {
  events: Number(process.env.QUILL_BENCH_EVENTS ?? DEFAULT_DATASET.events),
  persons: Number(process.env.QUILL_BENCH_PERSONS ?? DEFAULT_DATASET.persons),
  days: Number(process.env.QUILL_BENCH_DAYS ?? DEFAULT_DATASET.days),
  end: DEFAULT_DATASET.end,
  seed: Number(process.env.QUILL_BENCH_SEED ?? DEFAULT_DATASET.seed),
};
const REPEATS = 5;
const EXECUTOR = process.env.QUILL_BENCH_ANALYTICS === 'clickhouse' ? 'clickhouse' : 'local';
const EXPORT_TIMEOUT_MS = 60 * 60_000;
const AUTH = { authorization: `Bearer ${PERSONAL_KEY}` };

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[analytics ${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function stats(base: string): Promise<{ backlog: number; scan: { sealedEvents: number; sealedBytes: number; openEvents: number } }> {
  const res = await fetch(`${base}/_stats`, { headers: AUTH });
  const body = await res.json() as { shards: { backlog: number; scan: { sealedEvents: number; sealedBytes: number; openEvents: number } }[] };
  const scan = { sealedEvents: 0, sealedBytes: 0, openEvents: 0 };
  let backlog = 0;
  for (const s of body.shards) {
    backlog += s.backlog;
    scan.sealedEvents += s.scan.sealedEvents;
    scan.sealedBytes += s.scan.sealedBytes;
    scan.openEvents += s.scan.openEvents;
  }
  return { backlog, scan };
}

async function quillTrend(base: string, params: Record<string, unknown>): Promise<{ ms: number; result: any[] }> {
  const qs = Object.entries({ ...params, refresh: true }).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  const started = performance.now();
  const res = await fetch(`${base}/api/projects/@current/insights/trend/?${qs}`, { headers: AUTH });
  const body = await res.json() as { result: any[] };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`trend answered ${res.status}: ${JSON.stringify(body)}`);
  return { ms, result: body.result };
}

interface Comparison {
  name: string;
  /** Path under /api/projects/@current/ (with a query string). */
  path: string;
  /** A JSON body to POST instead of a GET (the query API). */
  body?: unknown;
  sql: string;
  quill(body: any): Map<string, number>;
  duck(rows: Record<string, unknown>[]): Map<string, number>;
}

let failed = false;
/** A case ClickHouse did not answer (QUILL_BENCH_ANALYTICS=clickhouse): reported in the case, and the run fails. */
let unanswered = false;
let peakRss = 0;
let peakAnon = 0;

/** One case: a warm-up round then REPEATS timed rounds of each engine (Quill with refresh=true), answers compared. */
async function compare(base: string, pid: number, duck: DuckReference, c: Comparison) {
  const quillMs: number[] = [];
  let body: any = null;
  for (let i = 0; i <= REPEATS; i++) {
    const started = performance.now();
    const res = c.body === undefined
      ? await fetch(`${base}/api/projects/@current/${c.path}&refresh=true`, { headers: AUTH })
      : await fetch(`${base}/api/projects/@current/${c.path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(c.body) });
    body = await res.json();
    if (res.status !== 200) {
      // On ClickHouse a case may fail where the local engine answers (its memory bound): reported, and the run goes on.
      if (EXECUTOR !== 'clickhouse') throw new Error(`${c.name}: ${res.status} ${JSON.stringify(body)}`);
      unanswered = true;
      const entry = { case: c.name, answered_by: 'clickhouse', error: `${res.status} ${JSON.stringify(body)}` };
      log(JSON.stringify(entry));
      return entry;
    }
    if (i > 0) quillMs.push(performance.now() - started);
    const mem = memoryMb(pid);
    peakRss = Math.max(peakRss, mem.rss_mb ?? 0);
    peakAnon = Math.max(peakAnon, mem.rss_anon_mb ?? 0);
  }
  const duckMs: number[] = [];
  let rows: Record<string, unknown>[] = [];
  for (let i = 0; i <= REPEATS; i++) {
    const r = await duck.time(c.sql);
    if (i > 0) duckMs.push(r.ms);
    rows = r.rows;
  }
  const diffs = differences(c.quill(body), c.duck(rows));
  if (diffs.length > 0) failed = true;
  // Which executor answered (QUILL_BENCH_ANALYTICS=clickhouse): ClickHouse, or the local engine and why.
  // (A HogQL answer carries the ClickHouse SQL it ran instead.)
  const answeredBy = body?.clickhouse == null ? 'local' : typeof body.clickhouse === 'string' || body.clickhouse.fallback === null ? 'clickhouse'
    : `local (fallback: ${body.clickhouse.fallback})`;
  const entry = {
    case: c.name, answered_by: answeredBy, quill_ms: round1(median(quillMs)), duckdb_ms: round1(median(duckMs)), ratio_to_duckdb: round2(median(quillMs) / median(duckMs)),
    quill_rounds_ms: quillMs.map(round1), duckdb_rounds_ms: duckMs.map(round1), same_answer: diffs.length === 0, ...(diffs.length > 0 ? { differences: diffs.slice(0, 10) } : {}),
  };
  log(JSON.stringify(entry));
  return entry;
}

const host = machine();
const dataset = new Dataset(opts);
const ch = EXECUTOR === 'clickhouse' ? new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-bench-ch-'))) : null;
await ch?.start();
const quill = await startQuill({
  env: { QUILL_LOG_LEVEL: 'info', ...(ch ? { QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog', QUILL_ANALYTICS: 'clickhouse' } : {}) },
});
log(`quill pid ${quill.pid}, data in ${quill.dataDir}${ch ? `, ClickHouse (pid ${ch.pid}) at ${ch.url} on ${ch.dataDir}` : ''}; ${opts.events} events, ${opts.persons} persons, ${opts.days} days`);
const duck = await DuckReference.open(2);
const loading = await loadDataset(quill.base, dataset, log, (rows) => duck.append(rows));
await duck.finish(opts.persons * 2, (d) => dataset.personOfDevice(d));
log(`loaded: ${JSON.stringify(loading)}`);
let exportS: number | null = null;
if (ch) {
  const started = performance.now();
  await exportCaughtUp(quill.base, EXPORT_TIMEOUT_MS);
  exportS = round1((performance.now() - started) / 1000);
  log(`the export caught up ${exportS} s after the load was applied`);
}
const layout = (await stats(quill.base)).scan;

const from = new Date(opts.end - opts.days * 86_400_000).toISOString().slice(0, 10);
const to = new Date(opts.end - 86_400_000).toISOString().slice(0, 10);
// QUILL_BENCH_ONLY=web,trends,…: only these groups of cases (trends, actions, persons, sequences, sql, web, kinds,
// isolation, experiment); the load, the layout and the restart always run.
const ONLY = process.env.QUILL_BENCH_ONLY ? new Set(process.env.QUILL_BENCH_ONLY.split(',')) : null;
const runs = (group: string) => ONLY === null || ONLY.has(group);
const trendPath = (entities: Record<string, unknown>) => `insights/trend/?${Object.entries({ ...entities, date_from: from, date_to: to }).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&')}`;
const trendsAnswers = [];
if (runs('trends')) for (const c of trendsCases(from, to)) {
  const params = { ...c.params, date_from: from, date_to: to };
  const qs = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  trendsAnswers.push(await compare(quill.base, quill.pid, duck, {
    name: c.name, path: `insights/trend/?${qs}`, sql: c.sql,
    quill: (body) => quillValues(body.result, c.breakdown === true), duck: (rows) => duckValues(rows, c.breakdown === true),
  }));
}

// Actions: a trend over a three-step action (a URL regex, an autocapture text match, a plain event)
// next to the same trend over a single event name, each compared with DuckDB's SQL for the same events.
async function actionComparison() {
  const created = await fetch(`${quill.base}/api/projects/@current/actions/`, {
    method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ name: BENCH_ACTION.name, steps: BENCH_ACTION.steps }),
  });
  if (created.status !== 201) throw new Error(`action creation answered ${created.status}: ${await created.text()}`);
  const actionId = ((await created.json()) as { id: number }).id;
  const daySql = (condition: string) => `SELECT date_trunc('day', ts) AS day, count(*) AS v FROM events WHERE (${condition}) AND ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${to}' + INTERVAL 1 DAY GROUP BY 1`;
  const overAction = await compare(quill.base, quill.pid, duck, {
    name: `count per day of an action: ${BENCH_ACTION.name} (3 steps: url regex, autocapture text, event)`, path: trendPath({ actions: [{ id: actionId, type: 'actions' }] }),
    sql: daySql(BENCH_ACTION.sql), quill: (body) => quillValues(body.result, false), duck: (rows) => duckValues(rows, false),
  });
  const overEvent = await compare(quill.base, quill.pid, duck, {
    name: 'count per day of one event name ($pageview)', path: trendPath({ events: [{ id: '$pageview' }] }),
    sql: daySql(`event = '$pageview'`), quill: (body) => quillValues(body.result, false), duck: (rows) => duckValues(rows, false),
  });
  // The ratio from rounds alternating between the two questions, so a busy machine slows both alike.
  const alternating: { action: number[]; event: number[] } = { action: [], event: [] };
  for (let i = 0; i < REPEATS * 2; i++) {
    for (const [kind, path] of [['event', trendPath({ events: [{ id: '$pageview' }] })], ['action', trendPath({ actions: [{ id: actionId, type: 'actions' }] })]] as const) {
      const started = performance.now();
      const res = await fetch(`${quill.base}/api/projects/@current/${path}&refresh=true`, { headers: AUTH });
      await res.arrayBuffer();
      alternating[kind].push(performance.now() - started);
    }
  }
  const answers = {
    action: overAction, single_event: overEvent,
    alternating_rounds: { action_ms: round1(median(alternating.action)), single_event_ms: round1(median(alternating.event)) },
    action_to_single_event: round2(median(alternating.action) / median(alternating.event)),
  };
  log(`action / single event: ${answers.action_to_single_event} (${JSON.stringify(answers.alternating_rounds)})`);
  return answers;
}
const actionAnswers = runs('actions') ? await actionComparison() : null;

// Retention, lifecycle, stickiness: the same procedure (the reference needs Quill's persons' created_at).
const personAnswers = [];
if (runs('persons')) {
  log(`persons' created_at for the reference: ${await loadPersonsCreatedAt(quill.dataDir, dataset, duck)} persons`);
  for (const c of personCases(opts.end, opts.days)) personAnswers.push(await compare(quill.base, quill.pid, duck, c));
}

// Funnels and paths: the same procedure.
const seqRange = `ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${to}' + INTERVAL 1 DAY`;
const funnelPath = (extra = '') => `insights/funnel/?events=${encodeURIComponent(JSON.stringify(FUNNEL_STEPS))}&date_from=${from}&date_to=${to}${extra}`;
const stepCounts = (body: any) => new Map<string, number>(body.result.map((s: any, i: number) => [String(i + 1), s.count]));
const duckSteps = (rows: Record<string, unknown>[]) => new Map<string, number>([['1', Number(rows[0]!.c1)], ['2', Number(rows[0]!.c2)], ['3', Number(rows[0]!.c3)]]);
const sequenceCases: Comparison[] = [
  { name: '3-step ordered funnel, 14-day window', path: funnelPath(), sql: orderedFunnelSql(seqRange), quill: stepCounts, duck: duckSteps },
  { name: '3-step strict funnel', path: funnelPath('&funnel_order_type=strict'), sql: strictFunnelSql(seqRange), quill: stepCounts, duck: duckSteps },
  { name: '3-step unordered funnel', path: funnelPath('&funnel_order_type=unordered'), sql: unorderedFunnelSql(seqRange), quill: stepCounts, duck: duckSteps },
  {
    name: '3-step funnel by $browser', path: funnelPath('&breakdown=%24browser'), sql: browserFunnelSql(seqRange),
    quill: (body) => new Map(body.result.flatMap((r: any) => r.map((s: any, i: number) => [`${r[0].breakdown_value[0]}|${i + 1}`, s.count]))),
    duck: (rows) => new Map(rows.flatMap((r) => [1, 2, 3].map((i) => [`${r.b}|${i}`, Number(r[`c${i}`])] as [string, number]))),
  },
  {
    name: 'correlation of event names with the 3-step funnel', path: `insights/funnel/correlation/?events=${encodeURIComponent(JSON.stringify(FUNNEL_STEPS))}&date_from=${from}&date_to=${to}`,
    sql: correlationSql(seqRange, `TIMESTAMP '${to} 23:59:59.999'`),
    quill: (body) => new Map(body.result.events.flatMap((e: any) => [[`${e.event.event}|s`, e.success_count], [`${e.event.event}|f`, e.failure_count]])),
    duck: (rows) => {
      const totals = rows.find((r) => r.event === null)!;
      const candidates = new Map(rows.filter((r) => r.event !== null).map((r) => [String(r.event), { success: Number(r.s), failure: Number(r.f) }]));
      return new Map(correlate(candidates, Number(totals.s), Number(totals.f)).entries.flatMap((e) => [[`${e.name}|s`, e.success_count], [`${e.name}|f`, e.failure_count]] as [string, number][]));
    },
  },
  {
    name: 'top 50 path edges over pageviews', path: `insights/path/?date_from=${from}&date_to=${to}`, sql: pathEdgesSql(seqRange),
    quill: (body) => new Map(body.result.map((e: any) => [`${e.source} > ${e.target}`, e.value])),
    duck: (rows) => {
      const all = new Map(rows.map((r) => [JSON.stringify([r.source, r.target]), { value: Number(r.v), time: 0 }]));
      return new Map(rankEdges(all, { edgeLimit: 50, minEdgeWeight: null, maxEdgeWeight: null }).map((e) => [`${e.source} > ${e.target}`, e.value]));
    },
  },
];
if (runs('sequences')) for (const c of sequenceCases) personAnswers.push(await compare(quill.base, quill.pid, duck, c));

// SQL: HogQLQuery through /query/ (recomputed each time) against DuckDB's same SQL.
const sqlAnswers = [];
if (runs('sql')) for (const c of hogqlCases(from, to)) {
  sqlAnswers.push(await compare(quill.base, quill.pid, duck, {
    name: c.name, path: 'query/', body: { query: { kind: 'HogQLQuery', query: c.hogql }, refresh: 'force_blocking' }, sql: c.sql,
    quill: (body) => hogqlValues(body.results), duck: (rows) => duckValues(rows, false),
  }));
}

// Web analytics through /query/ (recomputed each time) against DuckDB folding the same sessions by PostHog's rules.
// A query over more sessions than the query memory bound holds answers 400 (query_memory_limit): reported as the
// case's error, not a failed run (the bound, not a wrong answer).
const webAnswers = [];
if (runs('web')) for (const c of webCases(from, to)) {
  try {
    webAnswers.push(await compare(quill.base, quill.pid, duck, {
      name: c.name, path: 'query/', body: { query: c.query, refresh: 'force_blocking' }, sql: c.sql, quill: c.quill, duck: c.duck,
    }));
  } catch (error) {
    const entry = { case: c.name, error: String((error as Error).message).slice(0, 400) };
    log(JSON.stringify(entry));
    webAnswers.push(entry);
  }
}
// The whole Web analytics page: its queries sent at once, as the console sends them; the page's time is the last answer's.
let webPage: Record<string, unknown> | null = null;
if (runs('web')) {
  const pageMs: number[] = [];
  const slowest: string[] = [];
  // A tile the node refuses (its query budget: queries sharing a thread are charged each other's memory) is reported
  // with its answer, as the web cases are, not a failed run.
  const refused: string[] = [];
  for (let i = 0; i <= REPEATS; i++) {
    const started = performance.now();
    const each = await Promise.all(webPageQueries(from, to).map(async (query) => {
      const res = await fetch(`${quill.base}/api/projects/@current/query/`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ query, refresh: 'force_blocking' }) });
      const text = await res.text();
      const kind = `${String(query.kind)}${query.breakdownBy ? `:${String(query.breakdownBy)}` : ''}`;
      if (res.status !== 200) refused.push(`round ${i}: ${kind} ${res.status} ${text.slice(0, 200)}`);
      return { kind, ms: performance.now() - started };
    }));
    if (i > 0) {
      pageMs.push(performance.now() - started);
      slowest.push(each.reduce((a, b) => (b.ms > a.ms ? b : a)).kind);
    }
  }
  webPage = {
    case: `the whole Web analytics page: ${webPageQueries(from, to).length} queries at once`, quill_ms: round1(median(pageMs)), rounds_ms: pageMs.map(round1), last_to_answer: slowest,
    every_tile_answered: refused.length === 0, ...(refused.length > 0 ? { refused: refused.slice(0, 10) } : {}),
  };
  log(JSON.stringify(webPage));
}

// The query API's insight kinds against the legacy endpoints asking the same question (they should be within 10 % of each other):
// rounds alternate between the two doors so a busy machine slows both alike; the answers must be the same.
const range = { date_from: from, date_to: to };
const pageviews = { kind: 'EventsNode', event: '$pageview' };
const kindCases: { name: string; legacy: string; query: Record<string, unknown>; values: (rows: any[]) => unknown }[] = [
  { name: 'TrendsQuery: count per day of $pageview', legacy: trendPath({ events: [{ id: '$pageview' }] }), query: { kind: 'TrendsQuery', series: [pageviews], dateRange: range, interval: 'day' }, values: (r) => r.map((s: any) => s.data) },
  { name: 'TrendsQuery: DAU per day by $browser', legacy: `${trendPath({ events: [{ id: '$pageview', math: 'dau' }] })}&breakdown=%24browser`, query: { kind: 'TrendsQuery', series: [{ ...pageviews, math: 'dau' }], dateRange: range, interval: 'day', breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }, values: (r) => r.map((s: any) => [s.breakdown_value, s.data]) },
  { name: 'FunnelsQuery: 3-step ordered funnel', legacy: funnelPath(), query: { kind: 'FunnelsQuery', series: FUNNEL_STEPS.map((s) => ({ kind: 'EventsNode', event: s.id })), dateRange: range }, values: (r) => r.map((s: any) => s.count) },
  { name: 'LifecycleQuery: $pageview per day', legacy: `${trendPath({ events: [{ id: '$pageview' }] })}&insight=LIFECYCLE`, query: { kind: 'LifecycleQuery', series: [pageviews], dateRange: range, interval: 'day' }, values: (r) => r.map((s: any) => [s.status, s.data]) },
];
const queryKinds = [];
if (runs('kinds')) for (const c of kindCases) {
  const legacyMs: number[] = [];
  const queryMs: number[] = [];
  let legacyValues: unknown = null;
  let queryValues: unknown = null;
  for (let i = 0; i <= REPEATS; i++) {
    let started = performance.now();
    const viaLegacy = await fetch(`${quill.base}/api/projects/@current/${c.legacy}&refresh=true`, { headers: AUTH });
    const legacyBody = await viaLegacy.json() as { result: any[] };
    if (i > 0) legacyMs.push(performance.now() - started);
    started = performance.now();
    const viaQuery = await fetch(`${quill.base}/api/projects/@current/query/`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ query: c.query, refresh: 'force_blocking' }) });
    const queryBody = await viaQuery.json() as { results: any[] };
    if (i > 0) queryMs.push(performance.now() - started);
    if (viaLegacy.status !== 200 || viaQuery.status !== 200) throw new Error(`${c.name}: ${viaLegacy.status} / ${viaQuery.status}`);
    legacyValues = c.values(legacyBody.result);
    queryValues = c.values(queryBody.results);
  }
  const same = JSON.stringify(legacyValues) === JSON.stringify(queryValues);
  if (!same) failed = true;
  const entry = { case: c.name, legacy_ms: round1(median(legacyMs)), query_ms: round1(median(queryMs)), query_to_legacy: round2(median(queryMs) / median(legacyMs)), same_answer: same };
  log(JSON.stringify(entry));
  queryKinds.push(entry);
}

// Isolation: /flags/ and /capture/ latency at a moderate fixed load, without and with analyses back to back.
const gen = LoadGenerator.create(log);
const ISOLATION_S = Number(process.env.QUILL_BENCH_ISOLATION_SECONDS ?? 10);
const loads: [string, Load][] = [
  ['flags', { kind: 'static', method: 'POST', path: '/flags/?v=2', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'user-1' }) }],
  ['capture', { kind: 'capture', path: '/capture/', apiKey: PROJECT_KEY }],
];
const isolation: Record<string, unknown>[] = [];
if (runs('isolation')) for (const [name, load] of loads) {
  const run = { connections: 8, durationS: ISOLATION_S, delayMs: 5 };
  const alone = await gen.run(quill.base, load, run);
  let analysing = true;
  let analyses = 0;
  const analysesLoop = (async () => {
    const all = trendsCases(from, to);
    while (analysing) {
      await quillTrend(quill.base, { ...all[analyses % all.length]!.params, date_from: from, date_to: to });
      analyses++;
    }
  })();
  const beside = await gen.run(quill.base, load, run);
  analysing = false;
  await analysesLoop;
  const entry = {
    case: `${name} at a fixed load, without / with analyses back to back`, connections: 8, delay_ms: 5,
    alone: { requests_s: Math.round(alone.requests_s), p50_ms: alone.p50_ms, p99_ms: alone.p99_ms },
    with_analyses: { requests_s: Math.round(beside.requests_s), p50_ms: beside.p50_ms, p99_ms: beside.p99_ms, analyses_run: analyses },
    p99_ratio: round2(beside.p99_ms / alone.p99_ms),
  };
  log(JSON.stringify(entry));
  isolation.push(entry);
}

// Last, since it adds events DuckDB does not have: an experiment over the dataset beside the same metric as a trend.
const experiment = runs('experiment') ? await experimentBesideTrend(quill.base, opts, REPEATS, log) : null;

// A restart on the loaded data directory: until the server answers (open blocks read back, logs replayed).
await quill.stop();
const restartStarted = performance.now();
const restarted = await startQuill({ dataDir: quill.dataDir, env: { QUILL_LOG_LEVEL: 'info' }, startTimeoutS: 1800 });
const restartMs = Math.round(performance.now() - restartStarted);
await restarted.stop();
duck.close();
if (ch) {
  await ch.stop();
  // Kept with Quill's: a ClickHouse holding the dataset, to try its queries again without a load.
  if (process.env.QUILL_BENCH_KEEP_DATA) log(`ClickHouse's data kept: ${ch.dataDir} (node dist/bench/lib/clickhouse-shim.js <dir> serves it)`);
  else rmSync(ch.dataDir, { recursive: true, force: true });
}

const report = {
  bench: 'analytics', machine: host, ...commit(), at: new Date().toISOString(),
  dataset: opts,
  analytics: EXECUTOR === 'clickhouse' ? 'QUILL_ANALYTICS=clickhouse: chdb behind ClickHouse\'s HTTP interface, same machine' : 'local',
  load: loading,
  ...(ch ? { export_caught_up_after_apply_s: exportS } : {}),
  layout: {
    bytes_per_event: round1(layout.sealedBytes / Math.max(1, layout.sealedEvents)), sealed_events: layout.sealedEvents, open_events: layout.openEvents,
    restart_ms: restartMs,
  },
  memory_during_queries: { peak_rss_mb: peakRss, peak_rss_anon_mb: peakAnon },
  trends: trendsAnswers,
  actions: actionAnswers,
  retention_lifecycle_stickiness_funnels_paths: personAnswers,
  hogql: sqlAnswers,
  web_analytics: webAnswers,
  web_analytics_page: webPage,
  query_kinds_against_legacy: queryKinds,
  isolation,
  experiment,
  all_answers_equal: !failed,
  ...(EXECUTOR === 'clickhouse' ? { every_case_answered: !unanswered } : {}),
};
const text = JSON.stringify(report, null, 2);
process.stdout.write(text + '\n');
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(process.env.QUILL_BENCH_OUT ?? join(RESULTS_DIR, 'analytics-latest.json'), text + '\n');
if (!process.env.QUILL_BENCH_KEEP_DATA) rmSync(quill.dataDir, { recursive: true, force: true });
if (failed || unanswered) {
  if (failed) process.stderr.write('ANALYTICS BENCH FAILED: Quill and DuckDB gave different answers (see "differences")\n');
  if (unanswered) process.stderr.write('ANALYTICS BENCH FAILED: ClickHouse did not answer some cases (see "error")\n');
  process.exit(1);
}
