// A poison record can never stall a worker, and a restart always recovers (issue 47). Three ways a record could
// poison a data directory for good, each followed by SIGKILL and restarts on the same directory:
//   - the attacker's shapes (a wide event, then 100,000 events of one distinct id in one request), killed right
//     after the acknowledgement: the restart replays them and applies them all;
//   - an event that kills the process whenever it is applied (an injected fault standing for a native crash): the
//     crash marker (src/worker/ingest/apply-marker.ts) retries the records it named, then one at a time (three
//     times, since a kill from outside may land in a record's turn by chance), then sets the one at fault aside, so
//     the fifth restart stays up;
//   - an event whose processing runs past the apply's budget (src/worker/ingest/apply-budget.ts): set aside with
//     the reason while the process keeps running.
// Every other acknowledged event is stored exactly once, and /flags/ answers after each recovery.
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const FAULTS = { QUILL_FAULT_INJECTION: '1' };

async function hogqlCount(api: Client, where: string): Promise<number> {
  const res = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE ${where}` } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.results[0][0] as number;
}

async function flagsAnswer(q: QuillProcess): Promise<number> {
  const res = await fetch(`${q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'after-restart' }) });
  return res.status;
}

/** Waits for the process to die of a signal (the injected kill); resolves with the signal. */
function died(q: QuillProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (q.proc.exitCode !== null || q.proc.signalCode !== null) return resolve(q.proc.signalCode);
    q.proc.once('exit', (_code, signal) => resolve(signal));
  });
}

t.test('the attacker\'s shapes, killed after the acknowledgement: the restart applies every event', async (t) => {
  let q = await startQuill({ workers: 2 });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const props: Record<string, number> = {};
  for (let i = 0; i < 9_000; i++) props[`p${i}`] = i;
  t.equal((await sendBatch(q.base, [event('o1', 'wide', props)])).status, 200);
  const many = await fetch(`${q.base}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: Array(100_000).fill({ event: 'many', distinct_id: 'om' }) }) });
  t.equal(many.status, 200);
  await q.stop('SIGKILL');
  q = await startQuill({ dataDir: q.dataDir, workers: 2 });
  t.equal(await flagsAnswer(q), 200, '/flags/ answers while the replay is applied');
  const api = new Client(q.base);
  t.equal(await hogqlCount(api, `distinct_id = 'om'`), 100_000, 'every small event, once');
  t.equal(await hogqlCount(api, `event = 'wide'`), 1, 'the wide event, once');
  const health = await eventually('no worker stalled', async () => ((await api.get('/_health')).body.status === 'ok' ? true : null));
  t.ok(health);
});

t.test('a record that kills the process each time it is applied is set aside at the fifth restart', async (t) => {
  let q = await startQuill({ workers: 2, env: FAULTS });
  const dataDir = q.dataDir;
  t.teardown(async () => {
    await q.stop();
    removeDir(dataDir);
  });
  const acked: string[] = [];
  const send = async (batch: ReturnType<typeof event>[]) => {
    const res = await sendBatch(q.base, batch).catch(() => null);
    if (res?.status === 200) acked.push(...batch.map((e) => e.uuid as string));
    return res?.status ?? 0;
  };
  for (let i = 0; i < 5; i++) t.equal(await send([event(`before-${i}`, 'before')]), 200);
  const dying = died(q);
  const killer = [event('victim', 'beside-1'), event('victim', 'killer', { $quill_fault: 'kill' }), event('victim', 'beside-2')];
  const killerStatus = await send(killer);
  t.equal(killerStatus, 200, 'the record holding the fault is acknowledged (its apply comes after)');
  // Requests acknowledged until the process dies; their events may share the chunk with the fault.
  for (let i = 0; i < 20 && q.proc.signalCode === null; i++) await send([event(`after-${i}`, 'after')]);
  t.equal(await dying, 'SIGKILL', 'the process died applying it');

  let deaths = 1;
  for (;;) {
    const started = await startQuill({ dataDir, workers: 2, env: FAULTS }).catch((error: Error) => error);
    if (started instanceof Error) {
      t.match(started.message, /exited with signal SIGKILL before listening/, `start ${deaths + 1} died of the fault while replaying`);
    } else {
      q = started;
      const api = new Client(q.base);
      // Applying everything the logs hold either completes or kills the process again.
      const outcome = await Promise.race([storedEvents(api, 'victim').then(() => 'applied' as const, () => 'died' as const), died(q).then(() => 'died' as const)]);
      if (outcome === 'applied') break;
    }
    deaths++;
    if (deaths > 6) break;
  }
  t.equal(deaths, 5, 'it died five times: in its chunk, in a chunk of suspects, three times alone');
  const api = new Client(q.base);
  t.equal(await flagsAnswer(q), 200, '/flags/ answers');
  const stored = new Set<string>();
  for (const id of ['victim', ...Array.from({ length: 5 }, (_, i) => `before-${i}`), ...Array.from({ length: 20 }, (_, i) => `after-${i}`)]) {
    for (const e of await storedEvents(api, id)) {
      t.notOk(stored.has(e.id), `event ${e.id} stored once`);
      stored.add(e.id);
    }
  }
  const killerUuids = new Set(killer.map((e) => e.uuid as string));
  t.same(acked.filter((u) => !killerUuids.has(u) && !stored.has(u)), [], 'every other acknowledged event is stored');
  t.same([...killerUuids].filter((u) => stored.has(u)), [], 'the record at fault is not applied');
  const letters = (await api.get('/_dead_letters')).body.results;
  const record = letters.find((l: any) => l.kind === 'record');
  t.match(record, { kind: 'record', team: 1, reason: /process stopped 5 times while applying this record \(3 events, \d+ bytes; 3 times while its own processing ran alone\)/ }, 'it is set aside whole, with the reason');
  t.ok(record.content.includes(killer[1]!.uuid as string), 'with what was sent');
});

t.test('an event whose apply passes the budget is set aside while the process keeps running', async (t) => {
  // A budget of 1 s (5 s by default) and an event that spins for 1.2 s: each attempt that holds the event runs it
  // whole (synchronous work cannot be cut short), the chunk, its half and the event alone, about 4 s in all.
  const q = await startQuill({ workers: 2, env: { ...FAULTS, QUILL_APPLY_BUDGET_S: '1' } });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  t.equal((await sendBatch(q.base, [event('slow', 'ok-1'), event('slow', 'spins', { $quill_fault: 'spin:1200' }), event('slow', 'ok-2')])).status, 200);
  const stored = await eventually('the events beside it', async () => {
    const events = await storedEvents(api, 'slow');
    return events.length === 2 ? events : null;
  }, { timeoutMs: 120_000, intervalMs: 500 });
  t.same(stored.map((e) => e.event).sort(), ['ok-1', 'ok-2'], 'the events beside it are stored');
  const letters = (await api.get('/_dead_letters')).body.results;
  t.match(letters, [{ kind: 'event', reason: /ApplyBudgetExceeded: the apply of one chunk passed its 1000 ms budget/ }], 'set aside with the reason');
  t.equal(await flagsAnswer(q), 200, '/flags/ answers');
  t.equal(q.proc.exitCode, null, 'the process kept running');
});
