// What a 200 from /s/ means: every snapshot chunk it acknowledged survives a kill -9 at any moment and is stored
// once (a retry of an acknowledged request after the restart adds nothing).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Client, type QuillProcess, removeDir, startQuill } from '../helpers/quill.js';
import { runBackupCli } from '../helpers/backup.js';
import { postSnapshots, RECORDINGS, rr, snapshot, snapshotLines } from '../helpers/recordings.js';

const SESSIONS = Array.from({ length: 12 }, (_, i) => `durable-session-${i}-${randomUUID()}`);

/** Concurrent loops posting two chunks a request (half of them gzipped) until stopped; the markers of acknowledged ones. */
function load(q: QuillProcess, connections: number) {
  const acked: string[] = [];
  const ackedRequests: unknown[][] = [];
  let running = true;
  const loops = Array.from({ length: connections }, async (_, c) => {
    for (let i = 0; running; i++) {
      const items = [0, 1].map((k) => {
        const marker = randomUUID();
        const ts = Date.now();
        return { marker, item: snapshot(SESSIONS[(c * 7 + i * 2 + k) % SESSIONS.length]!, `visitor-${c}`, [rr.marker(ts, marker), rr.click(ts + 1)], `window-${c}`) };
      });
      try {
        const res = await postSnapshots(q.base, items.map((x) => x.item), { plain: i % 2 === 0 });
        if (res.status === 200) {
          acked.push(...items.map((x) => x.marker));
          if (ackedRequests.length < 20) ackedRequests.push(items.map((x) => x.item));
        }
      } catch {
        /* cut by the kill: not acknowledged */
      }
    }
  });
  return { acked, ackedRequests, stop: async () => { running = false; await Promise.all(loops); } };
}

/** How many times each marker is stored, over every session. */
async function storedMarkers(api: Client): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const session of SESSIONS) {
    const exists = await api.get(`${RECORDINGS}/${session}/`);
    if (exists.status === 404) continue;
    for (const [, e] of await snapshotLines(api, session)) {
      const id = (e.data as { tag?: string; payload?: { id?: string } })?.payload?.id;
      if (e.type === 5 && id) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

t.test('kill -9 while snapshots are in flight loses no acknowledged chunk and duplicates none', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-rec-kill9-'));
  t.teardown(() => removeDir(dataDir));
  const acked: string[] = [];
  const someRequests: unknown[][] = [];
  for (let round = 0; round < 3; round++) {
    const q = await startQuill({ dataDir });
    const l = load(q, 8);
    await new Promise((r) => setTimeout(r, 700 + round * 300));
    const killed = q.stop('SIGKILL');
    await l.stop();
    await killed;
    acked.push(...l.acked);
    someRequests.push(...l.ackedRequests.slice(0, 5));
    t.ok(l.acked.length > 0, `round ${round}: ${l.acked.length} chunks acknowledged before the kill`);
  }
  const q = await startQuill({ dataDir });
  t.teardown(() => q.stop());
  const api = new Client(q.base);
  const counts = await storedMarkers(api);
  const lost = acked.filter((m) => !counts.has(m));
  const duplicated = [...counts.values()].filter((n) => n > 1).length;
  t.equal(lost.length, 0, `all ${acked.length} acknowledged chunks are stored`);
  t.equal(duplicated, 0, 'none is stored twice');
  const before = [...counts.values()].reduce((a, b) => a + b, 0);
  for (const items of someRequests) t.equal((await postSnapshots(q.base, items)).status, 200);
  const after = await storedMarkers(api);
  t.equal([...after.values()].reduce((a, b) => a + b, 0), before, 'an SDK retry of acknowledged requests after the restart adds nothing');
  // The metadata agrees with the chunks: each session's chunk count is the number of blobs it lists.
  for (const session of SESSIONS.slice(0, 3)) {
    const rec = await api.get(`${RECORDINGS}/${session}/`);
    if (rec.status !== 200) continue;
    const sources = (await api.get(`${RECORDINGS}/${session}/snapshots`)).body.sources;
    t.equal(rec.body.storage.chunks, sources.length, `${session.slice(0, 20)}…: metadata and chunks agree`);
  }
});

t.test('a backup holds the recordings: a server started on the copy serves them', async (t) => {
  const q = await startQuill();
  const copy = mkdtempSync(join(tmpdir(), 'quill-rec-backup-'));
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
    removeDir(copy);
  });
  const session = `backed-up-${randomUUID()}`;
  const ts = Date.now() - 10_000;
  t.equal((await postSnapshots(q.base, [snapshot(session, 'vera', [rr.meta(ts, 'https://backup.test/'), rr.click(ts + 2_000)])])).status, 200);
  // The CLI writes into a new or empty directory.
  removeDir(copy);
  const cli = await runBackupCli(q.dataDir, copy);
  t.equal(cli.code, 0, cli.out.slice(-500));
  const restored = await startQuill({ dataDir: copy });
  t.teardown(() => restored.stop());
  const rec = await new Client(restored.base).get(`${RECORDINGS}/${session}/`);
  t.match({ status: rec.status, body: rec.body }, { status: 200, body: { id: session, start_url: 'https://backup.test/', recording_duration: 2, click_count: 1 } });
  t.equal((await snapshotLines(new Client(restored.base), session)).length, 2, 'its snapshots too');
});
