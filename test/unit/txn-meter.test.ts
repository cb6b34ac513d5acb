/** The LMDB transaction meter (src/stores/txn-meter.ts) on a real environment: callbacks lmdb-js batches into one write transaction count together. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { atomically, openEnv, openTable } from '../../src/stores/lmdb-env.js';
import { TxnMeter, txnMeters } from '../../src/stores/txn-meter.js';

t.test('callbacks queued together run in one transaction and count as one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'txn-meter-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = openEnv(join(dir, 'events.mdb'));
  const table = openTable<number, string>(env, 'x');
  await atomically(env, () => table.put('warm', 0));
  const before = { ...txnMeters.get('events')!.summary };
  // Five callbacks queued in one event turn: lmdb-js runs them in one write transaction.
  await Promise.all(Array.from({ length: 5 }, (_, i) => atomically(env, () => table.put(`k${i}`, i))));
  await atomically(env, () => table.put('after', 1));
  const s = txnMeters.get('events')!.summary;
  t.equal(s.maxCallbacks, 5, 'the batch of five was one transaction');
  t.equal(s.callbackSum - before.callbackSum, 6, 'the warm-up transaction closed, then the five');
  await env.close();
});

t.test('a transaction that keeps growing is reported while it is open', async (t) => {
  const { onLargeTransaction } = await import('../../src/stores/txn-meter.js');
  const seen: [string, number, number][] = [];
  onLargeTransaction((label, _id, callbacks, seconds) => seen.push([label, callbacks, Math.round(seconds)]));
  const m = new TxnMeter('persons');
  const nine = {};
  for (let i = 0; i < 130; i++) m.note(nine, 9, 0.001);
  m.note(nine, 9, 1);
  t.same(seen, [['persons', 64, 0], ['persons', 128, 0], ['persons', 131, 1]], 'at 64 and 128 callbacks, and past 1 s');
  m.note({}, 10, 0.001);
  t.equal(seen.length, 3, 'a new transaction starts quiet');
});

t.test('the meter folds a transaction when the next one begins', async (t) => {
  const m = new TxnMeter();
  const seven = {};
  m.note(seven, 7, 0.002);
  m.note(seven, 7, 0.003);
  t.equal(m.summary.callbackSum, 0, 'an open transaction is not counted yet');
  m.note({}, 8, 2);
  t.equal(m.summary.maxCallbacks, 2);
  t.equal(m.summary.callbackCounts[1], 1, 'in the bucket of 2');
  m.close();
  t.equal(m.summary.maxSeconds, 2);
  t.equal(m.summary.secondsCounts.reduce((a, b) => a + b, 0), 2);
});

t.test('the write lane bounds the callbacks of one transaction, however many are queued', async (t) => {
  const { MAX_CALLBACKS_PER_TXN } = await import('../../src/stores/write-lane.js');
  const { transact } = await import('../../src/stores/lmdb-env.js');
  const dir = mkdtempSync(join(tmpdir(), 'txn-lane-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = openEnv(join(dir, 'persons.mdb'));
  const table = openTable<number, string>(env, 'x');
  await atomically(env, () => table.put('warm', 0));
  // 500 writers queue at once (a catch-up and a burst of API writes): lmdb-js alone runs all of them in one or two
  // transactions; through the lane no transaction carries more than the bound, and every write lands, in order.
  const order: number[] = [];
  await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 ? atomically : transact)(env, () => {
    order.push(i);
    table.put(`k${i}`, i);
  })));
  await atomically(env, () => table.put('after', 1));
  txnMeters.get('persons')!.close();
  const s = txnMeters.get('persons')!.summary;
  t.ok(s.maxCallbacks <= MAX_CALLBACKS_PER_TXN, `at most ${MAX_CALLBACKS_PER_TXN} callbacks in one transaction (saw ${s.maxCallbacks})`);
  t.ok(s.callbackSum >= 502, 'every callback ran');
  t.same(order, Array.from({ length: 500 }, (_, i) => i), 'in the order they were queued');
  t.equal(table.get('k499'), 499);
  // A write queued from inside a running transaction joins it instead of waiting for the lane it holds.
  const nested = await atomically(env, () => {
    void transact(env, () => table.put('nested', 2));
    return 'outer';
  });
  t.equal(nested, 'outer');
  t.equal(table.get('nested'), 2, 'the nested write committed with its transaction');
  await env.close();
});

t.test('transactions that write nothing still count one by one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'txn-empty-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = openEnv(join(dir, 'meta.mdb'));
  const table = openTable<number, string>(env, 'x');
  await atomically(env, () => table.put('warm', 0));
  const meter = txnMeters.get('meta')!;
  meter.close();
  const before = meter.summary.callbackSum;
  const transactions = meter.summary.callbackCounts.reduce((a, b) => a + b, 0);
  // LMDB gives a transaction that wrote nothing no new id: counted by id, these 20 would look like one of 20.
  for (let i = 0; i < 20; i++) await atomically(env, () => table.get('warm'));
  meter.close();
  t.equal(meter.summary.callbackSum - before, 20);
  t.equal(meter.summary.callbackCounts.reduce((a, b) => a + b, 0) - transactions, 20, 'twenty transactions of one callback');
  await env.close();
});
