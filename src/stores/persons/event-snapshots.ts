/**
 * The person properties each event was applied with, kept for the ClickHouse export until it has sent the event.
 *
 * The local engine answers person-property filters and breakdowns with the person as it was right after the event
 * (the apply stores that snapshot in the event's column block). The export reads the ingest log, usually on another
 * worker than the event's owner, and long after: the person it could look up then has later `$set`s and merges in
 * it. So the owner's apply writes the snapshots here, in the persons environment every worker reads, in the same
 * write transaction that made them (rolled back with it); the source's exporter reads those of a log record when it
 * exports the record, and forgets them once its checkpoint passed the record.
 *
 * One entry per record and apply transaction, not per event (every lmdb-js put costs a few µs of JS): key
 * [source shard, record end (positionNumber), first event's uuid] — several owners, or the halves of an apply
 * that isolates a failing event, each write their own. A snapshot is JSON text, made once per distinct snapshot
 * object of the transaction (rows are copied on write, so the events of a person between two changes share one),
 * which the exporter puts in the row as is. With it, the person the event was applied with (its uuid and creation
 * time, as the event's column block keeps them), so that the exporter does not read the person again.
 */
import { atomically, openTable, type Env, type Table } from '../lmdb-env.js';

/**
 * The snapshot of an event applied without a person (its distinct id's personless actor): not JSON, so it is told
 * apart from a person with no properties; the exporter writes such an event as PostHog writes one.
 */
export const PERSONLESS_SNAPSHOT = '';

/**
 * One entry: the events' uuids, each one's index in `j`, and the distinct snapshots as JSON text; each event's index
 * in `s` (-1: no person), and the distinct persons as their uuid followed by their created_at (entries written
 * before persons were kept have neither).
 */
interface SnapshotEntry {
  u: string[];
  i: number[];
  j: string[];
  q?: number[];
  s?: string[];
}

/** The person an event was applied with. */
export interface KeptPerson {
  uuid: string;
  /** Its created_at, ISO text. */
  createdAt: string;
}

const UUID_LENGTH = 36;

type SnapshotKey = [number, number, string];

/** Removals per write transaction when forgetting (a long-stopped export may have left many behind). */
const FORGET_BATCH = 10_000;

export class EventSnapshots {
  private readonly table: Table<SnapshotEntry, SnapshotKey>;

  constructor(private readonly env: Env) {
    this.table = openTable(env, 'event_person_snapshots');
  }

  /** A writer for one persons write transaction (call `commit` inside it, after the events' persons are processed). */
  writer(): SnapshotWriter {
    return new SnapshotWriter(this.table);
  }

  /**
   * The snapshots of a record's events, uuid → JSON text (empty: none kept, e.g. applied before the export was on);
   * with `persons`, also the person each was applied with, where kept (uuid → person).
   */
  ofRecord(source: number, end: number, persons?: Map<string, KeptPerson>): Map<string, string> {
    const snapshots = new Map<string, string>();
    for (const { value } of this.table.getRange({ start: [source, end] as never, end: [source, end + 1] as never })) {
      const { u, i, j, q, s } = value;
      for (let k = 0; k < u.length; k++) snapshots.set(u[k]!, j[i[k]!]!);
      if (persons === undefined || q === undefined || s === undefined) continue;
      const kept = s.map((text) => ({ uuid: text.slice(0, UUID_LENGTH), createdAt: text.slice(UUID_LENGTH) }));
      for (let k = 0; k < u.length; k++) if (q[k]! >= 0) persons.set(u[k]!, kept[q[k]!]!);
    }
    return snapshots;
  }

  /** Forgets the snapshots of a source's records up to and including the one ending at `end` (exported). */
  async forgetUpTo(source: number, end: number): Promise<number> {
    let forgotten = 0;
    for (;;) {
      const keys = [...this.table.getKeys({ start: [source] as never, end: [source, end + 1] as never, limit: FORGET_BATCH })];
      if (keys.length === 0) return forgotten;
      await atomically(this.env, () => {
        for (const key of keys) this.table.remove(key);
      });
      forgotten += keys.length;
      if (keys.length < FORGET_BATCH) return forgotten;
    }
  }
}

const PERSONLESS_KEY: object = Object.freeze({});

/** The snapshots of one apply transaction, gathered per record and written at `commit`. */
export class SnapshotWriter {
  private readonly records = new Map<string, { key: SnapshotKey; entry: SnapshotEntry; index: Map<object, number>; persons: Map<string, number> }>();
  /** JSON text per snapshot object: a person's events between two changes share one object, stringified once. */
  private readonly texts = new Map<object, string>();

  constructor(private readonly table: Table<SnapshotEntry, SnapshotKey>) {}

  /**
   * The event `uuid` of the record (`source`, `end`) was applied with the person properties `properties`, or
   * without a person (null: PERSONLESS_SNAPSHOT); `person`: the person it was applied with.
   */
  add(source: number, end: number, uuid: string, properties: Readonly<Record<string, unknown>> | null, person?: KeptPerson): void {
    const id = `${source}:${end}`;
    let record = this.records.get(id);
    if (record === undefined) {
      record = { key: [source, end, uuid], entry: { u: [], i: [], j: [], q: [], s: [] }, index: new Map(), persons: new Map() };
      this.records.set(id, record);
    }
    let personAt = -1;
    if (person !== undefined && person.uuid.length === UUID_LENGTH) {
      const text = person.uuid + person.createdAt;
      personAt = record.persons.get(text) ?? -1;
      if (personAt < 0) record.persons.set(text, (personAt = record.entry.s!.push(text) - 1));
    }
    record.entry.q!.push(personAt);
    const key = properties ?? PERSONLESS_KEY;
    let at = record.index.get(key);
    if (at === undefined) {
      let text = this.texts.get(key);
      if (text === undefined) {
        text = properties === null ? PERSONLESS_SNAPSHOT : JSON.stringify(properties);
        this.texts.set(key, text);
      }
      at = record.entry.j.push(text) - 1;
      record.index.set(key, at);
    }
    record.entry.u.push(uuid);
    record.entry.i.push(at);
  }

  /** Writes the entries. Only inside the persons write transaction that processed the events. */
  commit(): void {
    for (const { key, entry } of this.records.values()) this.table.put(key, entry);
  }
}
