/**
 * Exports the events of one shard's ingest log to ClickHouse's `events` table, exactly once in effect.
 *
 * It follows the log behind the apply (only records every owner has applied and flushed, so the person columns are
 * the applied ones) from its own checkpoint, stored with the shard's events. A batch is a fixed range of records:
 * the range is stored *before* the insert, the insert carries a deduplication token made of the range, and the
 * checkpoint moves past it only once ClickHouse has accepted it. A crash or a ClickHouse failure at any point
 * redoes the same range with the same token, which ClickHouse drops if the first attempt had landed. The log keeps
 * its segments until both the apply and the export have passed them (src/worker/ingest/source-log.ts).
 *
 * The person of an event and its properties are the ones the event was applied with, which the owner's apply kept
 * for this (src/stores/persons/event-snapshots.ts), as the event's column block keeps them: the local engine's
 * person-property filters and breakdowns read those, not the person's later ones, and merges since are followed by
 * the distinct-id tables on both sides (src/worker/export/batch-persons.ts). An event applied before the export was
 * on has none kept: its person is read from the persons store when the batch is built (the person its distinct id
 * belongs to then), with that person's properties as exported.
 */
import { decodeLogRecord, type NormalizedEvent } from '../../domain/ingest/index.js';
import { enrichEvents } from '../ingest/event-enricher.js';
import { comparePositions, formatPosition, positionNumber, type LogPosition } from '../../stores/ingest-log/index.js';
import { STATE_KEYS } from '../../stores/events/event-store.js';
import { transactDurably } from '../../stores/lmdb-env.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import type { KeptPerson } from '../../stores/persons/event-snapshots.js';
import { eventLine, eventRow, storedForm, type EventRow } from '../../stores/clickhouse/rows.js';
import { actorOf, BatchPersons } from './batch-persons.js';
import { EXPORT_TABLES } from '../../stores/clickhouse/schema.js';
import type { ClickHouseSink } from '../../stores/clickhouse/sink.js';
import type { Shard } from '../ingest/shard.js';
import type { GroupTypes } from '../../domain/model.js';
import { filterFor, inBackfill } from './backfill.js';
import { BackgroundSlicer, foregroundBusy, type Foreground } from './background.js';

/** A batch goes out once it has this many events, or once its oldest record waited BATCH_WAIT_MS. */
const BATCH_MIN_EVENTS = 1_000;
const BATCH_WAIT_MS = 1_000;
/** No batch carries more (one insert, one deduplication token; its rows are built and sent in one go). */
const BATCH_MAX_EVENTS = 5_000;
/** …and this many while requests are being served (src/worker/export/background.ts). */
const BATCH_MAX_EVENTS_BUSY = 1_000;
/** Rows built between two looks at the clock (the work yields every few milliseconds: flags and acks wait on it). */
const ROWS_PER_CLOCK_LOOK = 64;

/** A range of the log: the records after `from` (null: the log's first) up to and including the one ending at `to`. */
export interface LogRange {
  from: LogPosition | null;
  to: LogPosition;
}

/** A record of the log, decoded. */
interface Logged {
  end: LogPosition;
  team: number;
  events: NormalizedEvent[];
  receivedAt: number;
}

function decoded(payload: Uint8Array, end: LogPosition): Logged {
  const record = decodeLogRecord(payload);
  enrichEvents(record.events);
  return { end, ...record };
}

/** The token of a range: the same range always gets the same one. */
export function eventsToken(shard: number, range: LogRange): string {
  return `quill-events-${shard}-${range.from ? formatPosition(range.from) : 'start'}-${formatPosition(range.to)}`;
}

export class EventExporter {
  private checkpoint: LogPosition | null;
  /** The events the backfill exports instead (src/worker/export/backfill.ts); undefined until known. */
  private filter: Record<string, number> | null | undefined;
  private filterEnd = -1;

  constructor(
    private readonly shard: Shard,
    private readonly persons: PersonStore,
    private readonly sink: ClickHouseSink,
    /** The project's group types (the apply created any an event names before storing it). */
    private readonly groupTypes: (team: number) => GroupTypes,
    private readonly shardCount: number,
    /** Every shard's backfill starting point (asked of every worker), for the filter of a first start. */
    private readonly startingPoints: () => Promise<Record<string, Record<string, number>>[]>,
    private readonly foreground: Foreground,
  ) {
    this.checkpoint = (shard.events.state.get(STATE_KEYS.exportCheckpoint) as LogPosition | undefined) ?? null;
    const filter = shard.events.state.get(STATE_KEYS.exportFilter) as Record<string, number> | undefined;
    // An exporter that has exported before without a filter (none stored) needs none.
    this.setFilter(filter ?? (this.checkpoint !== null ? null : undefined));
  }

  private setFilter(filter: Record<string, number> | null | undefined): void {
    this.filter = filter;
    this.filterEnd = filter ? Math.max(-1, ...Object.values(filter)) : -1;
  }

  /** On a first start: which events of this log the owners' backfills hold, stored before anything is exported. */
  private async ensureFilter(): Promise<void> {
    if (this.filter !== undefined) return;
    const filter = filterFor(this.shard.id, await this.startingPoints());
    await transactDurably(this.shard.events.env, () => this.shard.events.state.put(STATE_KEYS.exportFilter, filter));
    this.setFilter(filter);
  }

