/**
 * Map-reduce over every shard. Events live in shards owned by different workers, so a read asks every worker
 * (itself included) to run a peer handler over its own shards (`rt.ingest.shards`) and merges the compact answers.
 * Handlers are registered by kind in src/worker/entry.ts; messages and answers are plain structured-clone data
 * (filters travel as validated trees and are compiled by each worker).
 *
 * Consistency: callers first `await rt.ingest.appliedEverywhere()`; handlers that read persons drop their thread's
 * LMDB read snapshot first, because persons are written by every thread.
 */
import type { CohortRecord } from '../../../domain/flags/index.js';
import type { PeerMessage } from '../../peers.js';
import { Slicer } from '../../analytics/slices.js';
import type { PeerHandler, WorkerRuntime } from '../../runtime.js';
import type { EventStore, StoredEvent } from '../../../stores/events/event-store.js';
import { COL, EVENT_PROP } from '../../../stores/scan/block-builder.js';
import type { BlockView, DictColumn } from '../../../stores/scan/column-block.js';
import { compilePropertyFilter, needsPerson, type EventMatcher, type FilterGroup, type FilterSubject } from './property-filter.js';
import { matchesWhere, type ColumnSource, type Comparison } from './select.js';
import { parseProperties, PersonResolver, type EventRow } from './serialize.js';

export const EVENTS_SCAN = 'events.scan';
export const EVENTS_GET = 'events.get';
export const EVENTS_VALUES = 'events.values';
export const EVENTS_VOLUMES = 'events.volumes';

export interface ScanRequest {
  team: number;
  /** Exclusive bounds, epoch ms. */
  after: number | null;
  before: number | null;
  event: string | null;
  /** Restrict to these distinct ids (a `distinct_id` or `person_id` filter); [] matches nothing. */
  distinctIds: string[] | null;
  ascending: boolean;
  /** Rows wanted from each shard: offset + limit + 1 (the extra row tells whether there is a next page). */
  take: number;
  /**
   * Each shard stops once the rows it collected hold this many bytes of properties and element chains (after at
   * least one row), so a page of large events stays bounded in memory whatever its `limit`.
   */
  maxBytes: number;
  filter: FilterGroup | null;
  /** The project's cohorts, when the filter has cohort leaves. */
  cohorts: CohortRecord[];
  where: Comparison[];
  now: number;
}

type Msg<T> = T & PeerMessage;

