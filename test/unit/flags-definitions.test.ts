/**
 * Local-evaluation definitions payload (flags.md §6.1): flag list, dependency chains, cohorts, cohort inlining.
 */
import t from 'tap';
import { buildLocalEvaluationPayload, type CohortRecord, type FlagRecord } from '../../src/domain/flags/index.js';

function flag(id: number, key: string, filters: Record<string, unknown>, extra: Partial<FlagRecord> = {}): FlagRecord {
  return { id, key, name: `${key} name`, active: true, deleted: false, filters, ensure_experience_continuity: false, version: 2, ...extra };
}
const dep = (key: string, value: unknown = true) => ({ key, type: 'flag', operator: 'flag_evaluates_to', value });
const onDeps = (...keys: string[]) => ({ groups: [{ properties: keys.map((k) => dep(k)), rollout_percentage: 100 }] });

function chains(payload: ReturnType<typeof buildLocalEvaluationPayload>, key: string): [string, unknown][] {
  const f = payload.flags.find((x) => x.key === key)!;
  const groups = f.filters.groups as { properties: { type: string; key: string; dependency_chain?: unknown }[] }[];
  return groups.flatMap((g) => g.properties.filter((p) => p.type === 'flag').map((p): [string, unknown] => [p.key, p.dependency_chain]));
}

t.test('flag entries', async (t) => {
  const flags = [
    flag(1, 'a', { groups: [{ properties: [], rollout_percentage: 50 }] }, { evaluation_runtime: 'server', evaluation_contexts: ['web'], has_experiment: true }),
    flag(2, 'inactive', { groups: [] }, { active: false }),
    flag(3, 'deleted', { groups: [] }, { deleted: true }),
    flag(4, 'remote', { groups: [] }, { is_remote_configuration: true }),
    flag(5, 'legacy', { properties: [{ key: 'x', type: 'person', value: 'y' }] }, { rollout_percentage: 20 }),
    flag(6, 'device', { groups: [] }, { bucketing_identifier: 'device_id', ensure_experience_continuity: true }),
  ];
  const payload = buildLocalEvaluationPayload(flags, [], { 0: 'company' }, 42, { sendCohorts: true });
  t.same(payload.flags.map((f) => f.key), ['a', 'inactive', 'legacy', 'device'], 'non-deleted, non-remote-config flags, active or not');
  t.same(payload.group_type_mapping, { 0: 'company' });
  t.same(payload.cohorts, {});
  t.same(payload.flags[0], {
    id: 1,
    team_id: 42,
    name: 'a name',
    key: 'a',
    filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
    deleted: false,
    active: true,
    ensure_experience_continuity: false,
    has_encrypted_payloads: false,
    version: 2,
    evaluation_runtime: 'server',
    evaluation_contexts: ['web'],
    evaluation_tags: ['web'],
    has_experiment: true,
  });
  t.equal(payload.flags[1]!.evaluation_runtime, 'all', 'null runtime is reported as all');
  t.same(payload.flags[2]!.filters, { properties: [{ key: 'x', type: 'person', value: 'y' }], groups: [{ properties: [{ key: 'x', type: 'person', value: 'y' }], rollout_percentage: 20 }] }, 'legacy filters get groups');
  t.equal(payload.flags[3]!.bucketing_identifier, 'device_id');
  t.equal(payload.flags[3]!.ensure_experience_continuity, true);
  t.same(flags[0]!.filters, { groups: [{ properties: [], rollout_percentage: 50 }] }, 'records are not mutated');
});

t.test('dependency chains and key normalisation', async (t) => {
  const flags = [
    flag(1, 'flag-a', { groups: [{ properties: [{ key: 'email', type: 'person', value: 'x' }] }] }),
    flag(2, 'flag-b', onDeps('1')),
    flag(3, 'flag-c', onDeps('2')),
    flag(4, 'flag-d', onDeps('1', 'flag-b')),
    flag(5, 'cyc-1', onDeps('6')),
    flag(6, 'cyc-2', onDeps('5')),
    flag(7, 'self', onDeps('self')),
    flag(8, 'on-self', onDeps('7')),
    flag(9, 'missing', onDeps('999999')),
    flag(10, 'deleted', { groups: [] }, { deleted: true }),
    flag(11, 'on-deleted', onDeps('10')),
    flag(12, 'inactive', { groups: [] }, { active: false }),
    flag(13, 'on-inactive', onDeps('12')),
    flag(14, 'diamond', onDeps('3', '4')),
  ];
  const payload = buildLocalEvaluationPayload(flags, [], {}, 1, { sendCohorts: true });
  const rows: [string, string, [string, unknown][]][] = [
    ['id converted to key; chain ends with the dependency', 'flag-b', [['flag-a', ['flag-a']]]],
    ['transitive chain, topologically sorted', 'flag-c', [['flag-b', ['flag-a', 'flag-b']]]],
    ['two dependencies', 'flag-d', [['flag-a', ['flag-a']], ['flag-b', ['flag-a', 'flag-b']]]],
    ['cycle: empty chains', 'cyc-1', [['cyc-2', []]]],
    ['self dependency: empty chain', 'self', [['self', []]]],
    ['dependency on a broken flag: empty chain', 'on-self', [['self', []]]],
    ['missing flag: key kept, empty chain', 'missing', [['999999', []]]],
    ['deleted flag counts as missing', 'on-deleted', [['10', []]]],
    ['inactive flags are valid dependencies', 'on-inactive', [['inactive', ['inactive']]]],
    ['shared dependencies appear once', 'diamond', [['flag-c', ['flag-a', 'flag-b', 'flag-c']], ['flag-d', ['flag-a', 'flag-b', 'flag-d']]]],
  ];
  for (const [description, key, expected] of rows) t.same(chains(payload, key), expected, description);
});

