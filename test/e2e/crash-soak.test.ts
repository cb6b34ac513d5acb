// Crash soak: SIGKILL at a random moment under mixed load — batches, single captures, identify merges
// and flag creations — round after round on one data directory; then one last start must hold every acknowledged
// event exactly once, every acknowledged merge (both distinct ids on one person), and every flag whose creation was
// answered 201, served by /flags/. `npm test` runs a few rounds; `npm run soak` runs QUILL_SOAK_ROUNDS (default
// 1,000). QUILL_SOAK_SEED replays a run (the seed is printed).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { Random } from '../helpers/fuzz.js';
import { event, personOf, sendBatch } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, type QuillProcess, removeDir, startQuill } from '../helpers/quill.js';

const ROUNDS = Number(process.env.QUILL_SOAK_ROUNDS ?? 2);
const SEED = Number(process.env.QUILL_SOAK_SEED ?? Date.now() % 2 ** 31);
// Bounded per round so that a thousand rounds stay checkable at the end (every merge and flag is read back).
const MERGES_PER_ROUND = 10;
const FLAGS_PER_ROUND = 3;

/** What the server acknowledged before a kill: the promises the last start must keep. */
interface Acknowledged {
  uuids: string[];
  merges: [anon: string, user: string][];
  flags: string[];
}

async function post(base: string, path: string, body: unknown): Promise<number> {
  try {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0; // the connection was cut by the kill: not acknowledged
  }
}

/** Four kinds of writers until `running()` turns false; each records only what was answered with success. */
function mixedLoad(q: QuillProcess, round: number, r: Random, ack: Acknowledged, running: () => boolean): Promise<unknown>[] {
  const batches = Array.from({ length: 2 }, async (_, c) => {
    for (let i = 0; running(); i++) {
      const batch = Array.from({ length: 10 }, (_, k) => event(`soak-${round}-${c}-${k % 4}`, 'soak', { round, i, k }));
      if ((await sendBatch(q.base, batch).then((res) => res.status, () => 0)) === 200) ack.uuids.push(...batch.map((e) => e.uuid));
    }
  });
  const captures = (async () => {
    for (let i = 0; running(); i++) {
      const e = event(`soak-capture-${round}-${i % 7}`, 'single');
      if (await post(q.base, '/capture/', { api_key: PROJECT_KEY, ...e }) === 200) ack.uuids.push(e.uuid);
    }
  })();
  // posthog-js's identify: the anonymous device's events first, then $identify naming the user, so the merge has a
  // person on each side (their distinct ids usually live on different shards).
  const merges = (async () => {
    for (let i = 0; running() && i < MERGES_PER_ROUND; i++) {
      const anon = `anon-${round}-${i}-${r.int(0, 1e9)}`;
      const user = `user-${r.int(0, 40)}`;
      const seen = event(anon, '$pageview');
      if (await post(q.base, '/capture/', { api_key: PROJECT_KEY, ...seen }) !== 200) continue;
      ack.uuids.push(seen.uuid);
      const identify = event(user, '$identify', { $anon_distinct_id: anon });
      if (await post(q.base, '/capture/', { api_key: PROJECT_KEY, ...identify }) === 200) {
        ack.uuids.push(identify.uuid);
        ack.merges.push([anon, user]);
      }
    }
  })();
  const flags = (async () => {
    const api = new Client(q.base);
    for (let i = 0; running() && i < FLAGS_PER_ROUND; i++) {
      const key = `soak-${round}-${i}`;
      const res = await api.post('/api/projects/@current/feature_flags/', { key, active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }).catch(() => null);
      if (res?.status === 201) ack.flags.push(key);
    }
  })();
  return [...batches, captures, merges, flags];
}

async function drained(q: QuillProcess): Promise<void> {
  await eventually('every shard to apply its backlog', async () => {
    const res = await new Client(q.base).get('/_stats');
    return res.status === 200 && res.body.shards.every((s: { backlog: number }) => s.backlog === 0);
  }, { timeoutMs: 300_000, intervalMs: 200 });
}

