/**
 * Quill's events, persons, distinct ids and groups as rows of PostHog's ClickHouse tables (src/stores/clickhouse/
 * schema.ts), in JSONEachRow form. Pure: the exporters (src/worker/export/) read the stores and call these.
 *
 * Times are written as `YYYY-MM-DD hh:mm:ss.ffffff` in UTC, which every DateTime64 column parses without settings.
 */
import { addGroupIndexes, PERSONLESS_CREATED_AT, personProfileMode, personUuid, type NormalizedEvent } from '../../domain/ingest/index.js';
import type { GroupTypes } from '../../domain/model.js';
import type { GroupRow, PersonRow } from '../persons/person-store.js';

/**
 * The person an event belongs to when it is exported: its uuid and creation time. Its properties then are only for
 * events whose own snapshot was not kept (applied before the export was on; src/stores/persons/event-snapshots.ts).
 */
export interface EventPerson {
  uuid: string;
  /** Its properties as JSON text, and its creation time as ClickHouse text: made once for all its events of a batch. */
  readonly propertiesJson: string;
  createdAt: string;
}

/** An EventPerson from a person row; the JSON of its properties is made when first asked for. */
export function eventPerson(row: { uuid: string; properties: Record<string, unknown>; created_at: string }): EventPerson {
  let json: string | undefined;
  return {
    uuid: row.uuid,
    createdAt: chTime(row.created_at),
    get propertiesJson() {
      return (json ??= JSON.stringify(row.properties));
    },
  };
}

const ZERO_TIME = '1970-01-01 00:00:00.000000';

/**
 * Who an exported event counts for: a person; `'personless'`, an event applied without a person (its distinct id's
 * personless actor, src/domain/ingest/personless.ts), written as PostHog writes one — person_id the distinct id's
 * deterministic uuid, no person properties, person_created_at 1970-01-01 00:00:05; or `'none'`, an event an older
 * Quill applied without any actor (person id 0 in its block), written with person_created_at at the epoch itself,
 * which the analyses on ClickHouse leave out as the local engine does (src/domain/analytics/clickhouse/person-events.ts).
 */
export type EventActor = EventPerson | 'personless' | 'none';

/** An ISO time or epoch milliseconds as ClickHouse's DateTime64 text, UTC. */
export function chTime(time: string | number): string {
  // Quill's own times (normalised timestamps, created_at) are all `toISOString()` text: rearranged, not parsed.
  if (typeof time === 'string' && time.length === 24 && time.charCodeAt(10) === 84 /* T */ && time.charCodeAt(23) === 90 /* Z */) {
    return `${time.slice(0, 10)} ${time.slice(11, 23)}000`;
  }
  const ms = typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(ms)) return ZERO_TIME;
  // DateTime64's range; past it (a six-digit year) the text would not parse, and the batch would never go in.
  const clamped = Math.min(Math.max(ms, MIN_TIME), MAX_TIME);
  return `${new Date(clamped).toISOString().slice(0, 23).replace('T', ' ')}000`;
}

const MIN_TIME = Date.UTC(1900, 0, 1);
const MAX_TIME = Date.UTC(2299, 11, 31, 23, 59, 59, 999);

/** person_created_at of an event without a person (PostHog's `createFakePerson`), in ClickHouse's text. */
export const PERSONLESS_CREATED_AT_TEXT = chTime(PERSONLESS_CREATED_AT);

let lastSecond = Number.NaN;
let lastSecondText = '';

/** Seconds precision, for `_timestamp DateTime` (the rows of a batch share their export time: formatted once). */
export function chSeconds(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }
  return lastSecondText;
}

/**
 * The event as the apply stored it (src/worker/ingest/person-processor.ts), or null when the apply drops it: a
 * person-only event sent with `$process_person_profile: false`. `$groups` gives `$group_N`; without a person
 * profile the person operations go; with one, the flag itself goes. Changes `ev` where it is: the exporters
 * decode their events for themselves, as the apply does.
 */
export function storedForm(ev: NormalizedEvent, groupTypes: GroupTypes): { event: NormalizedEvent; personless: boolean } | null {
  const mode = personProfileMode(ev);
  if (mode === 'drop_event') return null;
  const properties = ev.properties;
  addGroupIndexes(properties, groupTypes);
  if (mode === 'skip_person') {
    delete properties.$set;
    delete properties.$set_once;
    delete properties.$unset;
  } else delete properties.$process_person_profile;
  return { event: ev, personless: mode === 'skip_person' };
}

export interface EventRow {
  uuid: string;
  event: string;
  properties: string;
  timestamp: string;
  team_id: number;
  distinct_id: string;
  elements_chain: string;
  created_at: string;
  person_id: string;
  person_created_at: string;
  person_properties: string;
  person_mode: 'full' | 'propertyless';
  _timestamp: string;
  _offset: number;
}

/**
 * One event. `personProperties`: the JSON text of the person properties the event was applied with (what the local
 * engine's person-property filters and breakdowns read), null when not kept: then the person's as exported (none
 * for an event without a person).
 * `receivedAt`: when Quill received it (PostHog's `created_at`); `offset`: the ingest-log position of its record
 * (`_offset`); `exportedAt`: `_timestamp`.
 */
