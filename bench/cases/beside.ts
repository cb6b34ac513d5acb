/**
 * Flags beside ingestion (`QUILL_BENCH_ONLY=beside`): `/flags/?v=2` with the 50 flags for distinct ids drawn at
 * random from 10,000 stored persons, from 8 connections as fast as they are answered (wrk, unpaced): first alone,
 * then while a second wrk sends `/batch/` (100 events a request, distinct ids from a million) from 16 connections,
 * the whole flags round inside the ingestion one. The promise is that a flag request does not pay for what else
 * the node does: the figures beside ingestion are compared with the flags alone and with the hello world of the
 * same run (at 8 connections). The backlog is drained before the case ends.
 */
import { details, type BenchContext, type CaseResult } from '../lib/context.js';
import { PERSON_PROPERTIES } from '../lib/flag-fixtures.js';
import type { LoadResult } from '../lib/load.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { round1 } from '../lib/proc-stats.js';
import { prepareFlags } from './flags.js';

const FLAG_CONNECTIONS = 8;
const INGEST_CONNECTIONS = 16;
const PERSONS = 10_000;
const EVENTS_PER_REQUEST = 100;
const DISTINCT_IDS = 1_000_000;
/** Ingestion runs alone this long before the flags round starts (the backlog builds, the pacer settles). */
const INGEST_LEAD_S = 3;
const DRAIN_TIMEOUT_MS = 10 * 60_000;

function figures(r: LoadResult) {
  return { requests_s: r.requests_s, p50_ms: r.p50_ms, p90_ms: r.p90_ms, p99_ms: r.p99_ms, max_ms: r.max_ms, non_2xx: r.non_2xx, socket_errors: r.socket_errors };
}

/** The flags' population: PERSONS persons with the fixture's properties (varied), stored through `/batch/`. */
async function storePersons(ctx: BenchContext): Promise<void> {
  const before = (await ctx.probe.count()) ?? 0;
  for (let from = 0; from < PERSONS; from += 500) {
    const batch = Array.from({ length: Math.min(500, PERSONS - from) }, (_, k) => {
      const i = from + k;
      return { event: '$identify', distinct_id: `flags-user-${i}`, properties: { $set: { ...PERSON_PROPERTIES, age: 20 + (i % 50), plan: i % 3 ? 'pro' : 'free' } } };
    });
    const res = await fetch(`${ctx.quill.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) });
    if (res.status !== 200) throw new Error(`storing the flags' persons: ${res.status} ${await res.text()}`);
  }
  await ctx.probe.wait({ atLeast: before + PERSONS, since: performance.now(), timeoutMs: DRAIN_TIMEOUT_MS });
}

export async function runBeside(ctx: BenchContext): Promise<CaseResult> {
  await prepareFlags(ctx, 50);
  ctx.log(`beside: storing ${PERSONS} persons`);
  await storePersons(ctx);
  const flagsLoad = { kind: 'flags', apiKey: PROJECT_KEY, persons: PERSONS } as const;
  const seconds = ctx.settings.measureS;
  const hello = ctx.baseline.find((b) => b.connections === FLAG_CONNECTIONS) ?? null;

  ctx.log(`beside: flags alone, warm-up ${ctx.settings.warmupS} s`);
  await ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: ctx.settings.warmupS });
  await ctx.quiet('beside');
  ctx.log(`beside: flags alone, ${seconds} s at ${FLAG_CONNECTIONS} connections`);
  const alone = await ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: seconds });

  const ingestLoad = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST, distinctIds: DISTINCT_IDS } as const;
  await ctx.quiet('beside');
  const start = (await ctx.probe.count()) ?? 0;
  ctx.log(`beside: /batch/ at ${INGEST_CONNECTIONS} connections for ${INGEST_LEAD_S + seconds + 1} s, flags from ${INGEST_LEAD_S} s on`);
  const ingesting = ctx.run(ingestLoad, { connections: INGEST_CONNECTIONS, durationS: INGEST_LEAD_S + seconds + 1 });
  await new Promise((r) => setTimeout(r, INGEST_LEAD_S * 1000));
  const beside = await ctx.run(flagsLoad, { connections: FLAG_CONNECTIONS, durationS: seconds });
  const ingest = await ingesting;
  const loadEnd = performance.now();
  const acked = (ingest.requests - ingest.non_2xx) * EVENTS_PER_REQUEST;
  ctx.log(`beside: ${acked} events acknowledged; draining`);
  const applied = await ctx.probe.wait({ atLeast: start + acked, since: loadEnd, timeoutMs: DRAIN_TIMEOUT_MS });

  const notes: string[] = [];
  if (alone.non_2xx > 0 || beside.non_2xx > 0) notes.push(`flags answers with status >= 400: ${alone.non_2xx} alone, ${beside.non_2xx} beside ingestion`);
  if (ingest.non_2xx > 0) notes.push(`${ingest.non_2xx} /batch/ answers with status >= 400`);
  if (applied.timed_out) notes.push(`backlog not applied within ${DRAIN_TIMEOUT_MS / 1000} s`);
  return {
    case: 'flags_beside_ingest',
    connections: FLAG_CONNECTIONS,
    duration_s: beside.duration_s,
    requests_s: beside.requests_s,
    p50_ms: beside.p50_ms,
    p99_ms: beside.p99_ms,
    ratio_to_baseline: hello ? Math.round((beside.requests_s / hello.requests_s) * 10_000) / 10_000 : null,
    hello_c8: hello ? { requests_s: hello.requests_s, p99_ms: hello.p99_ms } : null,
    flags_alone: figures(alone),
    flags_beside_ingest: figures(beside),
    ingest: {
      connections: INGEST_CONNECTIONS,
      events_s: Math.round(acked / ingest.duration_s),
      p50_ms: ingest.p50_ms,
      p99_ms: ingest.p99_ms,
      drain_s: applied.drain_ms === null ? null : round1(applied.drain_ms / 1000),
    },
    ...ctx.footprint(),
    notes: [...ctx.roundNotes(beside), ...notes].join('; '),
    ...details(beside),
  };
}
