// The benchmark suite (`npm run bench`): the hello-world baseline, then one fresh Quill on a temporary data
// directory through every case. One JSON document on stdout (also written to bench/results/latest.json),
// progress on stderr. See bench/README.md for how to read it.
//
// Environment: QUILL_BENCH_SECONDS (measured round, default 10), QUILL_BENCH_WARMUP (default 3),
// QUILL_BENCH_TOOL=autocannon (force the fallback generator), QUILL_BENCH_OUT (another output file),
// QUILL_BENCH_REPEAT (measured rounds per case, median reported; default 1),
// QUILL_BENCH_ONLY (comma list of batch, sustained, visibility, capture, dispatch, isolation, beside, replay, streams, flags, events, propagation: run only those cases),
// QUILL_BENCH_SUSTAINED_SECONDS (the sustained ingestion load, default 20), QUILL_BENCH_VISIBLE_EVENTS_S (the
// sustained capacity the time-to-visible case halves when the sustained case did not run; default 10,000),
// QUILL_BENCH_KEEP_DATA=1 (keep Quill's data directory), QUILL_BENCH_BASELINE=0 (skip the hello-world baseline).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBaseline } from './cases/baseline.js';
import { runBatch } from './cases/batch.js';
import { runBeside } from './cases/beside.js';
import { runReplayBeside } from './cases/replay-beside.js';
import { runCapture } from './cases/capture.js';
import { runDispatch } from './cases/dispatch.js';
import { runEventsList } from './cases/events-list.js';
import { runFlags } from './cases/flags.js';
import { runIsolation } from './cases/isolation.js';
import { runPropagation } from './cases/propagation.js';
import { runSustained } from './cases/sustained.js';
import { runStreams } from './cases/streams.js';
import { runVisibility } from './cases/visibility.js';
import { AppliedProbe } from './lib/applied.js';
import { BenchContext, type CaseResult, type Settings } from './lib/context.js';
import { LoadGenerator } from './lib/load.js';
import { commit, machine } from './lib/machine.js';
import { RESULTS_DIR } from './lib/paths.js';
import { loadAverage, rssMb } from './lib/proc-stats.js';
import { QuillApi } from './lib/quill-api.js';
import { startQuill } from './lib/server-process.js';

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${msg}\n`);

const settings: Settings = {
  warmupS: Number(process.env.QUILL_BENCH_WARMUP ?? 3),
  measureS: Number(process.env.QUILL_BENCH_SECONDS ?? 10),
  busyPct: 25,
  repeat: Math.max(1, Number(process.env.QUILL_BENCH_REPEAT ?? 1)),
};

// QUILL_BENCH_ONLY=capture,flags runs a subset (for iterating on one path); such partial runs are not written to
// bench/results/latest.json unless QUILL_BENCH_OUT names a file.
const only = process.env.QUILL_BENCH_ONLY ? new Set(process.env.QUILL_BENCH_ONLY.split(',').map((s) => s.trim())) : null;
const selected = (name: string) => only === null || only.has(name);

const startedAt = new Date().toISOString();
const host = machine();
if (host.loadavg_at_start[0] > 0.5) log(`machine load average ${host.loadavg_at_start.join(' ')}: other work is running; figures may be disturbed`);
const gen = LoadGenerator.create(log);
log(`load generator: ${gen.tool} ${gen.version}`);

// QUILL_BENCH_BASELINE=0 skips the hello world (iterating on one case on a busy machine; no ratios then).
const baseline = process.env.QUILL_BENCH_BASELINE === '0'
  ? { server: 'skipped (QUILL_BENCH_BASELINE=0)', rounds: [], rss_mb: null, notes: 'no baseline: ratios are null' }
  : await runBaseline(gen, [8, 32, 64], settings, log);
for (const r of baseline.rounds) log(`baseline c${r.connections}: ${r.requests_s} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms`);

const quill = await startQuill();
log(`quill pid ${quill.pid}, ${quill.workers} workers, data in ${quill.dataDir}, RSS ${rssMb(quill.pid)} MB`);
const cases: CaseResult[] = [];
let failure: string | null = null;
try {
  const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
  log(`applied-events probe: ${probe.source}`);
  const ctx = new BenchContext(quill, new QuillApi(quill.base), gen, probe, baseline.rounds, settings, log);
  const report = (c: CaseResult) => {
    cases.push(c);
    log(`${c.case}: ${c.requests_s ?? '-'} req/s${c.events_s ? `, ${c.events_s} events/s` : ''}, p50 ${c.p50_ms ?? '-'} ms, p99 ${c.p99_ms ?? '-'} ms, RSS ${c.rss_mb} MB, data ${c.data_mb} MB${c.notes ? ` (${c.notes})` : ''}`);
  };
  if (selected('batch')) report(await runBatch(ctx));
  let sustainedEventsS: number | null = null;
  if (selected('sustained')) {
    const sustained = await runSustained(ctx);
    sustainedEventsS = (sustained.end_to_end_events_s as number | null) ?? null;
    report(sustained);
  }
  if (selected('visibility')) report(await runVisibility(ctx, sustainedEventsS));
  if (selected('capture')) for (const c of await runCapture(ctx)) report(c);
  if (selected('dispatch')) for (const c of await runDispatch(ctx)) report(c);
  // Before the flags case, which soft-deletes 45 of the 50 flags.
  if (selected('isolation')) report(await runIsolation(ctx));
  if (selected('beside')) report(await runBeside(ctx));
  if (selected('replay')) report(await runReplayBeside(ctx));
  if (selected('streams')) for (const c of await runStreams(ctx)) report(c);
  if (selected('flags')) for (const c of (await runFlags(ctx)).results) report(c);
  if (selected('events')) report(await runEventsList(ctx));
  if (selected('propagation')) report(await runPropagation(ctx));
} catch (error) {
  // Keep what was measured; say what broke.
  failure = (error as Error)?.stack ?? String(error);
  const ended = quill.exit();
  if (ended) failure += `\nQuill had already exited (${JSON.stringify(ended)}): a signal from outside the bench, or a crash:\n${quill.output().slice(-2000)}`;
  log(`FAILED: ${failure}`);
} finally {
  const code = await quill.stop();
  if (code !== 0) log(`quill exited with ${code}:\n${quill.output().slice(-2000)}`);
  if (process.env.QUILL_BENCH_KEEP_DATA) log(`data directory kept: ${quill.dataDir}`);
  else rmSync(quill.dataDir, { recursive: true, force: true });
}

const { commit: hash, dirty } = commit();
const doc = {
  bench: 'quill npm run bench',
  started_at: startedAt,
  total_s: Math.round((performance.now() - t0) / 1000),
  machine: { ...host, loadavg_at_end: loadAverage() },
  commit: hash,
  commit_dirty: dirty,
  load_generator: { tool: gen.tool, version: gen.version, threads: 1, same_machine: true },
  settings: { warmup_s: settings.warmupS, measure_s: settings.measureS, repeat: settings.repeat, quill_workers: quill.workers, busy_threshold_pct: settings.busyPct },
  baseline,
  cases,
  ...(failure ? { failure } : {}),
};
const json = JSON.stringify(doc, null, 2);
process.stdout.write(json + '\n');
const outFile = process.env.QUILL_BENCH_OUT ?? (only ? null : join(RESULTS_DIR, 'latest.json'));
if (outFile) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(outFile, json + '\n');
  log(`written to ${outFile}`);
}
if (failure) process.exitCode = 1;
