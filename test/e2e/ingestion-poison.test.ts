// Acknowledged events are never lost because of a poison event. Two ways an event could
// poison the apply loop: nested so deep that storing it overflows the stack (now dropped and counted before the
// 200), and anything else that makes applying it throw (here an event carrying an injected fault,
// QUILL_FAULT_INJECTION: src/worker/ingest/apply-faults.ts; it used to be a `$create_alias` whose alias was too long
// for an LMDB key, which is now cut to 200 characters like every distinct id). Before, the chunk's retry found every event of the chunk in a "seen" set filled before the failed
// commit and counted them all as duplicates: events of other requests in the same chunk were lost for good.
import t from 'tap';
import { personUuid } from '../../src/domain/ingest/index.js';
import { event, personOf, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

let q: QuillProcess;
let api: Client;
t.before(async () => {
  q = await startQuill({ env: { QUILL_FAULT_INJECTION: '1' } });
  api = new Client(q.base);
});
t.teardown(async () => {
  await q.stop();
  removeDir(q.dataDir);
});

const stats = async () => (await api.get('/_stats')).body;
const deadLetters = (s: any) => s.shards.reduce((n: number, shard: any) => n + shard.deadLetters.stored, 0);
const capture = (body: object) => fetch(`${q.base}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, ...body }) });

t.test('an event nested 100,000 levels deep is dropped before the 200; the events beside it are stored', async (t) => {
  const before = await stats();
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const body = `{"api_key":"${PROJECT_KEY}","batch":[{"event":"ok","distinct_id":"deep-1"},{"event":"p","distinct_id":"deep-1","properties":{"n":${deep}}}]}`;
  const res = await fetch(`${q.base}/batch/`, { method: 'POST', body });
  t.equal(res.status, 200);
  t.same((await storedEvents(api, 'deep-1')).map((e) => e.event), ['ok']);
  const after = await stats();
  t.equal((after.dropped.too_deep ?? 0) - (before.dropped.too_deep ?? 0), 1, 'counted as too_deep');
  t.equal((await sendBatch(q.base, [event('deep-2', 'later')])).status, 200);
  t.equal((await storedEvents(api, 'deep-2')).length, 1, 'the apply loop is not stuck');

  const alone = await fetch(`${q.base}/batch/`, { method: 'POST', body: `{"api_key":"${PROJECT_KEY}","batch":[{"event":"p","distinct_id":"deep-3","properties":{"n":${deep}}}]}` });
  t.equal(alone.status, 400, 'nothing in the request can be stored');
  t.same(await alone.json(), { type: 'validation_error', code: 'too_deep', detail: 'Event nested deeper than 128 levels.', attr: 'properties' });
});

t.test('an event that cannot be applied is set aside; no other event is lost, persons are right', async (t) => {
  const before = await stats();
  const poison = { event: 'poison', distinct_id: 'poison-user', properties: { $quill_fault: 'throw' } };
  // The poison among other events of its request, and 20 concurrent requests that land in the same chunks.
  const own = sendBatch(q.base, [
    event('poison-user', 'first', { $set: { n: 1 } }),
    { ...event('poison-user', 'second', { $set: { n: 2 }, $set_once: { first_seen: 'a' } }), $set_once: { first_seen: 'a' } },
    poison,
    event('poison-anon', '$identify', { $anon_distinct_id: 'poison-anon-old', $set: { merged: true } }),
    event('poison-user', 'third', { $set_once: { first_seen: 'b' } }),
  ]);
  const others = Array.from({ length: 20 }, (_, i) => capture({ event: 'concurrent', distinct_id: `bystander-${i}` }));
  const answers = await Promise.all([own, ...others]);
  t.same(answers.map((r) => r.status), Array(21).fill(200), 'every request acknowledged');

  t.same((await storedEvents(api, 'poison-user')).map((e) => e.event).sort(), ['first', 'second', 'third'], 'the poison request\'s other events');
  let bystanders = 0;
  for (let i = 0; i < 20; i++) bystanders += (await storedEvents(api, `bystander-${i}`)).length;
  t.equal(bystanders, 20, 'every concurrent request\'s event is stored');
  const person = await personOf(api, 'poison-user');
  t.match(person?.properties, { n: 2, first_seen: 'a' }, 'person updates applied once, in order');
  // A failed attempt must leave nothing behind: a half-committed creation (its distinct id and uuid rows without
  // the person row) made the retry create the person again under a random uuid.
  t.equal(person?.uuid, personUuid(1, 'poison-user'), 'the person has its deterministic uuid: created once');
  const merged = await personOf(api, 'poison-anon-old');
  t.same(merged?.distinct_ids?.sort(), ['poison-anon', 'poison-anon-old'], 'the merge of the same chunk applied');

  const after = await stats();
  t.equal(deadLetters(after) - deadLetters(before), 1, 'one event set aside');
  t.equal((after.dropped.dead_letter ?? 0) - (before.dropped.dead_letter ?? 0), 1, 'counted as dead_letter');
  const reasons = Object.assign({}, ...after.shards.map((s: any) => s.deadLetters.reasons));
  t.match(Object.keys(reasons), [/injected apply failure/], 'with its reason');
  t.equal(after.shards.reduce((n: number, s: any) => n + s.backlog, 0), 0, 'nothing left behind');
});

t.test('after a restart everything is still there once and the set-aside event is not retried', async (t) => {
  const before = await stats();
  t.equal(await q.stop(), 0);
  q = await startQuill({ dataDir: q.dataDir, env: { QUILL_FAULT_INJECTION: '1' } });
  api = new Client(q.base);
  t.same((await storedEvents(api, 'poison-user')).map((e) => e.event).sort(), ['first', 'second', 'third']);
  t.equal((await storedEvents(api, 'deep-1')).length, 1);
  const after = await stats();
  t.equal(deadLetters(after), deadLetters(before), 'the dead letter is kept');
  t.equal(after.dropped.dead_letter ?? 0, 0, 'and not set aside again by a replay');
});
