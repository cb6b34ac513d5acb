/**
 * The cohorts API: list, create, retrieve, PATCH/PUT (including the soft delete), the refused hard delete, a
 * cohort's persons, and the member list of static cohorts. Flags target cohorts, so every definition change is
 * replicated into every worker's flag cache before the call returns.
 *
 * Property cohorts are evaluated on demand by the flag engine (nothing is precalculated): `count` and the persons
 * list are exact at read time, `is_calculating` is always false and `last_calculation` is the last change.
 * Static cohorts keep their members in the persons environment, keyed by person id.
 */
import type { Cohort } from '../../domain/model.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { pageOf, paginate, paginateCounted } from '../pagination.js';
import { replicate } from '../replication.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { definitionOf, validateDefinition, type Definition } from './cohorts/definition.js';
import { CohortMembership } from './persons/cohort-membership.js';
import { answer, findPerson, personFromParam, viewOf } from './persons/person-view.js';
import { settledPersons } from './persons/read-your-writes.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

/** The stored record: the model's fields plus what the API echoes back. */
interface StoredCohort extends Cohort {
  groups?: unknown[];
  last_calculation?: string;
}

export function cohortOf(meta: MetaStore, projectId: number, id: number): StoredCohort {
  const cohort = meta.cohorts.get([projectId, id]) as StoredCohort | undefined;
  if (!cohort) throw Errors.notFound();
  return cohort;
}

export async function serializeCohort(meta: MetaStore, cohort: StoredCohort, membership: CohortMembership): Promise<Record<string, unknown>> {
  const count = (await membership.members(cohort)).length;
  return {
    id: cohort.id,
    name: cohort.name,
    description: cohort.description,
    filters: cohort.filters,
    groups: cohort.groups ?? [],
    is_static: cohort.is_static,
    deleted: cohort.deleted,
    is_calculating: false,
    created_by: userRefById(meta, cohort.created_by),
    created_at: cohort.created_at,
    last_calculation: cohort.last_calculation ?? cohort.created_at,
    errors_calculating: 0,
    count,
    version: cohort.version,
  };
}

function textOf(body: Record<string, unknown>, field: 'name' | 'description', fallback: string): string {
  const v = body[field];
  if (v === undefined) return fallback;
  if (v === null) return '';
  if (typeof v !== 'string') throw Errors.validation(field, 'invalid_input', 'Not a valid string.');
  if (field === 'name' && v.length > 400) throw Errors.validation(field, 'max_length', 'Ensure this field has no more than 400 characters.');
  return v;
}

/** Member references of a static cohort from `person_ids` (ids or uuids) and `distinct_ids`; null when absent. */
function memberRefsOf(body: Record<string, unknown>): { personIds: string[]; distinctIds: string[] } | null {
  const list = (field: string, ok: (v: unknown) => boolean): string[] => {
    const v = body[field];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every(ok)) {
      throw Errors.validation(field, 'invalid_input', field === 'person_ids'
        ? 'Expected a list of person ids (integers) or uuids.'
        : 'Expected a list of distinct ids (strings).');
    }
    return v.map(String);
  };
  const personIds = list('person_ids', (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'string');
  const distinctIds = list('distinct_ids', (v) => typeof v === 'string');
  return body.person_ids === undefined && body.distinct_ids === undefined ? null : { personIds, distinctIds };
}

/** Adds the persons the references name (unknown ones are skipped, as PostHog's upload does); returns how many. */
async function addMembers(rt: WorkerRuntime, team: number, cohortId: number, refs: { personIds: string[]; distinctIds: string[] }): Promise<number> {
  await settledPersons(rt);
  return rt.persons.write(() => {
    const ids = new Set<number>();
    for (const ref of refs.personIds) {
      const row = findPerson(rt.persons, team, ref);
      if (row) ids.add(row.id);
    }
    for (const d of refs.distinctIds) {
      const id = rt.persons.personIdOf(team, d);
      if (id !== undefined) ids.add(id);
    }
    for (const id of ids) rt.persons.addToStaticCohort(team, cohortId, id);
    return ids.size;
  });
}

function refuseMembersOnPropertyCohort(body: Record<string, unknown>): void {
  const field = body.person_ids !== undefined ? 'person_ids' : body.distinct_ids !== undefined ? 'distinct_ids' : null;
  if (field !== null) throw Errors.validation(field, 'invalid_input', 'Only static cohorts have a member list; this cohort is defined by its filters.');
}

export const listCohorts: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  await settledPersons(rt);
  const cohorts = (rt.meta.cohortsOf(team) as StoredCohort[]).filter((c) => !c.deleted);
  cohorts.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id - a.id);
  const page = paginate(cohorts, item.meta);
  const membership = new CohortMembership(rt, team);
  const results: Record<string, unknown>[] = [];
  for (const c of page.results) results.push(await serializeCohort(rt.meta, c, membership));
  return json(200, { ...page, results });
};

