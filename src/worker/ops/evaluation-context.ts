/**
 * Assembling what the pure flag engine needs for one person: stored person properties overlaid by the request's,
 * stored group properties overlaid by the request's, experience-continuity hash keys and static cohort
 * membership. Reads only what the project's flag set can use.
 */
import type { CompiledFlagSet, EvaluationContext } from '../../domain/flags/index.js';
import type { WorkerRuntime } from '../runtime.js';
import { mergeProperties } from '../../domain/merge-properties.js';

export interface EvaluationRequest {
  distinctId: string;
  anonDistinctId: string | null;
  personProperties: Record<string, unknown>;
  groups: Record<string, unknown>;
  groupProperties: Record<string, unknown>;
  deviceId: string | null;
}

const NO_COHORTS: ReadonlySet<number> = new Set();

export function evaluationContextFor(rt: WorkerRuntime, team: number, set: CompiledFlagSet, req: EvaluationRequest): EvaluationContext {
  const person = rt.personCache.byDistinctId(team, req.distinctId);
  const groups: Record<string, string> = {};
  for (const [type, key] of Object.entries(req.groups)) {
    if (key !== null && key !== undefined && key !== '') groups[type] = typeof key === 'string' ? key : JSON.stringify(key);
  }
  const groupProperties: Record<string, Record<string, unknown>> = {};
  if (set.hasGroupFlags) {
    const types = rt.cache.groupTypes(team);
    for (const [type, key] of Object.entries(groups)) {
      const index = types[type];
      const stored = index === undefined ? undefined : rt.persons.group(team, index, key)?.properties;
      const given = req.groupProperties[type];
      groupProperties[type] = mergeProperties(stored ?? {}, given && typeof given === 'object' ? (given as Record<string, unknown>) : {});
    }
  }
  return {
    distinctId: req.distinctId,
    personProperties: req.personProperties,
    storedPersonProperties: person ? person.properties : null,
    groups,
    groupProperties,
    hashKeyOverrides: person && set.continuityFlagKeys.length > 0 ? rt.persons.hashKeysOf(team, person.id) : {},
    anonDistinctId: req.anonDistinctId,
    deviceId: req.deviceId ?? (typeof req.personProperties.$device_id === 'string' ? req.personProperties.$device_id : null),
    staticCohortIds: person && set.usesStaticCohorts ? rt.persons.staticCohortIdsOf(team, person.id) : NO_COHORTS,
    personCreatedAt: person?.created_at ?? null,
    now: new Date(),
  };
}

/**
 * Experience continuity, write path (flags.md §7.3): when a request names the previous anonymous id, every
 * continuity flag without a hash key yet for the persons behind `distinct_id` and `$anon_distinct_id` gets the
 * anonymous id as hash key, for each of those persons. First write wins; persons must exist.
 */
export async function writeHashKeyOverrides(rt: WorkerRuntime, team: number, distinctId: string, anonId: string, flagKeys: readonly string[]): Promise<void> {
  const personIds = (): number[] => {
    const ids = new Set<number>();
    for (const d of [distinctId, anonId]) {
      const id = rt.persons.personIdOf(team, d);
      if (id !== undefined) ids.add(id);
    }
    return [...ids];
  };
  const missing = (ids: number[]) => {
    const present = ids.map((id) => rt.persons.hashKeysOf(team, id));
    return flagKeys.filter((key) => present.every((keys) => !(key in keys)));
  };
  const ids = personIds();
  if (ids.length === 0 || missing(ids).length === 0) return;
  await rt.persons.write(() => {
    const inTxn = personIds();
    for (const key of missing(inTxn)) for (const id of inTxn) rt.persons.hashKeyOverrides.put([team, id, key], anonId);
  });
}
