/**
 * Exports person changes to ClickHouse's `person`, `person_distinct_id2` (with PostHog's `person_distinct_id_overrides`
 * for the distinct ids that need one) and `groups` tables, exactly once in effect.
 *
 * Every persons write transaction records what it changed in the persons environment's change log, under a
 * sequence number allocated in the transaction (src/stores/persons/person-store.ts): so the log's order is the
 * commit order, and nothing is exported that was rolled back. One exporter (on worker 0) follows it like the event
 * exporters follow the ingest logs: a batch is a fixed range of entries, stored before its insert, inserted with a
 * token made of the range, and forgotten once ClickHouse has it.
 *
 * A row carries the state at export time and the sequence number of the change that exports it as `version`, so
 * versions rise per person and per distinct id in commit order and `argMax(…, version)` / `FINAL` give Quill's
 * current answer: a merge re-points distinct ids to the kept person (exported with a higher version than the old
 * mapping) and marks the merged-away person deleted; a deleted person's distinct ids are marked deleted.
 */
import type { MirroredDeletion, PersonChanges } from '../../stores/persons/change-log.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import {
  deletedPersonRow, distinctIdRow, groupRow, overrideRows, personRow, type DistinctIdRow, type GroupTableRow, type PersonTableRow,
} from '../../stores/clickhouse/rows.js';
import { EXPORT_TABLES } from '../../stores/clickhouse/schema.js';
import { BackgroundSlicer, foregroundBusy, type Foreground } from './background.js';
import type { ClickHouseSink } from '../../stores/clickhouse/sink.js';

/** A batch ends after the entry that brings it to this many persons and groups. */
const BATCH_MAX_ITEMS = 5_000;
/** …and this many while requests are being served (src/worker/export/background.ts). */
const BATCH_MAX_ITEMS_BUSY = 1_000;
/** …and at most this many entries (each a persons transaction). */
const BATCH_MAX_ENTRIES = 1_000;
/** Persons read between two looks at the clock (the work yields every few milliseconds). */
const PERSONS_PER_CLOCK_LOOK = 32;

export function changesToken(table: string, after: number, through: number): string {
  return `quill-${table}-${after}-${through}`;
}

interface Rows {
  persons: PersonTableRow[];
  distinctIds: DistinctIdRow[];
  groups: GroupTableRow[];
  /** Deletions of events to repeat in ClickHouse, each once, in order. */
  deletions: MirroredDeletion[];
}

/** The rows of a range of change entries: each person, distinct id and group once, at its newest change's version. */
export async function rowsOfChanges(store: PersonStore, entries: readonly { seq: number; changes: PersonChanges }[], now: number, slicer: BackgroundSlicer): Promise<Rows> {
  let read = 0;
  // Each keyed once, at its newest change (later entries overwrite earlier ones).
  const persons = new Map<string, { team: number; id: number; seq: number }>();
  const removed = new Map<string, { team: number; uuid: string; d: string[]; seq: number }>();
  const groups = new Map<string, { key: [number, number, string]; seq: number }>();
  const deletions = new Map<string, MirroredDeletion>();
  for (const { seq, changes } of entries) {
    for (let i = 0; i < changes.p.length; i += 2) {
      const team = changes.p[i]!;
      const id = changes.p[i + 1]!;
      persons.set(`${team}:${id}`, { team, id, seq });
    }
    for (const r of changes.r) removed.set(`${r.team}:${r.uuid}`, { ...r, seq });
    for (const g of changes.g) groups.set(g.join('\u0000'), { key: g, seq });
    for (const d of changes.m ?? []) {
      const { at: _at, ...what } = d;
      deletions.set(JSON.stringify(what), d);
    }
  }
  const out: Rows = { persons: [], distinctIds: [], groups: [], deletions: [...deletions.values()] };
  for (const r of removed.values()) {
    out.persons.push(deletedPersonRow(r.team, r.uuid, r.seq, now));
    for (const d of r.d) out.distinctIds.push(distinctIdRow(r.team, d, r.uuid, true, r.seq, now));
  }
  for (const { team, id, seq } of persons.values()) {
    if (++read % PERSONS_PER_CLOCK_LOOK === 0 && slicer.due()) await slicer.pace();
    const row = store.person(team, id);
    if (!row) continue; // removed: exported above
    out.persons.push(personRow(row, seq, now));
    // A distinct id that moved to another person since goes out with that person.
    for (const d of store.distinctIdsOf(row)) out.distinctIds.push(distinctIdRow(team, d, row.uuid, false, seq, now));
  }
  for (const { key, seq } of groups.values()) {
    const row = store.group(key[0], key[1], key[2]);
    if (row) out.groups.push(groupRow(row, seq, now));
  }
  return out;
}

/** Persons or groups per insert of the backfill. */
const BACKFILL_PAGE = 1_000;

