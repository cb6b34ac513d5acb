/**
 * Flag evaluation (flags.md §2, §4, §7): reasons, variants, payloads, holdouts, early access, experience
 * continuity, group flags, mixed targeting, dependencies, cohorts, early exit, filters and legacy shapes.
 */
import t from 'tap';
import {
  bucketHash,
  compileFlagSet,
  evaluateFlag,
  evaluateFlags,
  matchesCohort,
  type CohortRecord,
  type EvaluateOptions,
  type EvaluationContext,
  type FlagRecord,
  type FlagResult,
  type GroupTypeMapping,
} from '../../src/domain/flags/index.js';
import { MAX_DEPENDENCY_DEPTH } from '../../src/domain/flags/dependencies.js';

let nextId = 1;
function flag(key: string, filters: Record<string, unknown>, extra: Partial<FlagRecord> = {}): FlagRecord {
  return {
    id: nextId++,
    key,
    name: `${key} name`,
    active: true,
    deleted: false,
    filters,
    ensure_experience_continuity: false,
    version: 1,
    ...extra,
  };
}

function cohort(id: number, properties: unknown, extra: Partial<CohortRecord> = {}): CohortRecord {
  return { id, name: `cohort ${id}`, deleted: false, is_static: false, filters: { properties }, ...extra };
}

function ctx(extra: Partial<EvaluationContext> = {}): EvaluationContext {
  return {
    distinctId: 'user-1',
    personProperties: {},
    groups: {},
    groupProperties: {},
    hashKeyOverrides: {},
    staticCohortIds: new Set(),
    now: new Date('2024-06-01T00:00:00Z'),
    ...extra,
  };
}

interface Setup {
  flags: FlagRecord[];
  cohorts?: CohortRecord[];
  groupTypes?: GroupTypeMapping;
  ctx?: Partial<EvaluationContext>;
  opts?: EvaluateOptions;
}

function evaluate(s: Setup): Map<string, FlagResult> {
  const set = compileFlagSet(s.flags, s.cohorts ?? [], s.groupTypes ?? {});
  return new Map(evaluateFlags(set, ctx(s.ctx), s.opts).map((r) => [r.key, r]));
}

function one(s: Setup, key = s.flags[0]!.key): FlagResult {
  const r = evaluate(s).get(key);
  if (!r) throw new Error(`flag ${key} not in results`);
  return r;
}

/** Summary used in tables: value, reason code, condition index, payload. */
function summary(r: FlagResult): [boolean | string, string, number | null, unknown] {
  return [r.value, r.reason.code, r.reason.condition_index, r.payload];
}

/** A deterministic distinct id whose hash for `prefix`/`salt` satisfies `pred`. */
function idWhere(prefix: string, pred: (h: number) => boolean, salt = ''): string {
  for (let i = 0; i < 100000; i++) {
    const id = `probe-${i}`;
    if (pred(bucketHash(prefix, id, salt))) return id;
  }
  throw new Error('no id found');
}

const person = (key: string, value: unknown, operator?: string) => ({ key, type: 'person', value, ...(operator ? { operator } : {}) });

// ---------------------------------------------------------------------------------------------------------------

