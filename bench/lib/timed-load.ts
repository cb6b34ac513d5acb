/**
 * A /batch/ load that runs until stopped (sendFixedCount sends a fixed number of requests), recording when each
 * acknowledged request completed, so that a phase of the run (before, during and after a backup or a retention
 * pass) reads its own acknowledged-events rate.
 */
import http from 'node:http';
import { postJson } from './post.js';

export interface TimedLoad {
  /** Events acknowledged per second between two performance.now() instants. */
  eventsPerSecond(from: number, to: number): number;
  failed(): number;
  stop(): Promise<void>;
}

export function startTimedLoad(opts: { base: string; path: string; connections: number; eventsPerRequest: number; body: () => string }): TimedLoad {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const url = new URL(opts.path, opts.base);
  let acked = new Float64Array(1 << 16);
  let count = 0;
  let failed = 0;
  let stopped = false;
  const post = (body: string) => postJson(agent, url, body);
  const loops = Array.from({ length: opts.connections }, async () => {
    while (!stopped) {
      const status = await post(opts.body());
      if (status !== 200) {
        failed++;
        continue;
      }
      if (count === acked.length) {
        const grown = new Float64Array(acked.length * 2);
        grown.set(acked);
        acked = grown;
      }
      acked[count++] = performance.now();
    }
  });
  return {
    eventsPerSecond(from, to) {
      let n = 0;
      for (let i = 0; i < count; i++) if (acked[i]! >= from && acked[i]! < to) n++;
      return to > from ? Math.round((n * opts.eventsPerRequest) / ((to - from) / 1000)) : 0;
    },
    failed: () => failed,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}
