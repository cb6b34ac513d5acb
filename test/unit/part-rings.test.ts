import t from 'tap';
import { PartRings, RING_SLOTS, ringBytes } from '../../src/protocol/part-rings.js';

const key = (p: { source: number; end: number; bytes: number; events: number }) => `${p.source}/${p.end}/${p.bytes}/${p.events}`;
const part = (i: number) => ({ source: i % 7, end: 2 ** 32 * (i % 5) + i * 13, bytes: 100 + i, events: 1 + (i % 3) });

t.test('parts come out in the order they were published, per shard, and a full ring refuses more', async (t) => {
  const rings = new PartRings(new SharedArrayBuffer(ringBytes(2)), 0, 2);
  t.same(rings.take(0, 10), [], 'a new ring is empty');
  let accepted = 0;
  for (let i = 0; i < RING_SLOTS; i++) if (rings.push(0, part(i))) accepted++;
  t.equal(accepted, RING_SLOTS, 'a ring holds RING_SLOTS parts');
  t.equal(rings.push(0, part(RING_SLOTS)), false, 'full ring refuses');
  t.same(rings.take(1, 10), [], 'the other shard has its own ring');
  t.same(rings.take(0, 3), [part(0), part(1), part(2)]);
  t.equal(rings.push(0, part(RING_SLOTS)), true, 'room again after a take');
  const rest = rings.take(0, RING_SLOTS * 2);
  t.equal(rest.length, RING_SLOTS - 2);
  t.same(rest[0], part(3));
  t.same(rest.at(-1), part(RING_SLOTS));
  t.same(rings.take(0, 10), [], 'empty once everything was taken');
});

t.test('many laps around the ring keep order and values exact', async (t) => {
  const rings = new PartRings(new SharedArrayBuffer(ringBytes(1)), 0, 1);
  let next = 0;
  let expected = 0;
  let wrong = 0;
  for (let lap = 0; lap < 12; lap++) {
    const n = 1000 + ((lap * 2713) % RING_SLOTS);
    for (let k = 0; k < n && rings.push(0, part(next)); k++) next++;
    for (const p of rings.take(0, 5000)) if (key(p) !== key(part(expected++))) wrong++;
  }
  for (const p of rings.take(0, RING_SLOTS)) if (key(p) !== key(part(expected++))) wrong++;
  t.equal(wrong, 0);
  t.equal(expected, next, 'everything published was taken');
  t.ok(next > RING_SLOTS * 3, 'went around several times');
});
