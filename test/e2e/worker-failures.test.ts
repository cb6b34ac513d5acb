// A worker that throws answers that request with a 500 error body and the server keeps serving; a worker thread
// that dies is replaced, reopens its shards by itself, and nothing acknowledged is lost.
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, quillForFile, removeDir, startQuill } from '../helpers/quill.js';

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
  // Crash both workers (requests are spread over them), then keep using every feature.
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${server.q.base}/_fault/crash`, { method: 'POST' });
    t.equal(res.status, 202);
    await new Promise((r) => setTimeout(r, 300));
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

t.test('fault injection is off by default', async (t) => {
  const plain = await startQuill();
  t.teardown(async () => {
    await plain.stop();
    removeDir(plain.dataDir);
  });
  t.equal((await fetch(`${plain.base}/_fault/crash`, { method: 'POST' })).status, 404);
});
