/**
 * Person create / retrieve / update / delete (ingestion-and-api.md §5.3). Writes are transactions of the shared
 * persons environment, so they are atomic with respect to ingestion on every worker; each re-reads the person
 * inside its transaction.
 *
 * Statuses: create 201 with the person; PATCH/PUT 200 with the updated person (PostHog answered 204/202 without
 * a body, but SDK-less clients want the result); DELETE 204.
 */
import { randomUUID } from 'node:crypto';
import { personUuid } from '../../../domain/ingest/index.js';
import { Errors } from '../../../protocol/errors.js';
import type { PersonRow, PersonStore } from '../../../stores/persons/person-store.js';
import { empty } from '../../reply.js';
import type { WorkerRuntime } from '../../runtime.js';
import { sameValue } from '../activity-log.js';
import { bodyOf, nowIso, principalOf, projectIdOf, type OpHandler } from '../types.js';
import { logPersonActivity } from './activity.js';
import { deleteEventsOf } from './delete-events.js';
import { RECORDINGS } from '../../recordings/recordings-service.js';
import { answer, personFromParam, viewOf } from './person-view.js';
import { settledPersons } from './read-your-writes.js';

const MAX_DISTINCT_ID_LENGTH = 200;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `properties` of a write body; `required` for PATCH, optional (default `{}`) for create. */
export function propertiesOf(value: unknown, required: boolean): Record<string, unknown> {
  if (value === undefined) {
    if (required) throw Errors.required('properties');
    return {};
  }
  if (!isObject(value)) throw Errors.validation('properties', 'invalid_input', 'Expected a dictionary of items.');
  return value;
}

function distinctIdsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw Errors.validation('distinct_ids', 'invalid_input', 'Expected a list of items.');
  const out: string[] = [];
  for (const d of value) {
    if (typeof d !== 'string' || d.trim() === '') {
      throw Errors.validation('distinct_ids', 'invalid_input', 'Every distinct id must be a non-empty string.');
    }
    if (d.length > MAX_DISTINCT_ID_LENGTH) {
      throw Errors.validation('distinct_ids', 'max_length', `Ensure every distinct id has no more than ${MAX_DISTINCT_ID_LENGTH} characters.`);
    }
    if (!out.includes(d)) out.push(d);
  }
  return out;
}

/**
 * A uuid for a new person: the deterministic one of its first distinct id (as ingestion would give it), unless
 * that is taken (a split, a deleted-and-recreated id) or there is no distinct id. Only inside `write`.
 */
export function freshPersonUuid(store: PersonStore, team: number, firstDistinctId: string | undefined): string {
  const uuid = firstDistinctId === undefined ? randomUUID() : personUuid(team, firstDistinctId);
  return store.uuids.get([team, uuid]) === undefined ? uuid : randomUUID();
}

/**
 * Stores a new person owning `distinctIds` (which must be free). Only inside `write`. A distinct id whose events came
 * without a profile has a personless actor (src/domain/ingest/personless.ts): as in ingestion, the person takes the
 * first one's id and uuid, and the others' are recorded as merged into it, so those events count for the person.
 */
export function insertPerson(store: PersonStore, team: number, distinctIds: string[], properties: Record<string, unknown>): PersonRow {
  const actors = distinctIds.map((d) => store.personlessIdOf(team, d));
  const adopted = actors[0];
  const id = adopted ?? store.nextPersonId();
  const row: PersonRow = {
    id, team, uuid: adopted !== undefined ? personUuid(team, distinctIds[0]!) : freshPersonUuid(store, team, distinctIds[0]), properties,
    created_at: nowIso(), is_identified: false, version: 0, distinct_ids: distinctIds,
  };
  store.putPerson(row);
  actors.forEach((actor, i) => {
    if (i > 0 && actor !== undefined) store.recordMerge(team, actor, id);
  });
  return row;
}

export const createPerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const body = bodyOf(item);
  const properties = propertiesOf(body.properties, false);
  const distinctIds = distinctIdsOf(body.distinct_ids);
  await settledPersons(rt);
  const row = await rt.persons.write(() => {
    for (const d of distinctIds) {
      if (rt.persons.personIdOf(team, d) !== undefined) {
        throw Errors.validation('distinct_ids', 'unique', `The distinct id "${d}" already belongs to another person.`);
      }
    }
    return insertPerson(rt.persons, team, distinctIds, properties);
  });
  return answer(item, 201, viewOf(row));
};

export const retrievePerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  await settledPersons(rt);
  return answer(item, 200, viewOf(personFromParam(rt.persons, team, item.params.id)));
};

/**
 * `$set` of the given properties on the person named by the path: other keys are untouched. Logs `updated` when
 * something changed. Shared by PATCH and update_property.
 */
export async function setPersonProperties(rt: WorkerRuntime, team: number, userId: number, idParam: string | undefined, set: Record<string, unknown>): Promise<PersonRow> {
  await settledPersons(rt);
  const { row, changed } = await rt.persons.write(() => {
    const current = personFromParam(rt.persons, team, idParam);
    const properties = { ...current.properties, ...set };
    if (sameValue(properties, current.properties)) return { row: current, changed: false };
    const next: PersonRow = { ...current, properties, version: current.version + 1 };
    rt.persons.savePerson(next);
    return { row: next, changed: true };
  });
  if (changed) {
    await logPersonActivity(rt, {
      team, userId, personId: row.id, personUuid: row.uuid, activity: 'updated',
      changes: [{ type: 'Person', action: 'changed', field: 'properties', before: null, after: null }],
    });
  }
  return row;
}

export const updatePerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const properties = propertiesOf(bodyOf(item).properties, true);
  const row = await setPersonProperties(rt, team, principalOf(item).userId, item.params.id, properties);
  return answer(item, 200, viewOf(row));
};

/** `delete_events` is read as "present" (PostHog 2023+), except for an explicit false. */
function wantsEventsDeleted(raw: string | undefined): boolean {
  if (raw === undefined) return false;
  return !['false', '0', 'no'].includes(raw.toLowerCase());
}

export const deletePerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const userId = principalOf(item).userId;
  await settledPersons(rt);
  const found = personFromParam(rt.persons, team, item.params.id);
  // Events first: an event arriving meanwhile then keeps its (deleted) person id instead of a fresh person
  // created after the delete losing its first events.
  if (wantsEventsDeleted(item.meta.query.delete_events)) await deleteEventsOf(rt, team, found.distinct_ids);
  // A person deleted with their data loses their recordings too (PostHog's `delete_recordings`, or with the events).
  if (wantsEventsDeleted(item.meta.query.delete_events) || wantsEventsDeleted(item.meta.query.delete_recordings)) {
    await RECORDINGS.of(rt.services).deleteOfDistinctIds(team, found.distinct_ids);
  }
  const removed = await rt.persons.write(() => {
    const current = rt.persons.person(team, found.id);
    if (!current) throw Errors.notFound('Person not found.');
    rt.persons.purgePerson(current);
    return current;
  });
  await logPersonActivity(rt, {
    team, userId, personId: removed.id, personUuid: removed.uuid, activity: 'deleted',
    changes: [{ type: 'Person', action: 'deleted', field: null, before: null, after: null }],
  });
  return empty(204);
};
