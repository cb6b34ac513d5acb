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
import { IngestLog, positionNumber, type LogPosition } from '../../stores/ingest-log/index.js';

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

  constructor(
    readonly shard: number,
    private readonly log: IngestLog,
    private readonly env: Env,
    private readonly state: Table<unknown, string>,
    private readonly shared: SharedState,
    private readonly onError: (msg: string) => void,
  ) {
    this.checkpoint = (state.get(CHECKPOINT_KEY) as LogPosition | undefined) ?? null;
  }

  /** Appends one record; resolves with its end once it is fdatasync'ed (rejects on a write/sync error). */
  append(payload: Uint8Array): Promise<LogPosition> {
    return this.log.append(payload);
  }

  /** Remembers which shards own events of a logged record, until all of them applied it. */
  track(end: LogPosition, owners: number[]): void {
    this.outstanding.push({ end, endNumber: positionNumber(end), owners });
  }

  /** Records logged after the checkpoint, in order (start-up). */
  replay(): AsyncIterable<{ payload: Uint8Array; end: LogPosition }> {
    return this.log.replay(this.checkpoint);
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
      await this.log.releaseUpTo(end);
    } catch (error) {
      this.onError(`shard ${this.shard}: moving the log checkpoint failed: ${(error as Error)?.message ?? error}`);
    }
  }
}
