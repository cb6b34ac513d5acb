/** The per-worker query gate (src/worker/query-gate.ts): places, the queue, 429 beyond it, and waits outside a place. */
import t from 'tap';
import { QueryGate } from '../../src/worker/query-gate.js';

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const turn = () => new Promise((r) => setImmediate(r));

t.test('one place, one queued, the next refused with 429', async (t) => {
  const gate = new QueryGate(1, 1);
  const a = deferred();
  const order: string[] = [];
  const first = gate.run(async () => { order.push('a'); await a.promise; });
  const second = gate.run(async () => { order.push('b'); });
  await turn();
  await t.rejects(gate.run(async () => undefined), { status: 429 }, 'the queue is full');
  t.same(gate.counts(), { running: 1, queued: 1, admitted: 1, rejected: 1 });
  a.resolve();
  await Promise.all([first, second]);
  t.same(order, ['a', 'b']);
  t.same(gate.counts(), { running: 0, queued: 0, admitted: 2, rejected: 1 });
});

t.test('a wait outside the place lets the next analysis run, then takes a place again ahead of the queue', async (t) => {
  const gate = new QueryGate(1, 2);
  const applied = deferred();
  const bDone = deferred();
  const order: string[] = [];
  const first = gate.run(async () => {
    order.push('a waits for the apply');
    await gate.outside(applied.promise);
    order.push('a computes');
  });
  await turn();
  const second = gate.run(async () => { order.push('b'); await bDone.promise; });
  const third = gate.run(async () => { order.push('c'); });
  await turn();
  t.same(order, ['a waits for the apply', 'b'], 'b took the place a left');
  applied.resolve();
  await turn();
  t.same(gate.counts().running, 1, 'a waits for a place again, never refused');
  bDone.resolve();
  await Promise.all([first, second, third]);
  t.same(order, ['a waits for the apply', 'b', 'a computes', 'c'], 'a goes before c, which queued after it had started');
  t.same(gate.counts(), { running: 0, queued: 0, admitted: 3, rejected: 0 });
});

t.test('outside a gated run, outside is a plain wait', async (t) => {
  const gate = new QueryGate(1, 0);
  t.equal(await gate.outside(Promise.resolve(7)), 7);
  t.same(gate.counts(), { running: 0, queued: 0, admitted: 0, rejected: 0 });
});
