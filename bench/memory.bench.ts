// Memory by component under the sustained case's load (`npm run bench:memory`): a fresh Quill takes 3,000,000
// posthog-node-shaped events through `/batch/` (100 per request, 32 connections, distinct ids from a million) and
// applies them; every 3 s the process's anonymous memory (/proc/<pid>/status RssAnon) and `/metrics`'
// `quill_memory_bytes` (summed over the workers, MB) are sampled. Prints the sample at the peak of anonymous memory
// and one after the drain, as JSON. QUILL_BENCH_EVENTS (default 3,000,000); Quill's own settings (e.g.
// QUILL_HOT_PERSONS_MB) pass through.
import { readFileSync, rmSync } from 'node:fs';
import { AppliedProbe } from './lib/applied.js';
import { EventFactory } from './lib/event-shapes.js';
import { sendFixedCount } from './lib/fixed-count-driver.js';
import { commit, machine } from './lib/machine.js';
import { PROJECT_KEY } from './lib/paths.js';
import { startQuill } from './lib/server-process.js';
import { BENCH_METRICS_TOKEN } from './lib/txn-figures.js';

const EVENTS = Number(process.env.QUILL_BENCH_EVENTS ?? 3_000_000);
const PER_REQUEST = 100;

const quill = await startQuill({ env: { QUILL_METRICS_TOKEN: BENCH_METRICS_TOKEN } });
const probe = await AppliedProbe.detect(quill.base, quill.dataDir);
const anonMb = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync(`/proc/${quill.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

type Sample = { anon_mb: number; backlog: number; components_mb: Record<string, number> };
async function sample(): Promise<Sample> {
  const anon = anonMb();
  const text = await (await fetch(`${quill.base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
  const components: Record<string, number> = {};
  for (const m of text.matchAll(/^quill_memory_bytes\{component="(\w+)",worker="\d+"\} (\S+)$/gm)) components[m[1]!] = (components[m[1]!] ?? 0) + Number(m[2]) / 1048576;
  for (const k of Object.keys(components)) components[k] = Math.round(components[k]! * 10) / 10;
  const backlog = [...text.matchAll(/^quill_ingest_backlog_events\{shard="\d+"\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  return { anon_mb: Math.round(anon), backlog, components_mb: components };
}

let peak: Sample = { anon_mb: 0, backlog: 0, components_mb: {} };
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    const s = await sample();
    if (s.anon_mb > peak.anon_mb) peak = s;
    await new Promise((r) => setTimeout(r, 3000));
  }
})();
const factory = new EventFactory(1_000_000);
const sent = await sendFixedCount({ base: quill.base, path: '/batch/', requests: Math.ceil(EVENTS / PER_REQUEST), connections: 32, body: () => factory.batchBody(PROJECT_KEY, PER_REQUEST) });
await probe.wait({ atLeast: 0, since: performance.now(), timeoutMs: 30 * 60_000, stableMs: 0 });
sampling = false;
await sampler;
const after = await sample();
await quill.stop();
rmSync(quill.dataDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ machine: machine(), commit: commit(), events: sent.ok * PER_REQUEST, hot_persons_mb: process.env.QUILL_HOT_PERSONS_MB ?? 'default', peak, after_drain: after }, null, 2)}\n`);
