/**
 * The property-definitions API, as PostHog's UI uses it (`/api/projects/:id/property_definitions/`): the names of
 * the event, person or group properties a project has seen, with their types, to suggest names where a property is
 * typed and to flag a name no event carries.
 *
 * Where the names come from (nothing is written on the ingestion path):
 *   - `type=event`: the event-property columns of the project's blocks on every shard (properties/block-names.ts);
 *   - `type=person`: the person-property columns of the blocks (persons' properties as they were at their events),
 *     and the current properties of the newest `PERSON_SAMPLE` persons (properties set without any event since);
 *   - `type=group` (with `group_type_index`): the properties of the first `GROUP_SAMPLE` groups of that type.
 * Types are inferred from the values (src/domain/properties/property-type.ts) unless a PATCH set one. The id is a
 * uuid derived from the project, kind and name, so it is stable without storing anything per property; PATCH
 * stores what the user wrote (description, tags, property_type) in the metadata environment under the same key.
 *
 * Parameters (PostHog's): `type`, `group_type_index`, `search` (every word is part of the name, case-insensitive),
 * `properties` (comma-separated exact names), `event_names` (JSON list: rows say `is_seen_on_filtered_events`, and
 * those seen on such events come first; with `filter_by_event_names=true` only those), `excluded_properties` (JSON
 * list), `is_numerical` and `is_feature_flag` (`$feature/…` properties; `true`/`false`), `exclude_hidden` (accepted;
 * nothing is hidden here), `limit`/`offset`. Order: seen first when `event_names` is
 * given, then by name.
 */