t.test('reason codes and condition indexes', async (t) => {
  const lowHash = idWhere('f.', (h) => h < 0.3);
  const highHash = idWhere('f.', (h) => h > 0.7);
  const rows: [string, Setup, ReturnType<typeof summary>][] = [
    [
      'condition_match reports the matching index',
      { flags: [flag('f', { groups: [{ properties: [person('a', 'no')] }, { properties: [person('a', 'yes')] }] })], ctx: { personProperties: { a: 'yes' } } },
      [true, 'condition_match', 1, null],
    ],
    [
      'first match wins (array order, not override-first)',
      {
        flags: [
          flag('f', {
            groups: [{ properties: [] }, { properties: [], variant: 'b' }],
            multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }, { key: 'b', rollout_percentage: 0 }] },
          }),
        ],
      },
      ['a', 'condition_match', 0, null],
    ],
    [
      'no_condition_match: ties go to the later condition',
      { flags: [flag('f', { groups: [{ properties: [person('a', 'x')] }, { properties: [person('a', 'y')] }] })] },
      [false, 'no_condition_match', 1, null],
    ],
    [
      'out_of_rollout_bound outranks a later no_condition_match',
      {
        flags: [flag('f', { groups: [{ properties: [], rollout_percentage: 10 }, { properties: [person('a', 'x')] }] })],
        ctx: { distinctId: highHash },
      },
      [false, 'out_of_rollout_bound', 0, null],
    ],
    [
      'rollout is inclusive and 0% excludes a positive hash',
      { flags: [flag('f', { groups: [{ properties: [], rollout_percentage: 0 }] })], ctx: { distinctId: lowHash } },
      [false, 'out_of_rollout_bound', 0, null],
    ],
    [
      'null rollout means 100%',
      { flags: [flag('f', { groups: [{ properties: [], rollout_percentage: null }] })], ctx: { distinctId: highHash } },
      [true, 'condition_match', 0, null],
    ],
    [
      'float rollout',
      { flags: [flag('f', { groups: [{ properties: [], rollout_percentage: 30.5 }] })], ctx: { distinctId: lowHash } },
      [true, 'condition_match', 0, null],
    ],
    ['empty groups: false for everyone', { flags: [flag('f', { groups: [] })] }, [false, 'no_condition_match', null, null]],
    [
      'no_group_type: group flag without the group (index of the last skipped condition)',
      { flags: [flag('f', { aggregation_group_type_index: 0, groups: [{ properties: [] }, { properties: [] }] })], groupTypes: { 0: 'company' } },
      [false, 'no_group_type', 1, null],
    ],
    [
      'no_group_type: unknown group type index',
      { flags: [flag('f', { aggregation_group_type_index: 3, groups: [{ properties: [] }] })], groupTypes: { 0: 'company' }, ctx: { groups: { company: 'acme' } } },
      [false, 'no_group_type', 0, null],
    ],
    [
      'no_group_type: empty group key',
      { flags: [flag('f', { aggregation_group_type_index: 0, groups: [{ properties: [] }] })], groupTypes: { 0: 'company' }, ctx: { groups: { company: '' } } },
      [false, 'no_group_type', 0, null],
    ],
    [
      'super_condition_value (feature enrollment)',
      { flags: [flag('f', { feature_enrollment: true, groups: [] })], ctx: { personProperties: { '$feature_enrollment/f': true } } },
      [true, 'super_condition_value', 0, null],
    ],
    [
      'holdout_condition_value',
      { flags: [flag('f', { holdout: { id: 3, exclusion_percentage: 100 }, groups: [{ properties: [] }] })] },
      ['holdout-3', 'holdout_condition_value', null, null],
    ],
    [
      'missing_dependency',
      { flags: [flag('f', { groups: [{ properties: [{ key: '999999', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] })] },
      [false, 'missing_dependency', null, null],
    ],
  ];
  for (const [description, setup, expected] of rows) t.same(summary(one(setup)), expected, description);

  const r = one({ flags: [flag('f', { groups: [{ properties: [] }, { properties: [] }] })] });
  t.same(r.reason, { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' });
  const descriptions: [string, string][] = [
    ['no_condition_match', 'No matching condition set'],
    ['out_of_rollout_bound', 'Out of rollout bound'],
    ['no_group_type', 'No group type'],
    ['super_condition_value', 'Super condition value'],
    ['holdout_condition_value', 'Holdout condition value'],
    ['missing_dependency', 'Flag cannot be evaluated due to missing dependency'],
  ];
  for (const [description, setup] of rows) {
    const res = one(setup);
    const text = descriptions.find(([code]) => code === res.reason.code)?.[1];
    if (text) t.equal(res.reason.description, text, `${description}: description text`);
  }
});

t.test('flag_disabled and evaluateFlag', async (t) => {
  const set = compileFlagSet(
    [flag('on', { groups: [{ properties: [] }] }), flag('off', { groups: [{ properties: [] }] }, { active: false }), flag('gone', { groups: [] }, { deleted: true })],
    [],
    {},
  );
  t.same(evaluateFlags(set, ctx()).map((r) => r.key), ['on'], 'inactive and deleted flags are omitted');
  const off = evaluateFlag(set, 'off', ctx())!;
  t.same(summary(off), [false, 'flag_disabled', null, null]);
  t.equal(off.reason.description, 'Feature flag is disabled');
  t.equal(evaluateFlag(set, 'gone', ctx()), null, 'deleted flag is unknown');
  t.equal(evaluateFlag(set, 'nope', ctx()), null, 'unknown key');
  t.same(summary(evaluateFlag(set, 'on', ctx())!), [true, 'condition_match', 0, null]);
});

t.test('result shape and metadata', async (t) => {
  const r = one({ flags: [flag('f', { groups: [{ properties: [] }], payloads: { true: '{"a":1}' } }, { id: 77, version: 4, has_experiment: true })] });
  t.equal(r.key, 'f');
  t.equal(r.enabled, true);
  t.equal(r.variant, null);
  t.equal(r.value, true);
  t.equal(r.payload, '{"a":1}', 'stored payload form is returned');
  t.equal(r.flag.id, 77);
  t.equal(r.flag.version, 4);
  t.equal(r.flag.hasExperiment, true);
  t.equal(r.flag.name, 'f name');
  t.ok(Object.isFrozen(r.reason), 'reasons are shared frozen objects');
});

t.test('variants, overrides and payloads', async (t) => {
  const variants = [
    { key: 'control', rollout_percentage: 50 },
    { key: 'test', rollout_percentage: 50 },
  ];
  const payloads = { control: '"c"', test: '{"t":true}' };
  const lowVariant = idWhere('mv.', (h) => h < 0.5, 'variant');
  const highVariant = idWhere('mv.', (h) => h >= 0.5, 'variant');
  const mv = (groups: unknown[], extra: Record<string, unknown> = {}) => [flag('mv', { groups, multivariate: { variants }, payloads, ...extra })];
  const rows: [string, Setup, ReturnType<typeof summary>][] = [
    ['variant by hash (low)', { flags: mv([{ properties: [] }]), ctx: { distinctId: lowVariant } }, ['control', 'condition_match', 0, '"c"']],
    ['variant by hash (high)', { flags: mv([{ properties: [] }]), ctx: { distinctId: highVariant } }, ['test', 'condition_match', 0, '{"t":true}']],
    ['valid override wins', { flags: mv([{ properties: [], variant: 'test' }]), ctx: { distinctId: lowVariant } }, ['test', 'condition_match', 0, '{"t":true}']],
    ['unknown override is ignored', { flags: mv([{ properties: [], variant: 'nope' }]), ctx: { distinctId: lowVariant } }, ['control', 'condition_match', 0, '"c"']],
    ['override applies only when its condition matches', { flags: mv([{ properties: [person('a', 'x')], variant: 'test' }, { properties: [] }]), ctx: { distinctId: lowVariant } }, ['control', 'condition_match', 1, '"c"']],
    [
      'weights below 100: no variant found -> true with the "true" payload',
      {
        flags: [flag('mv', { groups: [{ properties: [] }], multivariate: { variants: [{ key: 'a', rollout_percentage: 10 }] }, payloads: { true: '1', a: '2' } })],
        ctx: { distinctId: idWhere('mv.', (h) => h > 0.2, 'variant') },
      },
      [true, 'condition_match', 0, '1'],
    ],
    ['not matched: no payload', { flags: mv([{ properties: [person('a', 'x')] }]) }, [false, 'no_condition_match', 0, null]],
    ['boolean flag without payloads', { flags: [flag('b', { groups: [{ properties: [] }] })] }, [true, 'condition_match', 0, null]],
    [
      'payload objects are passed through as stored',
      { flags: [flag('b', { groups: [{ properties: [] }], payloads: { true: { a: 1 } } })] },
      [true, 'condition_match', 0, { a: 1 }],
    ],
    [
      'empty distinct id hashes to 0: first variant, every rollout passes',
      { flags: [flag('mv', { groups: [{ properties: [], rollout_percentage: 1 }], multivariate: { variants }, payloads })], ctx: { distinctId: '' } },
      ['control', 'condition_match', 0, '"c"'],
    ],
  ];
  for (const [description, setup, expected] of rows) t.same(summary(one(setup)), expected, description);
  t.equal(one({ flags: mv([{ properties: [] }]), ctx: { distinctId: highVariant } }).variant, 'test');
});

t.test('holdouts', async (t) => {
  const held = idWhere('holdout-', (h) => h <= 0.2);
  const free = idWhere('holdout-', (h) => h > 0.2);
  const variants = { variants: [{ key: 'control', rollout_percentage: 100 }] };
  const withHoldout = (holdout: unknown, extra: Record<string, unknown> = {}) =>
    [flag('exp', { groups: [{ properties: [] }], multivariate: variants, holdout, payloads: { control: '"c"', 'holdout-9': '"h"' }, ...extra })];
  const rows: [string, Setup, ReturnType<typeof summary>][] = [
    ['held out: hash <= percentage', { flags: withHoldout({ id: 9, exclusion_percentage: 20 }), ctx: { distinctId: held } }, ['holdout-9', 'holdout_condition_value', null, '"h"']],
    ['not held out: continue to conditions', { flags: withHoldout({ id: 9, exclusion_percentage: 20 }), ctx: { distinctId: free } }, ['control', 'condition_match', 0, '"c"']],
    ['100% holds everyone out', { flags: withHoldout({ id: 9, exclusion_percentage: 100 }), ctx: { distinctId: free } }, ['holdout-9', 'holdout_condition_value', null, '"h"']],
    ['percentage clamped above 100', { flags: withHoldout({ id: 9, exclusion_percentage: 250 }), ctx: { distinctId: free } }, ['holdout-9', 'holdout_condition_value', null, '"h"']],
    ['0% holds nobody with a real id', { flags: withHoldout({ id: 9, exclusion_percentage: 0 }), ctx: { distinctId: held } }, ['control', 'condition_match', 0, '"c"']],
    ['non-numeric percentage is no holdout', { flags: withHoldout({ id: 9, exclusion_percentage: 'x' }), ctx: { distinctId: held } }, ['control', 'condition_match', 0, '"c"']],
    ['holdout applies before conditions, even unmatched ones', { flags: [flag('exp', { groups: [{ properties: [person('a', 'x')] }], holdout: { id: 9, exclusion_percentage: 20 } })], ctx: { distinctId: held } }, ['holdout-9', 'holdout_condition_value', null, null]],
    [
      'legacy holdout_groups: held with the configured variant',
      { flags: [flag('exp', { groups: [{ properties: [] }], multivariate: variants, holdout_groups: [{ properties: [], rollout_percentage: 20, variant: 'holdout-5' }] })], ctx: { distinctId: held } },
      ['holdout-5', 'holdout_condition_value', null, null],
    ],
    [
      'legacy holdout_groups: outside the percentage',
      { flags: [flag('exp', { groups: [{ properties: [] }], multivariate: variants, holdout_groups: [{ properties: [], rollout_percentage: 20, variant: 'holdout-5' }] })], ctx: { distinctId: free } },
      ['control', 'condition_match', 0, null],
    ],
    [
      'legacy holdout_groups without variant: normal variant hashing',
      { flags: [flag('exp', { groups: [{ properties: [] }], multivariate: variants, holdout_groups: [{ properties: [], rollout_percentage: 20 }] })], ctx: { distinctId: held } },
      ['control', 'holdout_condition_value', null, null],
    ],
    [
      'legacy holdout_groups with properties never hold out',
      { flags: [flag('exp', { groups: [{ properties: [] }], holdout_groups: [{ properties: [person('a', 'b')], rollout_percentage: 100, variant: 'h' }] })], ctx: { personProperties: { a: 'b' } } },
      [true, 'condition_match', 0, null],
    ],
  ];
  for (const [description, setup, expected] of rows) t.same(summary(one(setup)), expected, description);
  t.equal(bucketHash('holdout-', 'some_distinct_id'), 0.7270002403585725, 'holdout hash does not include the flag key');
});

t.test('early access: feature_enrollment and legacy super_groups', async (t) => {
  const enroll = (extra: Record<string, unknown> = {}) => [flag('eaf', { feature_enrollment: true, groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: '"p"' }, ...extra })];
  const superGroups = [{ properties: [{ key: '$feature_enrollment/eaf', type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 }];
  const rows: [string, Setup, ReturnType<typeof summary>][] = [
    ['enrolled (true)', { flags: enroll(), ctx: { personProperties: { '$feature_enrollment/eaf': true } } }, [true, 'super_condition_value', 0, '"p"']],
    ['enrolled ("true" string)', { flags: enroll(), ctx: { personProperties: { '$feature_enrollment/eaf': 'true' } } }, [true, 'super_condition_value', 0, '"p"']],
    ['opted out ("false") is final', { flags: enroll(), ctx: { personProperties: { '$feature_enrollment/eaf': 'false' } } }, [false, 'super_condition_value', 0, null]],
    ['absent: normal conditions', { flags: enroll() }, [false, 'out_of_rollout_bound', 0, null]],
    [
      'enrollment is person-level on group flags',
      { flags: enroll({ aggregation_group_type_index: 0 }), groupTypes: { 0: 'company' }, ctx: { groups: { company: 'acme' }, personProperties: { '$feature_enrollment/eaf': true } } },
      [true, 'super_condition_value', 0, '"p"'],
    ],
    [
      'legacy super_groups: property present decides',
      { flags: [flag('eaf', { super_groups: superGroups, groups: [{ properties: [], rollout_percentage: 0 }] })], ctx: { personProperties: { '$feature_enrollment/eaf': 'true' } } },
      [true, 'super_condition_value', 0, null],
    ],
    [
      'legacy super_groups: present but false is final',
      { flags: [flag('eaf', { super_groups: superGroups, groups: [{ properties: [] }] })], ctx: { personProperties: { '$feature_enrollment/eaf': false } } },
      [false, 'super_condition_value', 0, null],
    ],
    [
      'legacy super_groups: absent property falls through',
      { flags: [flag('eaf', { super_groups: superGroups, groups: [{ properties: [] }] })] },
      [true, 'condition_match', 0, null],
    ],
    [
      'feature_enrollment takes precedence over super_groups',
      { flags: [flag('eaf', { feature_enrollment: true, super_groups: superGroups, groups: [{ properties: [] }] })], ctx: { personProperties: { '$feature_enrollment/eaf': 'nope' } } },
      [false, 'super_condition_value', 0, null],
    ],
    [
      'enrollment is checked before the holdout',
      { flags: enroll({ holdout: { id: 1, exclusion_percentage: 100 } }), ctx: { personProperties: { '$feature_enrollment/eaf': true } } },
      [true, 'super_condition_value', 0, '"p"'],
    ],
  ];
  for (const [description, setup, expected] of rows) t.same(summary(one(setup)), expected, description);
});

t.test('experience continuity and bucketing identifiers', async (t) => {
  const half = (extra: Partial<FlagRecord> = {}) => [flag('cont', { groups: [{ properties: [], rollout_percentage: 50 }] }, { ensure_experience_continuity: true, ...extra })];
  const inId = idWhere('cont.', (h) => h <= 0.5);
  const outId = idWhere('cont.', (h) => h > 0.5);
  const rows: [string, Setup, boolean][] = [
    ['stored override for this flag is hashed', { flags: half(), ctx: { distinctId: outId, hashKeyOverrides: { cont: inId } } }, true],
    ['override for another flag is ignored', { flags: half(), ctx: { distinctId: outId, hashKeyOverrides: { other: inId } } }, false],
    ['$anon_distinct_id is the fallback hash key', { flags: half(), ctx: { distinctId: outId, anonDistinctId: inId } }, true],
    ['override beats $anon_distinct_id', { flags: half(), ctx: { distinctId: inId, anonDistinctId: inId, hashKeyOverrides: { cont: outId } } }, false],
    ['otherwise the distinct id', { flags: half(), ctx: { distinctId: inId } }, true],
    [
      'flags without continuity ignore overrides',
      { flags: [flag('cont', { groups: [{ properties: [], rollout_percentage: 50 }] })], ctx: { distinctId: outId, hashKeyOverrides: { cont: inId }, anonDistinctId: inId } },
      false,
    ],
    [
      'device_id bucketing hashes the device id',
      { flags: [flag('cont', { groups: [{ properties: [], rollout_percentage: 50 }] }, { bucketing_identifier: 'device_id' })], ctx: { distinctId: outId, deviceId: inId } },
      true,
    ],
    [
      'device_id falls back to person property $device_id',
      { flags: [flag('cont', { groups: [{ properties: [], rollout_percentage: 50 }] }, { bucketing_identifier: 'device_id' })], ctx: { distinctId: outId, personProperties: { $device_id: inId } } },
      true,
    ],
    [
      'device_id inside filters works too',
      { flags: [flag('cont', { bucketing_identifier: 'device_id', groups: [{ properties: [], rollout_percentage: 50 }] })], ctx: { distinctId: outId, deviceId: inId } },
      true,
    ],
    ['device_id beats continuity', { flags: half({ bucketing_identifier: 'device_id' }), ctx: { distinctId: inId, deviceId: outId, hashKeyOverrides: { cont: inId } } }, false],
  ];
  for (const [description, setup, expected] of rows) t.equal(one(setup).value, expected, description);

  const noDevice = one({ flags: [flag('cont', { groups: [{ properties: [] }, { properties: [] }] }, { bucketing_identifier: 'device_id' })] });
  t.same(summary(noDevice), [false, 'out_of_rollout_bound', 1, null], 'no device id: person conditions are skipped as out of rollout');

  const groupCont = one({
    flags: [flag('g', { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 50 }] }, { ensure_experience_continuity: true })],
    groupTypes: { 0: 'company' },
    ctx: { groups: { company: idWhere('g.', (h) => h > 0.5) }, hashKeyOverrides: { g: idWhere('g.', (h) => h <= 0.5) } },
  });
  t.equal(groupCont.value, false, 'continuity never applies to group flags');
});

t.test('group flags and mixed targeting', async (t) => {
  const groupTypes = { 0: 'company', 1: 'project' };
  const g = (extra: Record<string, unknown> = {}) => [
    flag('g', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', type: 'group', group_type_index: 0, value: 'pro' }], rollout_percentage: 50 }], ...extra }),
  ];
  const inKey = idWhere('g.', (h) => h <= 0.5);
  const outKey = idWhere('g.', (h) => h > 0.5);
  const rows: [string, Setup, ReturnType<typeof summary>][] = [
    ['group key is hashed', { flags: g(), groupTypes, ctx: { distinctId: outKey, groups: { company: inKey }, groupProperties: { company: { plan: 'pro' } } } }, [true, 'condition_match', 0, null]],
    ['out of rollout by group key', { flags: g(), groupTypes, ctx: { distinctId: inKey, groups: { company: outKey }, groupProperties: { company: { plan: 'pro' } } } }, [false, 'out_of_rollout_bound', 0, null]],
    ['group properties, not person properties', { flags: g(), groupTypes, ctx: { groups: { company: inKey }, personProperties: { plan: 'pro' } } }, [false, 'no_condition_match', 0, null]],
    ['group of another type does not help', { flags: g(), groupTypes, ctx: { groups: { project: inKey } } }, [false, 'no_group_type', 0, null]],
    [
      'untyped properties on a group flag read group properties',
      { flags: [flag('g', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'pro' }] }] })], groupTypes, ctx: { groups: { company: 'x' }, groupProperties: { company: { plan: 'pro' } } } },
      [true, 'condition_match', 0, null],
    ],
  ];
  for (const [description, setup, expected] of rows) t.same(summary(one(setup)), expected, description);

  const mixed = [
    flag('mixed', {
      groups: [
        { aggregation_group_type_index: 0, properties: [{ key: 'plan', type: 'group', group_type_index: 0, value: 'pro' }] },
        { properties: [person('email', 'a@b.c')] },
      ],
    }),
  ];
  t.same(summary(one({ flags: mixed, groupTypes, ctx: { groups: { company: 'c' }, groupProperties: { company: { plan: 'pro' } } } })), [true, 'condition_match', 0, null], 'group condition');
  t.same(summary(one({ flags: mixed, groupTypes, ctx: { personProperties: { email: 'a@b.c' } } })), [true, 'condition_match', 1, null], 'person condition when the group is absent');
  t.same(summary(one({ flags: mixed, groupTypes })), [false, 'no_condition_match', 1, null], 'skipped group condition ranks below no_condition_match');
  t.same(
    summary(one({ flags: [flag('m', { groups: [{ properties: [person('x', 'y')] }, { aggregation_group_type_index: 1, properties: [] }] })], groupTypes })),
    [false, 'no_condition_match', 0, null],
    'no_group_type (1) never beats no_condition_match (2)',
  );
  const hashByCondition = one({
    flags: [flag('m2', { groups: [{ aggregation_group_type_index: 0, properties: [], rollout_percentage: 50 }] })],
    groupTypes,
    ctx: { distinctId: idWhere('m2.', (h) => h > 0.5), groups: { company: idWhere('m2.', (h) => h <= 0.5) } },
  });
  t.equal(hashByCondition.value, true, 'mixed group condition hashes the group key');
});

