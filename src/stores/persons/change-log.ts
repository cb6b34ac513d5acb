/**
 * The persons environment's change log, for the ClickHouse export (src/worker/export/person-exporter.ts): what each
 * persons write transaction changed, keyed by a sequence number allocated in that transaction (so the order is the
 * commit order and nothing rolled back is there), the exporter's progress through it, and the progress of its
 * backfill of what was stored before the export was on. Written only while the export is configured.
 */
import { all, openTable, transactDurably, type Env, type Table } from '../lmdb-env.js';

/**
 * One transaction's changes: persons written (team, id pairs, flattened), persons removed with what the exporter
 * needs to mark them deleted (their row is gone), groups written, and deletions of events to repeat.
 */
export interface PersonChanges {
  p: number[];
  r: { team: number; uuid: string; d: string[] }[];
  g: [number, number, string][];
  m?: MirroredDeletion[];
}

/** Events Quill deleted, to delete in ClickHouse too; `at`: when (events logged before then are exported first). */
export type MirroredDeletion =
  | { kind: 'person_events'; team: number; distinctIds: string[]; at: number }
  | { kind: 'retention'; team: number; before: number; at: number };

/** Where the backfill of persons and groups is: the last key exported of a table (null: none yet). */
export interface BackfillCursor {
  table: 'persons' | 'groups';
  key: (number | string)[] | null;
}

const LAST = 'last';
const DONE = 'done';
const PENDING = 'pending';
const BACKFILL = 'backfill';

export class PersonChangeLog {
  private readonly entries: Table<PersonChanges, number>;
  private readonly state: Table<unknown, string>;

  constructor(private readonly env: Env) {
    this.entries = openTable(env, 'export_changes');
    this.state = openTable(env, 'export_state');
  }

  /** Appends one transaction's changes. Only inside that persons write transaction. */
  record(changes: PersonChanges): void {
    const seq = this.last() + 1;
    this.state.put(LAST, seq);
    this.entries.put(seq, changes);
  }

  /** The sequence number of the newest entry (0: none yet). */
  last(): number {
    return (this.state.get(LAST) as number | undefined) ?? 0;
  }

  /** Exported through `done`; `pending`: the end of the batch being exported, if one is. */
  progress(): { done: number; pending: number | undefined } {
    return { done: (this.state.get(DONE) as number | undefined) ?? 0, pending: this.state.get(PENDING) as number | undefined };
  }

  /** Up to `limit` entries after `after`, at most through `through`, in order. */
  entriesIn(after: number, through: number, limit = Number.MAX_SAFE_INTEGER): { seq: number; changes: PersonChanges }[] {
    return all(this.entries.getRange({ start: after + 1, end: through + 1, limit }).map(({ key, value }) => ({ seq: key, changes: value })));
  }

  /** Stores the end of the batch about to be exported (durable before its insert: a retry redoes the same batch). */
  async markPending(through: number): Promise<void> {
    await transactDurably(this.env, () => this.state.put(PENDING, through));
  }

  /** The batch through `through` is in ClickHouse: moves the checkpoint and forgets its entries. */
  async markExported(through: number): Promise<void> {
    const done = this.progress().done;
    await transactDurably(this.env, () => {
      this.state.put(DONE, through);
      this.state.remove(PENDING);
      for (const key of this.entries.getKeys({ start: done + 1, end: through + 1 })) this.entries.remove(key);
    });
  }

  /** Where the backfill of persons and groups is (null: done). */
  backfillCursor(): BackfillCursor | null {
    const cursor = this.state.get(BACKFILL) as BackfillCursor | 'done' | undefined;
    return cursor === 'done' ? null : cursor ?? { table: 'persons', key: null };
  }

  /** Stores the backfill's progress (null: done). */
  async setBackfillCursor(cursor: BackfillCursor | null): Promise<void> {
    await transactDurably(this.env, () => this.state.put(BACKFILL, cursor ?? 'done'));
  }
}
