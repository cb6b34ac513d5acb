// The flag form's variants (src/console/app/lib/flag-variants.ts): a multivariate flag starts as control/test at
// 50/50 and every add or remove splits the rollout evenly again, always summing to 100.
import t from 'tap';
import { addVariant, evenSplit, removeVariant, variantTotal } from '../../src/console/app/lib/flag-variants.js';

t.test('even splits in whole percents sum to 100, the remainder on the first variants', async (t) => {
  t.same(evenSplit(0), []);
  t.same(evenSplit(1), [100]);
  t.same(evenSplit(2), [50, 50]);
  t.same(evenSplit(3), [34, 33, 33]);
  t.same(evenSplit(6), [17, 17, 17, 17, 16, 16]);
  for (let n = 1; n <= 100; n++) t.equal(evenSplit(n).reduce((a, b) => a + b, 0), 100, `${n} variants`);
});

t.test('the first "Add variant" makes control and test, the next ones test-2, test-3, split evenly', async (t) => {
  let variants = addVariant([]);
  t.same(variants, [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }]);
  variants = addVariant(variants);
  t.same(variants.map((v) => [v.key, v.rollout_percentage]), [['control', 34], ['test', 33], ['test-2', 33]]);
  variants = addVariant(variants);
  t.same(variants.map((v) => v.key), ['control', 'test', 'test-2', 'test-3']);
  t.same(variants.map((v) => v.rollout_percentage), [25, 25, 25, 25]);
  t.ok(variantTotal(variants).valid);
});

t.test('a renamed variant keeps its name and a free key is found; removing splits again', async (t) => {
  const renamed = [{ key: 'blue', name: 'Blue button', rollout_percentage: 70 }, { key: 'test', rollout_percentage: 30 }];
  const added = addVariant(renamed);
  t.same(added.map((v) => v.key), ['blue', 'test', 'test-2']);
  t.equal(added[0]!.name, 'Blue button');
  t.same(removeVariant(added, 1).map((v) => [v.key, v.rollout_percentage]), [['blue', 50], ['test-2', 50]]);
  t.same(removeVariant([{ key: 'only', rollout_percentage: 100 }], 0), [], 'the last one removed: a boolean flag again');
});

t.test('the total says whether the API will take it', async (t) => {
  t.same(variantTotal([]), { total: 0, valid: true }, 'a boolean flag has no variants to sum');
  t.same(variantTotal([{ key: 'a', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 30 }]), { total: 90, valid: false });
  t.same(variantTotal([{ key: 'a', rollout_percentage: Number.NaN }, { key: 'b', rollout_percentage: 100 }]), { total: 100, valid: true });
});
