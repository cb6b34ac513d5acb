/**
 * validateFlagFilters (API-side validation of flag writes) and the derived management-API fields.
 */
import t from 'tap';
import { isSimpleFlag, simpleRolloutPercentage, validateFlagFilters } from '../../src/domain/flags/index.js';

const ctx = {
  existingCohortIds: new Set([1, 2]),
  isStaticCohort: (id: number) => id === 2,
  groupTypes: { 0: 'company' },
};

const variants = (...pcts: number[]) => ({ variants: pcts.map((p, i) => ({ key: `v${i}`, rollout_percentage: p })) });
const cond = (properties: unknown[], extra: Record<string, unknown> = {}) => ({ groups: [{ properties, rollout_percentage: 100, ...extra }] });
const prop = (operator: string | undefined, value: unknown, extra: Record<string, unknown> = {}) => ({ key: 'p', type: 'person', value, ...(operator ? { operator } : {}), ...extra });

t.test('valid filters', async (t) => {
  const rows: [string, unknown][] = [
    ['empty object (legacy, no groups)', {}],
    ['simple rollout', { groups: [{ properties: [], rollout_percentage: 50 }] }],
    ['null rollout', { groups: [{ properties: [], rollout_percentage: null }] }],
    ['multivariate summing to 100', { groups: [{ properties: [] }], multivariate: variants(50, 25, 25) }],
    ['float variants summing to 100', { groups: [{ properties: [] }], multivariate: variants(33.33, 33.33, 33.34) }],
    ['valid variant override', { groups: [{ properties: [], variant: 'v1' }], multivariate: variants(50, 50) }],
    ['boolean payload', { groups: [{ properties: [] }], payloads: { true: '{"a":1}' } }],
    ['variant payloads', { groups: [{ properties: [] }], multivariate: variants(50, 50), payloads: { v0: '1', v1: '"x"' } }],
    ['non-string payload value', { groups: [{ properties: [] }], payloads: { true: { a: 1 } } }],
    ['holdout payload key', { groups: [{ properties: [] }], holdout: { id: 4, exclusion_percentage: 10 }, payloads: { true: '1', 'holdout-4': '2' } }],
    ['cohort filter', cond([{ key: 'id', type: 'cohort', value: 1 }])],
    ['static cohort is allowed', cond([{ key: 'id', type: 'cohort', value: 2, operator: 'not_in' }])],
    ['flag dependency', cond([{ key: '12', type: 'flag', operator: 'flag_evaluates_to', value: 'control' }])],
    ['regex string', cond([prop('regex', '^a.*b$')])],
    ['nested quantifier the linear fallback can run', cond([prop('regex', '^(\\w+\\s?)+$')])],
    ['icontains number is accepted (lenient)', cond([prop('icontains', 5)])],
    ['gt numeric string', cond([prop('gt', '10')])],
    ['gt number', cond([prop('gt', 10)])],
    ['relative date', cond([prop('is_date_after', '-30d')])],
    ['absolute date', cond([prop('is_date_before', '2024-01-01T00:00:00Z')])],
    ['semver', cond([prop('semver_gte', 'v1.2')])],
    ['semver wildcard', cond([prop('semver_wildcard', '1.*')])],
    ['between', cond([prop('between', [1, '10'])])],
    ['is_set without value', cond([prop('is_set', undefined)])],
    ['exact list', cond([prop('exact', ['a', 'b'])])],
    ['untyped property on a person flag', cond([{ key: 'p', value: 'x' }])],
    ['person_metadata', cond([{ key: 'created_at', type: 'person_metadata', operator: 'is_date_after', value: '-7d' }])],
    ['group flag with group properties', { aggregation_group_type_index: 0, ...cond([{ key: 'p', type: 'group', group_type_index: 0, value: 'x' }]) }],
    ['mixed targeting condition', { groups: [{ aggregation_group_type_index: 0, properties: [{ key: 'p', type: 'group', group_type_index: 0, value: 'x' }] }] }],
  ];
  for (const [description, filters] of rows) t.equal(validateFlagFilters(filters, ctx), null, description);
});

