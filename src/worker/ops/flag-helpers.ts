/**
 * Management helpers around flag evaluation: why each flag evaluates as it does for a distinct id, the flags of
 * the calling user, and how many persons (or groups) a release condition would reach.
 */
import { compileCondition, evaluateFlag, matchesConditionProperties, type EvaluationContext } from '../../domain/flags/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../domain/json-depth.js';
import { Errors } from '../../protocol/errors.js';
import { json } from '../reply.js';
import { userOf } from './accounts.js';
import { evaluationContextFor } from './evaluation-context.js';
import { serializeFlag } from './feature-flags.js';
import { bodyOf, principalOf, projectIdOf, type OpHandler } from './types.js';
import { eachPerson } from '../person-pages.js';

function groupsParam(raw: string | undefined): Record<string, unknown> {
  if (!raw) return {};
  try {
    const v: unknown = JSON.parse(raw);
    if (nestsDeeperThan(v, MAX_JSON_DEPTH)) throw new Error('too deep');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    throw Errors.validation('groups', 'invalid_input', 'groups must be a JSON object of group type to group key.');
  }
}

/** `{key: {value, evaluation: {reason, condition_index}}}` for every flag; inactive flags report `disabled`. */
export const evaluationReasons: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const distinctId = item.meta.query.distinct_id;
  if (!distinctId) throw Errors.validation('distinct_id', 'invalid_input', 'distinct_id is required');
  await rt.ingest.appliedEverywhere();
  const set = rt.cache.flagSet(projectId);
  const ctx = evaluationContextFor(rt, projectId, set, {
    distinctId, anonDistinctId: null, personProperties: {}, groups: groupsParam(item.meta.query.groups), groupProperties: {}, deviceId: null,
  });
  const out: Record<string, unknown> = {};
  for (const flag of set.flags) {
    const r = evaluateFlag(set, flag.key, ctx);
    if (!r) continue;
    const reason = r.reason.code === 'flag_disabled' ? 'disabled' : r.reason.code;
    out[r.key] = { value: r.value, evaluation: { reason, condition_index: r.reason.condition_index } };
  }
  return json(200, out);
};

/** The active flags with their values for the calling user (their own distinct id). */
export const myFlags: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  const set = rt.cache.flagSet(projectId);
  const ctx = evaluationContextFor(rt, projectId, set, {
    distinctId: user.distinct_id, anonDistinctId: null, personProperties: { email: user.email }, groups: {}, groupProperties: {}, deviceId: null,
  });
  const results = [];
  for (const stored of rt.meta.flagsOf(projectId)) {
    if (stored.deleted || !stored.active) continue;
    const r = evaluateFlag(set, stored.key, ctx);
    if (r) results.push({ feature_flag: serializeFlag(rt.meta, stored, user), value: r.value });
  }
  return json(200, results);
};

/**
 * `{condition, group_type_index?}` → `{users_affected, total_users}`: how many stored persons (or groups of that
 * type) match the condition's properties. Rollout is not applied, as in PostHog (the UI scales by it).
 */
export const userBlastRadius: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const condition = body.condition;
  if (!condition || typeof condition !== 'object' || Array.isArray(condition)) throw Errors.required('condition');
  const gti = body.group_type_index;
  if (gti !== undefined && gti !== null && !(Number.isInteger(gti) && (gti as number) >= 0 && (gti as number) <= 4)) {
    throw Errors.validation('group_type_index', 'invalid_input', 'group_type_index must be an integer from 0 to 4.');
  }
  await rt.ingest.appliedEverywhere();
  const cohorts = rt.meta.cohortsOf(projectId);
  const mapping = rt.cache.groupTypeMapping(projectId);
  let compiled;
  try {
    compiled = compileCondition(condition, cohorts, mapping, gti === undefined || gti === null ? {} : { aggregation: gti as number });
  } catch (error) {
    throw Errors.validation('condition', 'invalid_input', (error as Error).message);
  }
  // Every key the per-person contexts below set is already here: they overwrite keys of a spread copy, never add
  // one (adding keys to a spread copy takes V8's slow path, src/domain/merge-properties.ts).
  const base: EvaluationContext = {
    distinctId: '', personProperties: {}, groups: {}, groupProperties: {}, hashKeyOverrides: {}, staticCohortIds: new Set(), now: new Date(),
    personCreatedAt: null,
  };
  let affected = 0;
  let total = 0;
  if (gti === undefined || gti === null) {
    for await (const person of eachPerson(rt, projectId)) {
      total++;
      const ctx = { ...base, distinctId: person.distinct_ids[0] ?? '', personProperties: person.properties, staticCohortIds: rt.persons.staticCohortIdsOf(projectId, person.id), personCreatedAt: person.created_at };
      if (matchesConditionProperties(compiled, ctx)) affected++;
    }
  } else {
    const typeName = mapping[String(gti)];
    for (const group of rt.persons.groupsOf(projectId, gti as number)) {
      total++;
      const ctx = typeName ? { ...base, groups: { [typeName]: group.key }, groupProperties: { [typeName]: group.properties } } : base;
      if (matchesConditionProperties(compiled, ctx)) affected++;
    }
  }
  return json(200, { users_affected: affected, total_users: total });
};
