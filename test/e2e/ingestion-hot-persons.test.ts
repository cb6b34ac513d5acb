// The apply loops keep recently seen persons in memory (src/worker/ingest/hot-persons.ts). A cached person must
// never be served after another worker merged, split or changed it: these tests make the other worker do exactly
// that between two events of a distinct id whose person the first worker has cached.
import t from 'tap';
import { shardOf } from '../../src/domain/shard-of.js';
import { sendBatch } from '../helpers/ingest.js';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
const TEAM = 1;

/** A distinct id with this prefix owned by shard `shard` (of 2). */
function idOn(shard: number, prefix: string): string {
  for (let i = 0; ; i++) if (shardOf(TEAM, `${prefix}-${i}`, 2) === shard) return `${prefix}-${i}`;
}

async function person(distinctId: string): Promise<any> {
  const res = await server.api.get(`/api/projects/@current/persons/?distinct_id=${encodeURIComponent(distinctId)}`);
  return res.body.results[0] ?? null;
}

async function send(events: object[]): Promise<void> {
  const res = await sendBatch(server.q.base, events);
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
  await person('nobody'); // the persons API waits until everything acknowledged is applied
}

t.test('a merge on the other worker: the next event goes to the surviving person', async (t) => {
  const x = idOn(0, 'merge-x');
  const y = idOn(1, 'merge-y');
  await send([{ event: 'seen', distinct_id: x, properties: { $set: { step: 1, from_x: true } } }]);
  await send([{ event: 'seen', distinct_id: x, properties: { $set: { step: 2 } } }]); // x's person is now cached on shard 0
  await send([{ event: 'seen', distinct_id: y, properties: { $set: { from_y: true } } }]);
  await send([{ event: '$identify', distinct_id: y, properties: { $anon_distinct_id: x } }]); // shard 1 merges x's person into y's
  await send([{ event: 'seen', distinct_id: x, properties: { $set: { step: 3 } } }]);
  const px = await person(x);
  const py = await person(y);
  t.equal(px.uuid, py.uuid, 'x belongs to the merged person');
  t.match(px.properties, { step: 3, from_x: true, from_y: true }, 'the update after the merge landed on it');
  t.same([...px.distinct_ids].sort(), [x, y].sort());
});

t.test('a property change on the other worker is not overwritten by a cached copy', async (t) => {
  const a = idOn(0, 'prop-a');
  const b = idOn(1, 'prop-b');
  await send([{ event: '$identify', distinct_id: a, properties: { $anon_distinct_id: b, $set: { n: 1 } } }]); // one person, ids on both shards
  await send([{ event: 'seen', distinct_id: a, properties: { $set: { n: 2 } } }]); // cached on shard 0
  await send([{ event: 'seen', distinct_id: b, properties: { $set: { other: 'from b' } } }]); // shard 1 writes the same person
  await send([{ event: 'seen', distinct_id: a, properties: { $set: { n: 3 } } }]); // shard 0 must not write back its old copy
  t.match((await person(a)).properties, { n: 3, other: 'from b' });
});

t.test('a split through the API: cached distinct ids follow their new persons', async (t) => {
  const m = idOn(0, 'split-m');
  const n = idOn(1, 'split-n');
  await send([{ event: '$identify', distinct_id: m, properties: { $anon_distinct_id: n, $set: { kept: true } } }]);
  await send([{ event: 'seen', distinct_id: m }, { event: 'seen', distinct_id: n }]); // both cached
  const before = await person(m);
  const split = await server.api.post(`/api/projects/@current/persons/${before.uuid}/split/`, { main_distinct_id: m });
  t.equal(split.status, 201);
  await send([{ event: 'seen', distinct_id: n, properties: { $set: { after_split: 'n' } } }, { event: 'seen', distinct_id: m, properties: { $set: { after_split: 'm' } } }]);
  const pm = await person(m);
  const pn = await person(n);
  t.not(pm.uuid, pn.uuid, 'two persons after the split');
  t.equal(pm.properties.after_split, 'm');
  t.equal(pn.properties.after_split, 'n');
  t.notOk('after_split' in (await server.api.get(`/api/projects/@current/persons/${before.uuid}/`)).body.properties && pm.uuid !== before.uuid, 'nothing landed on a stale copy');
});

t.test('a deleted person is not revived from the cache', async (t) => {
  const d = idOn(0, 'deleted');
  await send([{ event: 'seen', distinct_id: d, properties: { $set: { old: true } } }, { event: 'seen', distinct_id: d }]);
  const old = await person(d);
  t.equal((await server.api.delete(`/api/projects/@current/persons/${old.uuid}/`)).status, 204);
  await send([{ event: 'seen', distinct_id: d, properties: { $set: { fresh: true } } }]);
  const again = await person(d);
  t.not(again.id, old.id, 'a new person (its uuid is derived from the distinct id, so it repeats)');
  t.same(again.properties, { fresh: true }, 'without the deleted person\'s properties');
});

t.test('one distinct id sending most of a burst: applied completely and in order', async (t) => {
  const hot = idOn(1, 'hot');
  const batches = Array.from({ length: 20 }, (_, b) => Array.from({ length: 100 }, (_, i) => ({
    event: 'tick', distinct_id: i % 10 === 0 ? `cold-${b}-${i}` : hot, properties: { $set: { last: b * 100 + i } },
  })));
  for (const batch of batches) t.equal((await sendBatch(server.q.base, batch)).status, 200);
  const p = await person(hot);
  t.equal(p.properties.last, 1999, 'the last $set wins: applied in order');
  const count = await server.api.get(`/api/projects/@current/events/?event=tick&distinct_id=${hot}&limit=1000&after=2000-01-01`);
  t.equal(count.body.results.length, 1000, 'every event of the hot id');
});
