/**
 * What HogQL evaluation reads besides the events: the current persons and groups of the project, from the shared
 * persons environment, each read once per query and worker (a join to `persons` touches each person once, not once
 * per event). `person_id` names persons and personless actors alike by uuid, as PostHog's events do.
 */
import type { PersonRow } from '../../stores/persons/person-store.js';
import type { GroupInfo, PersonInfo, ValueContext } from '../../domain/hogql/values.js';
import type { WorkerRuntime } from '../runtime.js';

export function personInfo(row: PersonRow): PersonInfo {
  return { uuid: row.uuid, properties: row.properties, createdAt: Date.parse(row.created_at), isIdentified: row.is_identified };
}

export function hogqlValueContext(rt: WorkerRuntime, team: number, timeZone: string, now: number): ValueContext {
  const persons = new Map<number, PersonInfo | null>();
  const uuids = new Map<string, number | null>();
  const groups = new Map<string, GroupInfo | null>();
  const person = (id: number): PersonInfo | null => {
    let p = persons.get(id);
    if (p === undefined) {
      const row = rt.persons.person(team, id);
      p = row ? personInfo(row) : null;
      persons.set(id, p);
    }
    return p;
  };
  // A personless actor (src/domain/ingest/personless.ts) has no row: its uuid is its distinct id's deterministic one.
  const personless = new Map<number, string | null>();
  const actorUuid = (id: number): string | null => {
    let uuid = personless.get(id);
    if (uuid === undefined) personless.set(id, (uuid = rt.persons.personlessUuid(team, id) ?? null));
    return uuid;
  };
  return {
    timeZone,
    now,
    person,
    personUuid: (id) => person(id)?.uuid ?? actorUuid(id),
    personOfUuid(uuid) {
      let id = uuids.get(uuid);
      if (id === undefined) {
        id = rt.persons.idOfUuid(team, uuid) ?? null;
        uuids.set(uuid, id);
      }
      return id;
    },
    group(typeIndex, key) {
      const k = `${typeIndex}\u0000${key}`;
      let g = groups.get(k);
      if (g === undefined) {
        const row = rt.persons.group(team, typeIndex, key);
        g = row ? { properties: row.properties, createdAt: Date.parse(row.created_at) } : null;
        groups.set(k, g);
      }
      return g;
    },
  };
}
