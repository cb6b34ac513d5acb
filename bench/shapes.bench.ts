// What a shape of public input costs the apply (`npm run bench:shapes`): the store's cost must be linear in what
// was sent, whatever its shape (issue 47). Each shape runs on a fresh Quill (fault injection on): its events are
// acknowledged through `/batch/` with the apply paused, then the apply resumes and the drain is measured: CPU per
// applied event and per applied KB sent (every thread of the process), the process's peak anonymous memory while
// it drains, and what the open blocks hold in memory after it (`/_stats` scan.openBytes). The `normal` shape is the
// baseline of the same run (posthog-node's events, ~430 bytes); every other shape is reported with its ratio to it.
//
// Shapes: `normal`; `wide_among_normal` (the normal events with one event of 9,000 properties every 16,384: those
// must not make the other rows pay for their columns); `wide` (events of 2,000 properties); `unique_names`
// (10,000 events, each with 100 names no other event has); `long_values` (a 20 KB string per event); `deep`
// (a value nested 126 levels, just under the bound). QUILL_BENCH_SHAPES (comma list) runs a subset;
// QUILL_BENCH_SCALE (default 1) multiplies every shape's event count. One JSON document on stdout.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { AppliedProbe } from './lib/applied.js';
import { EventFactory } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { PERSONAL_KEY, PROJECT_KEY } from './lib/paths.js';
import { memoryMb, round1, round2 } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';

const TICKS_PER_S = 100;
const SCALE = Number(process.env.QUILL_BENCH_SCALE ?? 1);
const ONLY = process.env.QUILL_BENCH_SHAPES ? new Set(process.env.QUILL_BENCH_SHAPES.split(',')) : null;
const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[shapes ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);

interface Shape {
  name: string;
  /** Requests and events per request. */
  requests: number;
  perRequest: number;
  /** The events of one request, as JSON text of the batch's items. */
  batch: (request: number) => string;
}

const factory = new EventFactory();
const item = (distinctId: string, event: string, properties: Record<string, unknown>) =>
  JSON.stringify({ event, distinct_id: distinctId, uuid: randomUUID(), properties, timestamp: new Date().toISOString() });
const normalItems = (n: number) => JSON.parse(factory.batchBody(PROJECT_KEY, n)).batch.map((e: unknown) => JSON.stringify(e)) as string[];
const manyProps = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, k) => [`${prefix}${k}`, k % 3 === 0 ? `value-${k}` : k]));
let nested: unknown = 'leaf';
for (let d = 0; d < 125; d++) nested = { d: nested };

const SHAPES: Shape[] = [
  { name: 'normal', requests: Math.round(500 * SCALE), perRequest: 100, batch: () => normalItems(100).join(',') },
  {
    name: 'wide_among_normal', requests: Math.round(500 * SCALE), perRequest: 100,
    batch: (r) => {
      const items = normalItems(100);
      if (r % 164 === 0) items[0] = item(`wide-${r}`, 'wide', manyProps(9_000, 'w'));
      return items.join(',');
    },
  },
  { name: 'wide', requests: Math.round(100 * SCALE), perRequest: 5, batch: (r) => Array.from({ length: 5 }, (_, k) => item(`user-${r * 5 + k}`, 'wide', manyProps(2_000, 'p'))).join(',') },
  {
    name: 'unique_names', requests: Math.round(500 * SCALE), perRequest: 20,
    batch: (r) => Array.from({ length: 20 }, (_, k) => item(`user-${(r * 20 + k) % 50_000}`, 'unique', manyProps(100, `e${r}_${k}_`))).join(','),
  },
  {
    name: 'long_values', requests: Math.round(100 * SCALE), perRequest: 10,
    batch: (r) => Array.from({ length: 10 }, (_, k) => item(`user-${(r * 10 + k) % 50_000}`, 'long', { text: `${r}-${k}-${'x'.repeat(20_000)}`, plan: 'pro' })).join(','),
  },
  { name: 'deep', requests: Math.round(250 * SCALE), perRequest: 20, batch: (r) => Array.from({ length: 20 }, (_, k) => item(`user-${(r * 20 + k) % 50_000}`, 'deep', { tree: nested })).join(',') },
];

