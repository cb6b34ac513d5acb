/**
 * Property operators (flags.md §3.3–3.5), one table per operator: present / missing / null / type-mismatch rows.
 * Each row runs a one-filter condition through the public API (compileCondition + matchesConditionProperties).
 */
import t from 'tap';
import { compileCondition, matchesConditionProperties, type EvaluationContext } from '../../src/domain/flags/index.js';

const NOW = new Date('2024-03-31T12:00:00.000Z');
const ABSENT = Symbol('absent');

type Row = [description: string, filterValue: unknown, propertyValue: unknown, expected: boolean];

function ctx(personProperties: Record<string, unknown>, extra: Partial<EvaluationContext> = {}): EvaluationContext {
  return {
    distinctId: 'user-1',
    personProperties,
    groups: {},
    groupProperties: {},
    hashKeyOverrides: {},
    staticCohortIds: new Set(),
    now: NOW,
    ...extra,
  };
}

function matches(filter: Record<string, unknown>, props: Record<string, unknown>, opts: { timezone?: string } = {}): boolean {
  const condition = compileCondition({ properties: [filter], rollout_percentage: 100 }, [], {}, opts);
  return matchesConditionProperties(condition, ctx(props));
}

function table(operator: string | undefined, rows: Row[], opts: { timezone?: string } = {}): void {
  t.test(`operator ${operator ?? '(absent = exact)'}`, async (t) => {
    for (const [description, value, prop, expected] of rows) {
      const filter: Record<string, unknown> = { key: 'p', type: 'person', value };
      if (operator !== undefined) filter.operator = operator;
      const props = prop === ABSENT ? {} : { p: prop };
      t.equal(matches(filter, props, opts), expected, description);
    }
  });
}

table('exact', [
  ['same string', 'Chrome', 'Chrome', true],
  ['case-insensitive', 'chrome', 'CHROME', true],
  ['unicode lowercasing', 'ÉCOLE', 'école', true],
  ['Kelvin sign lowercases to k', 'k', '\u212a', true],
  ['dotted capital I lowercases to two code units', 'i\u0307', '\u0130', true],
  ['length differs', 'abc', 'abcd', false],
  ['different string', 'Chrome', 'Safari', false],
  ['missing property', 'Chrome', ABSENT, false],
  ['null property vs "null" text', 'null', null, true],
  ['null property vs string', 'Chrome', null, false],
  ['list: any item', ['Safari', 'chrome'], 'Chrome', true],
  ['list: none', ['Safari', 'Firefox'], 'Chrome', false],
  ['number filter vs numeric string', 5, '5', true],
  ['numeric string filter vs number', '5', 5, true],
  ['list of numbers vs number', [1, 2, 3], 2, true],
  ['boolean filter true vs true', true, true, true],
  ['boolean filter true vs "TRUE"', true, 'TRUE', true],
  ['"true" filter vs boolean true', 'true', true, true],
  ['"True" filter vs "true"', 'True', 'true', true],
  ['boolean filter false vs false', false, false, true],
  ['"false" filter vs "anything" (falsy)', 'false', 'anything', true],
  ['false filter vs 0 (numbers are not truthy)', false, 0, true],
  ['true filter vs 1', true, 1, false],
  ['[true] list vs true', [true], true, true],
  ['["true","false"] list (all truthy? no) vs true', ['true', 'false'], true, false],
  ['empty list is boolean-like and truthy', [], true, true],
  ['empty list vs false', [], false, false],
  ['object property compared as JSON text', '{"a":1}', { a: 1 }, true],
  ['array property compared as JSON text', '["a"]', ['a'], true],
  ['null filter value never matches', null, 'x', false],
]);

table(undefined, [
  ['absent operator behaves as exact', 'x', 'X', true],
  ['absent operator, missing property', 'x', ABSENT, false],
]);

