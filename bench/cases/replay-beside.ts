/**
 * Flags and event acknowledgement while recordings arrive (`QUILL_BENCH_ONLY=replay`, issue 50): the flags floor's
 * own conditions (`/flags/?v=2`, 50 flags, one stored person, 64 connections) and `/batch/` (100 events a request,
 * 16 connections), each first alone and then while posthog-js-shaped snapshots reach `/s/` at a steady rate: 200
 * recorded tabs each flushing a 2-second chunk (100 requests/s, ~12 KB of rrweb JSON each, a 25 KB packed full
 * snapshot in each tab's first chunk). The snapshots start 3 s before the measured round and run past its end.
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import { PERSON_DISTINCT_ID } from '../lib/flag-fixtures.js';
import type { LoadResult } from '../lib/load.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { round1 } from '../lib/proc-stats.js';
import { QuillApi } from '../lib/quill-api.js';
import { pacedSnapshots } from '../lib/snapshot-bodies.js';
import { prepareFlags } from './flags.js';

const FLAG_CONNECTIONS = 64;
const INGEST_CONNECTIONS = 16;
const EVENTS_PER_REQUEST = 100;
const RECORDED_TABS = Number(process.env.QUILL_BENCH_RECORDED_TABS ?? 200);
const LEAD_S = 3;
const DRAIN_TIMEOUT_MS = 10 * 60_000;

const figures = (r: LoadResult) => ({ requests_s: r.requests_s, p50_ms: r.p50_ms, p90_ms: r.p90_ms, p99_ms: r.p99_ms, max_ms: r.max_ms, non_2xx: r.non_2xx, socket_errors: r.socket_errors });

/** `measured` while snapshots arrive at the steady rate: snapshots from LEAD_S before it to 1 s after. */
async function besideSnapshots<T>(ctx: BenchContext, measured: () => Promise<T>) {
  let stopped = false;
  const snapshots = pacedSnapshots(ctx.quill.base, RECORDED_TABS, LEAD_S + ctx.settings.measureS + 1, () => stopped);
  await new Promise((r) => setTimeout(r, LEAD_S * 1000));
  const result = await measured();
  await new Promise((r) => setTimeout(r, 1000));
  stopped = true;
  return { result, snapshots: await snapshots };
}

export async function runReplayBeside(ctx: BenchContext): Promise<CaseResult> {
  await prepareFlags(ctx, 50);
  const seconds = ctx.settings.measureS;
  const flagsLoad = { kind: 'static', method: 'POST', path: '/flags/?v=2', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(QuillApi.flagsRequest(PERSON_DISTINCT_ID)) } as const;
  const batchLoad = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST, distinctIds: 1_000_000 } as const;

  ctx.log(`replay: flags alone, warm-up ${ctx.settings.warmupS} s, then ${seconds} s at ${FLAG_CONNECTIONS} connections`);
  await ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: ctx.settings.warmupS });
  await ctx.quiet('replay');
  const flagsAlone = await ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: seconds });
  await ctx.quiet('replay');
  ctx.log(`replay: flags while ${RECORDED_TABS} recorded tabs send snapshots`);
  const flagsBeside = await besideSnapshots(ctx, () => ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: seconds }));

  const start = (await ctx.probe.count()) ?? 0;
  await ctx.quiet('replay');
  ctx.log(`replay: /batch/ alone, ${seconds} s at ${INGEST_CONNECTIONS} connections`);
  const batchAlone = await ctx.run(batchLoad, { connections: INGEST_CONNECTIONS, durationS: seconds });
  let acked = (batchAlone.requests - batchAlone.non_2xx) * EVENTS_PER_REQUEST;
  await ctx.probe.wait({ atLeast: start + acked, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS });
  await ctx.quiet('replay');
  ctx.log(`replay: /batch/ while the recorded tabs send snapshots`);
  const batchBeside = await besideSnapshots(ctx, () => ctx.run(batchLoad, { connections: INGEST_CONNECTIONS, durationS: seconds }));
  acked += (batchBeside.result.requests - batchBeside.result.non_2xx) * EVENTS_PER_REQUEST;
  const applied = await ctx.probe.wait({ atLeast: start + acked, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS });

  const snapshotFigures = (s: Awaited<ReturnType<typeof pacedSnapshots>>) => ({
    rate_per_s: s.rate_per_s, sent: s.sent, acknowledged: s.acknowledged, json_mb: round1(s.jsonBytes / 1e6), sender_cpu_pct: s.sender_cpu_pct,
  });
  const eventsS = (r: LoadResult) => Math.round(((r.requests - r.non_2xx) * EVENTS_PER_REQUEST) / r.duration_s);
  const notes: string[] = [];
  for (const [name, s] of [['flags', flagsBeside.snapshots], ['batch', batchBeside.snapshots]] as const) {
    if (s.acknowledged < s.sent) notes.push(`${s.sent - s.acknowledged} of ${s.sent} snapshot requests not acknowledged beside ${name}`);
  }
  if (applied.timed_out) notes.push(`backlog not applied within ${DRAIN_TIMEOUT_MS / 1000} s`);
  const beside = flagsBeside.result;
  return {
    case: 'flags_and_batch_beside_snapshots',
    connections: FLAG_CONNECTIONS,
    duration_s: beside.duration_s,
    requests_s: beside.requests_s,
    p50_ms: beside.p50_ms,
    p99_ms: beside.p99_ms,
    ratio_to_baseline: ctx.ratio(beside.requests_s, FLAG_CONNECTIONS),
    recorded_tabs: RECORDED_TABS,
    flags_alone: figures(flagsAlone),
    flags_beside_snapshots: figures(beside),
    snapshots_beside_flags: snapshotFigures(flagsBeside.snapshots),
    batch_alone: { events_s: eventsS(batchAlone), p50_ms: batchAlone.p50_ms, p99_ms: batchAlone.p99_ms },
    batch_beside_snapshots: { events_s: eventsS(batchBeside.result), p50_ms: batchBeside.result.p50_ms, p99_ms: batchBeside.result.p99_ms },
    snapshots_beside_batch: snapshotFigures(batchBeside.snapshots),
    ...ctx.footprint(),
    notes: [...ctx.roundNotes(beside), ...notes].join('; '),
    ...details(beside),
  };
}