export function eventRow(
  team: number, ev: NormalizedEvent, personless: boolean, actor: EventActor, personProperties: string | null,
  receivedAt: number, offset: number, exportedAt: number,
): EventRow {
  const person = typeof actor === 'string' ? null : actor;
  return {
    uuid: ev.uuid,
    event: ev.event,
    properties: JSON.stringify(ev.properties),
    timestamp: chTime(ev.timestamp),
    team_id: team,
    distinct_id: ev.distinct_id,
    elements_chain: ev.elements_chain,
    created_at: chTime(Number.isFinite(receivedAt) ? receivedAt : exportedAt),
    person_id: person ? person.uuid : personUuid(team, ev.distinct_id),
    person_created_at: person ? person.createdAt : actor === 'personless' ? PERSONLESS_CREATED_AT_TEXT : ZERO_TIME,
    person_properties: person ? personProperties ?? person.propertiesJson : '{}',
    person_mode: personless ? 'propertyless' : 'full',
    _timestamp: chSeconds(exportedAt),
    _offset: offset,
  };
}

/**
 * An event row as a line of JSONEachRow. With `objectsAsText` (the server reads a JSON object into a String column
 * as its text: `input_format_json_read_objects_as_strings`), the two JSON columns go in as the objects they are
 * rather than as escaped strings, which was most of the encoding's cost: both texts are JSON objects made by
 * JSON.stringify here, so ClickHouse stores them byte for byte.
 */
export function eventLine(r: EventRow, objectsAsText: boolean): string {
  if (!objectsAsText) return JSON.stringify(r);
  return `{"uuid":${JSON.stringify(r.uuid)},"event":${JSON.stringify(r.event)},"properties":${r.properties},"timestamp":"${r.timestamp}",` +
    `"team_id":${r.team_id},"distinct_id":${JSON.stringify(r.distinct_id)},"elements_chain":${JSON.stringify(r.elements_chain)},` +
    `"created_at":"${r.created_at}","person_id":${JSON.stringify(r.person_id)},"person_created_at":"${r.person_created_at}",` +
    `"person_properties":${r.person_properties},"person_mode":"${r.person_mode}","_timestamp":"${r._timestamp}","_offset":${r._offset}}`;
}

export interface PersonTableRow {
  id: string;
  created_at: string;
  team_id: number;
  properties: string;
  is_identified: number;
  is_deleted: number;
  version: number;
  _timestamp: string;
  _offset: number;
}

/** A person as it is now; `version` is the change that exports it (rising per person: `argMax`/`FINAL` take the last). */
export function personRow(row: PersonRow, version: number, exportedAt: number): PersonTableRow {
  return {
    id: row.uuid, created_at: chTime(row.created_at), team_id: row.team, properties: JSON.stringify(row.properties),
    is_identified: row.is_identified ? 1 : 0, is_deleted: 0, version, _timestamp: chSeconds(exportedAt), _offset: version,
  };
}

/** A person that no longer exists (merged into another, or deleted). */
export function deletedPersonRow(team: number, uuid: string, version: number, exportedAt: number): PersonTableRow {
  return {
    id: uuid, created_at: ZERO_TIME, team_id: team, properties: '{}', is_identified: 0, is_deleted: 1, version,
    _timestamp: chSeconds(exportedAt), _offset: version,
  };
}

export interface DistinctIdRow {
  team_id: number;
  distinct_id: string;
  person_id: string;
  is_deleted: number;
  version: number;
  _timestamp: string;
  _offset: number;
  _partition: number;
}

export function distinctIdRow(team: number, distinctId: string, personUuid: string, deleted: boolean, version: number, exportedAt: number): DistinctIdRow {
  return {
    team_id: team, distinct_id: distinctId, person_id: personUuid, is_deleted: deleted ? 1 : 0, version,
    _timestamp: chSeconds(exportedAt), _offset: version, _partition: 0,
  };
}

/**
 * PostHog's `person_distinct_id_overrides` rows among distinct-id rows: those of distinct ids whose events may carry
 * another person id than their person's — the ones whose person's uuid is not the distinct id's own derived uuid
 * (an anonymous id that joined another person, its earlier events written without a person or with the person it
 * had; PostHog writes these with version > 0, and its queries join this small table instead of every distinct id's).
 * A deleted row goes too, so the override ends with its distinct id. Every other distinct id's events carry its
 * person's uuid already (the export writes the person it finds, or the derived uuid).
 */
export function overrideRows(rows: readonly DistinctIdRow[]): DistinctIdRow[] {
  return rows.filter((r) => r.person_id !== personUuid(r.team_id, r.distinct_id));
}

export interface GroupTableRow {
  group_type_index: number;
  group_key: string;
  created_at: string;
  team_id: number;
  group_properties: string;
  _timestamp: string;
  _offset: number;
}

export function groupRow(row: GroupRow, version: number, exportedAt: number): GroupTableRow {
  return {
    group_type_index: row.type_index, group_key: row.key, created_at: chTime(row.created_at), team_id: row.team,
    group_properties: JSON.stringify(row.properties), _timestamp: chSeconds(exportedAt), _offset: version,
  };
}