t.test('flag dependencies', async (t) => {
  const mk = () => {
    const base = flag('base', { groups: [{ properties: [person('plan', 'pro')] }] });
    const mv = flag('mv', { groups: [{ properties: [], variant: 'blue' }], multivariate: { variants: [{ key: 'blue', rollout_percentage: 50 }, { key: 'red', rollout_percentage: 50 }] } });
    const off = flag('off', { groups: [{ properties: [] }] }, { active: false });
    return { base, mv, off };
  };
  const dep = (key: string, value: unknown) => ({ key, type: 'flag', operator: 'flag_evaluates_to', value });
  const rows: [string, (f: ReturnType<typeof mk>) => FlagRecord[], Partial<EvaluationContext>, boolean | string][] = [
    ['by flag id, expected true, dependency true', (f) => [f.base, flag('d', { groups: [{ properties: [dep(String(f.base.id), true)] }] })], { personProperties: { plan: 'pro' } }, true],
    ['by flag id, expected true, dependency false', (f) => [f.base, flag('d', { groups: [{ properties: [dep(String(f.base.id), true)] }] })], {}, false],
    ['by key, expected false, dependency false', (f) => [f.base, flag('d', { groups: [{ properties: [dep('base', false)] }] })], {}, true],
    ['expected true matches any variant', (f) => [f.mv, flag('d', { groups: [{ properties: [dep('mv', true)] }] })], {}, true],
    ['expected variant: exact', (f) => [f.mv, flag('d', { groups: [{ properties: [dep('mv', 'blue')] }] })], {}, true],
    ['expected variant: other variant', (f) => [f.mv, flag('d', { groups: [{ properties: [dep('mv', 'red')] }] })], {}, false],
    ['expected variant is case-sensitive', (f) => [f.mv, flag('d', { groups: [{ properties: [dep('mv', 'BLUE')] }] })], {}, false],
    ['expected false on a variant flag', (f) => [f.mv, flag('d', { groups: [{ properties: [dep('mv', false)] }] })], {}, false],
    ['numbers never match', (f) => [f.base, flag('d', { groups: [{ properties: [dep('base', 1)] }] })], { personProperties: { plan: 'pro' } }, false],
    ['inactive dependency reads as false', (f) => [f.off, flag('d', { groups: [{ properties: [dep('off', false)] }] })], {}, true],
    ['dependency declared after the dependant', (f) => [flag('d', { groups: [{ properties: [dep('base', true)] }] }), f.base], { personProperties: { plan: 'pro' } }, true],
  ];
  for (const [description, build, context, expected] of rows) {
    const flags = build(mk());
    t.equal(evaluate({ flags, ctx: context }).get('d')!.value, expected, description);
  }

  const dep2 = (key: string) => ({ groups: [{ properties: [dep(key, true)] }] });
  const a = flag('a', dep2('b'));
  const b = flag('b', dep2('a'));
  const self = flag('self', dep2('self'));
  const onSelf = flag('on-self', dep2('self'));
  const missing = flag('missing', dep2('4242'));
  const deleted = flag('deleted', { groups: [] }, { deleted: true });
  const onDeleted = flag('on-deleted', dep2('deleted'));
  const ok = flag('ok', { groups: [{ properties: [] }] });
  const results = evaluate({ flags: [a, b, self, onSelf, missing, deleted, onDeleted, ok] });
  for (const key of ['a', 'b', 'self', 'on-self', 'missing', 'on-deleted']) {
    t.same(summary(results.get(key)!), [false, 'missing_dependency', null, null], `${key}: missing_dependency`);
  }
  t.same(summary(results.get('ok')!), [true, 'condition_match', 0, null], 'unrelated flags unaffected');

  const chainBase = flag('c1', { groups: [{ properties: [] }] });
  const chainMid = flag('c2', dep2('c1'));
  const chainTop = flag('c3', dep2('c2'));
  const filtered = evaluate({ flags: [chainBase, chainMid, chainTop], opts: { flagKeys: ['c3'] } });
  t.same([...filtered.keys()], ['c3'], 'flag_keys filter output');
  t.equal(filtered.get('c3')!.value, true, 'dependencies outside flag_keys are still evaluated');

  const ctxFlag = flag('ctxdep', { groups: [{ properties: [] }] }, { evaluation_contexts: ['web'] });
  const needsFalse = flag('needs-false', dep2('ctxdep'));
  const byContext = evaluate({ flags: [ctxFlag, needsFalse], opts: { evaluationContexts: ['mobile'] } });
  t.notOk(byContext.has('ctxdep'), 'context-filtered flag omitted');
  t.equal(byContext.get('needs-false')!.value, false, 'context-filtered dependency reads as false');

  // 10,000 flags, each depending on the next, declared top first: the recursive graph walks overflowed the stack
  // (every flag of the project failed). Chains deeper than MAX_DEPENDENCY_DEPTH are broken; the rest evaluate.
  const long = Array.from({ length: 10_000 }, (_, i) => flag(`long-${i}`, i === 9_999 ? { groups: [{ properties: [] }] } : dep2(`long-${i + 1}`)));
  const deep = evaluate({ flags: long });
  t.equal(deep.size, 10_000, 'every flag of a 10,000-deep chain answers');
  t.same(summary(deep.get('long-0')!), [false, 'missing_dependency', null, null], 'the top of a chain past the depth bound is broken');
  t.equal(deep.get(`long-${10_000 - MAX_DEPENDENCY_DEPTH}`)!.value, true, `a chain of exactly ${MAX_DEPENDENCY_DEPTH} evaluates`);
  t.equal(deep.get(`long-${10_000 - MAX_DEPENDENCY_DEPTH - 1}`)!.value, false, 'one more is past the bound');
  const ring = Array.from({ length: 10_000 }, (_, i) => flag(`ring-${i}`, dep2(`ring-${(i + 1) % 10_000}`)));
  t.ok([...evaluate({ flags: ring }).values()].every((r) => r.reason.code === 'missing_dependency'), 'a 10,000-flag cycle is found without recursion');
});

