// The memory budget (QUILL_MEMORY_MB) on the real server. A budget below any process's footprint (1 MB) holds the
// node over it from its first sample, so what "over budget" does is seen deterministically: every ingestion path
// answers 503 `memory_budget` with Retry-After before anything is written, flags keep answering, /_stats and
// /metrics say so, the workers hold their caches small, and what was acknowledged before is all there. The same
// data directory restarted with a roomy budget accepts events again. (The crossing itself — over at the budget,
// under again below 90 % of it — is the unit test of MemoryGuard, test/unit/memory-budget.test.ts.)
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, removeDir, startQuill } from '../helpers/quill.js';

const METRICS_TOKEN = 'memory-budget-metrics-token';
const batchOf = (distinctId: string, n: number) => Array.from({ length: n }, (_, i) => event(distinctId, 'budget probe', { i }));

t.test('over the budget, ingestion is refused with 503 and Retry-After; flags answer; nothing acknowledged is lost', async (t) => {
  const first = await startQuill();
  const dataDir = first.dataDir;
  t.teardown(() => removeDir(dataDir));
  const before = new Client(first.base);
  t.equal((await sendBatch(first.base, batchOf('kept', 40))).status, 200, 'acknowledged without a budget');
  const stats0 = (await before.get('/_stats')).body;
  t.match(stats0.memory, { budget_bytes: null, over_budget: false, refused_requests: 0 }, '/_stats: no budget');
  t.ok(stats0.memory.anonymous_bytes > 10 * 1048576, `/_stats reports the anonymous memory (${stats0.memory.anonymous_bytes} bytes)`);
  t.equal(await first.stop(), 0);

  const tight = await startQuill({ dataDir, env: { QUILL_MEMORY_MB: '1', QUILL_METRICS_TOKEN: METRICS_TOKEN } });
  const api = new Client(tight.base);
  const refusals: [string, Response][] = [
    ['/batch/', await sendBatch(tight.base, batchOf('refused', 5))],
    ['/e/', await fetch(`${tight.base}/e/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, ...event('refused', 'budget probe') }) })],
    ['/capture/', await fetch(`${tight.base}/capture/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, ...event('refused', 'budget probe') }) })],
  ];
  for (const [path, res] of refusals) {
    t.equal(res.status, 503, `${path}: refused`);
    t.match(res.headers.get('retry-after'), /^[1-9]\d*$/, `${path}: with Retry-After in seconds`);
    t.match(await res.json(), { type: 'server_error', code: 'memory_budget', detail: /memory budget/, attr: null }, `${path}: the documented error body`);
  }

  const flags = await fetch(`${tight.base}/flags/?v=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'kept' }) });
  t.equal(flags.status, 200, 'flags keep answering');
  t.equal((await storedEvents(api, 'kept')).length, 40, 'every event acknowledged before is stored');
  t.equal((await storedEvents(api, 'refused')).length, 0, 'nothing of a refused request was written');

  const stats = (await api.get('/_stats')).body;
  t.match(stats.memory, { budget_bytes: 1048576, over_budget: true, refused_requests: 3 }, '/_stats: over budget, three refusals');
  const metrics = await api.get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
  t.equal(metrics.status, 200);
  t.match(metrics.text, /^quill_memory_over_budget 1$/m, '/metrics: over budget');
  t.match(metrics.text, /^quill_memory_budget_bytes 1048576$/m, '/metrics: the budget');
  t.match(metrics.text, /^quill_memory_budget_refusals_total 3$/m, '/metrics: the refusals');
  t.match(metrics.text, /^quill_memory_anonymous_bytes [1-9]\d+$/m, '/metrics: the anonymous memory');
  await eventually('both workers to hold their caches small', async () => (tight.output().match(/caches held small/g) ?? []).length === 2);
  t.match(tight.output(), /memory over its budget/, 'the log says the node is over its budget');
  t.equal(await tight.stop(), 0);

  const roomy = await startQuill({ dataDir, env: { QUILL_MEMORY_MB: '16384' } });
  t.teardown(() => roomy.stop());
  const again = new Client(roomy.base);
  t.equal((await sendBatch(roomy.base, batchOf('refused', 5))).status, 200, 'under a roomy budget the retry is accepted');
  t.equal((await storedEvents(again, 'refused')).length, 5);
  t.equal((await storedEvents(again, 'kept')).length, 40);
  t.match((await again.get('/_stats')).body.memory, { budget_bytes: 16384 * 1048576, over_budget: false, refused_requests: 0 });
});
