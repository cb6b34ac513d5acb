// Micro-benchmark of the per-shard ingest log: ~4 KB records (a request's worth of events) appended by N concurrent
// appenders, with fdatasync on and off. Prints one JSON line per case.
//
//   npx tsc -p . && node dist/bench/ingest-log.bench.js
//
// QUILL_BENCH_DIR picks the directory (default: the OS temp dir, which here is on the data disk). Each case writes
// about 400 MB and removes it afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IngestLog } from '../src/stores/ingest-log/index.js';

interface Case {
  name: string;
  fsync: boolean;
  concurrency: number;
  records: number;
}

const CASES: Case[] = [
  { name: 'fsync-c32', fsync: true, concurrency: 32, records: 100_000 },
  { name: 'nofsync-c32', fsync: false, concurrency: 32, records: 100_000 },
  // One appender: every record pays a full write + fdatasync round trip (the latency floor of a lone request).
  { name: 'fsync-c1', fsync: true, concurrency: 1, records: 5_000 },
];

/** 64 distinct payloads of 3.5–4.5 KB, random bytes (incompressible, CRC does real work). */
function payloads(): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 64; i++) {
    const b = Buffer.allocUnsafe(3584 + ((i * 16) % 1024));
    for (let j = 0; j < b.length; j++) b[j] = (Math.random() * 256) | 0;
    out.push(b);
  }
  return out;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function runCase(c: Case, pool: Buffer[], baseDir: string): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(baseDir, `ingest-log-bench-${c.name}-`));
  try {
    const log = await IngestLog.open({ dir, fsync: c.fsync });
    const latencies = new Float64Array(c.records);
    let next = 0;
    let bytes = 0;
    const appender = async () => {
      for (;;) {
        const i = next++;
        if (i >= c.records) return;
        const p = pool[i % pool.length]!;
        bytes += p.length;
        const t0 = performance.now();
        await log.append(p);
        latencies[i] = performance.now() - t0;
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: c.concurrency }, appender));
    const seconds = (performance.now() - start) / 1000;
    const s = log.stats();
    await log.close();
    latencies.sort();
    return {
      bench: 'ingest-log',
      case: c.name,
      fsync: c.fsync,
      concurrency: c.concurrency,
      records: c.records,
      bytes,
      seconds: Number(seconds.toFixed(3)),
      records_s: Math.round(c.records / seconds),
      mb_s: Number((bytes / 1e6 / seconds).toFixed(1)),
      syncs: s.syncs,
      groups: s.groups,
      segments: s.segments,
      p50_ms: Number(percentile(latencies, 50).toFixed(3)),
      p99_ms: Number(percentile(latencies, 99).toFixed(3)),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const baseDir = process.env.QUILL_BENCH_DIR ?? tmpdir();
const pool = payloads();
for (const c of CASES) console.log(JSON.stringify(await runCase(c, pool, baseDir)));
