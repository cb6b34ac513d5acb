// The backlog bound and back-pressure, with a test-only bound of 100 events (QUILL_BACKLOG_HIGH) and the apply
// loops stopped by fault injection, so the backlog stays where the test put it: requests are acknowledged while the
// backlog is within the bound; a request arriving beyond it is refused with 503 and Retry-After before anything is
// written (PostHog's SDKs retry it), and accepted again once the backlog has been applied. Nothing acknowledged is
// lost.
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

t.test('beyond the bound new requests get 503 with Retry-After; nothing acknowledged is lost', async (t) => {
  await fault('pause-apply');
  t.equal((await sendBatch(server.q.base, batchOf('backlog-a', 80))).status, 200, 'within the bound: acknowledged');
  t.equal((await sendBatch(server.q.base, batchOf('backlog-b', 80))).status, 200, 'the backlog (80) was within the bound: acknowledged');
  t.match(await shardStats(), { backlog: 160, waitingRequests: 0, appliedEvents: 0 }, 'nothing applied while paused');

  const refused = await sendBatch(server.q.base, batchOf('backlog-c', 10));
  t.equal(refused.status, 503, 'over the bound: refused at once, not kept waiting');
  t.match(refused.headers.get('retry-after'), /^[1-9]\d*$/, 'with Retry-After in seconds');
  t.match(await refused.json(), { type: 'server_error', code: 'overloaded', detail: /backlog/, attr: null });
  t.match(await shardStats(), { backlog: 160, refusedRequests: 1, backlogHigh: BOUND }, 'nothing of it was logged; /_stats counts the refusal');

  await fault('resume-apply');
  await eventually('the backlog to be applied', async () => (await shardStats()).backlog === 0, { intervalMs: 20 });
  t.equal((await sendBatch(server.q.base, batchOf('backlog-c', 10))).status, 200, 'the retry is accepted once the backlog is applied');
  t.equal((await storedEvents(server.api, 'backlog-a')).length, 80);
  t.equal((await storedEvents(server.api, 'backlog-b')).length, 80);
  t.equal((await storedEvents(server.api, 'backlog-c')).length, 10, 'the retried request is stored once');
  t.match(await shardStats(), { backlog: 0, waitingRequests: 0, appliedEvents: 170 });
  t.match(server.q.output(), /backlog over its bound/, 'the log says so');
});