t.test('cohorts', async (t) => {
  const orOfAnds = (values: unknown[]) => ({ type: 'OR', values: [{ type: 'AND', values }] });
  const cohorts = [
    cohort(1, orOfAnds([person('plan', 'pro'), person('country', 'US')])),
    cohort(2, { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 1 }, { ...person('email', 'spam', 'icontains'), negation: true }] }),
    cohort(3, orOfAnds([{ ...person('plan', 'pro'), negation: true }])),
    cohort(4, {}, { is_static: true }),
    cohort(5, orOfAnds([person('plan', 'pro')]), { deleted: true }),
    cohort(6, { type: 'OR', values: [{ key: 'id', type: 'cohort', value: 7 }] }),
    cohort(7, { type: 'OR', values: [{ key: 'id', type: 'cohort', value: 6 }] }),
    cohort(8, { type: 'OR', values: [] }),
    cohort(9, { type: 'AND', values: [] }),
    cohort(10, { type: 'OR', values: [{ type: 'AND', values: [person('a', '1')] }, { type: 'AND', values: [person('b', '2')] }] }),
    cohort(11, { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 4 }] }),
    cohort(12, { type: 'OR', values: [{ key: 'id', type: 'cohort', value: 4, negation: true }] }),
  ];
  const inCohort = (id: number, operator?: string) => ({ key: 'id', type: 'cohort', value: id, ...(operator ? { operator } : {}) });
  const rows: [string, unknown, Record<string, unknown>, number[], boolean][] = [
    ['dynamic cohort: member', inCohort(1), { plan: 'pro', country: 'us' }, [], true],
    ['dynamic cohort: not a member', inCohort(1), { plan: 'pro', country: 'FR' }, [], false],
    ['not_in', inCohort(1, 'not_in'), { plan: 'free' }, [], true],
    ['nested cohort plus negated leaf: member', inCohort(2), { plan: 'pro', country: 'US', email: 'a@b.c' }, [], true],
    ['nested cohort plus negated leaf: negation excludes', inCohort(2), { plan: 'pro', country: 'US', email: 'spam@b.c' }, [], false],
    ['negated leaf matches when the property differs', inCohort(3), { plan: 'free' }, [], true],
    ['negated leaf: missing property (exact false) negates to true', inCohort(3), {}, [], true],
    ['static cohort: member', inCohort(4), {}, [4], true],
    ['static cohort: not a member', inCohort(4), {}, [], false],
    ['static cohort with not_in', inCohort(4, 'not_in'), {}, [], true],
    ['deleted cohort never matches', inCohort(5), { plan: 'pro' }, [], false],
    ['deleted cohort never matches, even with not_in', inCohort(5, 'not_in'), {}, [], false],
    ['missing cohort never matches', inCohort(404), {}, [], false],
    ['cohort cycle reads as not a member', inCohort(6), {}, [], false],
    ['empty OR group does not match', inCohort(8), {}, [], false],
    ['empty AND group matches', inCohort(9), {}, [], true],
    ['OR of ANDs: second branch', inCohort(10), { b: '2' }, [], true],
    ['static cohort nested in a dynamic one', inCohort(11), {}, [4], true],
    ['negated static cohort leaf', inCohort(12), {}, [], true],
    ['cohort id as string', { key: 'id', type: 'cohort', value: '1' }, { plan: 'pro', country: 'US' }, [], true],
  ];
  for (const [description, filter, personProperties, staticIds, expected] of rows) {
    const r = one({ flags: [flag('c', { groups: [{ properties: [filter] }] })], cohorts, ctx: { personProperties, staticCohortIds: new Set(staticIds) } });
    t.equal(r.value, expected, description);
  }

  const set = compileFlagSet([flag('uses', { groups: [{ properties: [inCohort(11)] }] })], cohorts, {});
  t.equal(set.usesStaticCohorts, true, 'static cohort reached through a nested reference');
  t.same(set.staticCohortIds, [4]);
  t.equal(matchesCohort(set, 1, ctx({ personProperties: { plan: 'pro', country: 'US' } })), true, 'matchesCohort on a set');
  t.equal(matchesCohort(set.cohorts, 4, ctx({ staticCohortIds: new Set([4]) })), true, 'matchesCohort on compiled cohorts');
  t.equal(matchesCohort(set, 404, ctx()), false, 'unknown cohort');
});