  get exportedUpTo(): LogPosition | null {
    return this.checkpoint;
  }

  /** Exports one batch: the stored one if a previous attempt did not finish, else a new one. Null: nothing to do yet. */
  async step(): Promise<number | null> {
    await this.ensureFilter();
    await this.sink.ensureSchema();
    const state = this.shard.events.state;
    const stored = state.get(STATE_KEYS.exportPending) as LogRange | undefined;
    let batch: { range: LogRange; records: Logged[] } | null;
    if (stored) batch = { range: stored, records: await this.read(stored) };
    else {
      batch = await this.cut();
      if (!batch) return null;
      const range = batch.range;
      // Durable before the insert: after a crash the same range (and token) is redone, not a longer one.
      await transactDurably(this.shard.events.env, () => state.put(STATE_KEYS.exportPending, range));
    }
    const rows = await this.rowsOf(batch.records);
    await this.sink.insert(EXPORT_TABLES.events, rows, eventsToken(this.shard.id, batch.range), new BackgroundSlicer(this.foreground), eventLine);
    const to = batch.range.to;
    await transactDurably(this.shard.events.env, () => {
      state.put(STATE_KEYS.exportCheckpoint, to);
      state.remove(STATE_KEYS.exportPending);
    });
    this.checkpoint = to;
    await this.shard.source.exportedUpTo(to);
    // After the checkpoint: a crash before this leaves snapshots of exported records, forgotten by the next batch.
    await this.persons.eventSnapshots.forgetUpTo(this.shard.id, positionNumber(to));
    return rows.length;
  }

  /** The next batch: records after the checkpoint that every owner has applied, or null if too few wait for too short. */
  private async cut(): Promise<{ range: LogRange; records: Logged[] } | null> {
    const applied = this.shard.source.applied;
    if (applied === null || (this.checkpoint !== null && comparePositions(this.checkpoint, applied) >= 0)) return null;
    // Too few, too young by the log's own count: not worth decoding them to find out (the loop asks every 200 ms).
    const lag = this.shard.source.exportLag();
    if (lag.events > 0 && lag.events < BATCH_MIN_EVENTS && lag.seconds * 1000 < BATCH_WAIT_MS) return null;
    const records: Logged[] = [];
    let events = 0;
    const max = foregroundBusy(this.foreground) ? BATCH_MAX_EVENTS_BUSY : BATCH_MAX_EVENTS;
    const slicer = new BackgroundSlicer(this.foreground);
    for await (const { payload, end } of this.shard.source.recordsAfter(this.checkpoint)) {
      if (comparePositions(end, applied) > 0) break;
      await slicer.pace();
      const record = decoded(payload, end);
      records.push(record);
      events += record.events.length;
      if (events >= max) break;
    }
    if (records.length === 0) return null;
    const waited = Date.now() - records[0]!.receivedAt;
    // (A record of the first format has no receive time: it goes out at once.)
    if (events < BATCH_MIN_EVENTS && waited < BATCH_WAIT_MS) return null;
    return { range: { from: this.checkpoint, to: records[records.length - 1]!.end }, records };
  }

  /** The records of a stored range (the log keeps them: nothing after the export's checkpoint is released). */
  private async read(range: LogRange): Promise<Logged[]> {
    const records: Logged[] = [];
    const slicer = new BackgroundSlicer(this.foreground);
    for await (const { payload, end } of this.shard.source.recordsAfter(range.from)) {
      const order = comparePositions(end, range.to);
      if (order > 0) break;
      await slicer.pace();
      records.push(decoded(payload, end));
      if (order === 0) return records;
    }
    throw new Error(`shard ${this.shard.id}: the log no longer holds the export batch ending at ${formatPosition(range.to)}`);
  }

  private async rowsOf(records: readonly Logged[]): Promise<EventRow[]> {
    const now = Date.now();
    const rows: EventRow[] = [];
    const slicer = new BackgroundSlicer(this.foreground);
    const people = new BatchPersons(this.persons);
    for (const { end, team, events, receivedAt } of records) {
      const offset = positionNumber(end);
      const groupTypes = this.groupTypes(team);
      const filtered = offset <= this.filterEnd;
      const kept = new Map<string, KeptPerson>();
      const snapshots = this.persons.eventSnapshots.ofRecord(this.shard.id, offset, kept);
      for (const ev of events) {
        if (filtered && inBackfill(this.filter!, team, ev.distinct_id, offset, this.shardCount)) continue;
        const stored = storedForm(ev, groupTypes);
        if (!stored) continue;
        const snapshot = snapshots.get(ev.uuid);
        rows.push(eventRow(team, stored.event, stored.personless, actorOf(people, team, ev.distinct_id, stored.personless, snapshot, kept.get(ev.uuid)), snapshot ?? null, receivedAt, offset, now));
        if (rows.length % ROWS_PER_CLOCK_LOOK === 0 && slicer.due()) await slicer.pace();
      }
    }
    return rows;
  }
}