export class PersonExporter {
  constructor(
    private readonly store: PersonStore,
    private readonly sink: ClickHouseSink,
    /** Whether every event logged before `at` (on every shard) is in ClickHouse. */
    private readonly exportedUntil: (at: number) => Promise<boolean>,
    private readonly foreground: Foreground,
  ) {}

  /**
   * One page of the backfill: persons (and their distinct ids), then groups, stored before the export was on (on a
   * fresh node, none). They go out at version 0 (groups at `_timestamp` 0), under every change's: a person changed
   * meanwhile is also in the change log, and its newer row wins whichever lands first.
   */
  private async backfillStep(): Promise<number> {
    const cursor = this.store.changes.backfillCursor()!;
    if (cursor.table === 'persons') {
      const persons = this.store.personsAfter(cursor.key, BACKFILL_PAGE);
      if (persons.length === 0) {
        await this.store.changes.setBackfillCursor({ table: 'groups', key: null });
        return 0;
      }
      const token = `quill-backfill-persons-${cursor.key ? cursor.key.join('-') : 'start'}`;
      await this.sink.insert(EXPORT_TABLES.person, persons.map((p) => personRow(p, 0, 0)), token);
      const distinctIds = persons.flatMap((p) => this.store.distinctIdsOf(p).map((d) => distinctIdRow(p.team, d, p.uuid, false, 0, 0)));
      await this.sink.insert(EXPORT_TABLES.distinctIds, distinctIds, token);
      await this.sink.insert(EXPORT_TABLES.overrides, overrideRows(distinctIds), token);
      const last = persons[persons.length - 1]!;
      await this.store.changes.setBackfillCursor({ table: 'persons', key: [last.team, last.id] });
      return persons.length + distinctIds.length;
    }
    const groups = this.store.groupsAfter(cursor.key, BACKFILL_PAGE);
    if (groups.length === 0) {
      await this.store.changes.setBackfillCursor(null);
      return 0;
    }
    await this.sink.insert(EXPORT_TABLES.groups, groups.map((g) => groupRow(g, 0, 0)), `quill-backfill-groups-${cursor.key ? cursor.key.join('-') : 'start'}`);
    const last = groups[groups.length - 1]!;
    await this.store.changes.setBackfillCursor({ table: 'groups', key: [last.team, last.type_index, last.key] });
    return groups.length;
  }

  /** The change log's last entry and the last one exported (a query waits for the changes made before it). */
  position(): { last: number; done: number } {
    return { last: this.store.changes.last(), done: this.store.changes.progress().done };
  }

  /** Entries written and not yet exported. */
  lag(): number {
    return this.store.changes.last() - this.store.changes.progress().done;
  }

  async step(): Promise<number | null> {
    await this.sink.ensureSchema();
    this.store.env.resetReadTxn();
    if (this.store.changes.backfillCursor() !== null) return this.backfillStep();
    const { done, pending } = this.store.changes.progress();
    let through = pending;
    let entries: { seq: number; changes: PersonChanges }[];
    if (through !== undefined) entries = this.store.changes.entriesIn(done, through);
    else {
      const last = this.store.changes.last();
      if (last <= done) return null;
      entries = [];
      let items = 0;
      const max = foregroundBusy(this.foreground) ? BATCH_MAX_ITEMS_BUSY : BATCH_MAX_ITEMS;
      for (const entry of this.store.changes.entriesIn(done, last, BATCH_MAX_ENTRIES)) {
        entries.push(entry);
        items += entry.changes.p.length / 2 + entry.changes.r.length + entry.changes.g.length;
        if (items >= max) break;
      }
      through = entries[entries.length - 1]!.seq;
      await this.store.changes.markPending(through);
    }
    const rows = await rowsOfChanges(this.store, entries, Date.now(), new BackgroundSlicer(this.foreground));
    // A deletion waits until the events it deletes are in ClickHouse (the event exporters follow the logs a moment
    // behind): deleted before they arrive, they would stay there.
    const latest = Math.max(0, ...rows.deletions.map((d) => d.at));
    if (latest > 0 && !(await this.exportedUntil(latest))) return null;
    const pacer = new BackgroundSlicer(this.foreground);
    await this.sink.insert(EXPORT_TABLES.person, rows.persons, changesToken(EXPORT_TABLES.person, done, through), pacer);
    await this.sink.insert(EXPORT_TABLES.distinctIds, rows.distinctIds, changesToken(EXPORT_TABLES.distinctIds, done, through), pacer);
    await this.sink.insert(EXPORT_TABLES.overrides, overrideRows(rows.distinctIds), changesToken(EXPORT_TABLES.overrides, done, through), pacer);
    await this.sink.insert(EXPORT_TABLES.groups, rows.groups, changesToken(EXPORT_TABLES.groups, done, through), pacer);
    for (const deletion of rows.deletions) await this.sink.deleteEvents(deletion);
    await this.store.changes.markExported(through);
    return rows.persons.length + rows.distinctIds.length + rows.groups.length;
  }
}

