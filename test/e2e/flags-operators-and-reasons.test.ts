// One table per property operator and one per reason code, evaluated by the real server through /flags/?v=2
// with request person_properties (the stored-person path is covered in flags-persons-groups.test.ts).
import t from 'tap';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t);

let n = 0;
async function flagWith(filters: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const key = `f${++n}`;
  const res = await server.api.post(FF, { key, filters, ...extra });
  if (res.status !== 201) throw new Error(`create ${JSON.stringify(filters)}: ${res.text}`);
  return key;
}

async function evaluate(key: string, body: Record<string, unknown>) {
  const res = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'someone', flag_keys_to_evaluate: [key], ...body });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.flags[key];
}

type Row = [unknown, boolean];
const MISSING = Symbol('missing');
const operatorTables: { operator: string; value: unknown; rows: (Row | [typeof MISSING, boolean])[] }[] = [
  { operator: 'exact', value: 'Chrome', rows: [['chrome', true], ['Firefox', false], [MISSING, false]] },
  { operator: 'exact', value: ['a', 'b'], rows: [['b', true], ['c', false]] },
  { operator: 'exact', value: 'true', rows: [[true, true], ['TRUE', true], [false, false]] },
  { operator: 'exact', value: 5, rows: [[5, true], ['5', true], [6, false]] },
  { operator: 'is_not', value: 'Chrome', rows: [['Safari', true], ['chrome', false], [MISSING, true]] },
  { operator: 'icontains', value: 'ROM', rows: [['Chrome', true], ['Safari', false], [MISSING, false]] },
  { operator: 'not_icontains', value: 'rom', rows: [['Safari', true], ['chrome', false], [MISSING, true]] },
  { operator: 'regex', value: '^ch.+e$', rows: [['chrome', true], ['Chrome', false], [MISSING, false]] },
  { operator: 'not_regex', value: '^ch', rows: [['safari', true], ['chrome', false], [MISSING, true]] },
  { operator: 'gt', value: 10, rows: [[11, true], ['10.5', true], [10, false], ['abc', false], [MISSING, false]] },
  { operator: 'gte', value: '10', rows: [[10, true], [9.99, false]] },
  { operator: 'lt', value: 3, rows: [[2, true], [3, false], [MISSING, false]] },
  { operator: 'lte', value: 3, rows: [[3, true], [4, false]] },
  { operator: 'is_set', value: 'is_set', rows: [['anything', true], [null, true], [MISSING, false]] },
  { operator: 'is_not_set', value: 'is_not_set', rows: [['anything', false], [MISSING, true]] },
  { operator: 'is_date_before', value: '2024-01-01', rows: [['2023-12-31T23:00:00Z', true], ['2024-02-01', false], ['not a date', false]] },
  { operator: 'is_date_after', value: '-30d', rows: [[new Date(Date.now() - 86400000).toISOString(), true], ['2001-01-01', false]] },
  { operator: 'is_date_exact', value: '2024-03-04T05:06:07Z', rows: [['2024-03-04T05:06:07Z', true], ['2024-03-04T05:06:08Z', false]] },
  { operator: 'semver_gt', value: '1.2.3', rows: [['1.10.0', true], ['1.2.3', false], ['v2', true], ['junk', false]] },
  { operator: 'semver_lte', value: '1.2.3', rows: [['1.2.3', true], ['1.2.4', false]] },
  { operator: 'semver_eq', value: '2.0', rows: [['2.0.0', true], ['2.0.1', false]] },
  { operator: 'semver_neq', value: '2.0.0', rows: [['2.0.1', true], ['2.0.0', false]] },
  { operator: 'semver_tilde', value: '1.2.3', rows: [['1.2.9', true], ['1.3.0', false]] },
  { operator: 'semver_caret', value: '0.2.3', rows: [['0.2.9', true], ['0.3.0', false]] },
  { operator: 'semver_wildcard', value: '1.2.*', rows: [['1.2.7', true], ['1.3.0', false]] },
  { operator: 'starts_with', value: 'ab', rows: [['ABC', true], ['cab', false]] },
  { operator: 'ends_with', value: 'yz', rows: [['xYZ', true], ['yzx', false]] },
  { operator: 'not_starts_with', value: 'ab', rows: [['cab', true], ['abc', false]] },
];