t.test('early_exit', async (t) => {
  const outId = idWhere('ee.', (h) => h > 0.1);
  const groups = [{ properties: [], rollout_percentage: 10 }, { properties: [] }];
  t.same(summary(one({ flags: [flag('ee', { groups, early_exit: true })], ctx: { distinctId: outId } })), [false, 'out_of_rollout_bound', 0, null], 'stops at the first rollout miss');
  t.same(summary(one({ flags: [flag('ee', { groups })], ctx: { distinctId: outId } })), [true, 'condition_match', 1, null], 'without early_exit later conditions run');
  t.same(
    summary(one({ flags: [flag('ee', { groups: [{ properties: [person('a', 'x')], rollout_percentage: 10 }, { properties: [] }], early_exit: true })], ctx: { distinctId: outId } })),
    [true, 'condition_match', 1, null],
    'a property miss does not exit early',
  );
});

t.test('evaluation runtime and context filters', async (t) => {
  const flags = [
    flag('all', { groups: [{ properties: [] }] }),
    flag('client', { groups: [{ properties: [] }] }, { evaluation_runtime: 'client' }),
    flag('server', { groups: [{ properties: [] }] }, { evaluation_runtime: 'server' }),
    flag('web', { groups: [{ properties: [] }] }, { evaluation_contexts: ['web'] }),
    flag('legacy-tags', { groups: [{ properties: [] }] }, { evaluation_tags: ['app'] }),
  ];
  const rows: [string, EvaluateOptions, string[]][] = [
    ['no filters', {}, ['all', 'client', 'server', 'web', 'legacy-tags']],
    ['server runtime', { runtime: 'server' }, ['all', 'server', 'web', 'legacy-tags']],
    ['client runtime', { runtime: 'client' }, ['all', 'client', 'web', 'legacy-tags']],
    ['runtime all', { runtime: 'all' }, ['all', 'client', 'server', 'web', 'legacy-tags']],
    ['contexts', { evaluationContexts: ['web'] }, ['all', 'client', 'server', 'web']],
    ['legacy evaluation_tags', { evaluationContexts: ['app', 'x'] }, ['all', 'client', 'server', 'legacy-tags']],
    ['empty context list filters nothing', { evaluationContexts: [] }, ['all', 'client', 'server', 'web', 'legacy-tags']],
    ['flag keys', { flagKeys: ['web', 'nope'] }, ['web']],
    ['empty flag keys list evaluates nothing', { flagKeys: [] }, []],
  ];
  for (const [description, opts, keys] of rows) t.same([...evaluate({ flags, opts }).keys()], keys, description);
});