table('is_not', [
  ['different', 'Chrome', 'Safari', true],
  ['same (case-insensitive)', 'chrome', 'Chrome', false],
  ['missing property matches', 'Chrome', ABSENT, true],
  ['list: not in list', ['a', 'b'], 'c', true],
  ['list: in list', ['a', 'b'], 'B', false],
  ['boolean-like', 'true', false, true],
  ['null property vs "null"', 'null', null, false],
  ['null filter value never matches (even when missing)', null, ABSENT, false],
]);

table('icontains', [
  ['substring', 'acme', 'bob@ACME.com', true],
  ['no substring', 'acme', 'bob@other.com', false],
  ['missing', 'acme', ABSENT, false],
  ['null property is the text "null"', 'ul', null, true],
  ['number property', '23', 1234, true],
  ['ASCII-only case folding (É vs é)', 'é', 'É', false],
  ['ASCII folding still folds ASCII next to non-ASCII', 'café', 'CAFé', true],
  ['empty needle matches everything', '', 'x', true],
  ['regex syntax in the needle is literal', 'a.c', 'abc', false],
  ['regex syntax in the needle is literal (match)', '(a+)', 'x(A+)y', true],
  ['non-ASCII haystack, ASCII needle', 'ecole', 'ÉCOLE', false],
  ['Kelvin sign is not folded onto k', 'k', '\u212a', false],
]);

table('not_icontains', [
  ['substring', 'acme', 'bob@ACME.com', false],
  ['no substring', 'acme', 'bob@other.com', true],
  ['missing matches', 'acme', ABSENT, true],
  ['null property', 'null', null, false],
]);

table('starts_with', [
  ['prefix, case-insensitive', 'https://', 'HTTPS://x', true],
  ['prefix with regex syntax', '$^.', '$^.x', true],
  ['non-ASCII prefix folds ASCII only', 'é', 'É', false],
  ['not a prefix', 'x', 'ax', false],
  ['missing', 'x', ABSENT, false],
]);
table('not_starts_with', [
  ['prefix', 'a', 'abc', false],
  ['not a prefix', 'b', 'abc', true],
  ['missing matches', 'a', ABSENT, true],
]);
table('ends_with', [
  ['suffix', '.COM', 'x.com', true],
  ['not a suffix', '.org', 'x.com', false],
  ['missing', '.com', ABSENT, false],
]);
table('not_ends_with', [
  ['suffix', '.com', 'x.COM', false],
  ['not a suffix', '.org', 'x.com', true],
  ['missing matches', '.com', ABSENT, true],
]);

table('icontains_multi', [
  ['any needle', ['foo', 'ACME'], 'bob@acme.com', true],
  ['no needle', ['foo', 'bar'], 'bob@acme.com', false],
  ['single value works too', 'acme', 'ACME', true],
  ['mixed ASCII and non-ASCII needles', ['é', 'x'], 'É', false],
  ['empty list never matches', [], 'x', false],
  ['missing', ['a'], ABSENT, false],
]);
table('not_icontains_multi', [
  ['any needle', ['foo', 'acme'], 'bob@acme.com', false],
  ['no needle', ['foo', 'bar'], 'bob@acme.com', true],
  ['missing matches', ['a'], ABSENT, true],
]);

table('regex', [
  ['unanchored search', 'acme\\.com', 'bob@acme.com', true],
  ['anchored', '^bob', 'alice', false],
  ['case-sensitive by default', 'ACME', 'acme', false],
  ['inline (?i) flag', '(?i)ACME', 'acme', true],
  ['unicode property class', '^\\p{L}+$', 'héllo', true],
  ['escaped punctuation Rust allows', 'a\\-b', 'a-b', true],
  ['number property as text', '^\\d+$', 1234, true],
  ['null property is "null"', '^null$', null, true],
  ['missing', '.*', ABSENT, false],
  ['invalid pattern', '(unclosed', 'x', false],
  ['empty pattern matches', '', 'x', true],
]);
table('not_regex', [
  ['match', 'acme', 'acme', false],
  ['no match', 'acme', 'other', true],
  ['missing matches', 'acme', ABSENT, true],
  ['invalid pattern is false for not_regex too', '(unclosed', 'x', false],
]);

