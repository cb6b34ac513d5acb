// The apply alone (`npm run bench:apply`): what moving acknowledged events into LMDB costs, without the
// acknowledgement path competing for the CPU. A fresh Quill (fault injection on) pauses its apply loops, takes
// QUILL_BENCH_EVENTS (default 300,000) posthog-node-shaped events through `/batch/` (100 per request, distinct ids
// from a million as in the sustained case: most events create a person), then resumes the apply and waits until
// everything is applied. Reports the drain's events/s and CPU µs per applied event, for the whole process and for
// each busy thread (the shard workers), and the LMDB size. One JSON document on stdout.
//
// QUILL_BENCH_PERF=<file>: records the drain with `perf record -g` (Quill then runs with --perf-basic-prof so JIT
// frames have names); read it with `perf report -i <file> --no-children`. Figures of such a run are not comparable.
// QUILL_BENCH_DISTINCT_IDS (default 1,000,000), QUILL_BENCH_SKEW (0..1, default 0: the share of events sent by one
// distinct id), QUILL_BENCH_KEEP_DATA=1.
// QUILL_BENCH_PERSONLESS (0..1, default 0): the share of events sent with `$process_person_profile: false`, as
// posthog-js sends a visitor's events before it identifies (person_profiles: 'identified_only').
// QUILL_BENCH_PRELOAD=<n>: n events are sent and applied first (a store that has taken a large load); the drain
// measured is of the QUILL_BENCH_EVENTS sent after them.
// QUILL_BENCH_FLAG_RPS=<n>: during the drain, /flags/ (50 flags) is asked n times a second (a node that keeps
// serving flags while it catches up); the flags' latencies are reported beside the drain rate.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { AppliedProbe } from './lib/applied.js';
import { EventFactory } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { PERSONAL_KEY, PROJECT_KEY, QUILL_MAIN } from './lib/paths.js';
import { duMb, memoryMb, round1 } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';
import { BENCH_METRICS_TOKEN, txnFigures } from './lib/txn-figures.js';
import { createFlags, flagDefinitions } from './lib/flag-fixtures.js';
import { QuillApi } from './lib/quill-api.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 300_000);
const DISTINCT_IDS = Number(process.env.QUILL_BENCH_DISTINCT_IDS ?? 1_000_000);
const SKEW = Number(process.env.QUILL_BENCH_SKEW ?? 0);
const PERSONLESS = Number(process.env.QUILL_BENCH_PERSONLESS ?? 0);
const PERF = process.env.QUILL_BENCH_PERF;
const PRELOAD = Number(process.env.QUILL_BENCH_PRELOAD ?? 0);
const FLAG_RPS = Number(process.env.QUILL_BENCH_FLAG_RPS ?? 0);
const PER_REQUEST = 100;
const CONNECTIONS = 16;
const TICKS_PER_S = 100;

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[apply ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);

/** CPU ticks of every thread of `pid`, by thread id, with the thread's name. */
function threads(pid: number): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { name, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      /* thread ended */
    }
  }
  return out;
}

