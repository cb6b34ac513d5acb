/**
 * One shard's events: an LMDB environment owned by exactly one worker thread.
 *
 * Layout, chosen for the two access paths of design.md §4 and for the cost of ingestion (every LMDB write costs
 * 3-5 µs of JS in lmdb-js, whatever its size, so the apply loop writes as few entries per event as it can):
 *  - `events` [team, ts, uuid, event, distinct_id] -> row: time-ordered per project, so "newest first between
 *    t1 and t2" is one reverse range scan. The event name and distinct id ride in the key, so a scan filtered by
 *    either reads keys only (LMDB iterates keys without touching values; measured 2.5 M keys/s) and decodes just
 *    the rows that match. This replaced two key-only indexes (by name, by distinct id) that doubled the writes;
 *  - `by_uuid` [team, uuid] -> [ts, event, distinct_id]: idempotent ingestion (a repeated uuid is stored once;
 *    all events of a distinct id, retries included, are applied by the shard that owns it) and GET /events/:id;
 *  - `daily` [team, event, day] -> count: events per name and UTC day, maintained with the rows, so volumes
 *    (event definitions' `volume_30_day`) are read from a few counters instead of a scan.
 * Rows keep `properties` as JSON text: writing it costs nothing extra (ingestion has it) and scans that do not
 * look at properties never decode it.
 */
import { join } from 'node:path';
import { openTable, openEnv, type Env, type Table } from '../lmdb-env.js';
import type { ColumnCache } from '../scan/column-cache.js';
import { ScanStore } from '../scan/scan-store.js';

/** [person_id, timestamp ISO, properties JSON, elements_chain, person uuid] */
type EventRow = [number | null, string, string, string, string];
type EventKey = [number, number, string, string, string];
/** Where an event's row is: [ts, event, distinct_id] (the rest of its key). */
type UuidEntry = [number, string, string];

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

const DAY_MS = 86_400_000;

/**
 * Keys of the `state` table that the ingest pipeline keeps beside the events (a backup adjusts them in its copy:
 * src/stores/data-dir/backup.ts): a source shard's log checkpoint (the position replay starts after,
 * src/worker/ingest/source-log.ts) and, per source shard, how far this shard has applied its log
 * (src/worker/ingest/shard.ts).
 */
export const STATE_KEYS = { logCheckpoint: 'log_checkpoint', appliedFrom: 'applied_from' } as const;

function dayOf(ts: number): number {
  return Math.floor(ts / DAY_MS);
}

export class EventStore {
  readonly env: Env;
  private readonly rows: Table<EventRow, EventKey>;
  private readonly byUuid: Table<UuidEntry, [number, string]>;
  private readonly daily: Table<number, [number, string, number]>;
  readonly state: Table<unknown, string>;
  /** Counter increments of the current write transaction, flushed by `flushCounts`. */
  private readonly pendingCounts = new Map<string, { team: number; event: string; day: number; delta: number }>();

  /** The same events as column blocks, for analysis (src/stores/scan/scan-store.ts). */
  readonly columns: ScanStore;

  constructor(dir: string, columnCache: ColumnCache, shard: number) {
    this.env = openEnv(join(dir, 'events.mdb'));
    this.rows = openTable(this.env, 'events_v2');
    this.byUuid = openTable(this.env, 'by_uuid_v2');
    this.daily = openTable(this.env, 'daily_counts');
    this.state = openTable(this.env, 'state');
    this.columns = new ScanStore(this.env, this.state, columnCache, shard);
  }

  /** Every stored event of every project, each project's oldest first (rebuilding the scan layout). */
  *all(): Generator<StoredEvent> {
    for (const { key, value } of this.rows.getRange({} as never) as Iterable<{ key: EventKey; value: EventRow }>) {
      yield toEvent(key[0], key[1], key[2], key[3], key[4], value);
    }
  }

  has(team: number, uuid: string): boolean {
    return this.byUuid.doesExist([team, uuid]);
  }

  /** Queues the writes of one event (inside a write transaction; call `flushCounts` before it ends). */
  put(e: StoredEvent): void {
    this.rows.put([e.team, e.ts, e.uuid, e.event, e.distinct_id], [e.person_id, e.timestamp, e.properties_json, e.elements_chain, e.person_uuid]);
    this.byUuid.put([e.team, e.uuid], [e.ts, e.event, e.distinct_id]);
    this.count(e, 1);
  }

  /** Only inside a write transaction; call `flushCounts` before it ends. */
  remove(e: StoredEvent): void {
    this.rows.remove([e.team, e.ts, e.uuid, e.event, e.distinct_id]);
    this.byUuid.remove([e.team, e.uuid]);
    this.count(e, -1);
  }

