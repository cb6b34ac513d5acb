// One million events through `/batch/` (`npm run bench:million`): 10,000 posthog-node-shaped batches of 100 unique
// events, 32 connections, against a fresh Quill. Waits until everything is applied, then reports the ack and
// applied rates, memory (RSS now and peak) and the data directory split into LMDB files and ingest logs, and how
// long a restart on the full directory takes. One JSON document on stdout (also bench/results/million-latest.json),
// progress on stderr. About a minute on the dev machine; not part of `npm run bench`.
//
// Environment: QUILL_BENCH_EVENTS (default 1000000), QUILL_BENCH_KEEP_DATA=1, QUILL_BENCH_OUT.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AppliedProbe, storedEvents } from './lib/applied.js';
import { EventFactory } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { publishResult } from './lib/results.js';
import { PROJECT_KEY } from './lib/paths.js';
import { CpuSampler, duMb, loadAverage, memoryMb, round1, rssMb } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 1_000_000);
const PER_REQUEST = 100;
const CONNECTIONS = 32;
const DRAIN_TIMEOUT_MS = 30 * 60_000;

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[million ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);

/** LMDB environments (*.mdb, incl. lock files) and ingest logs, separately (MB, like du). */
function sizes(dataDir: string) {
  return {
    lmdb_mb: duMb(dataDir, ['meta.mdb', 'persons.mdb', ...shardPaths(dataDir, 'events.mdb')]),
    log_mb: duMb(dataDir, shardPaths(dataDir, 'log')),
    total_mb: duMb(dataDir),
  };
}

function shardPaths(dataDir: string, name: string): string[] {
  try {
    return readdirSync(join(dataDir, 'shards')).map((s) => join('shards', s, name));
  } catch {
    return [];
  }
}

const host = machine();
const quill = await startQuill();
log(`quill pid ${quill.pid}, ${quill.workers} workers, data in ${quill.dataDir}; sending ${EVENTS} events`);
const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
log(`applied-events probe: ${probe.source}`);
const factory = new EventFactory();
const requests = Math.ceil(EVENTS / PER_REQUEST);
const cpu = new CpuSampler({ quill: quill.pid, bench: process.pid }, quill.pid).start();
let lastReport = performance.now();
const sendStart = performance.now();
const sent = await sendFixedCount({
  base: quill.base,
  path: '/batch/',
  requests,
  connections: CONNECTIONS,
  body: () => factory.batchBody(PROJECT_KEY, PER_REQUEST),
  onProgress: (done) => {
    const now = performance.now();
    if (now - lastReport < 5000) return;
    lastReport = now;
    log(`${done * PER_REQUEST} events acknowledged, ${Math.round((done * PER_REQUEST) / ((now - sendStart) / 1000))} events/s, RSS ${rssMb(quill.pid)} MB`);
  },
});
const loadEnd = performance.now();
const cpuDuringLoad = cpu.stop();
const memoryAfterLoad = memoryMb(quill.pid);
const acked = sent.ok * PER_REQUEST;
log(`load done in ${sent.duration_s} s (${sent.failed} failed requests); waiting until ${acked} events are applied (${probe.source})`);
const applied = await probe.wait({ atLeast: acked, since: loadEnd, timeoutMs: DRAIN_TIMEOUT_MS, stableMs: 2000 });
log(`applied: ${JSON.stringify(applied)}`);
const memoryAfterApply = memoryMb(quill.pid);
const after = sizes(quill.dataDir);

const stopStart = performance.now();
const stopCode = await quill.stop();
const stopS = round1((performance.now() - stopStart) / 1000);
const storedAfterStop = await storedEvents(quill.dataDir);
const restartStart = performance.now();
const again = await startQuill({ dataDir: quill.dataDir });
const restartS = round1((performance.now() - restartStart) / 1000);
const memoryAfterRestart = memoryMb(again.pid);
await again.stop();
const sizesAfterRestart = sizes(quill.dataDir);
if (process.env.QUILL_BENCH_KEEP_DATA) log(`data directory kept: ${quill.dataDir}`);
else rmSync(quill.dataDir, { recursive: true, force: true });

const drainS = applied.drain_ms === null ? null : applied.drain_ms / 1000;
const { commit: hash, dirty } = commit();
const doc = {
  bench: 'quill npm run bench:million',
  started_at: new Date(Date.now() - (performance.now() - t0)).toISOString(),
  total_s: Math.round((performance.now() - t0) / 1000),
  machine: { ...host, loadavg_at_end: loadAverage() },
  commit: hash,
  commit_dirty: dirty,
  load_generator: { tool: 'node:http keep-alive driver in the bench process (fixed request count)', connections: CONNECTIONS },
  events_sent: requests * PER_REQUEST,
  events_acknowledged: acked,
  failed_requests: sent.failed,
  statuses: sent.statuses,
  ingest: {
    duration_s: sent.duration_s,
    requests_s: Math.round(requests / sent.duration_s),
    events_s: Math.round(acked / sent.duration_s),
    p50_ms: sent.p50_ms,
    p90_ms: sent.p90_ms,
    p99_ms: sent.p99_ms,
    max_ms: sent.max_ms,
    cpu_pct_of_one_core: cpuDuringLoad,
  },
  applied: {
    source: applied.source,
    drain_s: drainS === null ? null : round1(drainS),
    events_s: drainS === null ? null : Math.round(acked / (sent.duration_s + drainS)),
    stored_events: applied.stored_events,
    stored_events_after_shutdown: storedAfterStop,
    timed_out: applied.timed_out,
  },
  memory: { after_load: memoryAfterLoad, after_apply: memoryAfterApply, after_restart: memoryAfterRestart },
  data: { after_apply: after, after_restart: sizesAfterRestart },
  shutdown_s: stopS,
  shutdown_exit_code: stopCode,
  restart_s: restartS,
  notes: [
    'ack = durable in the shard ingest log (fdatasync); applied = in LMDB (persons, events, indexes)',
    'request bodies ~43 KB JSON (100 events of ~430 bytes), not gzip',
    'the driver runs on the same 2 cores as the server',
    ...(cpuDuringLoad.others > 25 ? [`machine busy: other processes used ${cpuDuringLoad.others}% of a core during the load`] : []),
  ].join('; '),
};
publishResult(doc, 'million-latest.json', log);