t.test(`${ROUNDS} kill -9 rounds under mixed load (seed ${SEED})`, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-soak-'));
  // A failed soak keeps its data directory: what a start-up that died left behind is the evidence.
  t.teardown(() => (t.passing() ? removeDir(dataDir) : console.error(`crash soak failed; data directory kept: ${dataDir}`)));
  const r = new Random(SEED);
  const ack: Acknowledged = { uuids: [], merges: [], flags: [] };
  let killsWithWork = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const q = await startQuill({ dataDir });
    let running = true;
    const before = ack.uuids.length + ack.flags.length;
    const loops = mixedLoad(q, round, r, ack, () => running);
    // Anywhere from the first requests to well into the load; the kill lands mid-request most of the time.
    await new Promise((res) => setTimeout(res, r.int(50, 1500)));
    const killed = q.stop('SIGKILL');
    running = false;
    await Promise.all(loops);
    await killed;
    if (ack.uuids.length + ack.flags.length > before) killsWithWork++;
    if (ROUNDS > 20 && round % 50 === 49) t.comment(`round ${round + 1}: ${ack.uuids.length} events, ${ack.merges.length} merges, ${ack.flags.length} flags acknowledged`);
  }
  t.ok(killsWithWork >= Math.ceil(ROUNDS / 2), `${killsWithWork} of ${ROUNDS} kills came after acknowledged writes`);

  const q = await startQuill({ dataDir });
  t.teardown(() => q.stop());
  await drained(q);
  const api = new Client(q.base);

  // Counted page by page: millions of events held at once kept the test's event loop busy long enough (collecting
  // them) for the server to close the idle keep-alive socket the next request then took ("other side closed").
  const counts = new Map<string, number>();
  for (let path: string | null = '/api/projects/@current/events/?after=2000-01-01&limit=1000'; path !== null;) {
    const page = await api.get(path);
    if (page.status !== 200) throw new Error(`events list: ${page.status} ${page.text}`);
    for (const e of page.body.results as { id: string }[]) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
    path = page.body.next === null ? null : page.body.next.slice(api.base.length);
  }
  const lost = ack.uuids.filter((id) => !counts.has(id));
  // Where the lost ones went, if anywhere: set aside by the apply, with its reason.
  const letters = lost.length === 0 ? [] : ((await api.get('/_dead_letters')).body.results as { kind: string; reason: string }[]);
  t.equal(lost.length, 0, `every one of ${ack.uuids.length} acknowledged events is stored${lost.length ? ` (lost e.g. ${lost.slice(0, 3).join(', ')}; dead letters: ${JSON.stringify(letters.map((l) => [l.kind, l.reason]))})` : ''}`);
  t.equal([...counts.values()].filter((n) => n > 1).length, 0, `none of ${counts.size} stored events is stored twice`);

  let split = 0;
  for (const [anon, user] of ack.merges) {
    const [a, u] = [await personOf(api, anon), await personOf(api, user)];
    if (!a || !u || a.uuid !== u.uuid || !u.distinct_ids.includes(anon)) split++;
  }
  t.equal(split, 0, `each of ${ack.merges.length} acknowledged merges left both distinct ids on one person`);

  const stored = new Set<string>();
  for (let path: string | null = '/api/projects/@current/feature_flags/?limit=200'; path !== null;) {
    const page = await api.get(path);
    if (page.status !== 200) throw new Error(`flags list: ${page.status} ${page.text}`);
    for (const f of page.body.results as { key: string }[]) stored.add(f.key);
    path = page.body.next ? page.body.next.slice(api.base.length) : null;
  }
  t.same(ack.flags.filter((k) => !stored.has(k)), [], `each of ${ack.flags.length} flags answered 201 exists`);
  const flags = await fetch(`${q.base}/flags/?v=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone' }) }).then((res) => res.json()) as { flags: Record<string, { enabled: boolean }> };
  t.same(ack.flags.filter((k) => flags.flags[k]?.enabled !== true), [], 'and /flags/ serves each of them, enabled');
});