table('gt', [
  ['number > number', 10, 11, true],
  ['equal is not greater', 10, 10, false],
  ['numeric strings on both sides', '9', '10', true],
  ['float', '1.5', 1.6, true],
  ['exponent notation', '1e3', 1001, true],
  ['non-numeric property', '5', 'abc', false],
  ['non-numeric filter', 'abc', 5, false],
  ['null property', 1, null, false],
  ['boolean property', 0, true, false],
  ['missing', 1, ABSENT, false],
  ['leading space is not a number (Rust parse)', '5', ' 6', false],
  ['list filter value is not a number', [5], 6, false],
]);
table('gte', [
  ['equal', '10', 10, true],
  ['less', 10, 9, false],
  ['missing', 1, ABSENT, false],
]);
table('lt', [
  ['less', 10, 9.99, true],
  ['equal', 10, 10, false],
  ['negative', '-1', -2, true],
  ['missing', 1, ABSENT, false],
  ['non-numeric', 10, 'nine', false],
]);
table('lte', [
  ['equal', 10, '10', true],
  ['greater', 10, 11, false],
  ['missing', 1, ABSENT, false],
]);

table('between', [
  ['inside', [1, 10], 5, true],
  ['inclusive lower', [1, 10], 1, true],
  ['inclusive upper', ['1', '10'], '10', true],
  ['outside', [1, 10], 11, false],
  ['non-numeric property', [1, 10], 'x', false],
  ['malformed value', [1], 1, false],
  ['missing', [1, 10], ABSENT, false],
]);
table('not_between', [
  ['inside', [1, 10], 5, false],
  ['outside', [1, 10], 0, true],
  ['missing matches', [1, 10], ABSENT, true],
  ['non-numeric property', [1, 10], 'x', false],
]);

table('is_set', [
  ['present', 'is_set', 'x', true],
  ['present null counts as set', 'is_set', null, true],
  ['present empty string', 'is_set', '', true],
  ['missing', 'is_set', ABSENT, false],
  ['filter value is ignored', null, 1, true],
]);
table('is_not_set', [
  ['present', 'is_not_set', 'x', false],
  ['present null is set', 'is_not_set', null, false],
  ['missing', 'is_not_set', ABSENT, true],
]);

