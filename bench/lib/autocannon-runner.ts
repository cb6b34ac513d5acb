/**
 * The fallback generator when wrk cannot be had. It runs in this process (JavaScript: it takes noticeably more
 * CPU from the server than wrk does). Its `overallRate` is a per-second quota per connection that is sent as fast
 * as possible and then waits for the next second, so rate-limited runs come in bursts: treat their latency as an
 * upper bound.
 */
import { createRequire } from 'node:module';
import { DISTINCT_IDS, EventFactory } from './event-shapes.js';
import type { Load, LoadResult, LoadRun } from './load.js';
import { CpuSampler, round2 } from './proc-stats.js';

const require = createRequire(import.meta.url);

interface AutocannonResult {
  duration: number;
  requests: { total: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

export async function runAutocannon(base: string, load: Load, run: LoadRun): Promise<LoadResult> {
  const autocannon = require('autocannon') as (opts: object) => Promise<AutocannonResult> & { on?: unknown };
  const factory = new EventFactory(DISTINCT_IDS);
  const json = { 'content-type': 'application/json' };
  const request = load.kind === 'static'
    ? { method: load.method, path: load.path, headers: load.headers ?? {}, ...(load.body !== undefined ? { body: load.body } : {}) }
    : load.kind === 'flags'
      ? {
        method: 'POST', path: '/flags/?v=2', headers: json,
        setupRequest: (req: object) => ({ ...req, body: `{"api_key":"${load.apiKey}","distinct_id":"flags-user-${Math.floor(Math.random() * load.persons)}"}` }),
      }
      : {
      method: 'POST',
      path: load.path,
      headers: json,
      setupRequest: (req: object) => ({
        ...req,
        body: load.kind === 'capture' ? factory.captureBody(load.apiKey) : factory.batchBody(load.apiKey, load.eventsPerRequest),
      }),
    };
  // Without wrk's delay(), a mean pause per connection becomes an overall rate.
  const overallRate = run.delayMs !== undefined ? Math.max(1, Math.round((run.connections * 1000) / run.delayMs)) : undefined;
  const sampler = run.sample ? new CpuSampler({ ...run.sample.pids }, run.sample.serverPid) : null;
  const windowMs = Math.max(500, run.durationS * 1000 - 1000);
  const cpu = sampler
    ? new Promise<ReturnType<CpuSampler['stop']>>((resolve) => {
      setTimeout(() => {
        sampler.start();
        setTimeout(() => resolve(sampler.stop()), windowMs - 500);
      }, 500);
    })
    : Promise.resolve(null);
  const r = await autocannon({
    url: base,
    connections: run.connections,
    duration: run.durationS,
    timeout: run.timeoutS ?? 30,
    requests: [request],
    ...(overallRate ? { overallRate } : {}),
  });
  return {
    tool: 'autocannon',
    connections: run.connections,
    duration_s: r.duration,
    requests: r.requests.total,
    requests_s: Math.round(r.requests.total / r.duration),
    // autocannon keeps whole milliseconds.
    p50_ms: round2(r.latency.p50),
    p90_ms: round2(r.latency.p90),
    p99_ms: round2(r.latency.p99),
    max_ms: round2(r.latency.max),
    non_2xx: r.non2xx,
    socket_errors: r.errors + r.timeouts,
    cpu: await cpu,
  };
}