t.test('legacy filters without groups', async (t) => {
  const legacy = flag('legacy', { properties: [person('plan', 'pro')] }, { rollout_percentage: null });
  t.same(summary(one({ flags: [legacy], ctx: { personProperties: { plan: 'pro' } } })), [true, 'condition_match', 0, null]);
  t.same(summary(one({ flags: [legacy] })), [false, 'no_condition_match', 0, null]);
  const legacyRollout = flag('legacy2', {}, { rollout_percentage: 10 });
  t.equal(one({ flags: [legacyRollout], ctx: { distinctId: idWhere('legacy2.', (h) => h > 0.1) } }).value, false, 'legacy rollout column');
  t.equal(one({ flags: [flag('legacy3', {})] }).value, true, 'no properties, no rollout: everyone');
});

t.test('compiled set summary fields', async (t) => {
  const set = compileFlagSet(
    [
      flag('p', { groups: [{ properties: [] }] }, { ensure_experience_continuity: true }),
      flag('g', { aggregation_group_type_index: 0, groups: [] }, { active: false }),
      flag('d', { groups: [] }, { deleted: true, ensure_experience_continuity: true }),
    ],
    [],
    { 0: 'company' },
  );
  t.same(set.flags.map((f) => f.key), ['p', 'g']);
  t.equal(set.byKey.get('g')!.active, false);
  t.equal(set.hasGroupFlags, false, 'only active flags count');
  t.same(set.continuityFlagKeys, ['p']);
  t.equal(set.usesStaticCohorts, false);
  const mixed = compileFlagSet([flag('m', { groups: [{ aggregation_group_type_index: 0, properties: [] }] })], [], {});
  t.equal(mixed.hasGroupFlags, true, 'condition-level aggregation counts');
});

