// The shape fuzzer (issue 47): seeded capture requests across every dimension a public-key client controls
// (test/helpers/shape-fuzz.ts: width, depth, key and value length, events per batch, names no other event has,
// unicode, encodings) against the real server. After every case: the answer is 200, 400 or 413 with the error
// shape, each worker is beating again (heartbeat under 1 s) within a bounded wait, `/flags/` answers, the process's
// memory stays bounded; at the end every ordinary event acknowledged beside the shaped ones is stored exactly once,
// and a restart after SIGKILL recovers with all of them. The seed is printed: QUILL_SHAPE_FUZZ_SEED replays a run,
// QUILL_SHAPE_FUZZ_CASES sets how many (default 10 in the suite; `npm run soak:shapes` runs 200).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { Random } from '../helpers/fuzz.js';
import { shapeCase } from '../helpers/shape-fuzz.js';
import { Client, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const SEED = process.env.QUILL_SHAPE_FUZZ_SEED ? Number(process.env.QUILL_SHAPE_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const CASES = Number(process.env.QUILL_SHAPE_FUZZ_CASES ?? 10);
const REPLAY = `seed ${SEED} (replay: QUILL_SHAPE_FUZZ_SEED=${SEED})`;
/** The process's resident memory may not pass this (it was 5-11 GB and growing before the bounds). */
const MEMORY_BOUND_MB = 2048;

function residentMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

async function flagsLatencies(q: QuillProcess, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const res = await fetch(`${q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: `flags-${i}` }) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/flags/ answered ${res.status}`);
    out.push(performance.now() - start);
  }
  return out.sort((a, b) => a - b);
}

t.test(`public input of every shape leaves the node serving and loses nothing acknowledged, ${REPLAY}`, async (t) => {
  t.comment(`shape fuzz ${REPLAY}, ${CASES} cases`);
  let q = await startQuill({ workers: 2 });
  t.teardown(async () => {
    if (process.env.QUILL_TEST_DUMP) console.error(q.output());
    await q.stop();
    removeDir(q.dataDir);
  });
  const r = new Random(SEED);
  const acknowledged: string[] = [];
  const statuses: Record<string, number> = {};
  let worstFlagsP99 = 0;
  for (let c = 0; c < CASES; c++) {
    const shape = shapeCase(r, c, PROJECT_KEY);
    const label = `case ${c} (${shape.note}), ${REPLAY}`;
    const res = await fetch(q.base + shape.path, { method: 'POST', headers: shape.headers, body: shape.body });
    const body = await res.text();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (![200, 400, 413].includes(res.status)) t.fail(`${label}: answered ${res.status} ${body.slice(0, 300)}`);
    if (res.status === 200) acknowledged.push(...shape.markers);
    else t.match(JSON.parse(body), { type: String, code: String, detail: String }, `${label}: the error shape`);

    await eventually(`${label}: every worker beating within 1 s`, async () => {
      const health = await fetch(`${q.base}/_health`).then((h) => h.json()) as { workers: { heartbeat_age_ms: number }[] };
      return health.workers.every((w) => w.heartbeat_age_ms < 1000);
    }, { timeoutMs: 30_000, intervalMs: 50 });
    const flags = await flagsLatencies(q, 20);
    worstFlagsP99 = Math.max(worstFlagsP99, flags[flags.length - 1]!);
    const rss = residentMb(q.proc.pid!);
    if (rss > MEMORY_BOUND_MB) t.fail(`${label}: resident memory ${Math.round(rss)} MB past ${MEMORY_BOUND_MB} MB`);
  }
  t.comment(`answers ${JSON.stringify(statuses)}; the slowest /flags/ answer after a case: ${worstFlagsP99.toFixed(1)} ms`);
  t.ok(acknowledged.length > 0, 'some requests were acknowledged');

  const stored = async () => {
    const res = await new Client(q.base).post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: "SELECT uuid FROM events WHERE event = 'marker' LIMIT 100000" } });
    if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
    return (res.body.results as string[][]).map((row) => row[0]!);
  };
  const check = async (when: string) => {
    const uuids = await stored();
    const seen = new Set(uuids);
    t.equal(uuids.length, seen.size, `${when}: no ordinary event stored twice (${REPLAY})`);
    t.same(acknowledged.filter((u) => !seen.has(u)), [], `${when}: every acknowledged ordinary event stored (${REPLAY})`);
  };
  await check('running');

  await q.stop('SIGKILL');
  const started = performance.now();
  q = await startQuill({ dataDir: q.dataDir, workers: 2 });
  const flags = await fetch(`${q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'after' }) });
  t.equal(flags.status, 200, '/flags/ answers after the restart');
  t.comment(`restart after SIGKILL: listening and answering /flags/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await check('after a restart on SIGKILL');
});
