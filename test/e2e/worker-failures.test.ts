// A worker that throws answers that request with a 500 error body and the server keeps serving; a worker thread
// that dies is replaced, reopens its shards by itself, and nothing acknowledged is lost.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, logLines, PROJECT_KEY, quillForFile, removeDir, startQuill } from '../helpers/quill.js';

const server = quillForFile(t, { env: { QUILL_FAULT_INJECTION: '1' } });

t.test('an operation that throws gets a 500 body; the server keeps serving', async (t) => {
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${server.q.base}/_fault/throw`, { method: 'POST' });
    t.equal(res.status, 500);
    t.same(await res.json(), { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null });
  }
  t.equal((await fetch(`${server.q.base}/_health`)).status, 200);
  t.equal((await sendBatch(server.q.base, [event('after-throw', 'x')])).status, 200);
  t.equal((await storedEvents(server.api, 'after-throw')).length, 1);
});

t.test('a crashed worker thread is replaced and reopens its shards', async (t) => {
  const before = Array.from({ length: 40 }, (_, i) => event(`crash-${i}`, 'before'));
  t.equal((await sendBatch(server.q.base, before)).status, 200);
  // Crash workers until both have died at least once (requests are spread over them). Each crash is awaited:
  // the front reports that worker's death and its replacement thread reopens its shards before the next one.
  const occurrences = (text: string) => server.q.output().split(text).length - 1;
  const crashed: number[] = [];
  for (let i = 0; i < 8 && new Set(crashed).size < 2; i++) {
    const res = await fetch(`${server.q.base}/_fault/crash`, { method: 'POST' });
    t.equal(res.status, 202);
    const { crashing } = (await res.json()) as { crashing: number };
    crashed.push(crashing);
    const times = crashed.filter((w) => w === crashing).length;
    await eventually(`worker ${crashing}'s death #${times} reported`, () => occurrences(`worker ${crashing} died`) >= times, { intervalMs: 20 });
    await eventually(`worker ${crashing}'s replacement #${times} reopening its shards`, () => occurrences(`"component":"worker ${crashing}","msg":"replacement thread: reopening shards"`) >= times, { intervalMs: 20 });
  }
  t.same([...new Set(crashed)].sort(), [0, 1], `both workers crashed (in turn: ${crashed.join(', ')})`);
  for (const w of [0, 1]) {
    t.equal(occurrences(`worker ${w} died`), crashed.filter((c) => c === w).length, `worker ${w}: one death reported per injected crash, none other`);
  }
  const deadline = Date.now() + 20_000;
  let ok = false;
  while (!ok && Date.now() < deadline) {
    const res = await sendBatch(server.q.base, [event('crash-probe', 'probe')]).catch(() => null);
    ok = res?.status === 200;
    if (!ok) await new Promise((r) => setTimeout(r, 200));
  }
  t.ok(ok, 'ingestion works again after the crashes');
  const after = Array.from({ length: 40 }, (_, i) => event(`crash-${i}`, 'after'));
  t.equal((await sendBatch(server.q.base, after)).status, 200);
  let complete = 0;
  for (let i = 0; i < 40; i++) {
    const names = (await storedEvents(server.api, `crash-${i}`)).map((e) => e.event).sort();
    if (names.join() === 'after,before') complete++;
  }
  t.equal(complete, 40, 'every event acknowledged before and after the crashes is stored once');
  const flags = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'crash-1' });
  t.equal(flags.status, 200);
  t.equal((await server.api.post('/api/projects/@current/feature_flags/', { key: 'after-crash' })).status, 201);
});

t.test('a worker that keeps dying is restarted after a growing delay while the other serves', async (t) => {
  const occurrences = (text: string) => server.q.output().split(text).length - 1;
  const loopLines = () => logLines(server.q.output()).filter((l) => l.event === 'worker_crash_loop');
  const crashes = new Map<number, number>();
  for (let i = 0; i < 12 && loopLines().length === 0; i++) {
    const res = await fetch(`${server.q.base}/_fault/crash`, { method: 'POST' });
    t.equal(res.status, 202);
    const { crashing } = (await res.json()) as { crashing: number };
    crashes.set(crashing, (crashes.get(crashing) ?? 0) + 1);
    const deaths = occurrences(`worker ${crashing} died`);
    await eventually(`worker ${crashing}'s death reported`, () => occurrences(`worker ${crashing} died`) > deaths, { intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 150));
  }
  const line = loopLines()[0];
  t.ok(line, `a crash loop is reported (crashes per worker: ${JSON.stringify([...crashes])})`);
  t.ok(Number(line?.restart_in_ms) >= 1000, `its replacement is held back ${line?.restart_in_ms} ms`);
  const held = Number(line?.worker);
  // The other worker may have been crashed too on the way (the crashes alternate): its replacement, which is not
  // held back, must be serving before it can answer for both.
  const reopened = (w: number) => occurrences(`"component":"worker ${w}","msg":"replacement thread: reopening shards"`);
  for (const [w, n] of crashes) {
    if (w !== held) await eventually(`worker ${w} replaced after its ${n} crash(es)`, () => reopened(w) >= n, { intervalMs: 20 });
  }
  const flags = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'during-backoff' });
  t.equal(flags.status, 200, 'flags are answered while the replacement is held back');
  await eventually('the held-back worker is back', async () => {
    const res = await sendBatch(server.q.base, [event('after-loop', 'x')]).catch(() => null);
    return res?.status === 200 && occurrences(`"component":"worker ${held}","msg":"replacement thread: reopening shards"`) >= (crashes.get(held) ?? 1);
  }, { timeoutMs: 60_000, intervalMs: 200 });
  t.pass(`worker ${held} was replaced after the delay`);
});

t.test('fault injection is off by default', async (t) => {
  const plain = await startQuill();
  t.teardown(async () => {
    await plain.stop();
    removeDir(plain.dataDir);
  });
  for (const kind of ['crash', 'throw', 'pause-apply', 'resume-apply']) {
    const res = await fetch(`${plain.base}/_fault/${kind}`, { method: 'POST' });
    t.equal(res.status, 404, `/_fault/${kind} does not exist`);
    t.same(await res.json(), { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
  }
  t.equal((await fetch(`${plain.base}/_health`)).status, 200);
  t.notMatch(plain.output(), /died|injected/, 'no worker crashed or threw');
});
