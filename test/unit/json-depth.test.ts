// Client JSON is bounded in depth without recursion (src/domain/json-depth.ts), and a frame holding one value
// that cannot be packed still carries the others (src/protocol/wire.ts), the two guards that keep one request
// from throwing where nothing catches it.
import t from 'tap';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/domain/json-depth.js';
import { packFrame, unpack } from '../../src/protocol/wire.js';

const nested = (levels: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
};

t.test('depth is counted from the outermost container, scalars are 0', async (t) => {
  t.equal(nestsDeeperThan(42, 0), false);
  t.equal(nestsDeeperThan('x'.repeat(10), 0), false);
  t.equal(nestsDeeperThan(null, 0), false);
  t.equal(nestsDeeperThan({}, 0), true, 'an empty object is one level');
  t.equal(nestsDeeperThan({}, 1), false);
  t.equal(nestsDeeperThan({ a: [1, { b: 2 }] }, 3), false);
  t.equal(nestsDeeperThan({ a: [1, { b: 2 }] }, 2), true);
  t.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH)), false, `${MAX_JSON_DEPTH} levels pass`);
  t.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1)), true, `${MAX_JSON_DEPTH + 1} levels do not`);
  t.equal(nestsDeeperThan({ wide: Array.from({ length: 10_000 }, () => ({ x: [1] })) }), false, 'width is not depth');
  const proto = JSON.parse(`{"__proto__": ${JSON.stringify(nested(MAX_JSON_DEPTH))}}`);
  t.equal(nestsDeeperThan(proto), true, 'an own __proto__ key is walked like any other');
});

t.test('a value nested 1,000,000 levels is measured without overflowing the stack', async (t) => {
  const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000));
  t.equal(nestsDeeperThan(deep), true);
  t.throws(() => JSON.stringify(deep), RangeError, 'what the bound protects: recursive consumers overflow');
});

t.test('a frame with one unpackable value still carries the others', async (t) => {
  const poison = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  const failed: number[] = [];
  const dropOut = packFrame([1, { ok: 'a' }, 2, poison, 3, 'b'], (id) => {
    failed.push(id);
    return undefined;
  });
  t.same(failed, [2]);
  t.same(unpack(dropOut!), [1, { ok: 'a' }, 3, 'b'], 'left out');
  const replaced = packFrame([7, poison, 8, 'c'], (id) => `failed ${id}`);
  t.same(unpack(replaced!), [7, 'failed 7', 8, 'c'], 'replaced');
  t.equal(packFrame([9, poison], () => undefined), null, 'nothing left to send');
  t.same(unpack(packFrame([1, 'fast path'], () => t.fail('not called'))!), [1, 'fast path']);
});
