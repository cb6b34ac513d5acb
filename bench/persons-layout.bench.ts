// What a persons layout would buy the apply, measured on LMDB alone (no Quill): two writer threads, as the two shard
// workers, each writing new persons (a distinct-id row and a uuid row under random keys, a person row under a
// sequential id, the shapes src/worker/ingest/person-processor.ts writes) in transactions of CHUNK persons, with
// lmdb-js' default (overlappingSync) commits, as Quill opens its environments (src/stores/lmdb-env.ts).
//
//   npm run build && node dist/bench/persons-layout.bench.js
//
// Layouts, run one after the other in one invocation (the first is the baseline: Quill's layout today):
// - shared: one persons environment both threads commit through (its write lock serialises them);
// - per-shard: one environment per thread (what per-shard persons would give, before any cross-shard merge cost);
// - recent-then-merge: the shared environment, but new distinct-id and uuid rows go to a small "recent" table that a
//   sorted pass moves into the large tables every MERGE_EVERY persons (new keys appended, merged in the background).
// Prints one JSON document: wall and CPU seconds per layout, and µs of CPU per person.
// QUILL_BENCH_PERSONS (per thread, default 1,000,000), QUILL_BENCH_CHUNK (default 2,000), QUILL_BENCH_DIR.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { openEnv, openJsonTable, openTable } from '../src/stores/lmdb-env.js';
import { commit, machine } from './lib/machine.js';

type Layout = 'shared' | 'per-shard' | 'recent-then-merge';
const LAYOUTS: Layout[] = ['shared', 'per-shard', 'recent-then-merge'];
const PERSONS = Number(process.env.QUILL_BENCH_PERSONS ?? 1_000_000);
const CHUNK = Number(process.env.QUILL_BENCH_CHUNK ?? 2_000);
const MERGE_EVERY = 100_000;

interface Job {
  thread: number;
  path: string;
  layout: Layout;
}

async function writer({ thread, path, layout }: Job): Promise<void> {
  const env = openEnv(path);
  const distinctIds = openTable<number>(env, 'distinct_ids');
  const uuids = openTable<number>(env, 'person_uuids');
  const recentIds = openTable<number>(env, 'recent_distinct_ids');
  const recentUuids = openTable<number>(env, 'recent_person_uuids');
  const persons = openJsonTable(env, 'persons_json');
  const recent = layout === 'recent-then-merge';
  let sinceMerge = 0;
  for (let i = 0; i < PERSONS; i += CHUNK) {
    const batch: [string, string, number][] = [];
    for (let j = i; j < i + CHUNK; j++) {
      const h = createHash('sha1').update(`${thread}:${j}`).digest('hex');
      batch.push([h.slice(0, 20), `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`, thread * PERSONS + j + 1]);
    }
    await env.transaction(() => {
      for (const [distinctId, uuid, id] of batch) {
        const idTable = recent ? recentIds : distinctIds;
        if ((recent && recentIds.get([1, distinctId]) !== undefined) || distinctIds.get([1, distinctId]) !== undefined) continue;
        idTable.put([1, distinctId], id);
        (recent ? recentUuids : uuids).put([1, uuid], id);
        persons.put([1, id], {
          id, team: 1, uuid, properties: { $initial_browser: 'Chrome', $initial_os: 'Mac OS X', plan: 'free' },
          created_at: '2026-11-28T00:00:00.000Z', is_identified: false, version: 0, distinct_ids: [distinctId],
        });
      }
    });
    sinceMerge += CHUNK;
    if (recent && sinceMerge >= MERGE_EVERY) {
      sinceMerge = 0;
      await env.transaction(() => {
        for (const [small, large] of [[recentIds, distinctIds], [recentUuids, uuids]] as const) {
          for (const { key, value } of small.getRange({})) {
            large.put(key, value);
            small.remove(key);
          }
        }
      });
    }
  }
  await env.flushed;
  await env.close();
}

function cpuSeconds(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
}

async function run(layout: Layout, dir: string): Promise<Record<string, unknown>> {
  const started = performance.now();
  const cpu0 = cpuSeconds();
  await Promise.all([0, 1].map((thread) => new Promise<void>((resolve, reject) => {
    const path = join(dir, layout, layout === 'per-shard' ? `persons-${thread}` : 'persons');
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { thread, path, layout } satisfies Job });
    w.once('error', reject);
    w.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
  })));
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSeconds() - cpu0;
  return { layout, wall_s: round(wall), cpu_s: round(cpu), persons_per_s: Math.round((2 * PERSONS) / wall), cpu_us_per_person: round((cpu * 1e6) / (2 * PERSONS)) };
}

const round = (x: number) => Math.round(x * 10) / 10;

if (isMainThread) {
  const dir = mkdtempSync(join(process.env.QUILL_BENCH_DIR ?? tmpdir(), 'quill-persons-layout-'));
  try {
    const results: Record<string, unknown>[] = [];
    for (const layout of LAYOUTS) {
      process.stderr.write(`[persons-layout] ${layout}…\n`);
      results.push(await run(layout, dir));
    }
    const base = results[0]!;
    for (const r of results) r.cpu_vs_shared = round((r.cpu_s as number) / (base.cpu_s as number) * 100) / 100;
    console.log(JSON.stringify({ machine: machine(), commit: commit(), persons_per_thread: PERSONS, chunk: CHUNK, merge_every: MERGE_EVERY, results }, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  await writer(workerData as Job);
  parentPort?.close();
}
