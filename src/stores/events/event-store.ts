/**
 * One shard's events: an LMDB environment owned by exactly one worker thread.
 *
 * Events are stored once, as column blocks per project (src/stores/scan/scan-store.ts): the apply loop adds a
 * chunk's events to the open block and writes one packed record per chunk, instead of a row per event (every
 * lmdb-js put costs 3-5 µs of JS whatever its size, and a row per event doubled what the apply wrote). Beside the
 * blocks, in the same transactions:
 *  - `by_uuid` [team, uuid] -> [ts, event, distinct_id]: exact deduplication (a repeated uuid is stored once; all
 *    events of a distinct id, retries included, are applied by the shard that owns it) and `GET /events/:id/`,
 *    which reads only the blocks whose time range holds `ts`;
 *  - `daily` [team, event, day] -> count: events per name and UTC day, so volumes (event definitions'
 *    `volume_30_day`) are read from a few counters instead of a scan.
 * Reading events back in (timestamp, uuid) order is a merge over the blocks whose time range overlaps the query
 * (`scan`): blocks are written in arrival order, which is close to time order, so a page of the newest events
 * usually reads the open block and one sealed block.
 */
import { join } from 'node:path';
import { atomically, openTable, openEnv, type Env, type Table } from '../lmdb-env.js';
import { COL, EVENT_PROP, PERSON_PROP, type ScanEvent } from '../scan/block-builder.js';
import { propertiesReader } from '../scan/row-properties.js';
import type { BlockView, DictColumn } from '../scan/column-block.js';
import type { ColumnCache } from '../scan/column-cache.js';
import { firstPosition } from '../scan/row-order.js';
import { BinaryHeap } from './binary-heap.js';
import { ScanStore } from '../scan/scan-store.js';

/** Where an event is: [ts, event, distinct_id]. */
type UuidEntry = [number, string, string];

export interface StoredEvent {
  team: number;
  uuid: string;
  event: string;
  distinct_id: string;
  /** The person at ingestion time; later merges are applied when reading (PersonStore.resolve). */
  person_id: number | null;
  /** The person's uuid at ingestion time, '' for none. */
  person_uuid: string;
  timestamp: string;
  ts: number;
  properties: Record<string, unknown>;
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

/** An event of a version 1 environment, read from its per-event rows to convert it. */
export interface LegacyEvent {
  team: number;
  uuid: string;
  event: string;
  distinctId: string;
  personId: number | null;
  personUuid: string;
  ts: number;
  properties: Record<string, unknown>;
  elementsChain: string;
}

/** Version 1 rows: [team, ts, uuid, event, distinct_id] -> [person_id, timestamp ISO, properties JSON, elements_chain, person uuid]. */
type LegacyKey = [number, number, string, string, string];
type LegacyRow = [number | null, string, string, string, string];
const LEGACY_ROWS = 'events_v2';

const DAY_MS = 86_400_000;

/**
 * Keys of the `state` table that the ingest pipeline keeps beside the events (a backup adjusts them in its copy:
 * src/stores/data-dir/backup.ts): a source shard's log checkpoint (the position replay starts after,
 * src/worker/ingest/source-log.ts) and, per source shard, how far this shard has applied its log
 * (src/worker/ingest/shard.ts).
 */
export const STATE_KEYS = {
  logCheckpoint: 'log_checkpoint',
  appliedFrom: 'applied_from',
  /** The ClickHouse export of this shard's log: exported up to here, and the batch being exported (src/worker/export/). */
  exportCheckpoint: 'export_checkpoint',
  exportPending: 'export_pending',
  /** The backfill of this shard's stored events (its starting point and progress), and the log export's filter. */
  exportBackfill: 'export_backfill',
  exportFilter: 'export_filter',
} as const;

function dayOf(ts: number): number {
  return Math.floor(ts / DAY_MS);
}

export class EventStore {
  readonly env: Env;
  private readonly byUuid: Table<UuidEntry, [number, string]>;
  private readonly daily: Table<number, [number, string, number]>;
  readonly state: Table<unknown, string>;
  /** Counter increments of the current write transaction, flushed by `flushCounts`. */
  private readonly pendingCounts = new Map<string, { team: number; event: string; day: number; delta: number }>();

  /** The events themselves, as column blocks (src/stores/scan/scan-store.ts). */
  readonly columns: ScanStore;

