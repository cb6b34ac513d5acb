// Memory by component under the sustained case's load (`npm run bench:memory`): a fresh Quill takes 3,000,000
// posthog-node-shaped events through `/batch/` (100 per request, 32 connections, distinct ids from a million) and
// applies them; every 3 s the process's anonymous memory (/proc/<pid>/status RssAnon) and `/metrics`'
// `quill_memory_bytes` (summed over the workers, MB) are sampled. Prints the sample at the peak of anonymous memory
// and one after the drain, as JSON, with the whole timeline. QUILL_BENCH_EVENTS (default 3,000,000); Quill's own
// settings (e.g. QUILL_HOT_PERSONS_MB, QUILL_MEMORY_MB) pass through. With a memory budget the client does what
// PostHog's SDKs do with a 503: it sends the same batch again (after 1 s here), so every event is still delivered.
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

type Sample = { t_s: number; anon_mb: number; backlog: number; over_budget: boolean; components_mb: Record<string, number> };
const t0 = performance.now();
async function sample(): Promise<Sample> {
  const anon = anonMb();
  const text = await (await fetch(`${quill.base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
  const components: Record<string, number> = {};
  for (const m of text.matchAll(/^quill_memory_bytes\{component="(\w+)",worker="\d+"\} (\S+)$/gm)) components[m[1]!] = (components[m[1]!] ?? 0) + Number(m[2]) / 1048576;
  for (const k of Object.keys(components)) components[k] = Math.round(components[k]! * 10) / 10;
  const backlog = [...text.matchAll(/^quill_ingest_backlog_events\{shard="\d+"\} (\S+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  const over = /^quill_memory_over_budget 1$/m.test(text);
  return { t_s: Math.round((performance.now() - t0) / 1000), anon_mb: Math.round(anon), backlog, over_budget: over, components_mb: components };
}

let peak: Sample = { t_s: 0, anon_mb: 0, backlog: 0, over_budget: false, components_mb: {} };
const timeline: Omit<Sample, 'components_mb'>[] = [];
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    const s = await sample();
    if (s.anon_mb > peak.anon_mb) peak = s;
    timeline.push({ t_s: s.t_s, anon_mb: s.anon_mb, backlog: s.backlog, over_budget: s.over_budget });
    process.stderr.write(`[memory ${s.t_s} s] anon ${s.anon_mb} MB, backlog ${s.backlog}${s.over_budget ? ', over budget' : ''}\n`);
    await new Promise((r) => setTimeout(r, 3000));
  }
})();
const factory = new EventFactory(1_000_000);
const sent = await sendFixedCount({ base: quill.base, path: '/batch/', requests: Math.ceil(EVENTS / PER_REQUEST), connections: 32, body: () => factory.batchBody(PROJECT_KEY, PER_REQUEST), retry503Ms: 1000 });
await probe.wait({ atLeast: 0, since: performance.now(), timeoutMs: 30 * 60_000, stableMs: 0 });
sampling = false;
await sampler;
const after = await sample();
await quill.stop();
rmSync(quill.dataDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ machine: machine(), commit: commit(), events: sent.ok * PER_REQUEST, statuses: sent.statuses, retried_requests: sent.retried, acknowledged_events_s: Math.round((sent.requests * PER_REQUEST) / sent.duration_s), hot_persons_mb: process.env.QUILL_HOT_PERSONS_MB ?? 'default', memory_budget_mb: process.env.QUILL_MEMORY_MB ?? 'none', peak, after_drain: after, timeline }, null, 2)}\n`);
