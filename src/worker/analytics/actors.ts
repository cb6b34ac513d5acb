/**
 * The actors behind a data point (analytics.md §0.6-0.7): persons ranked by their value at the point, searched,
 * paged, and serialised in the actor shape. Only the page's persons are read from the persons environment.
 */
import type { PersonRow } from '../../stores/persons/person-store.js';
import { displayName, sortDistinctIds } from '../ops/persons/person-view.js';
import type { WorkerRuntime } from '../runtime.js';

export interface PersonActor {
  type: 'person';
  id: string;
  uuid: string;
  created_at: string;
  properties: Record<string, unknown>;
  is_identified: boolean;
  name: string;
  distinct_ids: string[];
  matched_recordings: unknown[];
  value_at_data_point: number | null;
}

export function personActor(row: PersonRow, value: number | null): PersonActor {
  const distinctIds = sortDistinctIds(row.distinct_ids);
  return {
    type: 'person', id: row.uuid, uuid: row.uuid, created_at: row.created_at, properties: row.properties,
    is_identified: row.is_identified, name: displayName(row, distinctIds), distinct_ids: distinctIds,
    matched_recordings: [], value_at_data_point: value,
  };
}

/** §0.7 `search`: email or name contains the text (case-insensitive), or a distinct id does. */
function matchesSearch(row: PersonRow, text: string): boolean {
  const needle = text.toLowerCase();
  const has = (v: unknown) => typeof v === 'string' && v.toLowerCase().includes(needle);
  return has(row.properties.email) || has(row.properties.name) || row.distinct_ids.some(has);
}

export interface ActorPage {
  people: PersonActor[];
  /** Candidates counted for `next` (persons the page could have shown). */
  raw: number;
  missing: number;
}

/**
 * Ranks `values` (person id → value) by value, highest first, then by id; applies `search`; returns the page
 * [offset, offset + limit). Persons that no longer exist are skipped and counted in `missing`.
 */
export function actorPage(rt: WorkerRuntime, team: number, values: Map<number, number | null>, opts: { offset: number; limit: number; search: string | null; ranked?: boolean }): ActorPage {
  rt.persons.env.resetReadTxn();
  const ids = [...values.keys()];
  if (opts.ranked !== false) ids.sort((a, b) => (values.get(b) ?? 0) - (values.get(a) ?? 0) || a - b);
  else ids.sort((a, b) => a - b);
  const people: PersonActor[] = [];
  let missing = 0;
  let matched = 0;
  for (const id of ids) {
    const row = rt.persons.person(team, id);
    if (!row) {
      missing++;
      continue;
    }
    if (opts.search && !matchesSearch(row, opts.search)) continue;
    if (matched >= opts.offset && people.length < opts.limit) people.push(personActor(row, values.get(id) ?? null));
    matched++;
    if (people.length === opts.limit && matched > opts.offset + opts.limit) break;
  }
  return { people, raw: matched, missing };
}
