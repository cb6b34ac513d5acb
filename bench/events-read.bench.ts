// Reading stored events back (`npm run bench:events-read`): events are kept only as column blocks, so every events
// API read is a merge over the blocks whose time range overlaps it (src/stores/events/event-store.ts). A fresh
// Quill takes QUILL_BENCH_EVENTS (default 300,000) posthog-node-shaped events through `/batch/`, timestamps spread
// over 30 days in arrival order with one in ten arriving late (anywhere in the 30 days, so blocks overlap), and
// waits until they are applied; then each read below is timed one request at a time (QUILL_BENCH_READS each, after
// a warm-up): the newest page, a page by event name, a page of one distinct id, a page 20 days back, the oldest
// page, and `GET /events/:id/` of random stored events. The baseline is the same sequential loop against a bare
// uWebSockets.js hello world in the same run, so the machine's own latency is visible beside each figure.
// One JSON document on stdout (and bench/results/events-read-latest.json, or QUILL_BENCH_OUT).
//
// QUILL_BENCH_MAIN runs another build (e.g. a worktree of an older commit) for a before/after pair.
import { readdirSync } from 'node:fs';
import { AppliedProbe } from './lib/applied.js';
import { EventFactory, uuidOf } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { PERSONAL_KEY, PROJECT_KEY } from './lib/paths.js';
import { duMb, round2 } from './lib/proc-stats.js';
import { publishResult } from './lib/results.js';
import { startHelloWorld, startQuill } from './lib/server-process.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 300_000);
const READS = Number(process.env.QUILL_BENCH_READS ?? 200);
const WARM_UP = 20;
const PER_REQUEST = 100;
const DAYS = 30;
const DAY_MS = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[events-read ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);

interface Timing {
  reads: number;
  p50_ms: number;
  p99_ms: number;
  mean_ms: number;
  /** Events in the last answer (a page should be full). */
  events: number;
}

/** Times `n` sequential GETs of what `path()` names, after a warm-up. */
async function timeReads(base: string, path: () => string, n: number, auth: boolean): Promise<Timing> {
  const headers = auth ? { authorization: `Bearer ${PERSONAL_KEY}` } : undefined;
  const times: number[] = [];
  let events = 0;
  for (let i = 0; i < WARM_UP + n; i++) {
    const started = performance.now();
    const res = await fetch(base + path(), { headers });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path()}: ${res.status} ${text.slice(0, 200)}`);
    if (i >= WARM_UP) times.push(ms);
    if (auth) {
      const body = JSON.parse(text) as { results?: unknown[] };
      events = Array.isArray(body.results) ? body.results.length : 1;
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => round2(times[Math.min(times.length - 1, Math.floor(q * times.length))]!);
  return { reads: n, p50_ms: at(0.5), p99_ms: at(0.99), mean_ms: round2(times.reduce((a, b) => a + b, 0) / times.length), events };
}

const host = machine();
const hello = await startHelloWorld();
const baseline = await timeReads(hello.base, () => '/', READS, false);
await hello.stop();
log(`baseline (hello world, sequential GET): p50 ${baseline.p50_ms} ms, p99 ${baseline.p99_ms} ms`);

const quill = await startQuill();
log(`quill pid ${quill.pid}, ${quill.workers} workers; sending ${EVENTS} events`);
const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
const factory = new EventFactory();
let sent = 0;
const timestampOf = (i: number): string => {
  const late = Math.random() < 0.1;
  return new Date(T0 + Math.floor((late ? Math.random() : i / EVENTS) * DAYS * DAY_MS)).toISOString();
};
const load = await sendFixedCount({
  base: quill.base,
  path: '/batch/',
  requests: Math.ceil(EVENTS / PER_REQUEST),
  connections: 16,
  body: () => {
    const parts: string[] = [];
    for (let k = 0; k < PER_REQUEST; k++) parts.push(factory.event(timestampOf(sent++)));
    return `{"api_key":"${PROJECT_KEY}","batch":[${parts.join(',')}]}`;
  },
});
const loadEnd = performance.now();
const acked = load.ok * PER_REQUEST;
log(`${acked} events acknowledged in ${load.duration_s} s; waiting until they are applied`);
const applied = await probe.wait({ atLeast: acked, since: loadEnd, timeoutMs: 30 * 60_000, stableMs: 2000 });
log(`applied: ${JSON.stringify(applied)}`);

const api = '/api/projects/@current/events/';
const midpoint = new Date(T0 + 10 * DAY_MS).toISOString();
const reads: Record<string, Timing> = {};
const cases: [string, () => string][] = [
  ['newest_page', () => `${api}?limit=100`],
  ['by_event_name', () => `${api}?event=signed_up&limit=100`],
  ['by_distinct_id', () => `${api}?distinct_id=user-${1 + Math.floor(Math.random() * 50_000)}&limit=100`],
  ['page_20_days_back', () => `${api}?before=${encodeURIComponent(midpoint)}&limit=100`],
  ['oldest_page', () => `${api}?orderBy=${encodeURIComponent('["timestamp"]')}&limit=100`],
  ['by_uuid', () => `${api}${uuidOf(factory.prefix, 1 + Math.floor(Math.random() * factory.generated))}/`],
];
for (const [name, path] of cases) {
  reads[name] = await timeReads(quill.base, path, READS, true);
  log(`${name}: p50 ${reads[name]!.p50_ms} ms, p99 ${reads[name]!.p99_ms} ms (${reads[name]!.events} events in the last answer)`);
}
const lmdbMb = duMb(quill.dataDir, ['meta.mdb', 'persons.mdb', ...readdirSync(`${quill.dataDir}/shards`).map((s) => `shards/${s}/events.mdb`)]);
await quill.stop();

publishResult({
  bench: 'events-read', machine: host, ...commit(), at: new Date().toISOString(),
  events: acked, days: DAYS, late_share: 0.1, applied, lmdb_mb: lmdbMb,
  baseline: { server: 'uWebSockets.js hello world', ...baseline },
  reads: Object.fromEntries(Object.entries(reads).map(([name, r]) => [name, { ...r, p50_to_baseline: round2(r.p50_ms / baseline.p50_ms) }])),
}, 'events-read-latest.json', log);
