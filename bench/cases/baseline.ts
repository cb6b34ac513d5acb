/**
 * The reference: a bare uWebSockets.js hello world (bench/hello-world-server.ts, its own process) under the same
 * generator and the connection counts the Quill cases use. design.md §6: every figure is read against this.
 */
import type { BaselineRound, Settings } from '../lib/context.js';
import type { LoadGenerator } from '../lib/load.js';
import { rssMb, waitForQuiet } from '../lib/proc-stats.js';
import { startHelloWorld } from '../lib/server-process.js';

export interface Baseline {
  server: string;
  rounds: (BaselineRound & Record<string, unknown>)[];
  rss_mb: number | null;
  notes: string;
}

export async function runBaseline(gen: LoadGenerator, connections: number[], settings: Settings, log: (msg: string) => void): Promise<Baseline> {
  const server = await startHelloWorld();
  try {
    const rounds: Baseline['rounds'] = [];
    const load = { kind: 'static', method: 'GET', path: '/' } as const;
    const sample = { pids: { server: server.pid, bench: process.pid }, serverPid: server.pid };
    for (const c of connections) {
      log(`baseline: warm-up and ${settings.measureS} s at ${c} connections`);
      await gen.run(server.base, load, { connections: c, durationS: settings.warmupS, sample });
      await waitForQuiet([server.pid, process.pid], settings.busyPct, 15_000);
      let r = await gen.run(server.base, load, { connections: c, durationS: settings.measureS, sample });
      if ((r.cpu?.others ?? 0) > settings.busyPct) {
        log(`baseline: machine busy (${r.cpu!.others}% of a core used by others); repeating once`);
        await waitForQuiet([server.pid, process.pid], settings.busyPct, 15_000);
        const again = await gen.run(server.base, load, { connections: c, durationS: settings.measureS, sample });
        if ((again.cpu?.others ?? 0) < (r.cpu?.others ?? 0)) r = again;
      }
      rounds.push({
        connections: c, requests_s: r.requests_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms, p90_ms: r.p90_ms, max_ms: r.max_ms,
        duration_s: r.duration_s, non_2xx: r.non_2xx, socket_errors: r.socket_errors, cpu_pct_of_one_core: r.cpu,
      });
    }
    return {
      server: 'uWebSockets.js hello world (GET /, 12-byte body), one process, one thread',
      rounds,
      rss_mb: rssMb(server.pid),
      notes: 'the load generator runs on the same 2 cores; req/s is bounded by generator + server sharing them',
    };
  } finally {
    await server.stop();
  }
}
