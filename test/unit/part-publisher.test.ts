// Parts of logged records reach each owner in log order per source, however long one of them waits (the backlog
// bound, a full ring): an owner that applied a later record first would skip the earlier one when replaying after
// a crash (src/worker/ingest/part-publisher.ts). Runs on the real shared memory and rings.
import t from 'tap';
import { RING_SLOTS, type RingPart } from '../../src/protocol/part-rings.js';
import { createSharedState, SharedState } from '../../src/protocol/shared-state.js';
import { PartPublisher, type OwnedPart } from '../../src/worker/ingest/part-publisher.js';

const BOUND = 100;
const part = (source: number, end: number, events = 10): RingPart => ({ source, end, bytes: 50, events });
const parts = (source: number, end: number, owners: number[]): OwnedPart[] => owners.map((owner) => ({ owner, part: part(source, end) }));
const ends = (shared: SharedState, owner: number) => shared.rings.take(owner, RING_SLOTS).map((p) => `${p.source}@${p.end}`);

function setup() {
  const shared = new SharedState(createSharedState());
  return { shared, publisher: new PartPublisher(shared, BOUND) };
}

t.test('within the bound: published at once, without a promise', async (t) => {
  const { shared, publisher } = setup();
  t.equal(publisher.publish(0, parts(0, 1, [0, 1])), undefined);
  t.equal(publisher.publish(0, parts(0, 2, [1, 0])), undefined);
  t.same(ends(shared, 0), ['0@1', '0@2']);
  t.same(ends(shared, 1), ['0@1', '0@2']);
  t.equal(shared.behind(0), 0, 'the ring counts its events and uncounts them when taken');
});

t.test('a record waiting for an owner over the bound holds back the later records of its source, for every owner', async (t) => {
  const { shared, publisher } = setup();
  shared.publishQueued(1, BOUND + 1);
  const first = publisher.publish(0, parts(0, 1, [0, 1]));
  t.ok(first instanceof Promise, 'owner 1 is over the bound: the record waits');
  // The next record lists its owners the other way round: owner 0 first, which is within the bound.
  const second = publisher.publish(0, parts(0, 2, [0, 1]));
  const third = publisher.publish(0, parts(0, 3, [1, 0]));
  t.ok(second instanceof Promise && third instanceof Promise, 'later records of the same source wait behind it');
  t.equal(publisher.publish(1, parts(1, 7, [0])), undefined, 'another source is not held back');
  await new Promise((r) => setTimeout(r, 10));
  t.same(ends(shared, 0), ['0@1', '1@7'], 'owner 0 got the first record only (its own part was admitted)');
  t.same(ends(shared, 1), [], 'owner 1 nothing yet');
  t.equal(shared.waitingFor(1), 1, 'one record waits for owner 1');

  shared.publishQueued(1, BOUND); // at the bound, not under 75 % of it: still waiting (hysteresis)
  await new Promise((r) => setTimeout(r, 10));
  t.same(ends(shared, 1), []);
  shared.publishQueued(1, 0);
  await Promise.all([first, second, third]);
  t.same(ends(shared, 0), ['0@2', '0@3'], 'owner 0: log order');
  t.same(ends(shared, 1), ['0@1', '0@2', '0@3'], 'owner 1: log order');
  t.equal(shared.waitingFor(1), 0);
  t.equal(publisher.publish(0, parts(0, 4, [0, 1])), undefined, 'nothing waits any more: back to publishing at once');
});

t.test('a full ring: the record and those after it wait, then go in order', async (t) => {
  const { shared, publisher } = setup();
  for (let i = 0; i < RING_SLOTS; i++) shared.rings.push(2, part(9, i, 0));
  const a = publisher.publish(0, parts(0, 1, [2, 0]));
  const b = publisher.publish(0, parts(0, 2, [0, 2]));
  t.ok(a instanceof Promise && b instanceof Promise);
  await new Promise((r) => setTimeout(r, 10));
  t.same(ends(shared, 0), [], 'owner 0 waits too: its part of the first record comes after the full ring');
  t.equal(shared.rings.take(2, RING_SLOTS).length, RING_SLOTS, 'the owner drains its ring');
  await Promise.all([a, b]);
  t.same(ends(shared, 2), ['0@1', '0@2']);
  t.same(ends(shared, 0), ['0@1', '0@2']);
});
