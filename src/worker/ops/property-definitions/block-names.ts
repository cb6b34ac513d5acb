/**
 * Property names as the event blocks hold them, read on every shard (map-reduce, src/worker/ops/events/scatter.ts).
 * A block keeps each event property as a dictionary column `p:<key>` and each person property, as it was at the
 * event, as `pp:<key>` (src/stores/scan/block-builder.ts), so a project's property names are the union of its
 * blocks' column names: read from each sealed block's meta record, no column data, and the keys of the block's
 * overflow objects (properties without a column of their own, src/stores/scan/overflow.ts: at most
 * MAX_PROPERTY_COLUMNS of them a block). Nothing here runs on the ingestion path.
 *
 * What costs a column read is cached per sealed block (its content never changes, src/stores/scan/scan-store.ts):
 *   - a name's type, from the dictionary values of the newest block holding it;
 *   - which event names carry which property, from the newest `SEEN_BLOCKS` blocks of each shard only (the
 *     event column and every property column of those blocks), for `event_names` (is_seen_on_filtered_events).
 */
import { combinePropertyTypes, inferPropertyType, type PropertyType } from '../../../domain/properties/property-type.js';
import { COL, EVENT_PROP, PERSON_PROP } from '../../../stores/scan/block-builder.js';
import type { BlockView } from '../../../stores/scan/column-block.js';
import { sealedSeqOf } from '../../../stores/scan/scan-store.js';
import { MAX_PROPERTY_COLUMNS, OVERFLOW, overflowKeys } from '../../../stores/scan/overflow.js';
import { Slicer } from '../../analytics/slices.js';
import type { PeerMessage } from '../../peers.js';
import type { PeerHandler, WorkerRuntime } from '../../runtime.js';

export const PROPERTY_NAMES = 'properties.names';

/** Blocks per shard whose rows decide `is_seen_on_filtered_events`: the newest, a bound on what one list reads. */
export const SEEN_BLOCKS = 4;
/** Entries each cache keeps before it starts again (a thread's memory stays bounded whatever the projects). */
const CACHE_ENTRIES = 50_000;

/**
 * Event properties that are instructions, not properties (PostHog's property definitions skip them too): person
 * updates and group membership, stored with the event as sent.
 */
const NOT_PROPERTIES: ReadonlySet<string> = new Set(['$set', '$set_once', '$unset', '$groups', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4']);

export type PropertySubject = 'event' | 'person';

export interface NamesRequest {
  team: number;
  subject: PropertySubject;
  /** Event names whose events `seen` is about; null: not asked. */
  eventNames: string[] | null;
}

/** A property as one worker's shards know it: name, type (null: no non-null value seen), seen on the events asked. */
export type NameRow = [name: string, type: PropertyType | null, seen: boolean];

const typeCache = new Map<string, PropertyType | null>();
const seenCache = new Map<string, Map<string, string[]>>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_ENTRIES) cache.clear();
  cache.set(key, value);
  return value;
}

function typeIn(block: BlockView, cacheKey: string | null, column: string): PropertyType | null {
  const key = cacheKey === null ? null : `${cacheKey}:${column}`;
  if (key !== null && typeCache.has(key)) return typeCache.get(key)!;
  // The column's own values (a column derived from the overflow objects costs a pass over all of them per name).
  const type = inferPropertyType(block.ownDict(column)?.values ?? []);
  return key === null ? type : remember(typeCache, key, type);
}

