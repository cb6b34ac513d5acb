// A start that is refused or fails exits 1 after its `start_failed` line, and never dies of a signal, however often
// it is tried: each way a start fails is tried QUILL_REFUSE_ROUNDS times in a row (default 2; `npm run
// soak:refusals` runs 200). A start refused while a worker thread was still loading used to abort the process
// (SIGABRT) about once in 40 tries: see workers/shard-worker.cts and closeAfterFailedStart in src/front/front.ts.
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { removeDir, runToEnd, startQuill, type Ending } from '../helpers/quill.js';
import { openEnv, openTable } from '../../src/stores/lmdb-env.js';

const ROUNDS = Number(process.env.QUILL_REFUSE_ROUNDS ?? 2);

/** How a run ended, for the tally: `exit 1`, `signal SIGABRT`, ... */
function ending(e: Ending): string {
  return e.signal ? `signal ${e.signal}` : `exit ${e.code}`;
}

interface Refusal {
  what: string;
  dataDir: string;
  /** The settings of round `i`. */
  env: (i: number) => Record<string, string>;
  /** What its `start_failed` line says (round `i`). */
  says: (i: number) => RegExp;
  /** Starts at a time (default 1). */
  concurrency?: number;
}

/** Every start must exit 1 after a `start_failed` line saying why; the tally by ending, and the first other run whole. */
async function tryInARow(r: Refusal): Promise<{ tally: Record<string, number>; unexpected?: { round: number; ending: string; output: string } }> {
  const tally: Record<string, number> = {};
  let unexpected: { round: number; ending: string; output: string } | undefined;
  const concurrency = r.concurrency ?? 1;
  for (let first = 0; first < ROUNDS; first += concurrency) {
    const rounds = Array.from({ length: Math.min(concurrency, ROUNDS - first) }, (_, k) => first + k);
    const ends = await Promise.all(rounds.map((i) => runToEnd({ dataDir: r.dataDir, env: r.env(i) })));
    ends.forEach((e, k) => {
      const said = /"event":"start_failed"/.test(e.output) && r.says(rounds[k]!).test(e.output);
      const key = e.code === 1 && !e.signal && !said ? 'exit 1 without its message' : ending(e);
      tally[key] = (tally[key] ?? 0) + 1;
      if (key !== 'exit 1') unexpected ??= { round: rounds[k]!, ending: key, output: e.output.slice(-6000) };
    });
  }
  return { tally, unexpected };
}

async function heldPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

t.test(`each way a start fails, ${ROUNDS} times in a row: exit 1 and the reason, never a signal`, async (t) => {
  // The holder listens on a port given by number, as a deployment's does (another Quill on it must be refused,
  // not share it); a plain socket of this process holds another.
  const portForHolder = await heldPort();
  portForHolder.server.close();
  const holder = await startQuill({ env: { QUILL_PORT: String(portForHolder.port) } });
  const other = await heldPort();
  const newer = await startQuill();
  const fresh = mkdtempSync(join(tmpdir(), 'quill-test-'));
  t.teardown(async () => {
    other.server.close();
    await holder.stop();
    for (const dir of [holder.dataDir, newer.dataDir, fresh]) removeDir(dir);
  });
  t.equal(await newer.stop(), 0);
  const env = openEnv(join(newer.dataDir, 'meta.mdb'));
  await env.transaction(() => openTable<unknown, string>(env, 'settings').put('format', { version: 3 }));
  await env.flushed;
  await env.close();

  const refusals: Refusal[] = [
    { what: 'an invalid setting (QUILL_WORKERS=abc)', dataDir: fresh, env: () => ({ QUILL_WORKERS: 'abc' }), says: () => /invalid configuration: QUILL_WORKERS must be integer/ },
    // Refused by worker 0 while worker 1 may still be loading.
    { what: 'a data directory of a newer format', dataDir: newer.dataDir, env: () => ({}), says: () => /format version 3, written by a newer Quill/ },
    // Each waits 5 s for the holder to go (LOCK_WAIT_MS), idle: five at a time.
    {
      what: 'a data directory held by a running Quill', dataDir: holder.dataDir, env: () => ({}), concurrency: 5,
      says: () => new RegExp(`data directory ${holder.dataDir} is in use by another Quill process \\(pid ${holder.proc.pid}\\)`),
    },
    // Refused once every worker thread runs (bootstrap, shards opened, logs replayed); taken by the holder or by the socket.
    {
      what: 'a port already taken', dataDir: fresh,
      env: (i) => ({ QUILL_PORT: String(i % 2 ? other.port : holder.port) }),
      says: (i) => new RegExp(`cannot listen on 127.0.0.1:${i % 2 ? other.port : holder.port} \\(QUILL_PORT\\)`),
    },
  ];
  // One after the other: a start costs seconds of CPU, and the other test files running beside this one start
  // servers too.
  for (const r of refusals) {
    const began = Date.now();
    const { tally, unexpected } = await tryInARow(r);
    t.comment(`${r.what}: ${ROUNDS} starts in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    t.same(tally, { 'exit 1': ROUNDS }, `${r.what}: ${ROUNDS} times exit 1 with its message, no signal`, unexpected ? { first_unexpected: unexpected } : {});
  }
  t.notOk(existsSync(join(fresh, 'quill.pid')), 'the starts refused after start-up closed their stores and released the data directory');
  t.equal((await fetch(`${holder.base}/_health`)).status, 200, 'the running Quill is untouched');
});