  constructor(dir: string, columnCache: ColumnCache, shard: number) {
    this.env = openEnv(join(dir, 'events.mdb'));
    this.byUuid = openTable(this.env, 'by_uuid_v2');
    this.daily = openTable(this.env, 'daily_counts');
    this.state = openTable(this.env, 'state');
    this.columns = new ScanStore(this.env, this.state, columnCache, shard, (team, block, rows) => this.forget(team, block, rows));
  }

  has(team: number, uuid: string): boolean {
    return this.byUuid.doesExist([team, uuid]);
  }

  /**
   * Runs `fn` in one all-or-nothing write transaction of this store (`atomically`), writing the day counters its
   * changes moved at the end. When it fails, what it changed in memory goes too: the open blocks are read back from
   * their records and the counter increments dropped, so nothing of it leaks into the next transaction.
   */
  async write<T>(fn: () => T): Promise<T> {
    try {
      return await atomically(this.env, () => {
        const result = fn();
        this.flushCounts();
        return result;
      });
    } catch (error) {
      this.columns.reloadOpen();
      throw error;
    } finally {
      this.pendingCounts.clear();
    }
  }

  /** Stores a chunk's events of one project. Only inside `write`. */
  add(team: number, events: readonly ScanEvent[]): void {
    for (const e of events) {
      this.byUuid.put([team, e.uuid], [e.ts, e.event, e.distinctId]);
      this.count(team, e.ts, e.event, 1);
    }
    this.columns.append(team, events);
  }

  /**
   * Removes a project's events that `select` marks in each block (deleting a person's events), with their uuid
   * entries and day counters. Only inside `write`; returns how many it removed.
   */
  removeWhereStep(team: number, select: (block: BlockView) => Uint8Array | null, maxRewrites: number): { removed: number; more: boolean } {
    return this.columns.removeEventsStep(team, select, maxRewrites);
  }

  /**
   * One step of data retention (ScanStore.expireStep) with the uuid entries and day counters of what it removes.
   * Only inside `write`.
   */
  expireStep(team: number, cutoff: number, wholeBlocks: number): { removed: number; more: boolean } {
    return this.columns.expireStep(team, cutoff, wholeBlocks);
  }

  /** Writes the day counters changed in this transaction (one read and write per name and day). */
  private flushCounts(): void {
    for (const c of this.pendingCounts.values()) {
      const key: [number, string, number] = [c.team, c.event, c.day];
      const next = (this.daily.get(key) ?? 0) + c.delta;
      if (next > 0) this.daily.put(key, next);
      else this.daily.remove(key);
    }
    this.pendingCounts.clear();
  }

  get(team: number, uuid: string): StoredEvent | undefined {
    const entry = this.byUuid.get([team, uuid]);
    if (entry === undefined) return undefined;
    const ts = entry[0];
    for (const block of this.columns.blocks(team, ts, ts)) {
      const times = block.f64(COL.ts);
      if (!times) continue;
      const rows = new BlockRows(team, block);
      const order = block.u32(COL.order);
      if (order && order.length === block.n) {
        // The rows at exactly `ts`, found by binary search in the stored order.
        for (let at = firstPosition(order, times, ts, true); at < order.length && times[order[at]!] === ts; at++) {
          if (rows.uuid(order[at]!) === uuid) return rows.event(order[at]!);
        }
        continue;
      }
      for (let row = 0; row < block.n; row++) if (times[row] === ts && rows.uuid(row) === uuid) return rows.event(row);
    }
    return undefined;
  }

  /**
   * Events of a project in (timestamp, uuid) order, optionally narrowed by name or distinct ids (decided on the
   * blocks' dictionaries, so events that do not match are never built). Bounds are exclusive (PostHog:
   * `timestamp > after`, `timestamp < before`). Lazy: blocks are read only as the order reaches their time range,
   * so stop iterating when you have enough.
   */
  *scan(team: number, q: EventScan): Generator<StoredEvent> {
    const lo = q.after ?? -Infinity;
    const hi = q.before ?? Infinity;
    const ids = q.distinctIds ? new Set(q.distinctIds) : null;
    if (ids !== null && ids.size === 0) return;
    const ascending = q.ascending === true;
    const blocks = this.columns.blocks(team, lo, hi);
    // The order in which blocks can first contribute: by their earliest event oldest first, or latest newest first.
    blocks.sort(ascending ? (a, b) => a.minTs - b.minTs : (a, b) => b.maxTs - a.maxTs);
    const merge = new BinaryHeap<BlockCursor>((a, b) => comesBefore(ascending, a.ts(), a.uuid(), b.ts(), b.uuid()));
    let next = 0;
    for (;;) {
      // A block may hold an event that comes before the merge's current head once its range reaches the head's time.
      while (next < blocks.length) {
        const head = merge.head();
        const block = blocks[next]!;
        if (head !== undefined && (ascending ? block.minTs > head.ts() : block.maxTs < head.ts())) break;
        next++;
        const cursor = openCursor(team, block, lo, hi, q.event ?? null, ids, ascending);
        if (cursor) merge.push(cursor);
      }
      const head = merge.head();
      if (head === undefined) return;
      yield head.event();
      if (head.advance()) merge.headMoved();
      else merge.pop();
    }
  }