/** Per event property of a block (columns and overflow keys), the event names of the rows that carry it. */
function eventsPerProperty(block: BlockView, cacheKey: string | null): Map<string, string[]> {
  const hit = cacheKey === null ? undefined : seenCache.get(cacheKey);
  if (hit) return hit;
  const out = new Map<string, string[]>();
  const events = block.dict(COL.event);
  if (events) {
    const marks = new Uint8Array(events.values.length + 1);
    const carriers = (): string[] => {
      const names: string[] = [];
      for (let c = 1; c < marks.length; c++) if (marks[c]) names.push(String(events.values[c - 1]));
      return names;
    };
    const names = events.codes;
    for (const column of block.names(EVENT_PROP)) {
      const prop = block.ownDict(column);
      if (!prop) continue;
      marks.fill(0);
      const codes = prop.codes;
      for (let i = 0; i < block.n; i++) if (codes[i] !== 0) marks[names[i]!] = 1;
      out.set(column.slice(EVENT_PROP.length), carriers());
    }
    const overflow = block.dict(OVERFLOW.event);
    if (overflow) {
      // The event names each distinct overflow object is carried by, then per key the union over its objects.
      const byObject = new Map<number, Set<number>>();
      for (let i = 0; i < block.n; i++) {
        const c = overflow.codes[i]!;
        if (c === 0) continue;
        let set = byObject.get(c);
        if (!set) byObject.set(c, (set = new Set()));
        set.add(names[i]!);
      }
      for (const [key, { codes }] of overflowKeys(overflow, MAX_PROPERTY_COLUMNS)) {
        // A key can be both a column (rows after it was opened) and in older rows' overflow objects: both count.
        marks.fill(0);
        for (const e of out.get(key) ?? []) marks[events.values.indexOf(e) + 1] = 1;
        for (const c of codes) for (const e of byObject.get(c) ?? []) marks[e] = 1;
        out.set(key, carriers());
      }
    }
  }
  return cacheKey === null ? out : remember(seenCache, cacheKey, out);
}

/** The properties of a block's overflow objects with their values (no column derived per key). */
function overflowProperties(block: BlockView, prefix: string): Map<string, { values: unknown[] }> {
  return overflowKeys(block.dict(prefix === EVENT_PROP ? OVERFLOW.event : OVERFLOW.person), MAX_PROPERTY_COLUMNS);
}

/** The property names of this worker's shards for one project, with their types and (if asked) whether seen. */
export const namesHandler: PeerHandler = async (rt: WorkerRuntime, msg) => {
  const q = msg as NamesRequest & PeerMessage;
  const prefix = q.subject === 'person' ? PERSON_PROP : EVENT_PROP;
  const wanted = q.eventNames ? new Set(q.eventNames) : null;
  const types = new Map<string, PropertyType | null>();
  const seen = new Set<string>();
  const slicer = new Slicer();
  for (const [shardIndex, shard] of rt.ingest.shards) {
    // Newest first: the first block holding a name decides its type on this shard.
    const blocks = shard.events.columns.blocks(q.team).sort((a, b) => b.maxTs - a.maxTs);
    const typed = new Set<string>();
    for (let b = 0; b < blocks.length; b++) {
      const block = blocks[b]!;
      const seq = sealedSeqOf(block);
      const cacheKey = seq === null ? null : `${shardIndex}:${q.team}:${seq}`;
      const found = (name: string, type: () => PropertyType | null) => {
        if (typed.has(name) || (prefix === EVENT_PROP && NOT_PROPERTIES.has(name))) return;
        typed.add(name);
        const t = type();
        types.set(name, types.has(name) ? combinePropertyTypes(types.get(name)!, t) : t);
      };
      for (const column of block.names(prefix)) found(column.slice(prefix.length), () => typeIn(block, cacheKey, column));
      for (const [name, { values }] of overflowProperties(block, prefix)) found(name, () => inferPropertyType(values));
      if (wanted && prefix === EVENT_PROP && b < SEEN_BLOCKS) {
        for (const [name, carriers] of eventsPerProperty(block, cacheKey)) {
          if (!seen.has(name) && carriers.some((e) => wanted.has(e))) seen.add(name);
        }
      }
      await slicer.pace();
    }
  }
  return [...types].map(([name, type]): NameRow => [name, type, seen.has(name)]);
};

/** Every worker's answer merged: one row per name, types combined, seen if seen anywhere. */
export async function namesEverywhere(rt: WorkerRuntime, q: NamesRequest): Promise<Map<string, { type: PropertyType | null; seen: boolean }>> {
  const parts = await rt.peers.all<NameRow[]>({ kind: PROPERTY_NAMES, ...q } satisfies NamesRequest & PeerMessage);
  const out = new Map<string, { type: PropertyType | null; seen: boolean }>();
  for (const [name, type, seen] of parts.flat()) {
    const prev = out.get(name);
    out.set(name, prev ? { type: combinePropertyTypes(prev.type, type), seen: prev.seen || seen } : { type, seen });
  }
  return out;
}