export const retrieveCohort: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const cohort = cohortOf(rt.meta, team, intParam(item, 'id'));
  await settledPersons(rt);
  return json(200, await serializeCohort(rt.meta, cohort, new CohortMembership(rt, team)));
};

export const createCohort: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const userId = principalOf(item).userId;
  const body = bodyOf(item);
  const isStatic = body.is_static === true;
  const refs = memberRefsOf(body);
  if (!isStatic) refuseMembersOnPropertyCohort(body);
  const name = textOf(body, 'name', '');
  const description = textOf(body, 'description', '');
  const definition: Definition = isStatic ? { filters: {}, groups: [] } : definitionOf(body, null);
  const now = nowIso();
  const cohort = await rt.meta.write(() => {
    if (!isStatic) validateDefinition(definition.filters, rt.meta.cohortsOf(team), null);
    const record: StoredCohort = {
      id: rt.meta.nextId('cohort'), project_id: team, name, description, filters: definition.filters,
      groups: definition.groups, is_static: isStatic, deleted: body.deleted === true, created_by: userId,
      created_at: now, last_calculation: now, version: 1,
    };
    rt.meta.cohorts.put([team, record.id], record);
    return record;
  });
  if (refs) await addMembers(rt, team, cohort.id, refs);
  await replicate(rt, { projectId: team });
  await settledPersons(rt);
  return json(201, await serializeCohort(rt.meta, cohort, new CohortMembership(rt, team)));
};

export const updateCohort: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const refs = memberRefsOf(body);
  const cohort = await rt.meta.write(() => {
    const before = cohortOf(rt.meta, team, id);
    if (body.is_static !== undefined && body.is_static !== before.is_static) {
      throw Errors.validation('is_static', 'invalid_input', 'A cohort cannot change between static and property-based after it is created.');
    }
    if (!before.is_static) refuseMembersOnPropertyCohort(body);
    const next: StoredCohort = {
      ...before,
      name: textOf(body, 'name', before.name),
      description: textOf(body, 'description', before.description),
      deleted: typeof body.deleted === 'boolean' ? body.deleted : before.deleted,
    };
    if (!before.is_static) {
      const definition = definitionOf(body, { filters: before.filters, groups: before.groups ?? [] });
      if (definition.filters !== before.filters) validateDefinition(definition.filters, rt.meta.cohortsOf(team), id);
      next.filters = definition.filters;
      next.groups = definition.groups;
    }
    next.version = before.version + 1;
    next.last_calculation = nowIso();
    rt.meta.cohorts.put([team, id], next);
    return next;
  });
  if (refs) await addMembers(rt, team, id, refs);
  await replicate(rt, { projectId: team });
  await settledPersons(rt);
  return json(200, await serializeCohort(rt.meta, cohort, new CohortMembership(rt, team)));
};

/** Hard delete is not allowed, as for flags: the cohort stays as it is. */
export const deleteCohort: OpHandler = (item, rt) => {
  cohortOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of a cohort is not allowed. Use PATCH with {"deleted": true} to delete it.');
};

export const cohortPersons: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const cohort = cohortOf(rt.meta, team, intParam(item, 'id'));
  await settledPersons(rt);
  const rows = await new CohortMembership(rt, team).members(cohort);
  const page = pageOf(item.meta.query);
  const { count, next, previous, results } = paginateCounted(rows.slice(page.offset, page.offset + page.limit), rows.length, item.meta, page);
  return answer(item, 200, { count, next, previous, results: results.map(viewOf) });
};

function staticCohortOf(item: TaskItem, rt: WorkerRuntime): StoredCohort {
  const cohort = cohortOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  if (!cohort.is_static) throw Errors.validation(null, 'invalid_input', 'This cohort is defined by its filters; only static cohorts have a member list.');
  return cohort;
}

export const addPersonsToStaticCohort: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const cohort = staticCohortOf(item, rt);
  const refs = memberRefsOf(bodyOf(item));
  if (refs === null) throw Errors.required('person_ids');
  await addMembers(rt, team, cohort.id, refs);
  return json(200, { success: true });
};

export const removePersonFromStaticCohort: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const cohort = staticCohortOf(item, rt);
  const ref = bodyOf(item).person_id;
  if (ref === undefined || ref === null) throw Errors.required('person_id');
  if (typeof ref !== 'string' && typeof ref !== 'number') throw Errors.validation('person_id', 'invalid_input', 'Expected a person id or uuid.');
  await settledPersons(rt);
  await rt.persons.write(() => {
    const row = personFromParam(rt.persons, team, String(ref));
    rt.persons.removeFromStaticCohort(team, cohort.id, row.id);
  });
  return json(200, { success: true });
};
