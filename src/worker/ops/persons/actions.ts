/**
 * Person actions (ingestion-and-api.md §5.3, analytics.md §8.6): update_property, delete_property and split.
 *
 * The seed lists the inputs of update_property (`key`, `value`) and delete_property (`$unset`) as query
 * parameters; PostHog reads them from the JSON body. Both work: a body field wins, and a value from the query
 * string is a string while one from the body keeps its JSON type.
 */
import type { TaskItem } from '../../../protocol/worker-messages.js';
import { Errors } from '../../../protocol/errors.js';
import type { PersonRow } from '../../../stores/persons/person-store.js';
import { bodyOf, principalOf, projectIdOf, type OpHandler } from '../types.js';
import { logPersonActivity } from './activity.js';
import { insertPerson, setPersonProperties } from './crud.js';
import { answer, personFromParam, viewOf } from './person-view.js';
import { settledPersons } from './read-your-writes.js';

/** A named input from the body, else the query string; undefined when neither has it. */
function inputOf(item: TaskItem, name: string): { value: unknown } | undefined {
  const body = bodyOf(item);
  if (Object.hasOwn(body, name)) return { value: body[name] };
  const query = item.meta.query;
  return Object.hasOwn(query, name) ? { value: query[name] } : undefined;
}

function propertyKeyOf(item: TaskItem, name: string): string {
  const input = inputOf(item, name);
  if (input === undefined || input.value === null) throw Errors.required(name);
  if (typeof input.value !== 'string' || input.value === '') {
    throw Errors.validation(name, 'invalid_input', 'A property key must be a non-empty string.');
  }
  return input.value;
}

export const updatePersonProperty: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const key = propertyKeyOf(item, 'key');
  const value = inputOf(item, 'value');
  if (value === undefined) throw Errors.required('value');
  const row = await setPersonProperties(rt, team, principalOf(item).userId, item.params.id, { [key]: value.value });
  return answer(item, 200, viewOf(row));
};

export const deletePersonProperty: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const key = propertyKeyOf(item, '$unset');
  await settledPersons(rt);
  const row = await rt.persons.write(() => {
    const current = personFromParam(rt.persons, team, item.params.id);
    if (!Object.hasOwn(current.properties, key)) return current;
    const properties = { ...current.properties };
    delete properties[key];
    const next: PersonRow = { ...current, properties, version: current.version + 1 };
    rt.persons.savePerson(next);
    return next;
  });
  await logPersonActivity(rt, {
    team, userId: principalOf(item).userId, personId: row.id, personUuid: row.uuid, activity: 'delete_property',
    changes: [{ type: 'Person', action: 'changed', field: 'properties', before: null, after: null }],
  });
  return answer(item, 200, viewOf(row));
};

/**
 * Every distinct id except the main one (`main_distinct_id`, default: the first the person got) moves to a new
 * person of its own with no properties; the original keeps the main id and its properties. Events keep the
 * person id they were ingested with.
 */
export const splitPerson: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const requested = bodyOf(item).main_distinct_id;
  if (requested !== undefined && requested !== null && typeof requested !== 'string') {
    throw Errors.validation('main_distinct_id', 'invalid_input', 'Not a valid string.');
  }
  await settledPersons(rt);
  const { row, moved } = await rt.persons.write(() => {
    const current = personFromParam(rt.persons, team, item.params.id);
    const main = typeof requested === 'string' ? requested : current.distinct_ids[0];
    if (main !== undefined && !current.distinct_ids.includes(main)) {
      throw Errors.validation('main_distinct_id', 'invalid_input', `The distinct id "${main}" does not belong to this person.`);
    }
    const moved = current.distinct_ids.filter((d) => d !== main);
    if (moved.length === 0) return { row: current, moved };
    const kept: PersonRow = { ...current, distinct_ids: main === undefined ? [] : [main], version: current.version + 1 };
    rt.persons.savePerson(kept);
    // putPerson re-points each moved distinct id at its new person.
    for (const d of moved) insertPerson(rt.persons, team, [d], {});
    return { row: kept, moved };
  });
  if (moved.length > 0) {
    await logPersonActivity(rt, {
      team, userId: principalOf(item).userId, personId: row.id, personUuid: row.uuid, activity: 'split_person',
      changes: [{ type: 'Person', action: 'split', field: null, before: null, after: { distinct_ids: moved } }],
    });
  }
  return answer(item, 201, { success: true });
};
