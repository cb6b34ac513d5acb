// Bounded write transactions: while a shard catches up on a backlog of new visitors, a burst of
// person writes from the API lands on the same persons environment. lmdb-js on its own runs every callback queued
// while a commit is in progress in the next transaction, so the burst and the catch-up grew one transaction to
// dozens of callbacks; through the write lane (src/stores/write-lane.ts) none carries more than the bound, and
// everything acknowledged and written is there afterwards.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { MAX_CALLBACKS_PER_TXN } from '../../src/stores/write-lane.js';
import { allEvents, sendBatch } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';

const METRICS_TOKEN = 'bounded-txn-metrics-token-01';
const EVENTS = 30_000;
const PERSON_WRITES = 400;

t.test('a catch-up and a burst of person writes: no transaction past the bound, nothing lost', async (t) => {
  const q = await startQuill({ env: { QUILL_FAULT_INJECTION: '1', QUILL_METRICS_TOKEN: METRICS_TOKEN } });
  t.teardown(async () => {
    await q.stop();
    removeDir(q.dataDir);
  });
  const api = new Client(q.base);
  t.equal((await api.post('/_fault/pause-apply')).status, 200);
  // A backlog of new visitors, one in ten with a $set, acknowledged while the apply is paused.
  for (let sent = 0; sent < EVENTS; sent += 500) {
    const batch = Array.from({ length: 500 }, (_, i) => ({
      event: '$pageview', distinct_id: `visitor-${sent + i}`, uuid: randomUUID(),
      properties: (sent + i) % 10 === 0 ? { $set: { plan: 'pro' } } : { $current_url: 'https://example.com/' },
    }));
    const res = await sendBatch(q.base, batch);
    if (res.status !== 200) t.fail(`/batch/ answered ${res.status}`);
  }
  t.equal((await api.post('/_fault/resume-apply')).status, 200);

  // Meanwhile, 400 persons created through the API, 64 at a time.
  const created: string[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < PERSON_WRITES) {
      const i = next++;
      const res = await api.post('/api/projects/@current/persons/', { distinct_ids: [`api-person-${i}`], properties: { n: i } });
      if (res.status !== 201 && res.status !== 200) t.fail(`person create answered ${res.status}: ${res.text}`);
      else created.push(`api-person-${i}`);
    }
  }));
  t.equal(created.length, PERSON_WRITES, 'every person write answered');

  // The events API waits until everything acknowledged is applied.
  const stored = await allEvents(api, 'event=%24pageview');
  t.equal(stored.length, EVENTS, 'every acknowledged event stored once');
  const some = await api.get('/api/projects/@current/persons/?distinct_id=api-person-399');
  t.equal(some.body.results[0]?.properties?.n, 399, 'the last person written through the API is there');
  const visitor = await api.get('/api/projects/@current/persons/?distinct_id=visitor-29990');
  t.equal(visitor.body.results[0]?.properties?.plan, 'pro', 'a visitor\'s $set applied');

  const metrics = await (await fetch(`${q.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const maxima = [...metrics.matchAll(/^quill_lmdb_txn_max_callbacks\{env="(\w+)",worker="(\d+)"\} (\d+)$/gm)];
  t.ok(maxima.some((m) => m[1] === 'persons' && Number(m[3]) > 0), '/metrics reports the persons transactions');
  for (const [, env, worker, max] of maxima) {
    t.ok(Number(max) <= MAX_CALLBACKS_PER_TXN, `${env} on worker ${worker}: at most ${MAX_CALLBACKS_PER_TXN} callbacks in one transaction (${max})`);
  }
  t.match(metrics, /quill_lmdb_txn_callbacks_bucket\{env="persons",le="8"\} \d+/, 'the distribution is in /metrics');
});
