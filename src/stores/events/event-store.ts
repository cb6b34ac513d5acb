/**
 * One shard's events: an LMDB environment owned by exactly one worker thread.
 *
 * Layout, chosen for the two access paths of design.md §4:
 *  - `events` [team, ts, uuid] -> row: time-ordered per project, so "newest first between t1 and t2" is one
 *    reverse range scan, and analyses scan a date range in order;
 *  - `by_name` [team, event, ts, uuid] and `by_distinct_id` [team, distinct_id, ts, uuid]: key-only indexes
 *    for the two common filters;
 *  - `by_uuid` [team, uuid] -> ts: idempotent ingestion (a repeated uuid is stored once) and GET /events/:id.
 * Rows keep `properties` as JSON text: writing it costs nothing extra (ingestion has it) and scans that do not
 * look at properties never decode it.
 */
import { join } from 'node:path';
import { openIndex, openTable, openEnv, type Env, type Table } from '../lmdb-env.js';

/** [event, distinct_id, person_id, timestamp ISO, properties JSON, elements_chain, person uuid] */
type EventRow = [string, string, number | null, string, string, string, string];

export interface StoredEvent {
  team: number;
  uuid: string;
  event: string;
  distinct_id: string;
  /** The person at ingestion time; later merges are applied when reading (PersonStore.resolve). */
  person_id: number | null;
  person_uuid: string;
  timestamp: string;
  ts: number;
  properties_json: string;
  elements_chain: string;
}

export interface EventScan {
  after?: number | null;
  before?: number | null;
  event?: string | null;
  distinctIds?: string[] | null;
  /** Newest first (default) or oldest first. */
  ascending?: boolean;
}

type EventKey = [number, number, string];

export class EventStore {
  readonly env: Env;
  private readonly rows: Table<EventRow, EventKey>;
  private readonly byUuid: Table<number, [number, string]>;
  private readonly byName: Table<null, [number, string, number, string]>;
  private readonly byDistinct: Table<null, [number, string, number, string]>;
  readonly state: Table<unknown, string>;

  constructor(dir: string) {
    this.env = openEnv(join(dir, 'events.mdb'));
    this.rows = openTable(this.env, 'events');
    this.byUuid = openTable(this.env, 'by_uuid');
    this.byName = openIndex(this.env, 'by_name');
    this.byDistinct = openIndex(this.env, 'by_distinct_id');
    this.state = openTable(this.env, 'state');
  }

  has(team: number, uuid: string): boolean {
    return this.byUuid.doesExist([team, uuid]);
  }

  /** Queues the writes of one event (they commit with the current batch). */
  put(e: StoredEvent): void {
    const key: EventKey = [e.team, e.ts, e.uuid];
    this.rows.put(key, [e.event, e.distinct_id, e.person_id, e.timestamp, e.properties_json, e.elements_chain, e.person_uuid]);
    this.byUuid.put([e.team, e.uuid], e.ts);
    this.byName.put([e.team, e.event, e.ts, e.uuid], null);
    this.byDistinct.put([e.team, e.distinct_id, e.ts, e.uuid], null);
  }

  remove(e: StoredEvent): void {
    this.rows.remove([e.team, e.ts, e.uuid]);
    this.byUuid.remove([e.team, e.uuid]);
    this.byName.remove([e.team, e.event, e.ts, e.uuid]);
    this.byDistinct.remove([e.team, e.distinct_id, e.ts, e.uuid]);
  }

  get(team: number, uuid: string): StoredEvent | undefined {
    const ts = this.byUuid.get([team, uuid]);
    return ts === undefined ? undefined : this.at(team, ts, uuid);
  }

  private at(team: number, ts: number, uuid: string): StoredEvent | undefined {
    const row = this.rows.get([team, ts, uuid]);
    return row ? toEvent(team, ts, uuid, row) : undefined;
  }

  /**
   * Events of a project in time order, narrowed by name or distinct ids through the indexes. Bounds are
   * exclusive (PostHog: `timestamp > after`, `timestamp < before`). Lazy: stop iterating when you have enough.
   */
  *scan(team: number, q: EventScan): Generator<StoredEvent> {
    const lo = q.after ?? -Infinity;
    const hi = q.before ?? Infinity;
    const asc = q.ascending === true;
    if (q.distinctIds) {
      yield* this.scanDistinctIds(team, q.distinctIds, lo, hi, asc, q.event ?? null);
      return;
    }
    if (q.event != null) {
      const name = q.event;
      const range = asc
        ? { start: [team, name, lo, ''], end: [team, name, hi, ''] }
        : { start: [team, name, hi, ''], end: [team, name, lo, '\uffff'], reverse: true };
      for (const key of this.byName.getKeys(range as never)) {
        const [, , ts, uuid] = key as [number, string, number, string];
        if (ts <= lo || ts >= hi) continue;
        const e = this.at(team, ts, uuid);
        if (e) yield e;
      }
      return;
    }
    const range = asc
      ? { start: [team, lo, ''], end: [team, hi, ''] }
      : { start: [team, hi, ''], end: [team, lo, '\uffff'], reverse: true };
    for (const { key, value } of this.rows.getRange(range as never)) {
      const [, ts, uuid] = key as EventKey;
      if (ts <= lo || ts >= hi) continue;
      yield toEvent(team, ts, uuid, value);
    }
  }

  /** Merges the per-distinct-id index ranges in time order. */
  private *scanDistinctIds(team: number, ids: string[], lo: number, hi: number, asc: boolean, event: string | null): Generator<StoredEvent> {
    const iterators = ids.map((id) => {
      const range = asc
        ? { start: [team, id, lo, ''], end: [team, id, hi, ''] }
        : { start: [team, id, hi, ''], end: [team, id, lo, '\uffff'], reverse: true };
      return this.byDistinct.getKeys(range as never)[Symbol.iterator]() as Iterator<[number, string, number, string]>;
    });
    const heads = iterators.map((it) => it.next());
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i]!;
        if (h.done) continue;
        if (best < 0) best = i;
        else {
          const a = h.value[2];
          const b = (heads[best]!.value as [number, string, number, string])[2];
          if (asc ? a < b : a > b) best = i;
        }
      }
      if (best < 0) return;
      const [, , ts, uuid] = heads[best]!.value as [number, string, number, string];
      heads[best] = iterators[best]!.next();
      if (ts <= lo || ts >= hi) continue;
      const e = this.at(team, ts, uuid);
      if (e && (event === null || e.event === event)) yield e;
    }
  }

  countByName(team: number, name: string, after: number): number {
    return this.byName.getKeysCount({ start: [team, name, after, ''], end: [team, name, Infinity, ''] } as never);
  }

  close(): Promise<void> {
    return this.env.close();
  }
}

function toEvent(team: number, ts: number, uuid: string, row: EventRow): StoredEvent {
  return {
    team, uuid, ts,
    event: row[0], distinct_id: row[1], person_id: row[2], timestamp: row[3],
    properties_json: row[4], elements_chain: row[5], person_uuid: row[6],
  };
}
