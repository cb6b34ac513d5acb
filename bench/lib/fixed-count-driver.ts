/**
 * Sends exactly N requests with C concurrent keep-alive connections (wrk can only run for a duration). Bodies
 * are generated on the fly so every event is unique. Runs in this process: its CPU shows up as "bench".
 */
import http from 'node:http';
import { postJson } from './post.js';
import { round2 } from './proc-stats.js';

export interface FixedCountResult {
  requests: number;
  ok: number;
  failed: number;
  statuses: Record<string, number>;
  /** Requests sent again after a 503 (with `retry503`); each try is in `statuses`. */
  retried: number;
  duration_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

export async function sendFixedCount(opts: {
  base: string;
  path: string;
  requests: number;
  connections: number;
  body: () => string;
  onProgress?: (done: number) => void;
  /** As PostHog's SDKs do with back-pressure: a request answered 503 is sent again (same body) after this pause. */
  retry503Ms?: number;
}): Promise<FixedCountResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const url = new URL(opts.path, opts.base);
  const latencies = new Float64Array(opts.requests);
  const statuses: Record<string, number> = {};
  let next = 0;
  let done = 0;
  let retried = 0;
  const post = (body: string) => postJson(agent, url, body);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: opts.connections }, async () => {
    for (;;) {
      const i = next++;
      if (i >= opts.requests) return;
      const body = opts.body();
      const start = performance.now();
      let status = await post(body);
      statuses[status] = (statuses[status] ?? 0) + 1;
      while (status === 503 && opts.retry503Ms !== undefined) {
        retried++;
        await new Promise((r) => setTimeout(r, opts.retry503Ms));
        status = await post(body);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      latencies[i] = performance.now() - start;
      opts.onProgress?.(++done);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort();
  const at = (p: number) => round2(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!);
  const ok = Object.entries(statuses).filter(([s]) => s.startsWith('2')).reduce((n, [, c]) => n + c, 0);
  return {
    requests: opts.requests, ok, failed: opts.requests - ok, statuses, retried, duration_s: round2(seconds),
    p50_ms: at(50), p90_ms: at(90), p99_ms: at(99), max_ms: round2(latencies[latencies.length - 1]!),
  };
}
