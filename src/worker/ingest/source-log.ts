/**
 * A shard's ingest log in its role as a source: the worker that received a request logs the whole request here,
 * and each of its events is then applied by the shard that owns the event's distinct id (this one or another).
 * A record may be forgotten (its segment released, the checkpoint moved past it) once every owner of one of its
 * events has applied and flushed it; owners report that in shared memory (src/protocol/shared-state.ts).
 *
 * The checkpoint is stored in the shard's events environment. It only ever lags: after a crash the log is
 * replayed from it and owners skip what they had already applied (and events are deduplicated by uuid anyway).
 */
import type { SharedState } from '../../protocol/shared-state.js';
import type { Env, Table } from '../../stores/lmdb-env.js';
import { transact } from '../../stores/lmdb-env.js';
import { STATE_KEYS } from '../../stores/events/event-store.js';
import { comparePositions, IngestLog, positionNumber, type LogPosition } from '../../stores/ingest-log/index.js';

const CHECKPOINT_KEY = STATE_KEYS.logCheckpoint;
/** How often the checkpoint may be stored (a replay after a crash then repeats at most this much more). */
const CHECKPOINT_EVERY_MS = 1000;

interface Outstanding {
  end: LogPosition;
  endNumber: number;
  /** Shards owning events of the record. */
  owners: number[];
}

export class SourceLog {
  private checkpoint: LogPosition | null;
  private readonly outstanding: Outstanding[] = [];
  private head = 0;
  private advancing: Promise<void> | null = null;
  private lastAdvance = 0;
  /**
   * With the ClickHouse export on, how far its exporter has exported this log (null: nothing yet): segments are
   * released only once both the apply and the export passed them. Undefined: no export.
   */
  private exported: LogPosition | null | undefined = undefined;
  /** With the export on: records logged since start and not yet exported (end, events, when), for its lag. */
  private readonly unexported: { end: number; events: number; at: number }[] = [];
  private unexportedHead = 0;
  private unexportedEvents = 0;

  constructor(
    readonly shard: number,
    private readonly log: IngestLog,
    private readonly env: Env,
    private readonly state: Table<unknown, string>,
    private readonly shared: SharedState,
    private readonly onError: (msg: string) => void,
    exporting = false,
  ) {
    this.checkpoint = (state.get(CHECKPOINT_KEY) as LogPosition | undefined) ?? null;
    if (exporting) this.exported = (state.get(STATE_KEYS.exportCheckpoint) as LogPosition | undefined) ?? null;
  }

  /** Appends one record; resolves with its end once it is fdatasync'ed (rejects on a write/sync error). */
  append(payload: Uint8Array): Promise<LogPosition> {
    return this.log.append(payload);
  }

  /** Remembers which shards own events of a logged record, until all of them applied it (and exported it). */
  track(end: LogPosition, owners: number[], events: number): void {
    const endNumber = positionNumber(end);
    this.outstanding.push({ end, endNumber, owners });
    if (this.exported !== undefined) {
      this.unexported.push({ end: endNumber, events, at: Date.now() });
      this.unexportedEvents += events;
    }
  }

  /** When the oldest record not yet exported was logged (ms; null when none waits). */
  oldestUnexported(): number | null {
    return this.unexported[this.unexportedHead]?.at ?? null;
  }

  /**
   * Events logged here and not yet exported, and how long the oldest has waited (seconds). Counts the records
   * logged or replayed since start: after a restart, those the apply had applied before it are not counted.
   */
  exportLag(): { events: number; seconds: number } {
    const oldest = this.unexported[this.unexportedHead];
    return { events: this.unexportedEvents, seconds: oldest ? (Date.now() - oldest.at) / 1000 : 0 };
  }

  /** Records logged after the checkpoint, in order (start-up). */
  replay(): AsyncIterable<{ payload: Uint8Array; end: LogPosition }> {
    return this.log.replay(this.checkpoint);
  }

  /** Where every owner has applied (and flushed) this log up to: the export reads records up to here. */
  get applied(): LogPosition | null {
    return this.checkpoint;
  }

  /** Records after `from` (null: from the oldest segment kept), up to the durable end when called. */
  recordsAfter(from: LogPosition | null): AsyncIterable<{ payload: Uint8Array; end: LogPosition }> {
    return this.log.replay(from);
  }

  /** The export has exported up to `upTo`; releases what both it and the apply have passed. */
  exportedUpTo(upTo: LogPosition | null): Promise<void> {
    this.exported = upTo;
    const through = upTo === null ? -1 : positionNumber(upTo);
    while (this.unexportedHead < this.unexported.length && this.unexported[this.unexportedHead]!.end <= through) {
      this.unexportedEvents -= this.unexported[this.unexportedHead++]!.events;
    }
    if (this.unexportedHead > 1024 && this.unexportedHead * 2 > this.unexported.length) {
      this.unexported.splice(0, this.unexportedHead);
      this.unexportedHead = 0;
    }
    const bound = this.releasable(this.checkpoint);
    return bound ? this.log.releaseUpTo(bound) : Promise.resolve();
  }

  private releasable(applied: LogPosition | null): LogPosition | null {
    if (this.exported === undefined || applied === null) return applied;
    if (this.exported === null) return null;
    return comparePositions(this.exported, applied) < 0 ? this.exported : applied;
  }

  /** Records logged and not yet applied by all their owners. */
  get pending(): number {
    return this.outstanding.length - this.head;
  }

  get logStats() {
    return this.log.stats();
  }

  /**
   * Moves the checkpoint past every record all owners have applied, stores it, and releases the log segments
   * before it. At most once per CHECKPOINT_EVERY_MS: each store is an LMDB commit, and commits' disk flushes
   * delay the logs' fdatasync, that is every acknowledgement. Calls while one is running are coalesced.
   */
  advance(force = false): Promise<void> {
    if (!force && Date.now() - this.lastAdvance < CHECKPOINT_EVERY_MS) return Promise.resolve();
    this.advancing ??= this.advanceOnce().finally(() => (this.advancing = null));
    return this.advancing;
  }

  async close(): Promise<void> {
    await this.advance(true);
    await this.log.close();
  }

  private async advanceOnce(): Promise<void> {
    this.lastAdvance = Date.now();
    let last: Outstanding | null = null;
    while (this.head < this.outstanding.length) {
      const r = this.outstanding[this.head]!;
      if (!r.owners.every((owner) => this.shared.appliedFrom(owner, this.shard) >= r.endNumber)) break;
      last = r;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.outstanding.length) {
      this.outstanding.splice(0, this.head);
      this.head = 0;
    }
    if (!last) return;
    const end = last.end;
    try {
      await transact(this.env, () => this.state.put(CHECKPOINT_KEY, end));
      await this.env.flushed;
      this.checkpoint = end;
      const bound = this.releasable(end);
      if (bound) await this.log.releaseUpTo(bound);
    } catch (error) {
      this.onError(`shard ${this.shard}: moving the log checkpoint failed: ${(error as Error)?.message ?? error}`);
    }
  }
}
