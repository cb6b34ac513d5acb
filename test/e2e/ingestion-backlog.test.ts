// The backlog bound (README: "new requests waiting once 4 million events are behind"), with a test-only bound of
// 100 events (QUILL_BACKLOG_HIGH) and the apply loops stopped by fault injection, so the backlog stays where the
// test put it: requests are acknowledged while the backlog is within the bound; a request arriving beyond it is
// logged but not answered until the backlog has shrunk, and then answered 200 with its events stored.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { quillForFile } from '../helpers/quill.js';

const BOUND = 100;
const server = quillForFile(t, { workers: 1, env: { QUILL_FAULT_INJECTION: '1', QUILL_BACKLOG_HIGH: String(BOUND) } });

const batchOf = (distinctId: string, n: number) => Array.from({ length: n }, (_, i) => event(distinctId, 'backlog', { i }));

async function shardStats(): Promise<{ backlog: number; waitingRequests: number; appliedEvents: number }> {
  const res = await server.api.get('/_stats');
  if (res.status !== 200) throw new Error(`/_stats: ${res.status} ${res.text}`);
  return res.body.shards[0];
}

async function fault(kind: string): Promise<void> {
  const res = await fetch(`${server.q.base}/_fault/${kind}`, { method: 'POST' });
  if (res.status !== 200) throw new Error(`/_fault/${kind}: ${res.status}`);
}

t.test('requests wait while more events than the bound are waiting to be applied', async (t) => {
  await fault('pause-apply');
  t.equal((await sendBatch(server.q.base, batchOf('backlog-a', 80))).status, 200, 'within the bound: acknowledged');
  t.equal((await sendBatch(server.q.base, batchOf('backlog-b', 80))).status, 200, 'the backlog (80) was within the bound: acknowledged');
  t.match(await shardStats(), { backlog: 160, waitingRequests: 0, appliedEvents: 0 }, 'nothing applied while paused');

  let answeredWhilePaused = true;
  const late = sendBatch(server.q.base, batchOf('backlog-c', 10)).then((res) => ({ status: res.status, whilePaused: answeredWhilePaused }));
  await eventually('the third request to wait for the backlog', async () => (await shardStats()).waitingRequests === 1, { intervalMs: 20 });
  t.equal((await shardStats()).backlog, 160, 'the waiting request has not published its events');

  answeredWhilePaused = false;
  await fault('resume-apply');
  const answer = await late;
  t.same(answer, { status: 200, whilePaused: false }, 'answered 200, only once the apply resumed');
  t.equal((await storedEvents(server.api, 'backlog-a')).length, 80);
  t.equal((await storedEvents(server.api, 'backlog-b')).length, 80);
  t.equal((await storedEvents(server.api, 'backlog-c')).length, 10, 'the events of the request that waited are stored');
  t.match(await shardStats(), { backlog: 0, waitingRequests: 0, appliedEvents: 170 });
});