  /** Events named `name` with a timestamp after `after`: whole days from the counters, the first day scanned. */
  countByName(team: number, name: string, after: number): number {
    const firstDay = dayOf(after) + 1;
    let total = 0;
    for (const { value } of this.daily.getRange({ start: [team, name, firstDay], end: [team, name, Infinity] } as never)) total += value as number;
    const dayStart = firstDay * DAY_MS;
    for (const block of this.columns.blocks(team, after, dayStart)) {
      const names = block.dict(COL.event);
      const times = block.f64(COL.ts);
      const code = names ? names.values.indexOf(name) + 1 : 0;
      if (code === 0 || !names || !times) continue;
      for (let row = 0; row < block.n; row++) {
        const ts = times[row]!;
        if (names.codes[row] === code && ts > after && ts < dayStart) total++;
      }
    }
    return total;
  }

  /** Whether the environment still holds version 1 rows (to be converted at start-up). */
  hasLegacyRows(): boolean {
    const rows = this.legacyRows();
    return rows !== null && (rows.getStats() as { entryCount: number }).entryCount > 0;
  }

  /** Every event of the version 1 rows, each project's oldest first. */
  *legacyEvents(): Generator<LegacyEvent> {
    const rows = this.legacyRows();
    if (rows === null) return;
    for (const { key, value } of rows.getRange({} as never) as Iterable<{ key: LegacyKey; value: LegacyRow }>) {
      yield {
        team: key[0], ts: key[1], uuid: key[2], event: key[3], distinctId: key[4], personId: value[0],
        properties: JSON.parse(value[2]) as Record<string, unknown>, elementsChain: value[3], personUuid: value[4],
      };
    }
  }

  /** Deletes the version 1 rows once the blocks hold their events. */
  async dropLegacyRows(): Promise<void> {
    await this.legacyRows()?.drop();
  }

  close(): Promise<void> {
    return this.env.close();
  }

  /** The version 1 rows table, or null when the environment has none (not created here: `create: false`). */
  private legacyRows(): Table<LegacyRow, LegacyKey> | null {
    try {
      // lmdb-js answers undefined for a missing table opened with `create: false`.
      return (this.env.openDB<LegacyRow, LegacyKey>(LEGACY_ROWS, { encoder: { useRecords: false }, create: false } as object) as Table<LegacyRow, LegacyKey> | undefined) ?? null;
    } catch {
      return null;
    }
  }

  /** The uuid entries and counters of events leaving the blocks (RemovalListener). */
  private forget(team: number, block: BlockView, rows: Uint8Array | null): void {
    const uuids = block.dict(COL.uuid);
    const names = block.dict(COL.event);
    const times = block.f64(COL.ts);
    if (!uuids || !names || !times) return;
    for (let row = 0; row < block.n; row++) {
      if (rows !== null && !rows[row]) continue;
      this.byUuid.remove([team, uuids.values[uuids.codes[row]! - 1] as string]);
      this.count(team, times[row]!, names.values[names.codes[row]! - 1] as string, -1);
    }
  }

  private count(team: number, ts: number, event: string, delta: number): void {
    const day = dayOf(ts);
    const id = `${team}\u0000${day}\u0000${event}`;
    const c = this.pendingCounts.get(id);
    if (c) c.delta += delta;
    else this.pendingCounts.set(id, { team, event, day, delta });
  }
}

/** Reads whole events out of a block's columns. */
/** The events of rows [from, to) of a block, in row order. */
export function* eventsOfBlock(team: number, block: BlockView, from = 0, to = block.n): Generator<StoredEvent> {
  const rows = new BlockRows(team, block);
  for (let row = from; row < to; row++) yield rows.event(row);
}

/**
 * The person properties each of rows [from, to) of a block was applied with (the snapshot the analyses read), in
 * row order: for exporting stored events (src/worker/export/backfill.ts).
 */
export function* personPropertiesOfBlock(block: BlockView, from = 0, to = block.n): Generator<Record<string, unknown>> {
  const properties = propertiesReader(block, PERSON_PROP);
  for (let row = from; row < to; row++) yield properties(row);
}

class BlockRows {
  private readonly times: Float64Array;
  private readonly uuids: DictColumn;
  private readonly names: DictColumn;
  private readonly distinctIds: DictColumn;
  private readonly personIds: Uint32Array | null;
  private readonly personUuids: DictColumn | null;
  private readonly chains: DictColumn | null;
  private props: ((row: number) => Record<string, unknown>) | null = null;

