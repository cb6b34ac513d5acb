// The front's ingestion gate (src/front/ingestion-gate.ts): flags first, nothing refused or lost.
import t from 'tap';
import { IngestionGate } from '../../src/front/ingestion-gate.js';

t.test('without flag or API requests every ingestion request goes at once', async (t) => {
  const gate = new IngestionGate(2, 50);
  for (let i = 0; i < 20; i++) t.equal(gate.admit(i, () => t.fail('held')), true);
  t.equal(gate.waiting, 0);
});

t.test('while flags are asked, at most the limit is in flight and the rest waits in order', async (t) => {
  const gate = new IngestionGate(2, 50);
  const released: number[] = [];
  gate.asked(100);
  t.equal(gate.admit(101, () => released.push(0)), true);
  t.equal(gate.admit(101, () => released.push(1)), true);
  t.equal(gate.admit(102, () => released.push(2)), false, 'the third waits');
  t.equal(gate.admit(102, () => released.push(3)), false);
  t.equal(gate.waiting, 2);
  gate.finished(110);
  t.same(released, [2], 'one answered, one goes');
  gate.asked(115);
  gate.finished(120);
  t.same(released, [2, 3], 'first held, first released');
  t.equal(gate.waiting, 0);
  t.equal(gate.heldTotal, 2, 'two had to wait (/metrics)');
});

t.test('once flags stop, everything held goes at the next answer and new requests are not held', async (t) => {
  const gate = new IngestionGate(1, 50);
  const released: number[] = [];
  gate.asked(0);
  gate.admit(1, () => released.push(0));
  for (let i = 1; i <= 3; i++) gate.admit(2, () => released.push(i));
  gate.finished(60);
  t.same(released, [1, 2, 3], 'no flag request for 50 ms: the gate opens');
  t.equal(gate.admit(61, () => t.fail('held')), true);
});

t.test('a worker that died releases every held request to its replacement', async (t) => {
  const gate = new IngestionGate(1, 50);
  const released: number[] = [];
  gate.asked(0);
  gate.admit(0, () => released.push(0));
  gate.admit(0, () => released.push(1));
  gate.admit(0, () => released.push(2));
  gate.reset();
  t.same(released, [1, 2]);
  t.equal(gate.waiting, 0);
});
