/**
 * `/batch/` ingestion: posthog-node-shaped batches of 100 events (~430 bytes each, unique uuids, 50k distinct
 * ids), 32 connections. Reports the ack rate (durable in the ingest log) and the applied rate (events moved into
 * LMDB: measured events / (load time + time until the backlog is gone)).
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import { round1 } from '../lib/proc-stats.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { syncsSince } from '../lib/log-syncs.js';

const EVENTS_PER_REQUEST = 100;
const CONNECTIONS = 32;
const DRAIN_TIMEOUT_MS = 300_000;

export async function runBatch(ctx: BenchContext): Promise<CaseResult> {
  const load = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST } as const;
  const notes: string[] = [];

  // Warm up, then let the warm-up's backlog drain so the measured round starts from an empty backlog.
  ctx.log(`batch: warm-up ${ctx.settings.warmupS} s`);
  const before = (await ctx.probe.count()) ?? 0;
  const warm = await ctx.run(load, { connections: CONNECTIONS, durationS: ctx.settings.warmupS });
  const warmAcked = (warm.requests - warm.non_2xx) * EVENTS_PER_REQUEST;
  const warmDrain = await ctx.probe.wait({ atLeast: before + warmAcked, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS });
  const start = warmDrain.stored_events ?? (await ctx.probe.count()) ?? 0;

  // No automatic repeat here: a second round would add its events to the backlog being timed.
  await ctx.quiet('batch');
  ctx.log(`batch: measuring ${ctx.settings.measureS} s at ${CONNECTIONS} connections`);
  const syncsBefore = await ctx.probe.logSyncs();
  const r = await ctx.run(load, { connections: CONNECTIONS, durationS: ctx.settings.measureS });
  const loadEnd = performance.now();
  const syncs = await syncsSince(ctx.probe, syncsBefore);
  const acked = (r.requests - r.non_2xx) * EVENTS_PER_REQUEST;
  ctx.log(`batch: ${acked} events acknowledged; waiting until they are applied (${ctx.probe.source})`);
  const applied = await ctx.probe.wait({ atLeast: start + acked, since: loadEnd, timeoutMs: DRAIN_TIMEOUT_MS });

  let appliedRate: number | null = null;
  if (applied.drain_ms !== null) {
    // With a count, use what was really stored (requests cut off at the end of the run may add a few).
    const appliedEvents = applied.stored_events !== null ? applied.stored_events - start : acked;
    appliedRate = Math.round(appliedEvents / (r.duration_s + applied.drain_ms / 1000));
    if (applied.stored_events !== null && appliedEvents < acked) notes.push(`only ${appliedEvents} of ${acked} acknowledged events stored`);
  } else if (applied.timed_out) {
    notes.push(`backlog not applied within ${DRAIN_TIMEOUT_MS / 1000} s after the load`);
  } else {
    notes.push('no way to tell when the backlog is applied (no stats hook, store unreadable, no events API): ack rate only');
  }
  if (applied.source === 'lmdb-read-only') notes.push('applied detected by counting rows in the shard event stores read-only (no stats hook in the server yet)');
  if (applied.source === 'events-api-barrier') notes.push("applied detected through the events API's read-your-writes wait");
  notes.push(...ctx.roundNotes(r), `request body ~${Math.round(EVENTS_PER_REQUEST * 0.43)} KB JSON, not gzip (posthog-node gzips by default)`);
  return {
    case: 'batch_ingest',
    connections: CONNECTIONS,
    duration_s: r.duration_s,
    requests_s: r.requests_s,
    events_s: Math.round(acked / r.duration_s),
    applied_events_s: appliedRate,
    drain_s: applied.drain_ms === null ? null : round1(applied.drain_ms / 1000),
    applied_source: applied.source,
    warmup_drain_s: warmDrain.drain_ms === null ? null : round1(warmDrain.drain_ms / 1000),
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    ratio_to_baseline: ctx.ratio(r.requests_s, CONNECTIONS),
    ...ctx.footprint(),
    notes: notes.join('; '),
    events_per_request: EVENTS_PER_REQUEST,
    ...(syncs ? { log_sync: syncs } : {}),
    ...details(r),
  };
}