import { createHash } from 'node:crypto';
import type { PropertyDefinitionNote } from '../../domain/model.js';
import { pyType } from '../../domain/py-type.js';
import { combinePropertyTypes, inferPropertyType, PROPERTY_TYPES, type PropertyType } from '../../domain/properties/property-type.js';
import { Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import { paginate } from '../pagination.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { namesEverywhere } from './property-definitions/block-names.js';
import { bodyOf, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';
import { descriptiveChanges } from './definition-fields.js';

/** Newest persons whose current properties are read for `type=person`: a bounded sample, one LMDB range read. */
const PERSON_SAMPLE = 500;
/** Groups of the type read for `type=group`. */
const GROUP_SAMPLE = 500;
const TYPES = ['event', 'person', 'group'] as const;
/** The properties SDKs add for each flag evaluated (`is_feature_flag` picks them or leaves them out). */
const FLAG_PREFIX = '$feature/';
type DefinitionType = (typeof TYPES)[number];

interface Kind {
  type: DefinitionType;
  groupTypeIndex: number | null;
}

interface Definition {
  name: string;
  type: PropertyType | null;
  seen: boolean | null;
}

const kindKey = (k: Kind): string => (k.type === 'group' ? `group:${k.groupTypeIndex}` : k.type);

/** A uuid (version 5 layout) named by project, kind and name. */
function definitionId(team: number, kind: Kind, name: string): string {
  const h = createHash('sha1').update(`${team}\u0000${kindKey(kind)}\u0000${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

function jsonListParam(query: Record<string, string>, name: string): string[] | null {
  const raw = query[name];
  if (raw === undefined || raw === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw Errors.validation(name, 'invalid_input', `${name} must be a JSON list of strings.`);
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
    throw Errors.validation(name, 'invalid_input', `${name} must be a JSON list of strings, not ${pyType(parsed)}.`);
  }
  return parsed;
}

function kindOf(query: Record<string, string>): Kind {
  const type = (query.type || 'event') as DefinitionType;
  if (!TYPES.includes(type)) throw Errors.validation('type', 'invalid_choice', `"${query.type}" is not a valid choice: use event, person or group.`);
  if (type !== 'group') return { type, groupTypeIndex: null };
  const raw = query.group_type_index;
  if (raw === undefined || !/^[0-4]$/.test(raw)) {
    throw Errors.validation('group_type_index', 'invalid_input', 'group_type_index (0 to 4) is required with type=group.');
  }
  return { type, groupTypeIndex: Number(raw) };
}

/** Types of the properties of some objects (persons, groups) from their current values. */
function typesOfObjects(objects: Iterable<Record<string, unknown>>): Map<string, PropertyType | null> {
  const values = new Map<string, unknown[]>();
  for (const props of objects) {
    for (const key of Object.keys(props)) {
      let list = values.get(key);
      if (!list) values.set(key, (list = []));
      list.push(props[key]);
    }
  }
  return new Map([...values].map(([key, list]) => [key, inferPropertyType(list)]));
}

/** Every definition of one kind for a project (before filters), by name. */
async function definitionsOf(rt: WorkerRuntime, team: number, kind: Kind, eventNames: string[] | null): Promise<Map<string, Definition>> {
  const out = new Map<string, Definition>();
  const add = (name: string, type: PropertyType | null, seen: boolean | null) => {
    const prev = out.get(name);
    out.set(name, prev ? { name, type: combinePropertyTypes(prev.type, type), seen: prev.seen || seen } : { name, type, seen });
  };
  // Groups, persons and blocks are written by the apply loops: read after every acknowledged event is applied.
  await rt.ingest.appliedEverywhere();
  if (kind.type === 'group') {
    rt.persons.env.resetReadTxn();
    const groups = rt.persons.groupsAfter([team, kind.groupTypeIndex!, ''], GROUP_SAMPLE)
      .filter((g) => g.team === team && g.type_index === kind.groupTypeIndex);
    for (const [name, type] of typesOfObjects(groups.map((g) => g.properties))) add(name, type, null);
    return out;
  }
  const fromBlocks = await namesEverywhere(rt, { team, subject: kind.type, eventNames: kind.type === 'event' ? eventNames : null });
  for (const [name, { type, seen }] of fromBlocks) add(name, type, kind.type === 'event' && eventNames ? seen : null);
  if (kind.type === 'person') {
    rt.persons.env.resetReadTxn();
    const persons = rt.persons.personsBefore(team, Number.MAX_SAFE_INTEGER, PERSON_SAMPLE);
    for (const [name, type] of typesOfObjects(persons.map((p) => p.properties))) add(name, type, null);
  }
  return out;
}

/** A row in PostHog's shape; the caller renews the metadata read snapshot first (notes are written by any thread). */
function serialize(rt: WorkerRuntime, team: number, kind: Kind, d: Definition): Record<string, unknown> {
  const note = rt.meta.propertyNotes.get([team, kindKey(kind), d.name]);
  const type = note?.property_type ?? d.type;
  return {
    id: definitionId(team, kind, d.name),
    name: d.name,
    type: kind.type,
    group_type_index: kind.groupTypeIndex,
    is_numerical: type === 'Numeric',
    property_type: type,
    description: note?.description ?? '',
    tags: note?.tags ?? [],
    is_seen_on_filtered_events: d.seen,
    updated_at: note?.updated_at ?? null,
    updated_by: userRefById(rt.meta, note?.updated_by ?? null),
    verified: false,
    hidden: false,
  };
}

const byName = (a: Definition, b: Definition) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export const listPropertyDefinitions: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const query = item.meta.query;
  const kind = kindOf(query);
  const eventNames = jsonListParam(query, 'event_names');
  const excluded = new Set(jsonListParam(query, 'excluded_properties') ?? []);
  const exact = query.properties ? new Set(query.properties.split(',').map((p) => p.trim()).filter((p) => p !== '')) : null;
  const words = (query.search ?? '').toLowerCase().split(/\s+/).filter((w) => w !== '');
  const numerical = query.is_numerical === 'true' ? true : query.is_numerical === 'false' ? false : null;
  const onlySeen = query.filter_by_event_names === 'true' && eventNames !== null;
  const featureFlags = query.is_feature_flag === 'true' ? true : query.is_feature_flag === 'false' ? false : null;
  const all = await definitionsOf(rt, team, kind, eventNames);
  const rows: Record<string, unknown>[] = [];
  const kept = [...all.values()].filter((d) => {
    if (excluded.has(d.name) || (exact && !exact.has(d.name)) || (onlySeen && d.seen !== true)) return false;
    if (featureFlags !== null && d.name.startsWith(FLAG_PREFIX) !== featureFlags) return false;
    const lower = d.name.toLowerCase();
    return words.every((w) => lower.includes(w));
  });
  kept.sort((a, b) => Number(b.seen === true) - Number(a.seen === true) || byName(a, b));
  rt.meta.env.resetReadTxn();
  for (const d of kept) {
    const row = serialize(rt, team, kind, d);
    if (numerical !== null && row.is_numerical !== numerical) continue;
    rows.push(row);
  }
  return json(200, paginate(rows, item.meta));
};

/** The definition an id names, looked up among every kind's definitions of the project (ids are derived). */
async function findById(rt: WorkerRuntime, item: TaskItem): Promise<{ kind: Kind; d: Definition }> {
  const team = projectIdOf(item);
  const id = item.params.id ?? '';
  const kinds: Kind[] = [{ type: 'event', groupTypeIndex: null }, { type: 'person', groupTypeIndex: null }];
  rt.meta.env.resetReadTxn();
  for (const index of Object.values(rt.meta.groupTypes.get(team) ?? {})) kinds.push({ type: 'group', groupTypeIndex: index });
  for (const kind of kinds) {
    for (const d of (await definitionsOf(rt, team, kind, null)).values()) {
      if (definitionId(team, kind, d.name) === id) return { kind, d };
    }
  }
  throw Errors.notFound();
}

export const retrievePropertyDefinition: OpHandler = async (item, rt) => {
  const { kind, d } = await findById(rt, item);
  rt.meta.env.resetReadTxn();
  return json(200, serialize(rt, projectIdOf(item), kind, d));
};

/** The writable fields of a PATCH body, type-checked; other fields are read-only and ignored. */
function changesOf(body: Record<string, unknown>): Partial<Pick<PropertyDefinitionNote, 'description' | 'tags' | 'property_type'>> {
  const out: Partial<Pick<PropertyDefinitionNote, 'description' | 'tags' | 'property_type'>> = {};
  Object.assign(out, descriptiveChanges(body));
  if ('property_type' in body) {
    const v = body.property_type;
    if (v !== null && !PROPERTY_TYPES.includes(v as PropertyType)) {
      throw Errors.validation('property_type', 'invalid_choice', `"${String(v)}" is not a valid choice: use ${PROPERTY_TYPES.join(', ')}.`);
    }
    out.property_type = v as PropertyType | null;
  }
  return out;
}

/** PATCH: `description`, `tags` (trimmed, blanks and repeats dropped) and `property_type` (null: inferred again). */
export const updatePropertyDefinition: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  const principal = principalOf(item);
  const changes = changesOf(bodyOf(item));
  const { kind, d } = await findById(rt, item);
  await rt.meta.write(() => {
    const key: [number, string, string] = [team, kindKey(kind), d.name];
    const before = rt.meta.propertyNotes.get(key) ?? { description: null, tags: [], property_type: null };
    rt.meta.propertyNotes.put(key, { ...before, ...changes, updated_at: nowIso(), updated_by: principal.userId || null });
  });
  rt.meta.env.resetReadTxn();
  return json(200, serialize(rt, team, kind, d));
};