async function fault(base: string, kind: string): Promise<void> {
  const res = await fetch(`${base}/_fault/${kind}`, { method: 'POST', headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  if (res.status !== 200) throw new Error(`/_fault/${kind} answered ${res.status}: ${await res.text()}`);
}

function processTicks(pid: number): number {
  let ticks = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const f = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
      ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      /* thread ended */
    }
  }
  return ticks;
}

async function runShape(shape: Shape) {
  const quill = await startQuill({ env: { QUILL_FAULT_INJECTION: '1' } });
  try {
    const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
    await fault(quill.base, 'pause-apply');
    let bytes = 0;
    let r = 0;
    const sent = await sendFixedCount({
      base: quill.base, path: '/batch/', requests: shape.requests, connections: 8,
      body: () => {
        const body = `{"api_key":"${PROJECT_KEY}","batch":[${shape.batch(r++)}]}`;
        bytes += Buffer.byteLength(body);
        return body;
      },
    });
    const events = sent.ok * shape.perRequest;
    if (sent.ok !== shape.requests) throw new Error(`${shape.name}: ${sent.ok} of ${shape.requests} requests acknowledged (${JSON.stringify(sent.statuses)})`);
    await new Promise((res) => setTimeout(res, 1000));
    let peakAnon = memoryMb(quill.pid).rss_anon_mb ?? 0;
    const sampler = setInterval(() => (peakAnon = Math.max(peakAnon, memoryMb(quill.pid).rss_anon_mb ?? 0)), 100);
    const ticksBefore = processTicks(quill.pid);
    const start = performance.now();
    await fault(quill.base, 'resume-apply');
    const applied = await probe.wait({ atLeast: events, since: start, timeoutMs: 30 * 60_000, stableMs: 0 });
    const drainS = (performance.now() - start) / 1000;
    clearInterval(sampler);
    const cpuS = (processTicks(quill.pid) - ticksBefore) / TICKS_PER_S;
    const stats = await (await fetch(`${quill.base}/_stats`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).json() as { shards: { scan: { openBytes: number; openEvents: number } }[] };
    const openBytes = stats.shards.reduce((n, s) => n + s.scan.openBytes, 0);
    return {
      shape: shape.name, events, mb_sent: round1(bytes / 1048576), ack_s: round1(sent.duration_s), drain_s: round1(drainS), timed_out: applied.timed_out,
      cpu_us_per_event: round1((cpuS * 1e6) / events), cpu_us_per_kb: round1((cpuS * 1e6) / (bytes / 1024)),
      peak_rss_anon_mb: round1(peakAnon), open_blocks_mb: round1(openBytes / 1048576),
    };
  } finally {
    await quill.stop();
    rmSync(quill.dataDir, { recursive: true, force: true });
  }
}

const results: Awaited<ReturnType<typeof runShape>>[] = [];
for (const shape of SHAPES) {
  if (ONLY && !ONLY.has(shape.name) && shape.name !== 'normal') continue;
  const r = await runShape(shape);
  log(`${r.shape}: ${r.events} events, ${r.mb_sent} MB, drain ${r.drain_s} s, ${r.cpu_us_per_event} µs/event, ${r.cpu_us_per_kb} µs/KB, peak anon ${r.peak_rss_anon_mb} MB, open blocks ${r.open_blocks_mb} MB`);
  results.push(r);
}
const normal = results.find((r) => r.shape === 'normal')!;
const out = {
  machine: machine(), commit: commit(),
  shapes: results.map((r) => ({
    ...r,
    vs_normal: { cpu_per_event: round2(r.cpu_us_per_event / normal.cpu_us_per_event), cpu_per_kb: round2(r.cpu_us_per_kb / normal.cpu_us_per_kb), peak_rss_anon: round2(r.peak_rss_anon_mb / normal.peak_rss_anon_mb) },
  })),
};
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
