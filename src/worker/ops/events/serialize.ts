/**
 * A stored event as the API shows it (ingestion-and-api.md §5.5):
 * `{id, distinct_id, properties, event, timestamp, person, elements, elements_chain}` where `person` is the
 * event's person *now* (followed through merges; null if it was deleted or never existed) reduced to
 * `{is_identified, distinct_ids: [its first distinct id], properties: email/name/username only}`.
 */
import { parseElementsChain } from '../../../domain/ingest/index.js';
import type { StoredEvent } from '../../../stores/events/event-store.js';
import type { PersonRow, PersonStore } from '../../../stores/persons/person-store.js';

/**
 * One event as the shard scans return it: plain data, structured-clone-able. Properties travel as JSON text: one
 * string is cheaper to copy between threads than an object, and a page of events is written out without parsing it.
 */
export type EventRow = Omit<StoredEvent, 'team' | 'properties'> & { properties_json: string };

export interface EventView {
  id: string;
  distinct_id: string;
  properties: Record<string, unknown>;
  event: string;
  timestamp: string;
  person: { is_identified: boolean; distinct_ids: string[]; properties: Record<string, unknown> } | null;
  elements: ReturnType<typeof parseElementsChain>;
  elements_chain: string;
}

const PERSON_PROPERTIES = ['email', 'name', 'username'] as const;

export function parseProperties(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Person lookups for one response: many events share a person. */
export class PersonResolver {
  private readonly cache = new Map<number, PersonRow | null>();

  constructor(private readonly store: PersonStore, private readonly team: number) {}

  of(personId: number | null): PersonRow | null {
    if (personId === null) return null;
    let row = this.cache.get(personId);
    if (row === undefined) {
      row = this.store.resolve(this.team, personId) ?? null;
      this.cache.set(personId, row);
    }
    return row;
  }
}

export function serializeEvent(row: EventRow, persons: PersonResolver): EventView {
  const person = persons.of(row.person_id);
  return {
    id: row.uuid,
    distinct_id: row.distinct_id,
    properties: parseProperties(row.properties_json),
    event: row.event,
    timestamp: row.timestamp,
    person: person ? personSummary(person) : null,
    elements: parseElementsChain(row.elements_chain),
    elements_chain: row.elements_chain,
  };
}

/**
 * The same view as `serializeEvent`, as JSON text, with the row's properties text spliced in as it is: parsing it
 * only to write it out again was the largest cost of an events page (a JSON.parse and a JSON.stringify of every
 * event's properties).
 * Key order and text are exactly `JSON.stringify(serializeEvent(row, persons))` (tested).
 */
export function serializeEventJson(row: EventRow, persons: PersonResolver): string {
  const person = persons.of(row.person_id);
  return (
    `{"id":${JSON.stringify(row.uuid)},"distinct_id":${JSON.stringify(row.distinct_id)},` +
    `"properties":${propertiesJson(row.properties_json)},"event":${JSON.stringify(row.event)},` +
    `"timestamp":${JSON.stringify(row.timestamp)},"person":${JSON.stringify(person ? personSummary(person) : null)},` +
    `"elements":${JSON.stringify(parseElementsChain(row.elements_chain))},"elements_chain":${JSON.stringify(row.elements_chain)}}`
  );
}

/**
 * Properties as JSON text of an object. Shards send `JSON.stringify` of an object, which is spliced as is;
 * anything else goes through `parseProperties` like the object view.
 */
function propertiesJson(json: string): string {
  return json.charCodeAt(0) === 0x7b && json.charCodeAt(json.length - 1) === 0x7d ? json : JSON.stringify(parseProperties(json));
}

function personSummary(p: PersonRow): NonNullable<EventView['person']> {
  const properties: Record<string, unknown> = {};
  for (const key of PERSON_PROPERTIES) if (Object.hasOwn(p.properties, key)) properties[key] = p.properties[key];
  return { is_identified: p.is_identified, distinct_ids: p.distinct_ids.slice(0, 1), properties };
}