  constructor(private readonly team: number, private readonly block: BlockView) {
    this.times = block.f64(COL.ts) ?? new Float64Array(block.n);
    this.uuids = block.dict(COL.uuid) ?? EMPTY_DICT;
    this.names = block.dict(COL.event) ?? EMPTY_DICT;
    this.distinctIds = block.dict(COL.distinctId) ?? EMPTY_DICT;
    this.personIds = block.u32(COL.personId);
    this.personUuids = block.dict(COL.personUuid);
    this.chains = block.dict(COL.elementsChain);
  }

  ts(row: number): number {
    return this.times[row]!;
  }

  uuid(row: number): string {
    return valueAt(this.uuids, row) as string;
  }

  event(row: number): StoredEvent {
    const ts = this.times[row]!;
    const personId = this.personIds?.[row] ?? 0;
    return {
      team: this.team, uuid: this.uuid(row), ts, timestamp: new Date(ts).toISOString(),
      event: valueAt(this.names, row) as string, distinct_id: valueAt(this.distinctIds, row) as string,
      person_id: personId === 0 ? null : personId, person_uuid: (this.personUuids && valueAt(this.personUuids, row) as string) ?? '',
      properties: this.properties(row), elements_chain: (this.chains && valueAt(this.chains, row) as string) ?? '',
    };
  }

  private properties(row: number): Record<string, unknown> {
    this.props ??= propertiesReader(this.block, EVENT_PROP);
    return this.props(row);
  }
}

const EMPTY_DICT: DictColumn = { codes: new Uint8Array(0), values: [] };

function valueAt(col: DictColumn, row: number): unknown {
  const code = col.codes[row] ?? 0;
  return code === 0 ? undefined : col.values[code - 1];
}

/** The events of one block that a scan selects, in the scan's order, read one at a time. */
interface BlockCursor {
  ts(): number;
  uuid(): string;
  event(): StoredEvent;
  /** Moves to the next selected event; false when there is none. */
  advance(): boolean;
}

/** What a scan selects in a block: the time bounds (exclusive) and, when given, the name's code and distinct ids. */
class Selection {
  private constructor(
    readonly times: Float64Array,
    private readonly names: DictColumn | null,
    private readonly nameCode: number,
    private readonly idCodes: DictColumn | null,
    private readonly idHit: Uint8Array | null,
  ) {}

  /** The selection in one block, or null when the block cannot hold a selected event. */
  static of(block: BlockView, name: string | null, ids: ReadonlySet<string> | null): Selection | null {
    const times = block.f64(COL.ts);
    if (!times) return null;
    const names = block.dict(COL.event);
    const nameCode = name === null ? -1 : codeOf(names, name);
    if (nameCode === 0) return null;
    let idHit: Uint8Array | null = null;
    const idCol = ids ? block.dict(COL.distinctId) : null;
    if (ids) {
      if (!idCol) return null;
      idHit = selectedCodes(idCol.values, ids);
      if (!idHit) return null;
    }
    return new Selection(times, names, nameCode, idCol, idHit);
  }

  /** Whether a row's name and distinct id are selected (its time is checked by the caller). */
  matches(row: number): boolean {
    if (this.nameCode > 0 && this.names!.codes[row] !== this.nameCode) return false;
    if (this.idHit !== null && !this.idHit[this.idCodes!.codes[row]!]) return false;
    return true;
  }
}

/** Opens the cursor of a block: a walk of its stored order when it has one (sealed blocks), else a lazy heap. */
function openCursor(team: number, block: BlockView, lo: number, hi: number, name: string | null, ids: ReadonlySet<string> | null, ascending: boolean): BlockCursor | null {
  const selection = Selection.of(block, name, ids);
  if (!selection) return null;
  const rows = new BlockRows(team, block);
  const order = block.u32(COL.order);
  return order && order.length === block.n
    ? OrderedCursor.open(rows, selection, order, lo, hi, ascending)
    : HeapCursor.open(rows, selection, block.n, lo, hi, ascending);
}

/** Walks a sealed block's (timestamp, uuid) order from the scan's first bound: a binary search, then one step per row. */
class OrderedCursor implements BlockCursor {
  private row = 0;