for (const table of operatorTables) {
  t.test(`operator ${table.operator} ${JSON.stringify(table.value)}`, async (t) => {
    const key = await flagWith({ groups: [{ properties: [{ key: 'p', type: 'person', operator: table.operator, value: table.value }], rollout_percentage: 100 }] });
    for (const [prop, expected] of table.rows) {
      const person_properties = prop === MISSING ? {} : { p: prop };
      const r = await evaluate(key, { person_properties });
      t.equal(r.enabled, expected, `${table.operator} ${JSON.stringify(table.value)} vs ${prop === MISSING ? '(missing)' : JSON.stringify(prop)}`);
    }
  });
}

t.test('distinct_id is a person property for matching', async (t) => {
  const key = await flagWith({ groups: [{ properties: [{ key: 'distinct_id', type: 'person', operator: 'exact', value: ['vip-1', 'vip-2'] }] }] });
  t.equal((await evaluate(key, { distinct_id: 'vip-2' })).enabled, true);
  t.equal((await evaluate(key, { distinct_id: 'nobody' })).enabled, false);
});

t.test('reasons', async (t) => {
  const prop = (value: string) => ({ key: 'plan', type: 'person', operator: 'exact', value });
  const matchKey = await flagWith({ groups: [{ properties: [prop('free')] }, { properties: [prop('pro')], rollout_percentage: 100 }] });
  t.same((await evaluate(matchKey, { person_properties: { plan: 'pro' } })).reason, { code: 'condition_match', condition_index: 1, description: 'Matched condition set 2' });
  t.match((await evaluate(matchKey, { person_properties: { plan: 'none' } })).reason, { code: 'no_condition_match', description: 'No matching condition set' });

  const rolloutKey = await flagWith({ groups: [{ properties: [prop('pro')], rollout_percentage: 0 }] });
  t.same((await evaluate(rolloutKey, { person_properties: { plan: 'pro' } })).reason, { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' });

  const groupKey = await flagWith({ aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }] });
  const noGroup = await evaluate(groupKey, {});
  t.equal(noGroup.enabled, false);
  t.equal(noGroup.reason.code, 'no_group_type');

  const enrollKey = await flagWith({ groups: [{ properties: [], rollout_percentage: 0 }], feature_enrollment: true });
  const enrolled = await evaluate(enrollKey, { person_properties: { [`$feature_enrollment/${enrollKey}`]: true } });
  t.match(enrolled, { enabled: true, reason: { code: 'super_condition_value', condition_index: 0 } });
  t.match(await evaluate(enrollKey, {}), { enabled: false, reason: { code: 'out_of_rollout_bound' } }, 'not enrolled: normal evaluation');

  const superKey = await flagWith({
    groups: [{ properties: [], rollout_percentage: 0 }],
    super_groups: [{ properties: [{ key: '$feature_enrollment/beta', type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 }],
  });
  t.match(await evaluate(superKey, { person_properties: { '$feature_enrollment/beta': 'true' } }), { enabled: true, reason: { code: 'super_condition_value' } });

  const holdoutKey = await flagWith({ groups: [{ properties: [], rollout_percentage: 100 }], holdout: { id: 7, exclusion_percentage: 100 } });
  t.match(await evaluate(holdoutKey, {}), { enabled: true, variant: 'holdout-7', reason: { code: 'holdout_condition_value', condition_index: null } });

  const dependent = await flagWith({ groups: [{ properties: [{ key: 'no-such-flag', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
  t.match(await evaluate(dependent, {}), { enabled: false, reason: { code: 'missing_dependency' } });
});

t.test('variants, overrides, payloads and flag dependencies', async (t) => {
  const variants = { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] };
  const overrideKey = await flagWith({
    groups: [{ properties: [{ key: 'beta', type: 'person', operator: 'exact', value: ['yes'] }], variant: 'test' }, { properties: [], rollout_percentage: 100 }],
    multivariate: variants,
    payloads: { test: '{"v":"t"}', control: '"c"' },
  });
  for (const id of ['a', 'b', 'c', 'd', 'e']) {
    const r = await evaluate(overrideKey, { distinct_id: id, person_properties: { beta: 'yes' } });
    t.equal(r.variant, 'test', `override wins for ${id}`);
    t.equal(r.metadata.payload, '{"v":"t"}');
  }
  const parent = await flagWith({ groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }] }] });
  const child = await flagWith({ groups: [{ properties: [{ key: parent, type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
  t.equal((await evaluate(child, { person_properties: { plan: 'pro' }, flag_keys_to_evaluate: [child] })).enabled, true, 'dependency met');
  t.equal((await evaluate(child, { person_properties: { plan: 'free' }, flag_keys_to_evaluate: [child] })).enabled, false, 'dependency not met');
});
