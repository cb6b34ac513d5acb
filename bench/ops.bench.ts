// Operations figures (`npm run bench:ops`): on a directory of 1,000,000 events (stored with timestamps 40 days
// old), with 2 shards:
//   - the /metrics scrape time;
//   - an online backup (`npm run backup`) while /batch/ load runs: its duration, size, and the acknowledged
//     events/s before, during and after it;
//   - data retention deleting those 1,000,000 events (event_retention_days: 30) while /batch/ load runs: how long
//     the pass took and the acknowledged events/s before and during it.
// One JSON document on stdout (also bench/results/ops-latest.json), progress on stderr. Several minutes; not part
// of `npm run bench`. Environment: QUILL_BENCH_EVENTS (default 1000000), QUILL_BENCH_OUT.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppliedProbe } from './lib/applied.js';
import { EventFactory } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { publishResult } from './lib/results.js';
import { PERSONAL_KEY, PROJECT_KEY, ROOT } from './lib/paths.js';
import { duMb, loadAverage, round1, round2 } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';
import { startTimedLoad } from './lib/timed-load.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 1_000_000);
const PER_REQUEST = 100;
const LOAD_CONNECTIONS = 32;
/** The background load while a backup or a retention pass runs: fewer connections, so its backlog drains in time. */
const PHASE_CONNECTIONS = 8;
const BASELINE_MS = 8_000;
const AFTER_MS = 5_000;
const DRAIN_TIMEOUT_MS = 30 * 60_000;
const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const DAY_MS = 86_400_000;

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[ops ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
const loadavgAtStart = loadAverage();

const quill = await startQuill({ env: { QUILL_WORKERS: '2', QUILL_METRICS_TOKEN: METRICS_TOKEN, QUILL_RETENTION_INTERVAL_MINUTES: '1440' } });
const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
const factory = new EventFactory();

// 1. The directory: EVENTS events 40 days old (no sent_at, so the timestamps are taken as sent).
const oldTs = new Date(Date.now() - 40 * DAY_MS).toISOString();
const oldBody = () => `{"api_key":"${PROJECT_KEY}","batch":[${Array.from({ length: PER_REQUEST }, () => factory.event(oldTs)).join(',')}]}`;
log(`loading ${EVENTS} events (timestamps ${oldTs})`);
const loaded = await sendFixedCount({ base: quill.base, path: '/batch/', requests: Math.ceil(EVENTS / PER_REQUEST), connections: LOAD_CONNECTIONS, body: oldBody });
let drained = await probe.wait({ atLeast: loaded.ok * PER_REQUEST, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS, stableMs: 2000 });
log(`loaded: ${loaded.ok * PER_REQUEST} acknowledged in ${loaded.duration_s} s, applied ${drained.drain_ms} ms later`);

// 2. /metrics with 2 shards, idle, on the full directory.
const scrapes: number[] = [];
let metricsBytes = 0;
for (let i = 0; i < 30; i++) {
  const start = performance.now();
  const res = await fetch(`${quill.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  metricsBytes = (await res.text()).length;
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  scrapes.push(performance.now() - start);
}
scrapes.sort((a, b) => a - b);
log(`/metrics: p50 ${round2(scrapes[15]!)} ms, max ${round2(scrapes[29]!)} ms, ${metricsBytes} bytes`);

const liveBody = () => factory.batchBody(PROJECT_KEY, PER_REQUEST);
const phaseLoad = () => startTimedLoad({ base: quill.base, path: '/batch/', connections: PHASE_CONNECTIONS, eventsPerRequest: PER_REQUEST, body: liveBody });

// 3. Backup under load.
const target = mkdtempSync(join(tmpdir(), 'quill-bench-backup-'));
let load = phaseLoad();
const loadStart = performance.now();
await sleep(BASELINE_MS);
log('backup starting');
const backupStart = performance.now();
const backup = await new Promise<{ code: number | null; out: string }>((resolve) => {
  const proc = spawn(process.execPath, [join(ROOT, 'dist/src/cli/quill.js'), 'backup', target], { env: { ...process.env, QUILL_DATA_DIR: quill.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  proc.once('exit', (code) => resolve({ code, out }));
});
const backupEnd = performance.now();
if (backup.code !== 0) throw new Error(`backup failed: ${backup.out}`);
const report = JSON.parse(backup.out.trim().split('\n').pop()!) as { durationMs: number; bytes: number; logSegments: number };
await sleep(AFTER_MS);
const afterEnd = performance.now();
await load.stop();
const backupPhase = {
  command_s: round2((backupEnd - backupStart) / 1000),
  copy_s: round2(report.durationMs / 1000),
  bytes_mb: round1(report.bytes / 1e6),
  data_dir_mb: duMb(quill.dataDir),
  log_segments_copied: report.logSegments,
  acked_events_s: {
    before: load.eventsPerSecond(loadStart + 1000, backupStart),
    during: load.eventsPerSecond(backupStart, backupEnd),
    after: load.eventsPerSecond(backupEnd, afterEnd),
  },
  failed_requests: load.failed(),
};
log(`backup: ${JSON.stringify(backupPhase)}`);
rmSync(target, { recursive: true, force: true });

log('waiting for the backlog to be applied');
drained = await probe.wait({ atLeast: 0, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS, stableMs: 2000 });

// 4. Retention deleting the EVENTS old events, under load.
const shardRetention = async () => ((await (await fetch(`${quill.base}/_stats`, { headers: auth })).json()) as { shards: { retention: { passes: number; running: boolean; deletedEvents: number } }[] }).shards.map((s) => s.retention);
const passesBefore = await shardRetention();
load = phaseLoad();
const retentionLoadStart = performance.now();
await sleep(BASELINE_MS);
log('retention: event_retention_days = 30');
const retentionStart = performance.now();
const patched = await fetch(`${quill.base}/api/projects/@current/`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/json' }, body: '{"event_retention_days":30}' });
if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}`);
let deleted = 0;
let lastReport = performance.now();
let timedOut = false;
for (;;) {
  const now = await shardRetention();
  deleted = now.reduce((n, s) => n + s.deletedEvents, 0);
  if (now.every((s, i) => s.passes > passesBefore[i]!.passes && !s.running)) break;
  if (performance.now() - lastReport > 10_000) {
    lastReport = performance.now();
    log(`retention running: ${JSON.stringify(now)}`);
  }
  if (performance.now() - retentionStart > DRAIN_TIMEOUT_MS) {
    timedOut = true;
    break;
  }
  await sleep(250);
}
const retentionEnd = performance.now();
await load.stop();
const retentionPhase = {
  deleted_events: deleted,
  timed_out: timedOut,
  duration_s: round2((retentionEnd - retentionStart) / 1000),
  deleted_events_s: Math.round(deleted / ((retentionEnd - retentionStart) / 1000)),
  acked_events_s: { before: load.eventsPerSecond(retentionLoadStart + 1000, retentionStart), during: load.eventsPerSecond(retentionStart, retentionEnd) },
  failed_requests: load.failed(),
  data_dir_mb_after: duMb(quill.dataDir),
};
log(`retention: ${JSON.stringify(retentionPhase)}`);

await quill.stop();
rmSync(quill.dataDir, { recursive: true, force: true });
const { commit: hash, dirty } = commit();
const doc = {
  bench: 'quill npm run bench:ops',
  started_at: new Date(Date.now() - (performance.now() - t0)).toISOString(),
  total_s: Math.round((performance.now() - t0) / 1000),
  machine: { ...machine(), loadavg_at_start: loadavgAtStart, loadavg_at_end: loadAverage() },
  commit: hash,
  commit_dirty: dirty,
  shards: 2,
  directory: { events: loaded.ok * PER_REQUEST, load_events_s: Math.round((loaded.ok * PER_REQUEST) / loaded.duration_s), apply_drain_s: round1((drained.drain_ms ?? 0) / 1000) },
  metrics_scrape: { scrapes: scrapes.length, p50_ms: round2(scrapes[15]!), max_ms: round2(scrapes[scrapes.length - 1]!), bytes: metricsBytes },
  backup_under_load: backupPhase,
  retention_under_load: retentionPhase,
  notes: [
    `background load: /batch/ with ${PER_REQUEST} events per request, ${PHASE_CONNECTIONS} connections, from this process (same 2 cores)`,
    'backup: the CLI process (npm run backup) beside the server; command_s includes starting node',
    'acked_events_s.before starts 1 s into the load (warm-up)',
  ].join('; '),
};
publishResult(doc, 'ops-latest.json', log);
