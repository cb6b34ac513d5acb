// What a 200 means: every acknowledged event survives `kill -9` at any moment and is stored exactly once after a
// restart (the ingest log is replayed); a full disk gives 503, never a false 200.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { allEvents, event, sendBatch } from '../helpers/ingest.js';
import { Client, type QuillProcess, removeDir, startQuill } from '../helpers/quill.js';
import { missing } from '../helpers/required-environment.js';
import { mountTmpfs } from '../helpers/tmpfs.js';

/** Waits until every shard applied what it holds: reads wait for applied events only so long (10 s). */
async function applied(q: QuillProcess): Promise<void> {
  for (;;) {
    const res = await new Client(q.base).get('/_stats');
    if (res.status !== 200) throw new Error(`/_stats: ${res.status} ${res.text}`);
    if (res.body.shards.every((s: { backlog: number }) => s.backlog === 0)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function allEventIds(q: QuillProcess): Promise<string[]> {
  await applied(q);
  return (await allEvents(new Client(q.base), 'after=2000-01-01')).map((e: { id: string }) => e.id);
}

/** Every event of the project as the analytics engine counts them (a one-number trend over all time). */
async function analyzedEvents(q: QuillProcess): Promise<number> {
  const params = `events=${encodeURIComponent('[{"id":null}]')}&date_from=all&display=BoldNumber&refresh=true`;
  const res = await new Client(q.base).get(`/api/projects/@current/insights/trend/?${params}`);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.result[0].aggregated_value;
}

/** Sends batches from `connections` concurrent loops until stopped; returns the uuids of acknowledged batches. */
function load(q: QuillProcess, connections: number, prefix: string) {
  const acked: string[] = [];
  const ackedBatches: unknown[][] = [];
  let failed = 0;
  let running = true;
  const loops = Array.from({ length: connections }, async (_, c) => {
    for (let i = 0; running; i++) {
      const batch = Array.from({ length: 20 }, (_, k) => event(`${prefix}-${c}-${k % 5}`, 'durable', { i, k }));
      try {
        const res = await sendBatch(q.base, batch);
        if (res.status === 200) {
          acked.push(...batch.map((e) => e.uuid));
          ackedBatches.push(batch);
        }
        else failed++;
      } catch {
        failed++; // connection cut by the kill: not acknowledged
      }
    }
  });
  return { acked, ackedBatches, stop: async () => { running = false; await Promise.all(loops); }, failed: () => failed };
}

t.test('kill -9 while batches are in flight loses no acknowledged event and duplicates none', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-kill9-'));
  t.teardown(() => removeDir(dataDir));
  const acked: string[] = [];
  const someBatches: unknown[][] = [];
  for (let round = 0; round < 3; round++) {
    const q = await startQuill({ dataDir });
    const l = load(q, 16, `kill${round}`);
    await new Promise((r) => setTimeout(r, 800 + round * 300));
    const killed = q.stop('SIGKILL');
    await l.stop();
    await killed;
    acked.push(...l.acked);
    someBatches.push(...l.ackedBatches.slice(0, 3));
    t.ok(l.acked.length > 0, `round ${round}: ${l.acked.length} events acknowledged before the kill`);
  }
  const q = await startQuill({ dataDir });
  t.teardown(() => q.stop());
  // The restart replays every log; a read waits for that apply only up to its bound (10 s, src/README.md "Reads after
  // writes"), which a loaded machine can exceed with tens of thousands of events: wait until nothing is behind.
  await eventually('the replayed events to be applied', async () => {
    const res = await new Client(q.base).get('/_stats');
    return res.status === 200 && res.body.shards.every((s: { backlog: number }) => s.backlog === 0);
  }, { timeoutMs: 120_000, intervalMs: 200 });
  const ids = await allEventIds(q);
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  const lost = acked.filter((id) => !counts.has(id));
  const duplicated = [...counts.entries()].filter(([, n]) => n > 1);
  t.equal(lost.length, 0, `all ${acked.length} acknowledged events are stored`);
  t.equal(duplicated.length, 0, 'none is stored twice');
  // The analytics layout holds exactly the stored events: its open blocks are written with the rows.
  t.equal(await analyzedEvents(q), ids.length, 'the scan layout counts every stored event once');
  // An SDK retry of acknowledged batches (the same events, the same uuids) after the restart adds nothing.
  for (const batch of someBatches) t.equal((await sendBatch(q.base, batch)).status, 200);
  t.equal((await allEventIds(q)).length, ids.length, 'an SDK retry after restart adds nothing');
});

t.test('disk full: 503 and never a false 200; acknowledged events survive', async (t) => {
  const fs = mountTmpfs('24m', 'quill-full-');
  if (typeof fs === 'string') return missing(t, 'tmpfs', 'the disk-full test', fs);
  t.teardown(() => fs.unmount());
  const dir = fs.dir;
  const q = await startQuill({ dataDir: dir });
  const l = load(q, 8, 'full');
  // Fill the file system: big events fill the logs and the stores until writes fail. Filler batches that are
  // acknowledged count like any other.
  const bigBatch = () => Array.from({ length: 10 }, () => event('filler', 'blob', { blob: 'z'.repeat(20_000) }));
  const filler = (async () => {
    for (let i = 0; i < 400; i++) {
      const batch = bigBatch();
      const res = await sendBatch(q.base, batch).catch(() => null);
      if (res?.status === 200) l.acked.push(...batch.map((e) => e.uuid));
      if (res?.status === 503) return true;
    }
    return false;
  })();
  const saw503 = await filler;
  await l.stop();
  t.teardown(() => {
    if (process.env.QUILL_TEST_DUMP) console.error(q.output());
  });
  t.ok(saw503, 'a full disk answers 503');
  // Each worker logs into its own shard, and a log may still have preallocated room after another one refused:
  // keep sending until every shard refuses, five times in a row. Whatever is acknowledged meanwhile is real.
  let refusedInARow = 0;
  let refusal: unknown = null;
  for (let i = 0; i < 200 && refusedInARow < 5; i++) {
    const batch = bigBatch();
    const res = await sendBatch(q.base, batch);
    if (res.status === 200) {
      l.acked.push(...batch.map((e) => e.uuid));
      refusedInARow = 0;
    } else {
      refusal = { status: res.status, body: await res.json() };
      refusedInARow++;
    }
  }
  t.equal(refusedInARow, 5, 'and keeps answering 503 while the disk is full');
  t.match(refusal, { status: 503, body: { type: 'server_error', code: 'storage_unavailable' } });
  // Private-API writes on the full disk: refused with the same 503 (never a 201 for a flag that is not stored),
  // and the server keeps answering.
  const api = new Client(q.base);
  const flag = await api.post('/api/projects/@current/feature_flags/', { key: 'on-a-full-disk', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  t.comment(`flag creation on a full disk: ${flag.status} ${flag.text.slice(0, 200)}`);
  const flagStored = flag.status === 201;
  if (!flagStored) t.match({ status: flag.status, body: flag.body }, { status: 503, body: { type: 'server_error', code: 'storage_unavailable' } }, 'a flag creation on a full disk is a 503');
  t.equal((await api.get('/_health')).status, 200, 'the server still answers');
  await q.stop('SIGKILL');
  // Give the file system room again and restart: every acknowledged event is there.
  fs.resize('256m');
  const again = await startQuill({ dataDir: dir });
  t.teardown(() => again.stop());
  const ids = new Set(await allEventIds(again));
  const lost = l.acked.filter((id) => !ids.has(id));
  t.equal(lost.length, 0, `all ${l.acked.length} acknowledged events survived the full disk`);
  t.equal((await sendBatch(again.base, [event('after-space', 'x')])).status, 200, 'writes succeed again once there is space');
  const flags = await new Client(again.base).get('/api/projects/@current/feature_flags/');
  t.equal(flags.body.results.some((f: { key: string }) => f.key === 'on-a-full-disk'), flagStored, 'the flag exists exactly when its creation was answered 201');
  t.equal((await new Client(again.base).post('/api/projects/@current/feature_flags/', { key: 'after-space', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).status, 201, 'flag writes succeed again too');
});