/** Newest first (or oldest first); equal timestamps by uuid in the same direction, as the shard indexes order them. */
export function compareRows(ascending: boolean): (a: EventRow, b: EventRow) => number {
  const dir = ascending ? 1 : -1;
  return (a, b) => dir * (a.ts - b.ts || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
}

/** What one worker's shards found: rows in scan order, and whether a shard stopped at `maxBytes` with more left. */
interface ScanPart {
  rows: EventRow[];
  /** Per shard that stopped at the byte budget, its last row (rows after it may exist). */
  cutAt: EventRow[];
}

export interface ScanResult {
  /** The matching rows, merged in order: at most `take` per shard, and only as far as every shard's rows reach. */
  rows: EventRow[];
  /** True when a shard stopped at its byte budget: more rows may follow the last one. */
  truncated: boolean;
}

/**
 * Every matching row any shard returned, merged in order. When shards stopped at their byte budget, the merge is
 * cut at the earliest of their last rows: past it, a row those shards did not read could belong in between.
 */
export async function scanEverywhere(rt: WorkerRuntime, q: ScanRequest): Promise<ScanResult> {
  if (q.distinctIds !== null && q.distinctIds.length === 0) return { rows: [], truncated: false };
  const parts = await rt.peers.all<ScanPart>({ kind: EVENTS_SCAN, ...q } satisfies Msg<ScanRequest>);
  const compare = compareRows(q.ascending);
  const rows = parts.flatMap((p) => p.rows).sort(compare);
  const cuts = parts.flatMap((p) => p.cutAt);
  if (cuts.length === 0) return { rows, truncated: false };
  const earliest = cuts.reduce((a, b) => (compare(a, b) <= 0 ? a : b));
  const end = rows.findIndex((r) => compare(r, earliest) > 0);
  return { rows: end < 0 ? rows : rows.slice(0, end), truncated: true };
}

function rowOf(e: StoredEvent): EventRow {
  return {
    uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, person_id: e.person_id, person_uuid: e.person_uuid,
    timestamp: e.timestamp, ts: e.ts, properties_json: JSON.stringify(e.properties), elements_chain: e.elements_chain,
  };
}

export const scanHandler: PeerHandler = async (rt, msg) => {
  const q = msg as Msg<ScanRequest>;
  const usesPerson = needsPerson(q.filter) || q.where.some((w) => w.column.name === 'person_id');
  if (usesPerson) rt.persons.env.resetReadTxn();
  const persons = new PersonResolver(rt.persons, q.team);
  const staticCohorts = new Map<number, ReadonlySet<number>>();
  const matcher = q.filter ? compilePropertyFilter(q.filter, q.cohorts) : null;
  const now = new Date(q.now);
  const out: ScanPart = { rows: [], cutAt: [] };
  const slicer = new Slicer();
  for (const shard of rt.ingest.shards.values()) await collect(shard.events, q, slicer, (e) => {
    const properties = () => e.properties;
    const personRow = () => persons.of(e.person_id);
    if (matcher && !matcher(subjectOf(e, properties, personRow, staticCohorts, rt, q.team, now))) return false;
    if (q.where.length > 0) {
      // Named fields, not `{...e, ...}`: keys added to a spread copy take V8's slow path (src/domain/merge-properties.ts).
      const source: ColumnSource = {
        uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, timestamp: e.timestamp, elements_chain: e.elements_chain,
        properties, personUuid: () => personRow()?.uuid ?? e.person_uuid,
      };
      if (!matchesWhere(q.where, source)) return false;
    }
    return true;
  }, out);
  return out;
};

function subjectOf(
  e: StoredEvent,
  properties: () => Record<string, unknown>,
  personRow: () => ReturnType<PersonResolver['of']>,
  staticCohorts: Map<number, ReadonlySet<number>>,
  rt: WorkerRuntime,
  team: number,
  now: Date,
): FilterSubject {
  return {
    distinctId: e.distinct_id,
    eventProperties: properties,
    person: () => {
      const p = personRow();
      if (!p) return null;
      let ids = staticCohorts.get(p.id);
      if (!ids) staticCohorts.set(p.id, (ids = rt.persons.staticCohortIdsOf(team, p.id)));
      return { properties: p.properties, staticCohortIds: ids, createdAt: p.created_at };
    },
    now,
  };
}

/**
 * Collects up to `take` matching rows of one shard in scan order, stopping early at `maxBytes`. Every shard scans
 * its rows in (timestamp, uuid) order, the order of the merge, so the first `take` of each shard are enough for
 * any page. A filter that keeps few rows reads the whole store: the scan runs in slices (and under the request's
 * budget), src/worker/analytics/slices.ts.
 */
async function collect(store: EventStore, q: ScanRequest, slicer: Slicer, keep: (e: StoredEvent) => boolean, out: ScanPart): Promise<void> {
  let taken = 0;
  let bytes = 0;
  let read = 0;
  for (const e of store.scan(q.team, { after: q.after, before: q.before, event: q.event, distinctIds: q.distinctIds, ascending: q.ascending })) {
    if (taken >= q.take) return;
    // Every 256 events: an await per event would cost more than the check.
    if ((++read & 255) === 0) await slicer.pace();
    if (!keep(e)) continue;
    const row = rowOf(e);
    out.rows.push(row);
    taken++;
    bytes += row.properties_json.length + row.elements_chain.length;
    if (bytes >= q.maxBytes && taken < q.take) {
      out.cutAt.push(row);
      return;
    }
  }
}

interface GetRequest {
  team: number;
  uuid: string;
}

export async function getEverywhere(rt: WorkerRuntime, team: number, uuid: string): Promise<EventRow | null> {
  const found = await rt.peers.all<EventRow | null>({ kind: EVENTS_GET, team, uuid } satisfies Msg<GetRequest>);
  return found.find((r) => r !== null) ?? null;
}

export const getHandler: PeerHandler = async (rt, msg) => {
  const { team, uuid } = msg as Msg<GetRequest>;
  for (const shard of rt.ingest.shards.values()) {
    const e = shard.events.get(team, uuid);
    if (e) return rowOf(e);
  }
  return null;
};

export interface ValuesRequest {
  team: number;
  key: string;
  /** Lower-cased substring the value must contain, or null. */
  needle: string | null;
  eventNames: string[] | null;
  after: number;
  limit: number;
  /** Events per shard at most whose blocks are read (whole blocks): bounds the cost of a rare property. */
  maxScan: number;
}

interface SeenValue {
  value: string;
  ts: number;
}

/** Distinct values of an event property, most recently seen first. */
export async function valuesEverywhere(rt: WorkerRuntime, q: ValuesRequest): Promise<string[]> {
  const parts = await rt.peers.all<SeenValue[]>({ kind: EVENTS_VALUES, ...q } satisfies Msg<ValuesRequest>);
  const newest = new Map<string, number>();
  for (const { value, ts } of parts.flat()) newest.set(value, Math.max(ts, newest.get(value) ?? -Infinity));
  return [...newest].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, q.limit).map(([v]) => v);
}