  /**
   * Removes up to `limit` of a project's events with a timestamp before `cutoff`, oldest first, with their uuid
   * entries and day counters (data retention). Reads keys only. Only inside a write transaction (it flushes the
   * counters itself); returns how many it removed, fewer than `limit` once none is left.
   */
  expireBefore(team: number, cutoff: number, limit: number): number {
    // Collected first: removing rows under a live range cursor is not safe.
    const doomed = Array.from(this.rows.getKeys({ start: [team, -Infinity, ''], end: [team, cutoff, ''], limit } as never) as Iterable<EventKey>);
    for (const key of doomed) {
      this.rows.remove(key);
      this.byUuid.remove([team, key[2]]);
      this.count({ team, ts: key[1], event: key[3] }, -1);
    }
    this.flushCounts();
    return doomed.length;
  }

  /** Writes the day counters changed by `put`/`remove` in this transaction (one read and write per name and day). */
  flushCounts(): void {
    for (const c of this.pendingCounts.values()) {
      const key: [number, string, number] = [c.team, c.event, c.day];
      const next = (this.daily.get(key) ?? 0) + c.delta;
      if (next > 0) this.daily.put(key, next);
      else this.daily.remove(key);
    }
    this.pendingCounts.clear();
  }

  /** Forgets counter increments not flushed (a transaction that threw before `flushCounts`). */
  discardCounts(): void {
    this.pendingCounts.clear();
  }

  get(team: number, uuid: string): StoredEvent | undefined {
    const entry = this.byUuid.get([team, uuid]);
    if (entry === undefined) return undefined;
    const [ts, event, distinctId] = entry;
    const row = this.rows.get([team, ts, uuid, event, distinctId]);
    return row ? toEvent(team, ts, uuid, event, distinctId, row) : undefined;
  }

  /**
   * Events of a project in time order, optionally narrowed by name or distinct ids (filtered on the keys, so
   * rows that do not match are never decoded). Bounds are exclusive (PostHog: `timestamp > after`,
   * `timestamp < before`). Lazy: stop iterating when you have enough.
   */
  *scan(team: number, q: EventScan): Generator<StoredEvent> {
    const lo = q.after ?? -Infinity;
    const hi = q.before ?? Infinity;
    const name = q.event ?? null;
    const ids = q.distinctIds ? new Set(q.distinctIds) : null;
    if (ids !== null && ids.size === 0) return;
    const range = q.ascending === true
      ? { start: [team, lo, ''], end: [team, hi, ''] }
      : { start: [team, hi, ''], end: [team, lo, '\uffff'], reverse: true };
    if (name === null && ids === null) {
      // Nothing to skip: read keys and values together (half the cost of a lookup per key).
      for (const { key, value } of this.rows.getRange(range as never) as Iterable<{ key: EventKey; value: EventRow }>) {
        if (key[1] > lo && key[1] < hi) yield toEvent(team, key[1], key[2], key[3], key[4], value);
      }
      return;
    }
    for (const key of this.rows.getKeys(range as never) as Iterable<EventKey>) {
      const ts = key[1];
      if (ts <= lo || ts >= hi) continue;
      if (name !== null && key[3] !== name) continue;
      if (ids !== null && !ids.has(key[4])) continue;
      const row = this.rows.get(key);
      if (row) yield toEvent(team, ts, key[2], key[3], key[4], row);
    }
  }

  /** Events named `name` with a timestamp after `after`: whole days from the counters, the first day scanned. */
  countByName(team: number, name: string, after: number): number {
    const firstDay = dayOf(after) + 1;
    let total = 0;
    for (const { value } of this.daily.getRange({ start: [team, name, firstDay], end: [team, name, Infinity] } as never)) total += value as number;
    for (const key of this.rows.getKeys({ start: [team, after, ''], end: [team, firstDay * DAY_MS, ''] } as never) as Iterable<EventKey>) {
      if (key[1] > after && key[3] === name) total++;
    }
    return total;
  }

  close(): Promise<void> {
    return this.env.close();
  }

  private count(e: Pick<StoredEvent, 'team' | 'ts' | 'event'>, delta: number): void {
    const day = dayOf(e.ts);
    const id = `${e.team}\u0000${day}\u0000${e.event}`;
    const c = this.pendingCounts.get(id);
    if (c) c.delta += delta;
    else this.pendingCounts.set(id, { team: e.team, event: e.event, day, delta });
  }
}

function toEvent(team: number, ts: number, uuid: string, event: string, distinctId: string, row: EventRow): StoredEvent {
  return {
    team, uuid, ts, event, distinct_id: distinctId,
    person_id: row[0], timestamp: row[1], properties_json: row[2], elements_chain: row[3], person_uuid: row[4],
  };
}