async function fault(base: string, kind: string): Promise<void> {
  const res = await fetch(`${base}/_fault/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  if (res.status !== 200) throw new Error(`/_fault/${kind} answered ${res.status}: ${await res.text()}`);
}

const quill = await startQuill({ env: { QUILL_FAULT_INJECTION: '1', QUILL_METRICS_TOKEN: BENCH_METRICS_TOKEN }, nodeArgs: PERF ? ['--perf-basic-prof'] : [] });
log(`quill pid ${quill.pid}, ${quill.workers} workers, data in ${quill.dataDir}`);
const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
const factory = new EventFactory(DISTINCT_IDS);
if (FLAG_RPS > 0) await createFlags(new QuillApi(quill.base), flagDefinitions(50));
if (PRELOAD > 0) {
  await fault(quill.base, 'pause-apply');
  const pre = await sendFixedCount({ base: quill.base, path: '/batch/', requests: Math.ceil(PRELOAD / PER_REQUEST), connections: CONNECTIONS, body: () => factory.batchBody(PROJECT_KEY, PER_REQUEST) });
  const start = performance.now();
  await fault(quill.base, 'resume-apply');
  await probe.wait({ atLeast: pre.ok * PER_REQUEST, since: start, timeoutMs: 60 * 60_000, stableMs: 0 });
  log(`preloaded ${pre.ok * PER_REQUEST} events in ${((performance.now() - start) / 1000).toFixed(0)} s`);
}
const preloaded = (await probe.count()) ?? 0;
await fault(quill.base, 'pause-apply');
const skewed = (body: string) => (SKEW > 0 ? body.replace(/"distinct_id":"user-\d+"/g, (m) => (Math.random() < SKEW ? '"distinct_id":"user-busy"' : m)) : body);
const personless = (body: string) => (PERSONLESS > 0 ? body.replace(/"properties":\{/g, (m) => (Math.random() < PERSONLESS ? '"properties":{"$process_person_profile":false,' : m)) : body);
const sent = await sendFixedCount({
  base: quill.base, path: '/batch/', requests: Math.ceil(EVENTS / PER_REQUEST), connections: CONNECTIONS,
  body: () => personless(skewed(factory.batchBody(PROJECT_KEY, PER_REQUEST))),
});
const acked = sent.ok * PER_REQUEST;
log(`${acked} events acknowledged in ${sent.duration_s} s with the apply paused; resuming it`);
await new Promise((r) => setTimeout(r, 2000));

const perf = PERF ? spawn('perf', ['record', '-g', '-F', '499', '-p', String(quill.pid), '-o', PERF], { stdio: 'ignore' }) : null;
if (perf) await new Promise((r) => setTimeout(r, 1000));
const before = threads(quill.pid);
// The flags are asked from before the drain starts, as on a node that serves flags when its backlog arrives.
const flagLoad = FLAG_RPS > 0 ? askFlags(quill.base, FLAG_RPS) : null;
if (flagLoad) await new Promise((r) => setTimeout(r, 1000));
const drainStart = performance.now();
await fault(quill.base, 'resume-apply');
const applied = await probe.wait({ atLeast: preloaded + acked, since: drainStart, timeoutMs: 30 * 60_000, stableMs: 0 });
const flags = flagLoad ? await flagLoad.stop() : null;
const drainS = (performance.now() - drainStart) / 1000;
const after = threads(quill.pid);
if (perf) {
  perf.kill('SIGINT');
  await new Promise((r) => perf.once('exit', r));
}
const memory = memoryMb(quill.pid);
const transactions = await txnFigures(quill.base);

let totalTicks = 0;
const busy: { thread: string; cpu_s: number; us_per_event: number }[] = [];
for (const [tid, t] of after) {
  const d = t.ticks - (before.get(tid)?.ticks ?? 0);
  totalTicks += d;
  if (d / TICKS_PER_S >= 0.01 * drainS) busy.push({ thread: `${t.name} ${tid}`, cpu_s: round1(d / TICKS_PER_S), us_per_event: round1((d / TICKS_PER_S) * 1e6 / acked) });
}
busy.sort((a, b) => b.cpu_s - a.cpu_s);
const lmdbMb = duMb(quill.dataDir, ['meta.mdb', 'persons.mdb', ...readdirSync(`${quill.dataDir}/shards`).map((s) => `shards/${s}/events.mdb`)]);
await quill.stop();
if (process.env.QUILL_BENCH_KEEP_DATA !== '1') rmSync(quill.dataDir, { recursive: true, force: true });

const result = {
  machine: machine(), commit: commit(), server: QUILL_MAIN, events: acked, distinct_ids: DISTINCT_IDS, skew: SKEW, personless: PERSONLESS,
  drain_s: round1(drainS), drain_events_s: Math.round(acked / drainS), timed_out: applied.timed_out,
  cpu_us_per_applied_event: round1((totalTicks / TICKS_PER_S) * 1e6 / acked), busy_threads: busy,
  preloaded_events: preloaded, flags_during_drain: flags, rss_anon_mb: memory.rss_anon_mb, lmdb_mb: lmdbMb, transactions, perf: PERF ?? null,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);

/** /flags/ asked `rps` times a second (8 at a time at most) until stopped: the latencies' percentiles. */
function askFlags(base: string, rps: number) {
  const latencies: number[] = [];
  let errors = 0;
  let stopped = false;
  let inFlight = 0;
  let n = 0;
  const started = performance.now();
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rps) - n;
    for (let i = 0; i < due && inFlight < 8 && !stopped; i++) {
      n++;
      inFlight++;
      const t = performance.now();
      fetch(`${base}/flags/?v=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: PROJECT_KEY, distinct_id: `flag-user-${n % 5000}` }) })
        .then(async (res) => {
          await res.arrayBuffer();
          if (res.status === 200) latencies.push(performance.now() - t);
          else errors++;
        }, () => errors++)
        .finally(() => inFlight--);
    }
  }, 5);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
      latencies.sort((a, b) => a - b);
      const pct = (p: number) => (latencies.length ? round1(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!) : null);
      return { asked_per_s: rps, answered: latencies.length, errors, p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: pct(1 - 1e-9) };
    },
  };
}