/**
 * The values a property contributes: strings as they are, lists flattened into their items, other values as
 * JSON text (PostHog parses JSON arrays and objects out of the stored text and flattens them).
 */
export function propertyValues(v: unknown): string[] {
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap((x) => (Array.isArray(x) ? [JSON.stringify(x)] : propertyValues(x)));
  return [JSON.stringify(v)];
}

/**
 * A shard's values of one event property, read from its blocks' dictionary columns (`p:<key>`) without building
 * an event: per block, the newest time of each dictionary code among the rows in the window (and of the events
 * asked), then each code's value once. Blocks are read newest first and the read stops once no older block can
 * change the `limit` most recent values, or after `maxScan` events (whole blocks) on this shard.
 */
export const valuesHandler: PeerHandler = async (rt, msg) => {
  const q = msg as Msg<ValuesRequest>;
  const seen = new Map<string, number>();
  const column = EVENT_PROP + q.key;
  const slicer = new Slicer();
  for (const shard of rt.ingest.shards.values()) {
    const blocks = shard.events.columns.blocks(q.team, q.after, Infinity).sort((a, b) => b.maxTs - a.maxTs);
    let examined = 0;
    for (let b = 0; b < blocks.length && examined < q.maxScan; b++) {
      const block = blocks[b]!;
      examined += block.n;
      collectBlockValues(block, column, q, seen);
      const next = blocks[b + 1];
      if (next && seen.size >= q.limit && next.maxTs < limitTh(seen, q.limit)) break;
      await slicer.pace();
    }
  }
  return [...seen].map(([value, ts]): SeenValue => ({ value, ts }));
};

/** The time of the `limit`-th most recent value seen: an older block cannot displace any of the first `limit`. */
function limitTh(seen: Map<string, number>, limit: number): number {
  return [...seen.values()].sort((a, b) => b - a)[limit - 1] ?? -Infinity;
}

function collectBlockValues(block: BlockView, column: string, q: ValuesRequest, seen: Map<string, number>): void {
  const prop = block.dict(column);
  const ts = block.f64(COL.ts);
  if (!prop || !ts) return;
  let wanted: Uint8Array | null = null;
  let names: DictColumn | null = null;
  if (q.eventNames) {
    names = block.dict(COL.event);
    if (!names) return;
    wanted = new Uint8Array(names.values.length + 1);
    let any = false;
    names.values.forEach((v, i) => {
      if (!q.eventNames!.includes(v as string)) return;
      wanted![i + 1] = 1;
      any = true;
    });
    if (!any) return;
  }
  const newest = new Float64Array(prop.values.length + 1).fill(-Infinity);
  const codes = prop.codes;
  for (let row = 0; row < block.n; row++) {
    const c = codes[row]!;
    if (c === 0) continue;
    const t = ts[row]!;
    if (t <= q.after || t <= newest[c]!) continue;
    if (wanted && !wanted[names!.codes[row]!]) continue;
    newest[c] = t;
  }
  for (let c = 1; c < newest.length; c++) {
    const t = newest[c]!;
    if (t === -Infinity) continue;
    for (const value of propertyValues(prop.values[c - 1])) {
      if (q.needle !== null && !value.toLowerCase().includes(q.needle)) continue;
      const prev = seen.get(value);
      if (prev === undefined || prev < t) seen.set(value, t);
    }
  }
}

interface VolumesRequest {
  team: number;
  names: string[];
  after: number;
}

/** Events per name with a timestamp after `after`, summed over every shard (definitions' `volume_30_day`). */
export async function volumesEverywhere(rt: WorkerRuntime, team: number, names: string[], after: number): Promise<Map<string, number>> {
  const totals = new Map<string, number>(names.map((n) => [n, 0]));
  if (names.length === 0) return totals;
  const parts = await rt.peers.all<number[]>({ kind: EVENTS_VOLUMES, team, names, after } satisfies Msg<VolumesRequest>);
  for (const counts of parts) counts.forEach((c, i) => totals.set(names[i]!, totals.get(names[i]!)! + c));
  return totals;
}

export const volumesHandler: PeerHandler = async (rt, msg) => {
  const { team, names, after } = msg as Msg<VolumesRequest>;
  const counts = names.map(() => 0);
  for (const shard of rt.ingest.shards.values()) {
    names.forEach((name, i) => (counts[i]! += shard.events.countByName(team, name, after)));
  }
  return counts;
};