t.test('invalid filters', async (t) => {
  const rows: [string, unknown, string, string | RegExp][] = [
    ['not an object', [], 'invalid_input', /object/],
    ['variants not summing to 100', { groups: [{ properties: [] }], multivariate: variants(50, 20) }, 'invalid_input', 'Invalid variant definitions: Variant rollout percentages must sum to 100.'],
    ['variants over 100', { groups: [{ properties: [] }], multivariate: variants(60, 50) }, 'invalid_input', /sum to 100/],
    ['duplicate variant keys', { groups: [{ properties: [] }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'a', rollout_percentage: 50 }] } }, 'invalid_input', /more than once/],
    ['unknown variant override', { groups: [{ properties: [], variant: 'zz' }], multivariate: variants(100) }, 'invalid_input', 'Filters are not valid (variant override does not exist)'],
    ['override on a boolean flag', { groups: [{ properties: [], variant: 'a' }] }, 'invalid_input', /variant override/],
    ['rollout over 100', { groups: [{ properties: [], rollout_percentage: 101 }] }, 'invalid_input', /between 0 and 100/],
    ['groups not a list', { groups: {} }, 'invalid_input', /list/],
    ['payloads not an object', { groups: [], payloads: [] }, 'invalid_input', 'Payloads must be passed as a dictionary'],
    ['payload not JSON', { groups: [], payloads: { true: '{bad' } }, 'invalid_input', 'Payload value is not valid JSON'],
    ['boolean flag payload key', { groups: [], payloads: { control: '1' } }, 'invalid_input', "Payload keys must be 'true' for boolean flags"],
    ['multivariate payload key', { groups: [], multivariate: variants(100), payloads: { true: '1' } }, 'invalid_input', 'Payload keys must match a variant key for multivariate flags'],
    ['unknown operator', cond([prop('looks_like', 'x')]), 'invalid_input', /Unknown operator "looks_like"/],
    ['regex with a list value', cond([prop('regex', ['a'])]), 'invalid_value', /Invalid value for operator regex/],
    ['gt with an object', cond([prop('gt', { a: 1 })]), 'invalid_value', /Invalid value for operator gt/],
    ['invalid regex', cond([prop('regex', '(unclosed')]), 'invalid_value', /Invalid regular expression/],
    ['back-reference (RE2 has none)', cond([prop('regex', '^((a+)+)\\1$')]), 'invalid_value', /Invalid regular expression.*escape/],
    ['look-ahead (RE2 has none)', cond([prop('regex', '(?=x)(\\w+\\s?)+$')]), 'invalid_value', /Invalid regular expression.*Perl syntax/],
    ['repetition count over 1000', cond([prop('regex', 'a{1001}')]), 'invalid_value', /repeat count/],
    ['unparseable date', cond([prop('is_date_before', 'last tuesday')]), 'invalid_date', 'Invalid date value: last tuesday'],
    ['relative date too large', cond([prop('is_date_after', '-10000d')]), 'invalid_date', /Invalid date value/],
    ['bad semver', cond([prop('semver_eq', '1.x.3')]), 'invalid_value', /semantic version/],
    ['bad wildcard', cond([prop('semver_wildcard', '1.*.3')]), 'invalid_value', /version pattern/],
    ['between needs a pair', cond([prop('between', [1])]), 'invalid_value', /\[min, max\]/],
    ['missing value', cond([prop('exact', null)]), 'invalid_value', /needs a value/],
    ['missing cohort', cond([{ key: 'id', type: 'cohort', value: 99 }]), 'cohort_does_not_exist', 'Cohort with id 99 does not exist'],
    ['cohort with a bad operator', cond([{ key: 'id', type: 'cohort', value: 1, operator: 'icontains' }]), 'invalid_input', /"in" and "not_in"/],
    ['flag dependency with another operator', cond([{ key: '1', type: 'flag', operator: 'exact', value: true }]), 'invalid_input', "Flag properties must use the 'flag_evaluates_to' operator"],
    ['flag dependency expecting a number', cond([{ key: '1', type: 'flag', operator: 'flag_evaluates_to', value: 3 }]), 'invalid_input', /true, false or a variant/],
    ['event property on a flag', cond([{ key: 'p', type: 'event', value: 'x' }]), 'invalid_input', 'Filters are not valid (can only use person, cohort, and flag properties)'],
    ['group property on a person flag', cond([{ key: 'p', type: 'group', group_type_index: 0, value: 'x' }]), 'invalid_input', /can only use person, cohort, and flag/],
    ['person property on a group flag', { aggregation_group_type_index: 0, ...cond([prop('exact', 'x')]) }, 'invalid_input', 'Filters are not valid (can only use group properties)'],
    ['group property of another type', { aggregation_group_type_index: 0, ...cond([{ key: 'p', type: 'group', group_type_index: 1, value: 'x' }]) }, 'invalid_input', /can only use group properties/],
    ['cohort on a group flag', { aggregation_group_type_index: 0, ...cond([{ key: 'id', type: 'cohort', value: 1 }]) }, 'invalid_input', /can only use group properties/],
    ['bad aggregation index', { aggregation_group_type_index: 9, groups: [] }, 'invalid_input', /from 0 to 4/],
    ['too many list values', cond([prop('exact', Array.from({ length: 1001 }, (_, i) => i))]), 'invalid_input', /cannot contain more than 1000 values/],
    ['bad holdout', { groups: [], holdout: { id: 1, exclusion_percentage: 120 } }, 'invalid_input', /exclusion_percentage/],
  ];
  for (const [description, filters, code, detail] of rows) {
    const error = validateFlagFilters(filters, ctx);
    t.ok(error, description);
    if (!error) continue;
    t.equal(error.attr, 'filters', `${description}: attr`);
    t.equal(error.code, code, `${description}: code`);
    if (typeof detail === 'string') t.equal(error.detail, detail, `${description}: detail`);
    else t.match(error.detail, detail, `${description}: detail`);
  }
});