// NOW is 2024-03-31T12:00:00Z.
table('is_date_before', [
  ['absolute date, before', '2024-01-01', '2023-12-31', true],
  ['absolute date, after', '2024-01-01', '2024-01-02', false],
  ['property with time and Z', '2024-01-01T00:00:00Z', '2023-12-31T23:59:59Z', true],
  ['property with offset', '2024-01-01T00:00:00Z', '2024-01-01T00:30:00+01:00', true],
  ['epoch seconds number property', '2024-01-01', 1704067199, true],
  ['epoch seconds as string property', '2024-01-01', '1704067201', false],
  ['relative -7d (before 2024-03-24 12:00)', '-7d', '2024-03-24T11:59:59Z', true],
  ['relative 7d without sign is the same', '7d', '2024-03-24T12:00:01Z', false],
  ['relative hours', '-2h', '2024-03-31T09:59:00Z', true],
  ['relative weeks', '-1w', '2024-03-24T11:00:00Z', true],
  ['months clamp: Mar 31 - 1m = Feb 29 (leap)', '-1m', '2024-02-29T11:59:59Z', true],
  ['months clamp: not before Feb 29 12:00', '-1m', '2024-02-29T12:00:01Z', false],
  ['months step one at a time: Mar 31 - 2m = Jan 29', '-2m', '2024-01-29T11:59:59Z', true],
  ['months step one at a time: Jan 30 is after', '-2m', '2024-01-30T00:00:00Z', false],
  ['years', '-1y', '2023-03-31T11:00:00Z', true],
  ['relative number must be < 10000', '-10000d', '1900-01-01', false],
  ['unparseable property', '2024-01-01', 'not a date', false],
  ['null property', '2024-01-01', null, false],
  ['boolean property', '2024-01-01', true, false],
  ['missing', '2024-01-01', ABSENT, false],
  ['non-string filter value never matches', 1704067200, 1, false],
  ['unparseable filter value', 'yesterday', '2020-01-01', false],
  ['relative property value resolves against now', '2024-03-30', '-3d', true],
]);
table('is_date_after', [
  ['after', '2024-01-01', '2024-01-01T00:00:01Z', true],
  ['same instant is not after', '2024-01-01', '2024-01-01T00:00:00Z', false],
  ['naive date-time, space separator', '2024-01-01', '2024-01-01 10:00', true],
  ['fractional seconds', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.001Z', true],
  ['relative', '-1d', '2024-03-31T00:00:00Z', true],
  ['missing', '2024-01-01', ABSENT, false],
]);
table('is_date_exact', [
  ['same instant', '2024-01-01T00:00:00Z', '2024-01-01', true],
  ['different instant', '2024-01-01', '2024-01-01T00:00:01Z', false],
  ['missing', '2024-01-01', ABSENT, false],
]);
table(
  'is_date_before',
  [
    ['naive filter date is midnight in the team time zone', '2024-01-01', '2024-01-01T02:00:00Z', true],
    ['explicit offsets are honoured', '2024-01-01T00:00:00Z', '2023-12-31T23:30:00Z', true],
  ],
  { timezone: 'America/New_York' },
);

table('semver_eq', [
  ['equal', '1.2.3', '1.2.3', true],
  ['v prefix and whitespace', '1.2.3', ' v1.2.3 ', true],
  ['missing minor/patch padded', '3.0.0', '3', true],
  ['two components', '3.10.0', '3.10', true],
  ['leading zeros stripped', '3.8.0', '3.08', true],
  ['pre-release dropped', '1.2.3', '1.2.3-beta.1', true],
  ['build metadata dropped', '1.2.3', '1.2.3+42', true],
  ['different', '1.2.3', '1.2.4', false],
  ['four components are invalid', '1.2.3', '1.2.3.4', false],
  ['garbage', '1.2.3', 'abc', false],
  ['empty component invalid', '1.2.0', '1..2', false],
  ['null property', '1.2.3', null, false],
  ['number property', '2.0.0', 2, true],
  ['missing', '1.2.3', ABSENT, false],
  ['invalid filter value', 'x', '1.2.3', false],
]);
table('semver_neq', [
  ['different', '1.2.3', '1.2.4', true],
  ['equal', '1.2.3', '1.2.3', false],
  ['unparseable property is false', '1.2.3', 'abc', false],
  ['missing', '1.2.3', ABSENT, false],
]);
table('semver_gt', [
  ['numeric, not lexicographic', '1.9.0', '1.10.0', true],
  ['equal', '1.2.3', '1.2.3', false],
  ['less', '2.0.0', '1.99.99', false],
]);
table('semver_gte', [
  ['equal', '1.2.3', '1.2.3', true],
  ['less', '1.2.3', '1.2.2', false],
]);
table('semver_lt', [
  ['less', '2.0.0', '1.99.99', true],
  ['greater', '1.0.0', '1.0.1', false],
]);
table('semver_lte', [
  ['equal', '1.0.0', '1.0', true],
  ['greater', '1.0.0', '1.0.1', false],
]);
table('semver_tilde', [
  ['lower bound inclusive', '1.2.3', '1.2.3', true],
  ['patch above', '1.2.3', '1.2.99', true],
  ['next minor excluded', '1.2.3', '1.3.0', false],
  ['below', '1.2.3', '1.2.2', false],
  ['missing', '1.2.3', ABSENT, false],
]);
table('semver_caret', [
  ['major > 0: next major excluded', '1.2.3', '1.99.0', true],
  ['major > 0: 2.0.0 excluded', '1.2.3', '2.0.0', false],
  ['major 0: next minor excluded', '0.2.3', '0.2.9', true],
  ['major 0: 0.3.0 excluded', '0.2.3', '0.3.0', false],
  ['0.0.z: next patch excluded', '0.0.3', '0.0.4', false],
  ['0.0.z: equal', '0.0.3', '0.0.3', true],
  ['below lower bound', '1.2.3', '1.2.2', false],
]);
table('semver_wildcard', [
  ['1.* includes 1.99.0', '1.*', '1.99.0', true],
  ['1.* excludes 2.0.0', '1.*', '2.0.0', false],
  ['1.2.* includes 1.2.7', '1.2.*', '1.2.7', true],
  ['1.2.* excludes 1.3.0', '1.2.*', '1.3.0', false],
  ['1.*.* is 1.*', '1.*.*', '1.5.0', true],
  ['x works as a wildcard', '1.x', '1.4.0', true],
  ['* matches everything', '*', '0.0.1', true],
  ['wildcard in the middle is invalid', '1.*.3', '1.2.3', false],
  ['unparseable property', '1.*', 'abc', false],
  ['missing', '1.*', ABSENT, false],
]);

table('nonsense_operator', [
  ['unknown operators never match', 'x', 'x', false],
  ['even when missing', 'x', ABSENT, false],
]);

t.test('person property lookups', async (t) => {
  t.equal(
    matches({ key: 'distinct_id', type: 'person', value: ['user-1'] }, {}),
    true,
    'distinct_id is injected into person properties',
  );
  t.equal(
    matches({ key: 'distinct_id', type: 'person', value: 'other' }, { distinct_id: 'other' }),
    true,
    'an explicit distinct_id property wins',
  );
  t.equal(matches({ key: 'constructor', type: 'person', operator: 'is_set' }, {}), false, 'prototype keys are not properties');
  t.equal(matches({ key: 'toString', type: 'person', operator: 'is_not_set' }, {}), true);
  t.equal(matches({ key: '__proto__', type: 'person', operator: 'is_set' }, JSON.parse('{"__proto__": 1}')), true);
  t.equal(matches({ key: 'p', type: 'event', value: 'x' }, { p: 'x' }), false, 'unsupported property types never match');
});

t.test('person_metadata created_at', async (t) => {
  const condition = compileCondition(
    { properties: [{ key: 'created_at', type: 'person_metadata', operator: 'is_date_after', value: '-30d' }] },
    [],
    {},
  );
  t.equal(matchesConditionProperties(condition, ctx({}, { personCreatedAt: '2024-03-20T00:00:00Z' })), true);
  t.equal(matchesConditionProperties(condition, ctx({}, { personCreatedAt: '2023-03-20T00:00:00Z' })), false);
  t.equal(matchesConditionProperties(condition, ctx({ created_at: '2024-03-20' })), false, 'not read from properties');
  t.equal(matchesConditionProperties(condition, ctx({}, { personCreatedAt: null })), false, 'missing');
});

t.test('group properties', async (t) => {
  const condition = compileCondition(
    {
      properties: [
        { key: 'plan', type: 'group', group_type_index: 0, value: 'pro' },
        { key: '$group_key', type: 'group', group_type_index: 0, value: 'acme' },
      ],
    },
    [],
    { 0: 'company' },
  );
  const base = ctx({}, { groups: { company: 'acme' }, groupProperties: { company: { plan: 'PRO' } } });
  t.equal(matchesConditionProperties(condition, base), true, 'group props plus injected $group_key');
  t.equal(matchesConditionProperties(condition, { ...base, groupProperties: {} }), false, 'no group properties');
  const unknownType = compileCondition({ properties: [{ key: 'plan', type: 'group', group_type_index: 3, operator: 'is_not', value: 'x' }] }, [], { 0: 'company' });
  t.equal(matchesConditionProperties(unknownType, base), true, 'unknown group type reads as missing properties');
});
