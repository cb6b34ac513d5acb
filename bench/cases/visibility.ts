/**
 * Time to visible: while `/batch/` runs at half the node's sustained capacity
 * (the sustained case's end-to-end rate when it ran in this invocation, else QUILL_BENCH_VISIBLE_EVENTS_S), probes
 * capture one event each for a new distinct id with `$set: {visible_probe: n}` and time, from the acknowledgement:
 *  - `flags`: until `/flags/` evaluates a flag on that person property to true (polled every 10 ms);
 *  - `events`: until the events API lists the event (one request: the API waits for the events acknowledged before
 *    it, so its latency is the time to visible).
 */
import type { BenchContext, CaseResult } from '../lib/context.js';
import { PROJECT_KEY } from '../lib/paths.js';
import { round1, round2 } from '../lib/proc-stats.js';
import { QuillApi } from '../lib/quill-api.js';

const FLAG = 'bench-visible';
const EVENTS_PER_REQUEST = 100;
/**
 * wrk paces each connection by a pause between a response and its next request (closed loop), so the rate falls
 * as the acknowledgements slow down; with 32 connections a request's latency is a small part of each connection's
 * interval (~280 ms at 11k events/s), so the rate stays near the target while the node also applies that load
 * (with 8, acknowledgements at ~30 ms held it 25 % under).
 */
const CONNECTIONS = 32;
const PROBE_EVERY_MS = 100;
const GIVE_UP_MS = 30_000;

function percentile(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A probe request; one that times out (the bench client gives up after 30 s) counts as "not visible yet". */
async function attempt<T>(request: () => Promise<T>): Promise<T | null> {
  try {
    return await request();
  } catch {
    return null;
  }
}

async function probe(ctx: BenchContext, n: number): Promise<{ flags: number | null; events: number | null }> {
  const distinctId = `visible-probe-${n}-${Date.now()}`;
  const captured = await ctx.api.publicPost('/capture/', {
    api_key: PROJECT_KEY, event: 'visibility_probe', distinct_id: distinctId, properties: { $set: { visible_probe: n } },
  });
  if (captured.status !== 200) throw new Error(`probe capture answered ${captured.status}`);
  const acked = performance.now();
  const flags = (async () => {
    while (performance.now() - acked < GIVE_UP_MS) {
      const res = await attempt(() => ctx.api.publicPost<{ featureFlags?: Record<string, unknown> }>('/flags/?v=2', QuillApi.flagsRequest(distinctId)));
      if (res?.body?.featureFlags?.[FLAG] === true) return performance.now() - acked;
      await sleep(10);
    }
    return null;
  })();
  const events = (async () => {
    while (performance.now() - acked < GIVE_UP_MS) {
      const res = await attempt(() => ctx.api.api('GET', `/api/projects/@current/events/?distinct_id=${encodeURIComponent(distinctId)}&limit=1`));
      if (res?.status === 200 && res.body?.results?.length === 1) return performance.now() - acked;
      await sleep(10);
    }
    return null;
  })();
  return { flags: await flags, events: await events };
}

export async function runVisibility(ctx: BenchContext, sustainedEventsS: number | null): Promise<CaseResult> {
  const created = await ctx.api.api('POST', '/api/projects/@current/feature_flags/', {
    key: FLAG, name: 'Time-to-visible probe', filters: { groups: [{ properties: [{ key: 'visible_probe', type: 'person', operator: 'is_set', value: 'is_set' }], rollout_percentage: 100 }] },
  });
  if (created.status !== 201) throw new Error(`creating ${FLAG} failed: ${created.status} ${JSON.stringify(created.body)}`);
  const targetEvents = Math.round((sustainedEventsS ?? Number(process.env.QUILL_BENCH_VISIBLE_EVENTS_S ?? 10_000)) / 2);
  const targetRequests = targetEvents / EVENTS_PER_REQUEST;
  // A closed loop per connection: the pause that gives the target rate is the interval less the time a request takes.
  const delayMs = Math.max(0.1, (CONNECTIONS * 1000) / targetRequests - 5);
  const load = { kind: 'batch', path: '/batch/', apiKey: PROJECT_KEY, eventsPerRequest: EVENTS_PER_REQUEST, distinctIds: 1_000_000 } as const;
  await ctx.quiet('visibility');
  const seconds = ctx.settings.measureS;
  ctx.log(`visibility: /batch/ paced to ${targetEvents} events/s for ${seconds} s, a probe every ${PROBE_EVERY_MS} ms`);
  const running = ctx.run(load, { connections: CONNECTIONS, durationS: seconds, delayMs });
  const probes: Promise<{ flags: number | null; events: number | null }>[] = [];
  const t0 = performance.now();
  await sleep(1000);
  for (let n = 0; performance.now() - t0 < (seconds - 1) * 1000; n++) {
    probes.push(probe(ctx, n));
    await sleep(PROBE_EVERY_MS);
  }
  const r = await running;
  const answers = await Promise.all(probes);
  // The cases after this one count the fixture's flags in their answers.
  await ctx.api.api('PATCH', `/api/projects/@current/feature_flags/${created.body.id as number}/`, { deleted: true });
  const flags = answers.map((a) => a.flags).filter((v): v is number => v !== null).sort((a, b) => a - b);
  const events = answers.map((a) => a.events).filter((v): v is number => v !== null).sort((a, b) => a - b);
  const achieved = Math.round(((r.requests - r.non_2xx) * EVENTS_PER_REQUEST) / r.duration_s);
  const notes = [
    `background /batch/ at ${achieved} events/s (target ${targetEvents}: half of ${sustainedEventsS === null ? 'QUILL_BENCH_VISIBLE_EVENTS_S or 10,000' : 'the sustained end-to-end rate'})`,
    `${answers.length} probes; flags polled every 10 ms, so their figures are up to ~10 ms late`,
  ];
  const lost = answers.length - Math.min(flags.length, events.length);
  if (lost > 0) notes.push(`${lost} probes not visible within ${GIVE_UP_MS / 1000} s`);
  if (Math.abs(achieved - targetEvents) / targetEvents > 0.15) notes.push('achieved rate is more than 15% off the target');
  return {
    case: 'time_to_visible',
    connections: CONNECTIONS,
    duration_s: r.duration_s,
    requests_s: r.requests_s,
    events_s: achieved,
    p50_ms: percentile(events, 50) === null ? null : round1(percentile(events, 50)!),
    p99_ms: percentile(events, 99) === null ? null : round1(percentile(events, 99)!),
    flags_p50_ms: percentile(flags, 50) === null ? null : round1(percentile(flags, 50)!),
    flags_p99_ms: percentile(flags, 99) === null ? null : round1(percentile(flags, 99)!),
    probes: answers.length,
    batch_p99_ms: round2(r.p99_ms),
    ratio_to_baseline: null,
    ...ctx.footprint(),
    notes: notes.join('; '),
  };
}