t.test('flag dependency existence check (optional)', async (t) => {
  const filters = cond([{ key: '12', type: 'flag', operator: 'flag_evaluates_to', value: true }]);
  t.equal(validateFlagFilters(filters, { ...ctx, flagExists: (ref) => ref === '12' }), null);
  t.match(validateFlagFilters(filters, { ...ctx, flagExists: () => false })?.detail, /non-existent flag/);
});

t.test('nested repetition is accepted: every pattern is matched in linear time', async (t) => {
  for (const pattern of ['(a+)+$', '(?i)^(a+)+$', '(\\p{L}+)+', '(\\w+\\s?)+$']) {
    t.equal(validateFlagFilters(cond([prop('regex', pattern)]), ctx), null, pattern);
  }
});

t.test('is_simple_flag and rollout_percentage', async (t) => {
  const rows: [string, Record<string, unknown>, boolean, number | null][] = [
    ['one empty condition', { groups: [{ properties: [], rollout_percentage: 30 }] }, true, 30],
    ['one empty condition without rollout', { groups: [{ properties: [] }] }, true, null],
    ['two conditions', { groups: [{ properties: [] }, { properties: [] }] }, false, null],
    ['condition with properties', { groups: [{ properties: [prop('exact', 'x')], rollout_percentage: 30 }] }, false, null],
    ['group flag', { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 30 }] }, false, null],
    ['no conditions', { groups: [] }, false, null],
    ['legacy filters without properties', {}, true, null],
    ['legacy filters with properties', { properties: [prop('exact', 'x')] }, false, null],
  ];
  for (const [description, filters, simple, pct] of rows) {
    t.equal(isSimpleFlag(filters), simple, `${description}: is_simple_flag`);
    t.equal(simpleRolloutPercentage(filters), pct, `${description}: rollout_percentage`);
  }
});
