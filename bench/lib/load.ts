/**
 * One load generator for every case: wrk when it is available (cheap, C), autocannon (devDependency, in this
 * process) otherwise. Cases describe *what* to send; this module turns it into a wrk Lua script or autocannon
 * requests.
 */
import { runAutocannon } from './autocannon-runner.js';
import { DISTINCT_IDS, EVENT_NAMES, LIB, propertyFragments, runPrefix } from './event-shapes.js';
import type { CpuUsage } from './proc-stats.js';
import { ensureWrk, runWrk, wrkVersion, type WrkScript } from './wrk.js';

export type Load =
  | { kind: 'static'; method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }
  | { kind: 'capture'; path: string; apiKey: string }
  | { kind: 'batch'; path: string; apiKey: string; eventsPerRequest: number; distinctIds?: number }
  /** `/flags/?v=2` for a distinct id drawn at random from `flags-user-0` … `flags-user-<persons - 1>`. */
  | { kind: 'flags'; apiKey: string; persons: number };

export interface LoadRun {
  connections: number;
  durationS: number;
  timeoutS?: number;
  /** Mean pause between a response and the next request on each connection (rate limiting), ms. */
  delayMs?: number;
  /** Sample CPU of these processes during the run. */
  sample?: { pids: Record<string, number>; serverPid: number | null };
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  connections: number;
  duration_s: number;
  /** Completed responses, whatever their status. */
  requests: number;
  requests_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  /** Responses with status >= 400 (wrk) or outside 2xx (autocannon). */
  non_2xx: number;
  socket_errors: number;
  cpu: CpuUsage | null;
}

export class LoadGenerator {
  private constructor(readonly tool: 'wrk' | 'autocannon', readonly version: string, private readonly wrk: string | null) {}

  static create(log: (msg: string) => void): LoadGenerator {
    if (process.env.QUILL_BENCH_TOOL !== 'autocannon') {
      const wrk = ensureWrk(log);
      if (wrk) return new LoadGenerator('wrk', wrkVersion(wrk), wrk);
      log('wrk is not available: falling back to autocannon (costs more CPU on the same cores)');
    }
    return new LoadGenerator('autocannon', '8.0.0', null);
  }

  run(base: string, load: Load, run: LoadRun): Promise<LoadResult> {
    if (this.wrk) return runWrk(this.wrk, base + (load.kind === 'flags' ? '/flags/?v=2' : load.path), run, wrkScriptFor(load, run));
    return runAutocannon(base, load, run);
  }
}

function wrkScriptFor(load: Load, run: LoadRun): WrkScript {
  const pacing = run.delayMs !== undefined ? ['pacing.lua'] : [];
  const common = { delay_ms: run.delayMs ?? 0 };
  if (load.kind === 'static') {
    return { files: ['static.lua', ...pacing], config: { ...common, method: load.method, body: load.body, headers: load.headers ?? {} } };
  }
  if (load.kind === 'flags') return { files: ['flags.lua', ...pacing], config: { ...common, api_key: load.apiKey, persons: load.persons } };
  const events = {
    ...common,
    path: load.path,
    api_key: load.apiKey,
    run: runPrefix(),
    fragments: propertyFragments(),
    names: EVENT_NAMES,
    distinct_ids: load.kind === 'batch' && load.distinctIds ? load.distinctIds : DISTINCT_IDS,
    lib: LIB,
  };
  if (load.kind === 'capture') return { files: ['events.lua', 'capture.lua', ...pacing], config: events };
  return { files: ['events.lua', 'batch.lua', ...pacing], config: { ...events, events_per_request: load.eventsPerRequest } };
}