  private constructor(
    private readonly rows: BlockRows,
    private readonly selection: Selection,
    private readonly order: Uint32Array,
    private at: number,
    /** The position past the last one in range, in the walk's direction. */
    private readonly end: number,
    private readonly step: 1 | -1,
  ) {}

  static open(rows: BlockRows, selection: Selection, order: Uint32Array, lo: number, hi: number, ascending: boolean): OrderedCursor | null {
    const ts = selection.times;
    const first = firstPosition(order, ts, lo, false);
    const past = firstPosition(order, ts, hi, true);
    if (first >= past) return null;
    const cursor = ascending ? new OrderedCursor(rows, selection, order, first, past, 1) : new OrderedCursor(rows, selection, order, past - 1, first - 1, -1);
    return cursor.settle() ? cursor : null;
  }

  ts(): number {
    return this.rows.ts(this.row);
  }

  uuid(): string {
    return this.rows.uuid(this.row);
  }

  event(): StoredEvent {
    return this.rows.event(this.row);
  }

  advance(): boolean {
    this.at += this.step;
    return this.settle();
  }

  /** Moves to the first selected row from the current position on; false when none is left. */
  private settle(): boolean {
    for (; this.at !== this.end; this.at += this.step) {
      const row = this.order[this.at]!;
      if (this.selection.matches(row)) {
        this.row = row;
        return true;
      }
    }
    return false;
  }
}

/**
 * The selected rows of a block without a stored order (the open block), produced in order by a binary heap: building
 * it is linear, and a page takes one pop per event, so a scan that stops early never sorts the whole block.
 */
class HeapCursor implements BlockCursor {
  private constructor(private readonly rows: BlockRows, private readonly heap: BinaryHeap<number>) {}

  static open(rows: BlockRows, selection: Selection, n: number, lo: number, hi: number, ascending: boolean): HeapCursor | null {
    const ts = selection.times;
    const picked: number[] = [];
    for (let row = 0; row < n; row++) {
      const t = ts[row]!;
      if (t > lo && t < hi && selection.matches(row)) picked.push(row);
    }
    if (picked.length === 0) return null;
    const before = (a: number, b: number) => comesBefore(ascending, ts[a]!, rows.uuid(a), ts[b]!, rows.uuid(b));
    return new HeapCursor(rows, new BinaryHeap(before, picked));
  }

  ts(): number {
    return this.rows.ts(this.heap.head()!);
  }

  uuid(): string {
    return this.rows.uuid(this.heap.head()!);
  }

  event(): StoredEvent {
    return this.rows.event(this.heap.head()!);
  }

  advance(): boolean {
    this.heap.pop();
    return this.heap.size > 0;
  }
}

/** Whether the event (ta, ua) comes before (tb, ub) in a scan: by timestamp, then uuid, both in its direction. */
function comesBefore(ascending: boolean, ta: number, ua: string, tb: number, ub: string): boolean {
  if (ta !== tb) return ascending ? ta < tb : ta > tb;
  return ascending ? ua < ub : ua > ub;
}

/**
 * The dictionary codes (1-based) of `values` that are in `ids`, as a hit table; null when none is. A few ids (a
 * `distinct_id` filter, one person's ids) are looked up with `indexOf`, V8's native scan, which compares most
 * strings by length alone; hashing every value of a block's dictionary for a Set took ~0.5 ms a block of ~30,000
 * distinct ids, so a lookup of one distinct id on a store of millions of events cost tens of milliseconds.
 */
function selectedCodes(values: readonly unknown[], ids: ReadonlySet<string>): Uint8Array | null {
  const hit = new Uint8Array(values.length + 1);
  let any = false;
  if (ids.size <= FEW_IDS) {
    for (const id of ids) {
      // A dictionary holds each value once.
      const i = values.indexOf(id);
      if (i < 0) continue;
      hit[i + 1] = 1;
      any = true;
    }
  } else {
    values.forEach((v, i) => {
      if (!ids.has(v as string)) return;
      hit[i + 1] = 1;
      any = true;
    });
  }
  return any ? hit : null;
}
const FEW_IDS = 16;

/** The code of `value` in a dictionary column, 0 when absent. */
function codeOf(col: DictColumn | null, value: string): number {
  return col ? col.values.indexOf(value) + 1 : 0;
}