t.test('cohorts map', async (t) => {
  const tree = (values: unknown[]) => ({ type: 'OR', values: [{ type: 'AND', values }] });
  const cohorts: CohortRecord[] = [
    { id: 1, name: 'one', deleted: false, is_static: false, filters: { properties: tree([{ key: 'id', type: 'cohort', value: 2 }, { key: 'plan', type: 'person', value: 'pro' }]) } },
    { id: 2, name: 'two', deleted: false, is_static: false, filters: { properties: tree([{ key: 'country', type: 'person', value: 'US' }, { key: 'id', type: 'cohort', value: 3 }]) } },
    { id: 3, name: 'static', deleted: false, is_static: true, filters: {} },
    { id: 4, name: 'unused', deleted: false, is_static: false, filters: { properties: tree([]) } },
    { id: 5, name: 'deleted', deleted: true, is_static: false, filters: { properties: tree([]) } },
    { id: 6, name: 'inactive flag cohort', deleted: false, is_static: false, filters: { properties: tree([{ key: 'a', type: 'person', value: 'b' }]) } },
  ];
  const flags = [
    flag(1, 'uses-1', { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 1 }] }] }),
    flag(2, 'uses-deleted', { groups: [{ properties: [{ key: 'id', type: 'cohort', value: '5' }] }] }),
    flag(3, 'inactive', { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 6 }] }] }, { active: false }),
  ];
  const payload = buildLocalEvaluationPayload(flags, cohorts, {}, 1, { sendCohorts: true });
  t.same(Object.keys(payload.cohorts).sort(), ['1', '2', '6'], 'referenced dynamic cohorts incl. nested; no static, deleted or unused ones');
  t.same(payload.cohorts['1'], cohorts[0]!.filters.properties);
  const without = buildLocalEvaluationPayload(flags, cohorts, {}, 1, { sendCohorts: false });
  t.same(without.cohorts, {}, 'no cohorts without send_cohorts');
});

t.test('cohort inlining without send_cohorts', async (t) => {
  const person = (key: string, value: string) => ({ key, type: 'person', value, operator: 'exact' });
  const mkCohort = (id: number, properties: unknown, extra: Partial<CohortRecord> = {}): CohortRecord => ({ id, name: `c${id}`, deleted: false, is_static: false, filters: { properties }, ...extra });
  const cohorts = [
    mkCohort(1, { type: 'OR', values: [{ type: 'AND', values: [person('a', '1'), person('b', '2')] }] }),
    mkCohort(2, { type: 'OR', values: [{ type: 'AND', values: [person('a', '1')] }, { type: 'AND', values: [person('b', '2')] }] }),
    mkCohort(3, { type: 'OR', values: [{ type: 'AND', values: [{ ...person('a', '1'), negation: true }] }] }),
    mkCohort(4, { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: 1 }] }] }),
    mkCohort(5, {}, { is_static: true }),
    mkCohort(6, { type: 'AND', values: [{ type: 'OR', values: [person('a', '1'), person('b', '2')] }, { type: 'AND', values: [person('c', '3')] }] }),
  ];
  const cohortCondition = (id: number, extra: Record<string, unknown> = {}) => ({ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 40, ...extra });
  const groupsOf = (groups: unknown[]) => {
    const payload = buildLocalEvaluationPayload([flag(1, 'f', { groups })], cohorts, {}, 1, { sendCohorts: false });
    return payload.flags[0]!.filters.groups;
  };
  const rows: [string, unknown[], unknown][] = [
    ['single AND group -> one condition', [cohortCondition(1)], [{ properties: [person('a', '1'), person('b', '2')], rollout_percentage: 40 }]],
    [
      'OR of ANDs -> one condition per branch',
      [cohortCondition(2)],
      [
        { properties: [person('a', '1')], rollout_percentage: 40 },
        { properties: [person('b', '2')], rollout_percentage: 40 },
      ],
    ],
    [
      'other conditions are kept, expanded ones appended',
      [cohortCondition(1), { properties: [person('z', '9')], rollout_percentage: 100 }],
      [
        { properties: [person('z', '9')], rollout_percentage: 100 },
        { properties: [person('a', '1'), person('b', '2')], rollout_percentage: 40 },
      ],
    ],
    ['negation: unchanged', [cohortCondition(3)], [cohortCondition(3)]],
    ['nested cohort (two cohorts): unchanged', [cohortCondition(4)], [cohortCondition(4)]],
    ['static cohort: unchanged', [cohortCondition(5)], [cohortCondition(5)]],
    ['AND of ORs: unchanged', [cohortCondition(6)], [cohortCondition(6)]],
    ['cohort next to another property: unchanged', [{ properties: [{ key: 'id', type: 'cohort', value: 1 }, person('x', 'y')] }], [{ properties: [{ key: 'id', type: 'cohort', value: 1 }, person('x', 'y')] }]],
    ['variant override: unchanged', [cohortCondition(1, { variant: 'v' })], [cohortCondition(1, { variant: 'v' })]],
    ['two different cohorts: unchanged', [cohortCondition(1), cohortCondition(2)], [cohortCondition(1), cohortCondition(2)]],
  ];
  for (const [description, groups, expected] of rows) t.same(groupsOf(groups), expected, description);
});
