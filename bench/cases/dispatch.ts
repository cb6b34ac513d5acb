/**
 * The floor under every worker-served endpoint: `GET /_health` (the front answers by itself) and `GET /flags/`
 * (the front hands the request to a shard worker, which answers an empty flags document without reading anything),
 * 64 connections each. The gap between the two is what the trip front → worker → front costs; the flags cases
 * are best read against `dispatch_worker`, not only against the hello world.
 */
import type { BenchContext, CaseResult } from '../lib/context.js';

const CONNECTIONS = 64;

const ROUNDS = [
  { name: 'dispatch_front', path: '/_health', what: 'answered by the front thread alone (no worker)' },
  { name: 'dispatch_worker', path: '/flags/', what: 'front → shard worker → front; the worker answers an empty flags document (no store, no evaluation)' },
] as const;

export async function runDispatch(ctx: BenchContext): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const round of ROUNDS) {
    const probe = await fetch(`${ctx.quill.base}${round.path}`);
    const bytes = (await probe.arrayBuffer()).byteLength;
    const notes = [`${round.what}; answer ${probe.status}, ${bytes} bytes`];
    const load = { kind: 'static', method: 'GET', path: round.path } as const;
    const r = await ctx.measure(round.name, load, { connections: CONNECTIONS });
    results.push(ctx.rateCase(round.name, CONNECTIONS, r, notes));
  }
  return results;
}
