// Session replay ingestion (`npm run bench:replay`): snapshot bytes acknowledged per second on /s/ (gzipped
// requests of two $snapshot chunks each, shaped like posthog-js' recorder output: a full snapshot, mutations, mouse
// moves, inputs, a console line), and /flags/ latency on the same node before and while the snapshots arrive.
// One JSON document on stdout (also bench/results/replay-latest.json), progress on stderr. Environment:
// QUILL_BENCH_SECONDS (each phase, default 15), QUILL_BENCH_CONNECTIONS (snapshot senders, default 16),
// QUILL_BENCH_FLAG_CONNECTIONS (default 4), QUILL_BENCH_RECORDING_MINUTES (the long recording, default 30), QUILL_BENCH_OUT.
// Then a long recording (bench/lib/long-recording.ts): disk bytes per recorded minute and time to its first frame.
import { commit, machine } from './lib/machine.js';
import { publishResult } from './lib/results.js';
import { PERSONAL_KEY, PROJECT_KEY } from './lib/paths.js';
import { duMb, round1, round2, serverCpuSeconds } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';
import { measureLongRecording } from './lib/long-recording.js';
import { packedDom, recorderChunk, snapshotBody } from './lib/snapshot-bodies.js';

const SECONDS = Number(process.env.QUILL_BENCH_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.QUILL_BENCH_CONNECTIONS ?? 16);
const FLAG_CONNECTIONS = Number(process.env.QUILL_BENCH_FLAG_CONNECTIONS ?? 4);
const FLAGS = 20;
const RECORDING_MINUTES = Number(process.env.QUILL_BENCH_RECORDING_MINUTES ?? 30);
const SESSIONS = 200;

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[replay ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
const auth = { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' };

const CONSOLE_PASSWORD = 'replay-bench-password';
const quill = await startQuill({ env: { QUILL_WORKERS: '2', QUILL_ADMIN_PASSWORD: CONSOLE_PASSWORD } });
for (let i = 0; i < FLAGS; i++) {
  const res = await fetch(`${quill.base}/api/projects/@current/feature_flags/`, {
    method: 'POST', headers: auth,
    body: JSON.stringify({ key: `replay-bench-${i}`, filters: { groups: [{ properties: [{ key: 'plan', type: 'person', value: ['pro'], operator: 'exact' }], rollout_percentage: 50 }] } }),
  });
  if (res.status !== 201) throw new Error(`flag: ${res.status}`);
}
await fetch(`${quill.base}/api/projects/@current/`, { method: 'PATCH', headers: auth, body: JSON.stringify({ session_recording_opt_in: true }) });

const HEAVY_DOM = packedDom(1, 5_000);

/** Saturation phase: two chunks per request, each with a 5 KB packed full snapshot (heavier than a real tab's). */
function snapshotRequest(): { body: Buffer; jsonBytes: number } {
  const ts = Date.now();
  return snapshotBody([0, 1].map(() => ({ session: `bench-session-${Math.floor(Math.random() * SESSIONS)}`, ts, events: recorderChunk(ts, { fullSnapshot: HEAVY_DOM, href: 'https://shop.example/checkout' }) })));
}

const percentile = (sorted: number[], p: number) => sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

async function flagsLoad(stop: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(Array.from({ length: FLAG_CONNECTIONS }, async (_, c) => {
    for (let i = 0; !stop(); i++) {
      const start = performance.now();
      const res = await fetch(`${quill.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: `user-${c}-${i % 500}`, person_properties: { plan: i % 2 ? 'pro' : 'free' } }) });
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - start);
    }
  }));
  return latencies.sort((a, b) => a - b);
}

async function snapshotLoad(stop: () => boolean) {
  const counts = { requests: 0, failed: 0, jsonBytes: 0, gzipBytes: 0 };
  const latencies: number[] = [];
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (!stop()) {
      const { body, jsonBytes } = snapshotRequest();
      const start = performance.now();
      try {
        const res = await fetch(`${quill.base}/s/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
        await res.arrayBuffer();
        if (res.status === 200) {
          counts.requests++;
          counts.jsonBytes += jsonBytes;
          counts.gzipBytes += body.byteLength;
          latencies.push(performance.now() - start);
        } else counts.failed++;
      } catch {
        counts.failed++;
      }
    }
  }));
  return { counts, latencies: latencies.sort((a, b) => a - b) };
}

function timer(seconds: number): () => boolean {
  const end = performance.now() + seconds * 1000;
  return () => performance.now() >= end;
}

log(`warm-up, then ${SECONDS} s of /flags/ alone (${FLAG_CONNECTIONS} connections)`);
await flagsLoad(timer(2));
const alone = await flagsLoad(timer(SECONDS));
log(`/flags/ alone: ${alone.length} answers, p99 ${round2(percentile(alone, 0.99) ?? 0)} ms`);

log(`${SECONDS} s of snapshots (${CONNECTIONS} connections) with /flags/ beside them`);
const cpuBefore = serverCpuSeconds(quill.pid);
const stop = timer(SECONDS);
const started = performance.now();
const [ingest, during] = await Promise.all([snapshotLoad(stop), flagsLoad(stop)]);
const elapsed = (performance.now() - started) / 1000;
const cpu = serverCpuSeconds(quill.pid) - cpuBefore;
const stats = await (await fetch(`${quill.base}/_stats`, { headers: auth })).json() as { recordings: { chunks_acknowledged: number; shards: { storedBytes: number }[] } };
const storedBytes = stats.recordings.shards.reduce((n, s) => n + s.storedBytes, 0);
log(`snapshots: ${ingest.counts.requests} requests, ${round1(ingest.counts.jsonBytes / elapsed / 1e6)} MB/s of snapshot JSON acknowledged; /flags/ p99 ${round2(percentile(during, 0.99) ?? 0)} ms`);

const longRecording = await measureLongRecording(quill.base, { minutes: RECORDING_MINUTES, password: CONSOLE_PASSWORD, repeat: 3, log });
log(`long recording: ${longRecording.stored_bytes_per_recorded_minute} bytes stored per recorded minute; first frame ${longRecording.first_frame_api.median_ms} ms (API), ${JSON.stringify(longRecording.first_frame_player)} (player)`);

const doc = {
  bench: 'replay',
  ...commit(),
  machine: machine(),
  seconds: round1(elapsed),
  connections: CONNECTIONS,
  snapshots: {
    requests_per_s: round1(ingest.counts.requests / elapsed),
    chunks_per_s: round1((ingest.counts.requests * 2) / elapsed),
    snapshot_json_bytes_acknowledged_per_s: Math.round(ingest.counts.jsonBytes / elapsed),
    gzip_bytes_received_per_s: Math.round(ingest.counts.gzipBytes / elapsed),
    failed_requests: ingest.counts.failed,
    ack_p50_ms: round2(percentile(ingest.latencies, 0.5) ?? 0),
    ack_p99_ms: round2(percentile(ingest.latencies, 0.99) ?? 0),
    stored_bytes: storedBytes,
    stored_per_json_byte: round2(storedBytes / Math.max(1, ingest.counts.jsonBytes)),
    server_cpu_s_per_mb_json: round2(cpu / Math.max(1e-9, ingest.counts.jsonBytes / 1e6)),
    data_dir_mb: duMb(quill.dataDir),
  },
  long_recording: longRecording,
  flags: {
    connections: FLAG_CONNECTIONS,
    alone: { answers_per_s: round1(alone.length / SECONDS), p50_ms: round2(percentile(alone, 0.5) ?? 0), p99_ms: round2(percentile(alone, 0.99) ?? 0) },
    during_snapshots: { answers_per_s: round1(during.length / elapsed), p50_ms: round2(percentile(during, 0.5) ?? 0), p99_ms: round2(percentile(during, 0.99) ?? 0) },
  },
};
await quill.stop();
publishResult(doc, 'replay-latest.json', log);
