/**
 * How a person looks through the API (ingestion-and-api.md §5.1, the 2022 serializer) and how a request names one
 * (numeric id or uuid, §5.3). Every persons endpoint answers JSON or, with `?format=csv`, CSV (§5.7).
 */
import { toCsv } from '../../../domain/csv.js';
import { isUuid } from '../../../domain/ingest/index.js';
import { Errors } from '../../../protocol/errors.js';
import type { Reply, TaskItem } from '../../../protocol/worker-messages.js';
import type { PersonRow, PersonStore } from '../../../stores/persons/person-store.js';
import { csv, json } from '../../reply.js';

export interface PersonView {
  id: number;
  name: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
  uuid: string;
  is_identified: boolean;
}

/** PostHog's anonymous ids are five dash-joined runs of lowercase letters and digits (uuid-like, not always uuids). */
const ANONYMOUS_ID = /^([a-z0-9]+-){4}[a-z0-9]+$/;

/** Identified-looking ids first, anonymous-looking ones after; stable within each kind. */
export function sortDistinctIds(ids: readonly string[]): string[] {
  const named = ids.filter((d) => !ANONYMOUS_ID.test(d));
  const anonymous = ids.filter((d) => ANONYMOUS_ID.test(d));
  return [...named, ...anonymous];
}

/** `sortDistinctIds(ids)[0]` without building the list (a sort key computed for every person of a project). */
export function firstSortedDistinctId(ids: readonly string[]): string | undefined {
  return ids.find((d) => !ANONYMOUS_ID.test(d)) ?? ids[0];
}

/** [2022] display name: a truthy `email` property, else the first sorted distinct id, else the id. */
export function displayName(row: PersonRow, sortedIds: readonly string[]): string {
  const email = row.properties.email;
  if (email) return typeof email === 'string' ? email : JSON.stringify(email);
  return sortedIds[0] ?? String(row.id);
}

export function viewOf(row: PersonRow): PersonView {
  const distinct_ids = sortDistinctIds(row.distinct_ids);
  return {
    id: row.id,
    name: displayName(row, distinct_ids),
    distinct_ids,
    properties: row.properties,
    created_at: row.created_at,
    uuid: row.uuid,
    is_identified: row.is_identified,
  };
}

/**
 * The person a path names. Numeric ids and uuids are accepted; anything else is refused with PostHog's hint,
 * because callers often pass a distinct id here by mistake.
 */
export function personFromParam(store: PersonStore, team: number, raw: string | undefined): PersonRow {
  const row = findPerson(store, team, raw ?? '');
  if (row === null) {
    throw Errors.validation(null, 'invalid_input',
      'The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id={id} instead.');
  }
  if (row === undefined) throw Errors.notFound('Person not found.');
  return row;
}

/** undefined = well-formed but unknown; null = neither a numeric id nor a uuid. */
export function findPerson(store: PersonStore, team: number, raw: string): PersonRow | undefined | null {
  if (/^\d+$/.test(raw)) {
    const id = Number(raw);
    return Number.isSafeInteger(id) ? store.person(team, id) : undefined;
  }
  if (isUuid(raw)) return store.personByUuid(team, raw.toLowerCase());
  return null;
}

/** `?format=csv` or JSON; DRF answers 404 for a format it has no renderer for. */
export function wantsCsv(item: TaskItem): boolean {
  const format = item.meta.query.format;
  if (format === undefined || format === '' || format === 'json') return false;
  if (format === 'csv') return true;
  throw Errors.notFound();
}

/**
 * Answers `value` as JSON, or its rows as CSV: a list is one row per item, a paginated object its `results`,
 * anything else one row.
 */
export function answer(item: TaskItem, status: number, value: unknown, filename = 'persons.csv'): Reply {
  if (!wantsCsv(item)) return json(status, value);
  return { ...csv(toCsv(csvRowsOf(value)), filename), status };
}

function csvRowsOf(value: unknown): object[] {
  if (Array.isArray(value)) return value.filter((v): v is object => v !== null && typeof v === 'object');
  if (value !== null && typeof value === 'object') {
    const results = (value as { results?: unknown }).results;
    return Array.isArray(results) ? csvRowsOf(results) : [value];
  }
  return [];
}
