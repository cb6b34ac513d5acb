/**
 * Sustained ingestion: `/batch/` at full rate for QUILL_BENCH_SUSTAINED_SECONDS
 * (default 20) with traffic like a real site's — distinct ids drawn from a million, so most events come from new
 * visitors and create persons; one in eight sets person properties — then the drain. Reports events acknowledged /
 * (load time + drain time), the acknowledged rate alone, the server's anonymous memory (RssAnon, not LMDB's mapped
 * pages) at its peak, and the CPU the server spent per event over load and drain (µs), with the drain alone (apply
 * only, no acknowledgements) beside it.
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { memoryMb, round1, serverCpuSeconds } from '../lib/proc-stats.js';

const EVENTS_PER_REQUEST = 100;
const CONNECTIONS = 32;
const DISTINCT_IDS = 1_000_000;
const DRAIN_TIMEOUT_MS = 15 * 60_000;

export async function runSustained(ctx: BenchContext): Promise<CaseResult> {
  const seconds = Number(process.env.QUILL_BENCH_SUSTAINED_SECONDS ?? 20);
  const load = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST, distinctIds: DISTINCT_IDS } as const;
  await ctx.quiet('sustained');
  const start = (await ctx.probe.count()) ?? 0;
  let peakAnon = 0;
  const sampler = setInterval(() => (peakAnon = Math.max(peakAnon, memoryMb(ctx.quill.pid).rss_anon_mb ?? 0)), 500);
  const cpu0 = serverCpuSeconds(ctx.quill.pid);
  const t0 = performance.now();
  ctx.log(`sustained: /batch/ for ${seconds} s at ${CONNECTIONS} connections, distinct ids from ${DISTINCT_IDS}`);
  const r = await ctx.run(load, { connections: CONNECTIONS, durationS: seconds });
  const loadEnd = performance.now();
  const cpuLoad = serverCpuSeconds(ctx.quill.pid);
  const acked = (r.requests - r.non_2xx) * EVENTS_PER_REQUEST;
  const atLoadEnd = (await ctx.probe.count()) ?? start;
  ctx.log(`sustained: ${acked} events acknowledged; draining`);
  const applied = await ctx.probe.wait({ atLeast: start + acked, since: loadEnd, timeoutMs: DRAIN_TIMEOUT_MS });
  clearInterval(sampler);
  const cpuEnd = serverCpuSeconds(ctx.quill.pid);
  const totalS = (performance.now() - t0) / 1000;
  const stored = (applied.stored_events ?? start + acked) - start;
  const drainedEvents = stored - (atLoadEnd - start);
  return {
    case: 'sustained_ingest',
    connections: CONNECTIONS,
    duration_s: r.duration_s,
    requests_s: r.requests_s,
    events_s: Math.round(acked / r.duration_s),
    end_to_end_events_s: applied.drain_ms === null ? null : Math.round(stored / totalS),
    drain_s: applied.drain_ms === null ? null : round1(applied.drain_ms / 1000),
    cpu_us_per_event: stored > 0 ? round1(((cpuEnd - cpu0) * 1e6) / stored) : null,
    drain_cpu_us_per_applied_event: drainedEvents > 0 ? round1(((cpuEnd - cpuLoad) * 1e6) / drainedEvents) : null,
    peak_rss_anon_mb: peakAnon,
    p50_ms: r.p50_ms,
    p99_ms: r.p99_ms,
    ratio_to_baseline: ctx.ratio(r.requests_s, CONNECTIONS),
    ...ctx.footprint(),
    notes: [...ctx.roundNotes(r), applied.timed_out ? `not applied within ${DRAIN_TIMEOUT_MS / 1000} s` : ''].filter(Boolean).join('; '),
    ...details(r),
  };
}