t.test('inputs are not mutated and results are independent of call order', async (t) => {
  const filters = { groups: [{ properties: [person('a', 'b')], rollout_percentage: 50 }], multivariate: { variants: [{ key: 'x', rollout_percentage: 100 }] } };
  const snapshot = JSON.stringify(filters);
  const set = compileFlagSet([flag('f', filters)], [], {});
  const c = ctx({ personProperties: { a: 'b' } });
  const first = evaluateFlags(set, c).map(summary);
  evaluateFlags(set, ctx({ distinctId: 'someone-else' }));
  t.same(evaluateFlags(set, c).map(summary), first);
  t.equal(JSON.stringify(filters), snapshot);
  t.same(c.personProperties, { a: 'b' }, 'distinct_id is not written into the caller object');
});

t.test('stored person properties under the request ones answer exactly like the merged object', async (t) => {
  // Callers give the stored properties apart (EvaluationContext.storedPersonProperties) instead of spreading both
  // into one object; every result must equal the one for `{...stored, ...request}`.
  let s = 7;
  const r = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const keys = ['plan', 'age', 'email', 'constructor', 'toString', '$device_id', '$feature_enrollment/e0', '$feature_enrollment/e1', 'distinct_id'];
  const values: unknown[] = ['pro', 'free', 30, '30', null, true, 'true', 'a@acme.com', ''];
  const operators = ['exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'gt', 'lt', 'regex'];
  const flags: FlagRecord[] = [];
  for (let i = 0; i < 40; i++) {
    const groups = Array.from({ length: 1 + Math.floor(r() * 2) }, () => ({
      properties: Array.from({ length: Math.floor(r() * 3) }, () => person(pick(keys), pick(values.filter((v) => v !== null)), pick(operators))),
      rollout_percentage: pick([100, 50, 0]),
    }));
    const extra: Partial<FlagRecord> = i % 7 === 0 ? { bucketing_identifier: 'device_id' } : {};
    const filters: Record<string, unknown> = { groups };
    if (i < 2) filters.feature_enrollment = true;
    if (i === 2) filters.super_groups = [{ properties: [{ key: '$feature_enrollment/e1', type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 }];
    flags.push(flag(`e${i}`, filters, extra));
  }
  const set = compileFlagSet(flags, [], {});
  let compared = 0;
  const differences: string[] = [];
  for (let p = 0; p < 300; p++) {
    const stored: Record<string, unknown> = {};
    const request: Record<string, unknown> = {};
    for (const key of keys) {
      const where = r();
      if (where < 0.35) stored[key] = pick(values);
      else if (where < 0.55) request[key] = pick(values);
      else if (where < 0.7) {
        stored[key] = pick(values);
        request[key] = pick(values);
      }
    }
    const base = { distinctId: `user-${p}`, now: new Date('2024-06-01T00:00:00Z') };
    const merged = evaluateFlags(set, ctx({ ...base, personProperties: { ...stored, ...request } }));
    const layered = evaluateFlags(set, ctx({ ...base, personProperties: request, storedPersonProperties: stored }));
    merged.forEach((m, i) => {
      compared++;
      const l = layered[i]!;
      if (JSON.stringify(summary(m)) !== JSON.stringify(summary(l)) || m.variant !== l.variant) differences.push(`${m.key} person ${p}`);
    });
  }
  t.same(differences.slice(0, 5), [], `${compared} results compared`);

  const rows: [string, Partial<EvaluationContext>, boolean][] = [
    ['a stored value is seen', { storedPersonProperties: { plan: 'pro' } }, true],
    ['the request value wins', { personProperties: { plan: 'free' }, storedPersonProperties: { plan: 'pro' } }, false],
    ['a request null wins over a stored value', { personProperties: { plan: null }, storedPersonProperties: { plan: 'pro' } }, false],
    ['a request key without a value hides the stored one', { personProperties: { plan: undefined }, storedPersonProperties: { plan: 'pro' } }, false],
  ];
  for (const [description, extra, expected] of rows) {
    t.equal(one({ flags: [flag('p', { groups: [{ properties: [person('plan', 'pro', 'exact')] }] })], ctx: extra }).value, expected, description);
  }
});
