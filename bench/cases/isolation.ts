/**
 * Latency isolation (`QUILL_BENCH_ONLY=isolation`): `/flags/?v=2` with 50 flags at a moderate paced rate (16
 * connections, ~2k req/s) first on an idle server, then while `/batch/` saturates ingestion (32 connections, 100
 * events per request, distinct ids drawn from a million as in the sustained case, so most events create persons
 * and the apply loops work hard). The flags p50/p99 of both rounds side by side say how much a saturating ingestion
 * costs a flag request; the ingestion figures of the loaded round say the flags load did not buy that by starving
 * ingestion. The backlog is drained before the case ends (reported as `drain_s`), so later cases start clean.
 *
 * Pacing is wrk's random pause per connection (bench/lua/pacing.lua): closed loop, so a stall delays the next
 * requests of its connection instead of queueing them; the achieved rate is reported beside the target.
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import { PERSON_DISTINCT_ID, READY_FLAG } from '../lib/flag-fixtures.js';
import type { LoadResult } from '../lib/load.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { round1 } from '../lib/proc-stats.js';
import { QuillApi } from '../lib/quill-api.js';
import { prepareFlags } from './flags.js';

const FLAG_CONNECTIONS = 16;
const TARGET_FLAGS_S = 2000;
const INGEST_CONNECTIONS = 32;
const EVENTS_PER_REQUEST = 100;
const DISTINCT_IDS = 1_000_000;
/** How long ingestion runs alone before the flags round starts (the apply backlog builds up, the pacer settles). */
const INGEST_LEAD_S = 3;
const DRAIN_TIMEOUT_MS = 10 * 60_000;

function flagFigures(r: LoadResult) {
  return { requests_s: r.requests_s, p50_ms: r.p50_ms, p90_ms: r.p90_ms, p99_ms: r.p99_ms, max_ms: r.max_ms, non_2xx: r.non_2xx, socket_errors: r.socket_errors };
}

export async function runIsolation(ctx: BenchContext): Promise<CaseResult> {
  const { active } = await prepareFlags(ctx, 50);
  const flags = await ctx.api.flags(PERSON_DISTINCT_ID);
  const notes: string[] = [];
  if (Object.keys(flags).length !== active) notes.push(`expected ${active} flags in the answer, got ${Object.keys(flags).length}`);
  if (flags[READY_FLAG] !== true) notes.push('the stored person was not visible to /flags/');
  const body = JSON.stringify(QuillApi.flagsRequest(PERSON_DISTINCT_ID));
  const flagsLoad = { kind: 'static', method: 'POST', path: '/flags/?v=2', headers: { 'Content-Type': 'application/json' }, body } as const;
  // Each connection pauses this long on average between an answer and its next request: ~TARGET_FLAGS_S in all.
  const delayMs = (FLAG_CONNECTIONS * 1000) / TARGET_FLAGS_S;
  const flagsRun = { connections: FLAG_CONNECTIONS, delayMs };
  const seconds = ctx.settings.measureS;

  ctx.log(`isolation: flags alone, warm-up ${ctx.settings.warmupS} s`);
  await ctx.run(flagsLoad, { ...flagsRun, durationS: ctx.settings.warmupS });
  await ctx.quiet('isolation');
  ctx.log(`isolation: flags alone, ${seconds} s at ${FLAG_CONNECTIONS} connections, ~${TARGET_FLAGS_S} req/s`);
  const idle = await ctx.run(flagsLoad, { ...flagsRun, durationS: seconds });

  const ingestLoad = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST, distinctIds: DISTINCT_IDS } as const;
  await ctx.quiet('isolation');
  const start = (await ctx.probe.count()) ?? 0;
  ctx.log(`isolation: /batch/ at ${INGEST_CONNECTIONS} connections for ${INGEST_LEAD_S + seconds + 1} s, flags load from ${INGEST_LEAD_S} s on`);
  const ingesting = ctx.run(ingestLoad, { connections: INGEST_CONNECTIONS, durationS: INGEST_LEAD_S + seconds + 1 });
  await new Promise((r) => setTimeout(r, INGEST_LEAD_S * 1000));
  const loaded = await ctx.run(flagsLoad, { ...flagsRun, durationS: seconds });
  const ingest = await ingesting;
  const loadEnd = performance.now();
  const acked = (ingest.requests - ingest.non_2xx) * EVENTS_PER_REQUEST;
  ctx.log(`isolation: ${acked} events acknowledged; draining`);
  const applied = await ctx.probe.wait({ atLeast: start + acked, since: loadEnd, timeoutMs: DRAIN_TIMEOUT_MS });

  if (idle.non_2xx > 0 || loaded.non_2xx > 0) notes.push(`flags answers with status >= 400: ${idle.non_2xx} idle, ${loaded.non_2xx} under ingestion`);
  if (ingest.non_2xx > 0) notes.push(`${ingest.non_2xx} /batch/ answers with status >= 400`);
  if (applied.timed_out) notes.push(`backlog not applied within ${DRAIN_TIMEOUT_MS / 1000} s`);
  notes.push(`flags paced at ~${TARGET_FLAGS_S} req/s (mean pause ${delayMs} ms per connection, closed loop); /batch/ ${EVENTS_PER_REQUEST} events per request, distinct ids from ${DISTINCT_IDS}`);
  return {
    case: 'flags_under_ingest',
    connections: FLAG_CONNECTIONS,
    duration_s: loaded.duration_s,
    requests_s: loaded.requests_s,
    p50_ms: loaded.p50_ms,
    p99_ms: loaded.p99_ms,
    ratio_to_baseline: null,
    target_flags_s: TARGET_FLAGS_S,
    flags_idle: flagFigures(idle),
    flags_under_ingest: flagFigures(loaded),
    p99_ratio: idle.p99_ms > 0 ? Math.round((loaded.p99_ms / idle.p99_ms) * 100) / 100 : null,
    ingest: {
      connections: INGEST_CONNECTIONS,
      duration_s: ingest.duration_s,
      events_s: Math.round(acked / ingest.duration_s),
      p50_ms: ingest.p50_ms,
      p99_ms: ingest.p99_ms,
      drain_s: applied.drain_ms === null ? null : round1(applied.drain_ms / 1000),
    },
    ...ctx.footprint(),
    notes: [...ctx.roundNotes(loaded), ...notes].join('; '),
    ...details(loaded),
  };
}
