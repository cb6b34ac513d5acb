/**
 * Flag changes pushed to many clients: QUILL_BENCH_STREAMS (default 10,000) open `GET /flags/stream` connections —
 * QUILL_BENCH_SERVER_STREAMS of them (default 100) server streams with a personal key, the rest browser streams —
 * while `/flags/?v=2` with 50 flags runs at 64 connections and a flag is PATCHed every CHANGE_EVERY_MS.
 *
 * Reported: fan-out latency from each PATCH's answer to each stream's receipt of the change (p50/p99/max over every
 * stream and change; the receipt time is taken by the bench process, which also reads 10,000 sockets, so it
 * includes that process's own queueing), streams that missed a change or were dropped, the time to open the
 * streams and the front's memory for them; and the flags load with the streams and changes beside the same load
 * on the same server without them (the flags floor: 10k req/s, p99 25 ms).
 */
import { percentile, round2 } from '../lib/proc-stats.js';
import type { BenchContext, CaseResult } from '../lib/context.js';
import { PERSON_DISTINCT_ID } from '../lib/flag-fixtures.js';
import { PERSONAL_KEY, PROJECT_KEY } from '../lib/paths.js';
import { QuillApi } from '../lib/quill-api.js';
import { SseCrowd } from '../lib/sse-crowd.js';
import { prepareFlags } from './flags.js';

const CONNECTIONS = 64;
const CHANGE_EVERY_MS = 500;
const PROBE_KEY = 'bench-stream-probe';
const FF = '/api/projects/@current/feature_flags/';


export async function runStreams(ctx: BenchContext): Promise<CaseResult[]> {
  const total = Number(process.env.QUILL_BENCH_STREAMS ?? 10_000);
  const serverStreams = Math.min(total, Number(process.env.QUILL_BENCH_SERVER_STREAMS ?? 100));
  await prepareFlags(ctx);
  const created = await ctx.api.api('POST', FF, { key: PROBE_KEY, name: 'Stream probe', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
  if (created.status !== 201) throw new Error(`creating ${PROBE_KEY} failed: ${created.status} ${JSON.stringify(created.body)}`);
  const probeId = created.body.id as number;

  const body = JSON.stringify(QuillApi.flagsRequest(PERSON_DISTINCT_ID));
  const load = { kind: 'static', method: 'POST', path: '/flags/?v=2', headers: { 'Content-Type': 'application/json' }, body } as const;
  const alone = await ctx.measure('flags_50 without streams', load, { connections: CONNECTIONS });

  const url = new URL(ctx.quill.base);
  const crowd = new SseCrowd({ host: url.hostname, port: Number(url.port), projectKey: PROJECT_KEY, personalKey: PERSONAL_KEY });
  const before = ctx.footprint();
  ctx.log(`streams: opening ${serverStreams} server and ${total - serverStreams} browser streams`);
  const t0 = performance.now();
  await crowd.open(serverStreams, 'server');
  await crowd.open(total - serverStreams, 'browser');
  const openS = (performance.now() - t0) / 1000;
  const opened = ctx.footprint();
  ctx.log(`streams: ${crowd.opened} open after ${openS.toFixed(1)} s; front RSS ${before.rss_mb} -> ${opened.rss_mb} MB`);

  // PATCHes all through the flags load (warm-up and measured round), one every CHANGE_EVERY_MS.
  const answeredAt: number[] = [];
  const sentAt: number[] = [];
  let loading = true;
  const changes = (async () => {
    for (let i = 1; loading; i++) {
      const tick = performance.now();
      sentAt.push(tick);
      const res = await ctx.api.api('PATCH', `${FF}${probeId}/`, { filters: { groups: [{ properties: [], rollout_percentage: i % 2 === 1 ? 100 : 0 }] } });
      if (res.status !== 200) throw new Error(`PATCH ${PROBE_KEY} failed: ${res.status} ${JSON.stringify(res.body)}`);
      answeredAt.push(performance.now());
      await new Promise((r) => setTimeout(r, Math.max(0, CHANGE_EVERY_MS - (performance.now() - tick))));
    }
  })();
  let beside;
  try {
    beside = await ctx.measure(`flags_50 beside ${crowd.opened} streams and a change every ${CHANGE_EVERY_MS} ms`, load, { connections: CONNECTIONS });
  } finally {
    loading = false;
    await changes;
  }
  const delivered = await crowd.allReceived(answeredAt.length, 10_000);
  // The flags case after this one counts 50 flags in its answers.
  await ctx.api.api('PATCH', `${FF}${probeId}/`, { deleted: true });

  const fromAnswer: number[] = [];
  const fromSend: number[] = [];
  const perChangeP99: number[] = [];
  let missing = 0;
  for (let k = 0; k < answeredAt.length; k++) {
    const { times, missing: lost } = crowd.arrivals(k);
    missing += lost;
    const lat = times.map((t) => t - answeredAt[k]!).sort((a, b) => a - b);
    perChangeP99.push(percentile(lat, 99));
    for (const l of lat) fromAnswer.push(l);
    for (const t of times) fromSend.push(t - sentAt[k]!);
  }
  fromAnswer.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  const extra = crowd.extra(answeredAt.length);
  const dropped = crowd.closedEarly;
  crowd.close();

  const notes = [
    `${crowd.size} streams (${serverStreams} server, ${crowd.size - serverStreams} browser) opened in ${openS.toFixed(1)} s`,
    `${answeredAt.length} PATCHes, ${fromAnswer.length} change events received, ${missing} missing, ${extra} extra, ${dropped} streams dropped${delivered ? '' : ' (not every stream had every change 10 s after the last PATCH)'}`,
    'fan-out latency: from the PATCH answer to the bench reading the event on each stream',
  ];
  const fanout: CaseResult = {
    case: 'flag_stream_fanout',
    connections: crowd.size,
    duration_s: null,
    requests_s: null,
    p50_ms: round2(percentile(fromAnswer, 50)),
    p99_ms: round2(percentile(fromAnswer, 99)),
    ratio_to_baseline: null,
    ...ctx.footprint(),
    notes: notes.join('; '),
    streams: crowd.size,
    server_streams: serverStreams,
    open_s: round2(openS),
    rss_mb_before_streams: before.rss_mb,
    rss_mb_with_streams: opened.rss_mb,
    changes: answeredAt.length,
    received: fromAnswer.length,
    missing,
    extra,
    dropped,
    max_ms: round2(fromAnswer[fromAnswer.length - 1] ?? NaN),
    p99_ms_from_patch_sent: round2(percentile(fromSend, 99)),
    worst_change_p99_ms: round2(Math.max(...perChangeP99)),
  };
  return [
    ctx.rateCase('flags_50 without streams', CONNECTIONS, alone, []),
    ctx.rateCase('flags_50 beside streams', CONNECTIONS, beside, [`${crowd.size} streams open, a flag PATCHed every ${CHANGE_EVERY_MS} ms`]),
    fanout,
  ];
}
