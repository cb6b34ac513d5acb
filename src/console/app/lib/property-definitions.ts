/**
 * The project's property names and seen values, fetched once per project and kind and kept for a minute, so every
 * field where a property is typed can suggest names (a `<datalist>`) and flag a name nothing carries without a
 * request per field. Names come from `/property_definitions/`, values from `/events/values/` and `/persons/values/`.
 */
import { useEffect, useState } from 'preact/hooks';
import { closestName } from '../../../domain/properties/closest-name';
import { api, type Paginated } from '../api';

export type PropertyKind = 'event' | 'person';

export interface PropertyDefinitionRow {
  name: string;
  property_type: string | null;
}

/** A page of this many names answers every project the console is meant for; more are still accepted as typed. */
const NAMES_LIMIT = 1000;
const TTL_MS = 60_000;

const cache = new Map<string, { at: number; promise: Promise<unknown> }>();

function cached<T>(key: string, load: () => Promise<T>): Promise<T> {
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.promise as Promise<T>;
  const promise = load();
  cache.set(key, { at: Date.now(), promise });
  // A failure is not kept: the next field asks again.
  promise.catch(() => cache.get(key)?.promise === promise && cache.delete(key));
  return promise;
}

export interface Definitions {
  /** `loading` until the names arrive; `failed` if they could not be read (then nothing is flagged). */
  status: 'loading' | 'ready' | 'failed';
  rows: PropertyDefinitionRow[];
  names: ReadonlySet<string>;
}

const LOADING: Definitions = { status: 'loading', rows: [], names: new Set() };
const FAILED: Definitions = { status: 'failed', rows: [], names: new Set() };

/** The names of one kind; null project: none asked (a field outside any `PropertyScope`). */
export function usePropertyDefinitions(projectId: number | null, kind: PropertyKind): Definitions {
  const [defs, setDefs] = useState<Definitions>(projectId === null ? FAILED : LOADING);
  useEffect(() => {
    if (projectId === null) return;
    let current = true;
    setDefs(LOADING);
    cached(`names:${projectId}:${kind}`, () => api.get<Paginated<PropertyDefinitionRow>>(`/api/projects/${projectId}/property_definitions/?type=${kind}&limit=${NAMES_LIMIT}`))
      .then((page) => current && setDefs({ status: 'ready', rows: page.results, names: new Set(page.results.map((r) => r.name)) }),
        () => current && setDefs(FAILED));
    return () => {
      current = false;
    };
  }, [projectId, kind]);
  return defs;
}

/** Values seen for a property (most recent or most frequent first, as the API answers), once its name is known. */
export function usePropertyValues(projectId: number | null, kind: PropertyKind, key: string | null): string[] {
  const [values, setValues] = useState<string[]>([]);
  useEffect(() => {
    setValues([]);
    if (!key || projectId === null) return;
    let current = true;
    const path = `/api/projects/${projectId}/${kind === 'person' ? 'persons' : 'events'}/values/?key=${encodeURIComponent(key)}`;
    cached(`values:${path}`, () => api.get<{ name: unknown }[]>(path))
      .then((rows) => current && setValues(rows.map((r) => String(r.name))), () => {});
    return () => {
      current = false;
    };
  }, [projectId, kind, key]);
  return values;
}

/** A property name typed somewhere on a page, and whether it names an event or a person property. */
export interface PropertyRef {
  key: string;
  kind: PropertyKind;
}

export const refId = (r: PropertyRef): string => `${r.kind}:${r.key}`;

/**
 * What to say about a typed name: null when it is known (or cannot be checked), else the warning and the closest
 * known name, if one is close enough to be what was meant.
 */
export function propertyWarning(ref: PropertyRef, defs: Definitions): { text: string; closest: string | null } | null {
  if (ref.key === '' || defs.status !== 'ready' || defs.names.has(ref.key)) return null;
  const who = ref.kind === 'person' ? 'No person' : 'No event';
  return { text: `${who} has a property named “${ref.key}”.`, closest: closestName(ref.key, defs.rows.map((r) => r.name)) };
}

/**
 * Whether an analysis must wait before it runs: while the names it needs are loading, or while one of its names is
 * unknown and not confirmed by the user. A failed load holds nothing (the server decides, as before).
 */
export function mustHold(refs: readonly PropertyRef[], defs: Record<PropertyKind, Definitions>, confirmed: ReadonlySet<string>): boolean {
  return refs.some((r) => r.key !== '' && !confirmed.has(refId(r)) && (defs[r.kind].status === 'loading' || propertyWarning(r, defs[r.kind]) !== null));
}
