import t from 'tap';

/** Whether `fn` throws an instance of `type` (tap matches thrown errors by shape, not class). */
function throwsA(tt: { ok(v: unknown, m?: string): void }, fn: () => unknown, type: new (...a: never[]) => Error, message: string): void {
  try {
    fn();
    tt.ok(false, `${message}: did not throw`);
  } catch (error) {
    tt.ok(error instanceof type, message);
  }
}
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import { compileElementFilter, matchesSelector, parseSelector } from '../../src/domain/analytics/element-match.js';
import { compileMatcher, parseFilters, propertyNumber, type FilterLeaf } from '../../src/domain/analytics/property-filters.js';
import { parseElementsChain } from '../../src/domain/ingest/elements-chain.js';

const leaf = (operator: string, value: unknown, extra: Partial<FilterLeaf> = {}): FilterLeaf =>
  ({ type: 'event', key: 'k', operator, value, groupTypeIndex: null, negation: false, ...extra });

t.test('operators decide one value (§0.3)', async (t) => {
  const cases: [string, unknown, boolean, unknown, boolean][] = [
    ['exact', 'Chrome', true, 'Chrome', true],
    ['exact', 'Chrome', true, 'chrome', false],
    ['exact', ['a', 'b'], true, 'b', true],
    ['exact', 5, true, 5, true],
    ['exact', '5', true, 5, true],
    ['exact', 'true', true, true, true],
    ['exact', 'x', false, undefined, false],
    ['is_not', 'x', false, undefined, true],
    ['is_not', 'x', true, 'x', false],
    ['icontains', 'DOC', true, '/docs/a', true],
    ['not_icontains', 'doc', false, undefined, true],
    ['regex', '^/docs', true, '/docs/a', true],
    ['regex', '(', true, '(', false],
    ['not_regex', '^/docs', true, '/blog', true],
    ['gt', 10, true, 11, true],
    ['gt', 10, true, '11', true],
    ['gt', 10, true, 'eleven', false],
    ['lte', '2.5', true, 2.5, true],
    ['is_set', null, true, null, true],
    ['is_not_set', null, false, undefined, true],
    ['is_date_after', '2026-01-01', true, '2026-02-01T00:00:00Z', true],
    ['is_date_before', '2026-01-01', true, '2026-02-01T00:00:00Z', false],
  ];
  for (const [op, value, present, actual, expected] of cases) {
    t.equal(compileMatcher(leaf(op, value))(present, actual), expected, `${op} ${JSON.stringify(value)} on ${present ? JSON.stringify(actual) : 'missing'}`);
  }
  t.equal(propertyNumber(' 12.5 '), 12.5);
  t.equal(propertyNumber('12abc'), null);
  t.equal(propertyNumber(true), null);
});

t.test('every accepted filter form parses to one tree', async (t) => {
  t.same(parseFilters('[{"key":"a","value":1}]'), { and: true, children: [leaf('exact', 1, { key: 'a' })] });
  t.same(parseFilters({ type: 'OR', values: [{ type: 'AND', values: [{ key: 'a', value: 1, type: 'person' }] }] }),
    { and: false, children: [{ and: true, children: [leaf('exact', 1, { key: 'a', type: 'person' })] }] });
  t.same(parseFilters({ 'plan__icontains': 'pro' }), { and: true, children: [leaf('icontains', 'pro', { key: 'plan' })] }, 'old dict form');
  t.same(parseFilters({ key: 'id', value: 3, type: 'static-cohort' }), { and: true, children: [{ type: 'cohort', key: 'id', operator: 'in', value: 3, groupTypeIndex: null, negation: false }] });
  t.equal(parseFilters('[]'), null);
  t.equal(parseFilters(''), null);
  for (const [bad, why] of [
    ['{', 'not JSON'], ['[{"key":"a","type":"recording"}]', 'recordings'], ['[{"key":"a","type":"behavioral"}]', 'behavioral'],
    ['[{"key":"a","operator":"nope","value":1}]', 'unknown operator'], ['[{"value":1}]', 'no key'],
    ['[{"key":"x","type":"element","value":1}]', 'bad element key'], ['[{"key":"x","type":"group","value":1}]', 'group without index'],
    ['[{"key":"x","operator":"regex","value":5}]', 'regex needs a string'],
  ]) throwsA(t, () => parseFilters(bad), AnalyticsInputError, why);
});

t.test('element filters match a chain (clicked element first)', async (t) => {
  const chain = parseElementsChain('button.btn.primary:attr__id="go"nth-child="2"nth-of-type="1"text="Sign up";form.signup:nth-child="1"nth-of-type="1";body:nth-child="1"nth-of-type="1"');
  const el = (key: string, operator: string, value: unknown) => compileElementFilter({ type: 'element', key, operator, value, groupTypeIndex: null, negation: false })(chain);
  t.ok(el('text', 'exact', 'Sign up'));
  t.notOk(el('text', 'exact', 'sign up'));
  t.ok(el('text', 'icontains', 'sign'));
  t.ok(el('tag_name', 'exact', 'form'), 'an ancestor counts');
  t.notOk(el('tag_name', 'is_not', 'form'), 'is_not: no element may match');
  t.ok(el('selector', 'exact', 'form > button.primary'));
  t.ok(el('selector', 'exact', 'body button#go'));
  t.notOk(el('selector', 'exact', 'body > button'), '> needs the direct parent');
  t.ok(el('selector', 'exact', 'button:nth-child(2)'));
  t.notOk(el('selector', 'exact', 'a'));
  t.ok(matchesSelector(chain, parseSelector('[id="go"]')!), 'attribute selectors');
  for (const name of ['constructor', '__proto__', 'toString']) t.notOk(el('selector', 'exact', `button[${name}]`), `[${name}]: the chain's own attributes only, not Object.prototype's`);
  t.equal(parseSelector('div::before'), null, 'unsupported selectors are refused');
});
