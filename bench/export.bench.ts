// The ClickHouse export (`npm run bench:export`): the sustained ingestion case (bench/cases/sustained.ts) on a fresh
// Quill with the export off, then on a fresh Quill exporting to ClickHouse (chdb behind ClickHouse's HTTP
// interface, bench/lib/clickhouse-process.ts, on the same two cores: a real deployment has ClickHouse elsewhere),
// alternated QUILL_BENCH_PAIRS times (default 1), beside the same run's hello world. Reports, per run, the
// acknowledged and end-to-end rates; with the export on, when the last event reached ClickHouse, the export rate
// against the apply rate, the largest lag seen, and the CPU Quill and ClickHouse spent per exported event. One JSON
// document on stdout, also written to bench/results/export-<commit>.json.
//
// QUILL_BENCH_SUSTAINED_SECONDS (default 10 here), QUILL_BENCH_PAIRS. QUILL_BENCH_EXPORT_SINK=discard exports to a
// stand-in that keeps nothing (bench/lib/discard-clickhouse.ts) instead of chdb: what the export costs Quill alone,
// as when ClickHouse has a machine of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBaseline } from './cases/baseline.js';
import { runSustained } from './cases/sustained.js';
import { AppliedProbe } from './lib/applied.js';
import { ClickHouseProcess, DISCARD } from './lib/clickhouse-process.js';
import { BenchContext, type Settings } from './lib/context.js';
import { exportCaughtUp, exportStats } from './lib/export-stats.js';
import { LoadGenerator } from './lib/load.js';
import { commit, machine } from './lib/machine.js';
import { RESULTS_DIR } from './lib/paths.js';
import { round1, serverCpuSeconds } from './lib/proc-stats.js';
import { QuillApi } from './lib/quill-api.js';
import { startQuill } from './lib/server-process.js';

process.env.QUILL_BENCH_SUSTAINED_SECONDS ??= '10';
const PAIRS = Math.max(1, Number(process.env.QUILL_BENCH_PAIRS ?? 1));
const EXPORT_TIMEOUT_MS = 15 * 60_000;
const SINK = process.env.QUILL_BENCH_EXPORT_SINK === 'discard' ? 'discard' : 'chdb';

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[export ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
const settings: Settings = { warmupS: 3, measureS: 10, busyPct: 25, repeat: 1 };

async function run(gen: LoadGenerator, baseline: Awaited<ReturnType<typeof runBaseline>>, exporting: boolean) {
  const ch = exporting ? new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-bench-ch-')), SINK === 'discard' ? DISCARD : undefined) : null;
  await ch?.start();
  const quill = await startQuill({ env: ch ? { QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog' } : {} });
  try {
    const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
    const ctx = new BenchContext(quill, new QuillApi(quill.base), gen, probe, baseline.rounds, settings, log);
    let maxLag = 0;
    const sampler = ch
      ? setInterval(() => void exportStats(quill.base).then((s) => (maxLag = Math.max(maxLag, s.shards.reduce((a, x) => a + x.lagEvents, 0)))).catch(() => {}), 1000)
      : null;
    const started = performance.now();
    const quillCpu0 = serverCpuSeconds(quill.pid);
    const sustained = await runSustained(ctx);
    const applyEnd = performance.now();
    const quillCpuApplied = serverCpuSeconds(quill.pid);
    log(`export ${exporting ? 'on' : 'off'}: ${sustained.events_s} events/s acknowledged, ${sustained.end_to_end_events_s} end to end`);
    if (!ch) return { export: 'off', ...sustained };
    // Until every event and person change is in ClickHouse.
    const stats = await exportCaughtUp(quill.base, EXPORT_TIMEOUT_MS - (performance.now() - applyEnd));
    const exportEnd = performance.now();
    clearInterval(sampler!);
    const quillCpuEnd = serverCpuSeconds(quill.pid);
    const exported = stats.shards.reduce((a, s) => a + s.rows, 0);
    const inClickHouse = SINK === 'discard'
      ? Number(((await (await fetch(`${ch.url}/_rows`)).json()) as Record<string, number>)['posthog.events'] ?? 0)
      : Number((await ch.query<{ n: string }>('SELECT count() AS n FROM events', 'posthog'))[0]?.n ?? 0);
    const exportS = (exportEnd - started) / 1000;
    return {
      export: 'on',
      ...sustained,
      exported_events: exported,
      events_in_clickhouse: inClickHouse,
      person_rows_exported: stats.persons?.rows ?? 0,
      export_failures: stats.shards.reduce((a, s) => a + s.failures, 0),
      // From the start of the load until the last event was in ClickHouse.
      export_events_s: Math.round(exported / exportS),
      export_done_after_apply_s: round1((exportEnd - applyEnd) / 1000),
      max_lag_events: maxLag,
      quill_cpu_us_per_event_with_export: exported > 0 ? round1(((quillCpuEnd - quillCpu0) * 1e6) / exported) : null,
      quill_cpu_us_per_event_export_tail: exported > 0 ? round1(((quillCpuEnd - quillCpuApplied) * 1e6) / exported) : null,
      clickhouse_cpu_s: ch ? round1(serverCpuSeconds(ch.pid)) : null,
    };
  } finally {
    await quill.stop();
    rmSync(quill.dataDir, { recursive: true, force: true });
    if (ch) {
      await ch.stop();
      rmSync(ch.dataDir, { recursive: true, force: true });
    }
  }
}

const gen = LoadGenerator.create(log);
const baseline = await runBaseline(gen, [32], settings, log);
for (const r of baseline.rounds) log(`baseline c${r.connections}: ${r.requests_s} req/s`);
const runs: Record<string, unknown>[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  runs.push(await run(gen, baseline, false));
  runs.push(await run(gen, baseline, true));
}
const ratio = (key: string) => {
  const of = (mode: string) => runs.filter((r) => r.export === mode).map((r) => Number(r[key]));
  const on = of('on');
  const off = of('off');
  return on.map((v, i) => (off[i] ? Math.round((v / off[i]!) * 1000) / 1000 : null));
};
const { commit: hash, dirty } = commit();
const doc = {
  bench: 'quill npm run bench:export',
  started_at: new Date(Date.now() - (performance.now() - t0)).toISOString(),
  machine: machine(),
  commit: hash,
  commit_dirty: dirty,
  clickhouse: SINK === 'discard'
    ? 'a stand-in that reads and discards every insert (bench/lib/discard-clickhouse.ts): the export\'s cost to Quill alone'
    : 'chdb 3.4.0 (ClickHouse 26.7) behind bench/lib/clickhouse-shim.ts, same machine',
  baseline,
  sustained_seconds: Number(process.env.QUILL_BENCH_SUSTAINED_SECONDS),
  runs,
  on_over_off: { acknowledged: ratio('events_s'), end_to_end: ratio('end_to_end_events_s') },
};
const out = JSON.stringify(doc, null, 2);
writeFileSync(join(RESULTS_DIR, `export-${SINK === 'discard' ? 'discard-' : ''}${hash.slice(0, 7)}.json`), `${out}\n`);
process.stdout.write(`${out}\n`);
