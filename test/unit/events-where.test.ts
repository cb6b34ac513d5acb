/**
 * The events list's `where` expressions are split without a backtracking regex (src/worker/ops/events/select.ts):
 * the split must agree with the pattern it replaced, which is only fast on short text, so it is the reference here.
 */
import t from 'tap';
import { splitComparison } from '../../src/worker/ops/events/select.js';
import { parseSelector } from '../../src/domain/analytics/element-match.js';

const REFERENCE = /^(.+?)\s*(==|!=|<=|>=|=|<|>)\s*(.+)$/;

t.test('splitComparison agrees with the regex it replaced', async (t) => {
  const alphabet = ['a', 'b', ' ', '=', '!', '<', '>', '\t', '.', '"'];
  let seed = 42;
  const next = () => (seed = (seed * 48271) % 2147483647);
  let compared = 0;
  for (let round = 0; round < 20_000; round++) {
    const length = 1 + (next() % 9);
    const expr = Array.from({ length }, () => alphabet[next() % alphabet.length]).join('').trim();
    const m = REFERENCE.exec(expr);
    const got = splitComparison(expr);
    const want = m ? [m[1], m[2], m[3]] : null;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      t.same(got, want, JSON.stringify(expr));
      return;
    }
    compared++;
  }
  t.equal(compared, 20_000, 'every random expression split the same way');
  t.same(splitComparison('properties.$browser == "Chrome"'), ['properties.$browser', '==', '"Chrome"']);
  t.equal(splitComparison('a\n= b'), null, 'a line break is refused');
});

t.test('long text without an operator or a combinator is parsed in one pass', async (t) => {
  t.equal(splitComparison(`a${' '.repeat(200_000)}b`), null);
  t.equal(splitComparison('x'.repeat(200_000)), null);
  const parts = parseSelector(`div${' '.repeat(200_000)}a`);
  t.equal(parts?.length, 2, 'a descendant selector with a long run of spaces');
  t.same(parseSelector('div >  a')?.map((p) => p.combinator), [' ', '>'], 'the child combinator still parses');
});
