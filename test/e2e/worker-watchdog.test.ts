// The watchdog: a worker held in synchronous work on purpose (POST /_fault/block, fault
// injection only) stops beating; past QUILL_WATCHDOG_S the front reports it stalled in /_health, the logs and
// /metrics, and sends new flag and API requests to the other worker until it beats again.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { Client, logLines, PROJECT_KEY, removeDir, startQuill } from '../helpers/quill.js';

const METRICS_TOKEN = 'watchdog-metrics-token-01';

t.test('a blocked worker is reported stalled and skipped, then recovers', async (t) => {
  const q = await startQuill({ env: { QUILL_FAULT_INJECTION: '1', QUILL_WATCHDOG_S: '1', QUILL_METRICS_TOKEN: METRICS_TOKEN } });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  t.equal((await api.post('/api/projects/@current/feature_flags/', { key: 'on', filters: { groups: [{ rollout_percentage: 100 }] } })).status, 201);
  const health = async () => (await fetch(`${q.base}/_health`)).json();
  t.equal((await health()).status, 'ok');

  // Long enough for the checks made while it lasts (40 flag requests, an API request, /metrics) on a loaded machine.
  const BLOCK_MS = 12_000;
  const blocked = await api.post(`/_fault/block?ms=${BLOCK_MS}`);
  t.equal(blocked.status, 202);
  const worker: number = blocked.body.blocking;
  const logged = (event: string) => logLines(q.output()).some((l) => l.event === event && l.worker === worker);
  await eventually('the stall logged', () => logged('worker_stalled'));
  const stalled = await health();
  t.equal(stalled.status, 'degraded', '/_health: degraded');
  t.equal(stalled.workers[worker].stalled, true);
  t.ok(stalled.workers[worker].heartbeat_age_ms > 1000, `its heartbeat is ${stalled.workers[worker].heartbeat_age_ms} ms old`);
  t.equal(stalled.workers[1 - worker].stalled, false, 'the other worker beats');

  // Flag and API requests sent now are all answered while the blocked worker is still stalled: by the other one.
  const flags = new Client(q.base, null);
  for (let i = 0; i < 40; i++) {
    const res = await flags.post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: `user-${i}` });
    if (res.status !== 200 || res.body.flags.on.enabled !== true) t.fail(`flags answered ${res.status}`);
  }
  t.equal((await api.get('/api/projects/@current/feature_flags/')).status, 200);
  const during = await health();
  t.ok(during.workers[worker].stalled, `40 flag requests and an API request answered while the worker was still stalled: ${JSON.stringify(during)}`);

  const metrics = await (await fetch(`${q.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  t.match(metrics, new RegExp(`quill_worker_stalled\\{worker="${worker}"\\} 1`), '/metrics shows the stall');
  t.match(metrics, new RegExp(`quill_worker_stalls_total\\{worker="${worker}"\\} 1`));

  await eventually('the recovery logged', () => logged('worker_recovered'), { timeoutMs: BLOCK_MS + 30_000 });
  t.equal((await health()).status, 'ok', '/_health: ok again');
  const events = logLines(q.output()).filter((l) => l.event === 'worker_stalled' || l.event === 'worker_recovered');
  t.same(events.map((l) => [l.event, l.worker]), [['worker_stalled', worker], ['worker_recovered', worker]], 'the stall and the recovery are logged');
  const after = await flags.post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'after' });
  t.equal(after.status, 200, 'flags still answer once it recovered');
});
