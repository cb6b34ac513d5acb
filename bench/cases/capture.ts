/**
 * `/capture/` with one event per request (unique uuid each) at 8 and 64 connections, then a rate-limited round at
 * half of the 64-connection peak: the latency an SDK sees when the server is busy but not saturated.
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import type { LoadResult } from '../lib/load.js';
import { round1, round2 } from '../lib/proc-stats.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { syncsSince, type SyncSummary } from '../lib/log-syncs.js';

const LOAD = { kind: 'capture', path: '/capture/', apiKey: PROJECT_KEY } as const;
const DRAIN_TIMEOUT_MS = 120_000;

function result(ctx: BenchContext, name: string, r: LoadResult & { retried?: boolean }, notes: string[], syncs: SyncSummary | null): CaseResult {
  return {
    case: name,
    connections: r.connections,
    duration_s: r.duration_s,
    requests_s: r.requests_s,
    events_s: Math.round((r.requests - r.non_2xx) / r.duration_s),
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    ratio_to_baseline: ctx.ratio(r.requests_s, r.connections),
    ...ctx.footprint(),
    notes: [...ctx.roundNotes(r), ...notes].join('; '),
    ...(syncs ? { log_sync: syncs } : {}),
    ...details(r),
  };
}

/**
 * Lets the rounds' events (`answered` since the store held `before`) be applied, so the next round does not share
 * the CPU with that work.
 */
async function settle(ctx: BenchContext, before: number, answered: number): Promise<string[]> {
  const applied = await ctx.probe.wait({ atLeast: before + answered, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS });
  if (applied.drain_ms === null) return applied.source === 'none' ? [] : ['backlog not applied before the next round'];
  return applied.drain_ms > 200 ? [`backlog applied ${round1(applied.drain_ms / 1000)} s after the round`] : [];
}

export async function runCapture(ctx: BenchContext): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  let peak: LoadResult | null = null;
  for (const connections of [8, 64]) {
    const before = (await ctx.probe.count()) ?? 0;
    const syncsBefore = await ctx.probe.logSyncs();
    const r = await ctx.measure(`capture c${connections}`, LOAD, { connections });
    const syncs = await syncsSince(ctx.probe, syncsBefore);
    const notes = await settle(ctx, before, r.answered);
    out.push(result(ctx, `capture_c${connections}`, r, notes, syncs));
    if (connections === 64) peak = r;
  }

  // Half of the peak, paced by a per-connection pause (wrk has no rate option; see bench/lua/pacing.lua). The
  // pause that gives the target rate depends on the latency, so a short calibration round (which also warms up)
  // measures the per-request overhead first.
  const connections = 64;
  const target = Math.round(peak!.requests_s / 2);
  const interval = (connections * 1000) / target;
  let delayMs = Math.max(0.1, interval - peak!.p50_ms / 2);
  ctx.log(`capture half rate: target ${target} req/s, calibrating`);
  const before = (await ctx.probe.count()) ?? 0;
  const syncsBefore = await ctx.probe.logSyncs();
  const calibration = await ctx.run(LOAD, { connections, durationS: ctx.settings.warmupS, delayMs });
  const overhead = (connections * 1000) / calibration.requests_s - delayMs;
  delayMs = Math.max(0.1, interval - overhead);
  const r = await ctx.measure('capture half rate', LOAD, { connections, delayMs }, false);
  const syncs = await syncsSince(ctx.probe, syncsBefore);
  const notes = [
    `target ${target} req/s = 50% of the 64-connection peak; achieved ${r.requests_s} req/s`,
    ctx.gen.tool === 'wrk'
      ? `paced by a random pause per connection (mean ${round2(delayMs)} ms) between response and next request`
      : `paced by autocannon's overallRate (${Math.round((connections * 1000) / delayMs)} req/s): per-second bursts, latency is an upper bound`,
    'closed loop: a stall delays the next requests instead of queueing them (latency under stalls is understated)',
  ];
  if (Math.abs(r.requests_s - target) / target > 0.1) notes.push('achieved rate is more than 10% off the target');
  const settled = await settle(ctx, before, calibration.requests - calibration.non_2xx + r.answered);
  out.push({ ...result(ctx, 'capture_half_rate', r, [...notes, ...settled], syncs), target_requests_s: target });
  return out;
}
