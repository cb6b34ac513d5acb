// SIGTERM with traffic: what config/README.md promises ("drains in-flight requests, flushes and closes the stores, and
// exits 0"). Requests the server had started handling when the signal arrived (proved by the interim
// `100 Continue` it sends once it has parsed a request head) finish with 200, whether their body was still
// streaming or their ingestion was still running, and their events are stored (checked after a restart on the
// same data directory). Requests arriving during the drain, on an open connection or a new one, get 503 with the
// error body, `/_health` too. The data-directory lock is released once the stores are closed, and the exit code
// is 0.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { event } from '../helpers/ingest.js';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, removeDir, startQuill } from '../helpers/quill.js';
import { head, RawConnection } from '../helpers/raw-http.js';

const STREAMED = 6;
const STREAMED_EVENTS = 300;
const LARGE = 3;
const LARGE_EVENTS = 500;

function batchBody(distinctId: string, n: number, blob = 0): string {
  const batch = Array.from({ length: n }, (_, i) => event(distinctId, 'drained', blob ? { i, blob: 'x'.repeat(blob) } : { i }));
  return JSON.stringify({ api_key: PROJECT_KEY, batch });
}

/** Sends a request head asking for `100 Continue` and resolves once the server answered it (it is handling the request). */
async function started(port: number, path: string, body: string): Promise<RawConnection> {
  const c = await RawConnection.open(port);
  c.write(head('POST', path, Buffer.byteLength(body), { 'Content-Type': 'application/json', Expect: '100-continue' }));
  const interim = await c.next();
  if (interim.status !== 100) throw new Error(`expected 100 Continue, got ${interim.status}`);
  return c;
}

t.test('SIGTERM drains requests in flight, refuses new ones with 503, closes the stores and exits 0', async (t) => {
  const q = await startQuill({ workers: 2 });
  t.teardown(() => removeDir(q.dataDir));
  const pidFile = join(q.dataDir, 'quill.pid');
  t.ok(existsSync(pidFile), 'the data directory is locked while running');

  const probe = await RawConnection.open(q.port);
  t.equal((await probe.request('GET', '/_health')).status, 200);

  // In flight when the signal arrives: bodies half sent, and large batches sent whole (their ingestion runs on).
  const streamed = await Promise.all(Array.from({ length: STREAMED }, async (_, c) => {
    const body = batchBody(`drain-s${c}`, STREAMED_EVENTS);
    const conn = await started(q.port, '/batch/', body);
    const half = Math.floor(body.length / 2);
    conn.write(body.slice(0, half));
    return { conn, rest: body.slice(half) };
  }));
  const large = await Promise.all(Array.from({ length: LARGE }, async (_, c) => {
    const body = batchBody(`drain-l${c}`, LARGE_EVENTS, 2000);
    const conn = await started(q.port, '/batch/', body);
    return { conn, body };
  }));
  for (const l of large) l.conn.write(l.body);
  const largeAnswers = large.map((l) => l.conn.next());

  const exited = q.stop('SIGTERM');
  await eventually('/_health to answer 503', async () => (await probe.request('GET', '/_health')).status === 503, { intervalMs: 10 });

  const health = await probe.request('GET', '/_health');
  t.equal(health.status, 503, '/_health answers 503 while draining');
  t.same(JSON.parse(health.body), { type: 'server_error', code: 'shutting_down', detail: 'Quill is shutting down.', attr: null });
  const fresh = await RawConnection.open(q.port).then((c) => c.request('GET', '/_health'), (e: Error) => ({ status: 0, body: e.message }));
  t.equal(fresh.status, 503, 'a new connection during the drain is answered 503, not refused');
  const refused = await probe.request('POST', '/batch/', batchBody('drain-refused', 5), { 'Content-Type': 'application/json' });
  t.equal(refused.status, 503, 'a request arriving during the drain gets 503');
  t.same(JSON.parse(refused.body), { type: 'server_error', code: 'shutting_down', detail: 'Quill is shutting down.', attr: null });

  // The rest of the streamed bodies arrive now, during the drain: those requests were in flight and complete.
  for (const s of streamed) s.conn.write(s.rest);
  const answers = await Promise.all([...streamed.map((s) => s.conn.next()), ...largeAnswers]);
  t.same(answers.map((a) => a.status), Array(STREAMED + LARGE).fill(200), 'every request in flight at SIGTERM got 200');
  t.same(answers.map((a) => JSON.parse(a.body)), Array(STREAMED + LARGE).fill({ status: 1 }));

  t.equal(await exited, 0, 'exit code 0');
  t.match(q.output(), /SIGTERM: draining[\s\S]*Quill stopped cleanly/);
  t.notOk(existsSync(pidFile), 'the stores were closed (the data-directory lock is released after them)');

  const again = await startQuill({ dataDir: q.dataDir });
  t.teardown(() => again.stop());
  const api = new Client(again.base);
  const count = async (distinctId: string) => {
    const res = await api.get(`/api/projects/@current/events/?distinct_id=${distinctId}&limit=1000`);
    return res.status === 200 ? res.body.results.length : -1;
  };
  for (let c = 0; c < STREAMED; c++) t.equal(await count(`drain-s${c}`), STREAMED_EVENTS, `streamed request ${c}: all events stored`);
  for (let c = 0; c < LARGE; c++) t.equal(await count(`drain-l${c}`), LARGE_EVENTS, `large request ${c}: all events stored`);
  t.equal(await count('drain-refused'), 0, 'the refused request stored nothing');
});

t.test('a stop does not wait for the whole backlog: what is left is applied at the next start', async (t) => {
  // The apply is held (fault injection) and the stop may apply for 0 s: the acknowledged events are still queued
  // when the stores close, so only the ingest logs hold them. A stop that drained the backlog first would leave
  // nothing to replay.
  const q = await startQuill({ workers: 2, env: { QUILL_FAULT_INJECTION: '1', QUILL_STOP_APPLY_SECONDS: '0' } });
  t.teardown(() => removeDir(q.dataDir));
  t.equal((await fetch(`${q.base}/_fault/pause-apply`, { method: 'POST' })).status, 200);
  const body = batchBody('left-queued', 400);
  const res = await fetch(`${q.base}/batch/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  t.equal(res.status, 200, 'acknowledged while the apply is held');
  const stats = await new Client(q.base).get('/_stats');
  t.equal(stats.body.shards.reduce((sum: number, s: { backlog: number }) => sum + s.backlog, 0), 400, 'all 400 events queued, none applied');
  t.equal(await q.stop('SIGTERM'), 0, 'exit code 0');
  t.match(q.output(), /Quill stopped cleanly/);

  const again = await startQuill({ dataDir: q.dataDir });
  t.teardown(() => again.stop());
  const replayed = [...again.output().matchAll(/replayed (\d+) logged events/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  t.equal(replayed, 400, 'the next start replays the 400 events the stop left queued');
  const stored = await new Client(again.base).get('/api/projects/@current/events/?distinct_id=left-queued&limit=1000');
  t.equal(stored.body.results.length, 400, 'and stores every one of them');
});
