// A person's display name (src/domain/person-display.ts), shared by the console and the persons list's orderBy, and
// the bounded selection an ordered list keeps (src/domain/smallest-k.ts).
import t from 'tap';
import { personDisplayName } from '../../src/domain/person-display.js';
import { SmallestK } from '../../src/domain/smallest-k.js';

t.test("PostHog's display-name properties in order, else the first distinct id", async (t) => {
  t.equal(personDisplayName({ name: 'Ann', email: 'ann@example.com' }, ['a']), 'ann@example.com');
  t.equal(personDisplayName({ $email: 'x@example.com', name: 'X' }, ['a']), 'x@example.com');
  t.equal(personDisplayName({ username: 'ann_1' }, ['a']), 'ann_1');
  t.equal(personDisplayName({ email: '', name: null, Name: 'Ann' }, ['a']), 'Ann', 'empty and null values are skipped');
  t.equal(personDisplayName({ email: 42 }, ['a']), '42');
  t.equal(personDisplayName({ plan: 'pro' }, ['first', 'second']), 'first');
  t.equal(personDisplayName(undefined, undefined), null);
});

t.test('SmallestK keeps the k smallest, in order, whatever the input order', async (t) => {
  const values = Array.from({ length: 10_000 }, (_, i) => (i * 7919) % 10_000);
  const kept = new SmallestK<number>(25, (a, b) => a - b);
  for (const v of values) kept.add(v);
  t.same(kept.result(), Array.from({ length: 25 }, (_, i) => i));
  const few = new SmallestK<number>(5, (a, b) => b - a);
  for (const v of [3, 1, 2]) few.add(v);
  t.same(few.result(), [3, 2, 1], 'fewer items than k: all of them');
});
