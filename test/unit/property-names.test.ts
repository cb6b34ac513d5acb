// A property's type from its values (src/domain/properties/property-type.ts) and the closest known name to a typo
// (src/domain/properties/closest-name.ts), which the console shows as "Did you mean …".
import t from 'tap';
import { closestName, editDistance } from '../../src/domain/properties/closest-name.js';
import { combinePropertyTypes, inferPropertyType, TYPE_SAMPLE } from '../../src/domain/properties/property-type.js';

t.test('types from values', async (t) => {
  const cases: [unknown[], string | null][] = [
    [[1, 2.5, -3], 'Numeric'],
    [[true, false], 'Boolean'],
    [['2024-01-31', '2024-01-31T12:00:00Z', '2024-01-31T12:00:00.123+02:00', '2024-01-31 08:30'], 'DateTime'],
    [['Chrome', 'Safari'], 'String'],
    [['12'], 'String'],
    [['true'], 'String'],
    [['2024-13-45T99:00:00Z'], 'String'],
    [[1, 'one'], 'String'],
    [[{ a: 1 }], 'String'],
    [[[1, 2]], 'String'],
    [[null, 3], 'Numeric'],
    [[null], null],
    [[], null],
  ];
  for (const [values, type] of cases) t.equal(inferPropertyType(values), type, JSON.stringify(values));
  const late = [...Array.from({ length: TYPE_SAMPLE }, (_, i) => i), 'text'];
  t.equal(inferPropertyType(late), 'Numeric', 'only a bounded sample is read');
});

t.test('types combined across blocks', async (t) => {
  t.equal(combinePropertyTypes(null, 'Numeric'), 'Numeric');
  t.equal(combinePropertyTypes('Boolean', null), 'Boolean');
  t.equal(combinePropertyTypes('Numeric', 'Numeric'), 'Numeric');
  t.equal(combinePropertyTypes('Numeric', 'DateTime'), 'String');
  t.equal(combinePropertyTypes(null, null), null);
});

t.test('edit distance: insertions, deletions, substitutions, swaps', async (t) => {
  t.equal(editDistance('browser', 'browser'), 0);
  t.equal(editDistance('browsr', 'browser'), 1);
  t.equal(editDistance('brwoser', 'browser'), 1, 'a swap of neighbours is one edit');
  t.equal(editDistance('bowser', 'browser'), 1);
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.ok(editDistance('a', 'abcdefgh', 2) > 2, 'stops early past the bound');
});

t.test('the closest known name, when close enough to be a typo', async (t) => {
  const known = ['$browser', '$browser_version', '$current_url', 'plan', 'load_ms', 'email'];
  t.equal(closestName('$browsr', known), '$browser');
  t.equal(closestName('$BROWSER', known), '$browser', 'case counts as nothing');
  t.equal(closestName('plna', known), 'plan');
  t.equal(closestName('load_mss', known), 'load_ms');
  t.equal(closestName('$current_ulr', known), '$current_url');
  t.equal(closestName('campaign_not_sent_yet', known), null, 'nothing close');
  t.equal(closestName('xyz', known), null);
  t.equal(closestName('pla', []), null);
});
