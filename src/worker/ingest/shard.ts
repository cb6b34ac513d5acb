/**
 * A shard actor, in two roles:
 *
 *  - source: its ingest log (src/worker/ingest/source-log.ts), where the worker owning the shard logs every
 *    request it receives, whole. `append` resolves only after the record is fdatasync'ed (design.md §2).
 *  - owner: the events whose distinct id hashes to this shard (src/domain/shard-of.ts), whichever shard logged
 *    them. Once a record is durable, each shard owning some of its events queues a reference to it (a part: the
 *    source log and the record's position). Its apply loop reads the records back from the logs
 *    (src/stores/ingest-log/record-reader.ts), keeps the events it owns and moves them into LMDB — persons first,
 *    then the events with the per-source applied positions in the same transaction — and its event store keeps
 *    them. The backlog thus waits on disk; how much CPU the apply may take under load is ApplyPacer's decision.
 *
 * The worker that received a request acknowledges it only after every part has been published in its owner's
 * ring in shared memory (src/protocol/part-rings.ts; no second fdatasync, no round trip through the owner's
 * event loop), which the owner drains into its queue. That gives the order of a log
 * partitioned by distinct id: a request sent after an earlier one was acknowledged is queued after it by the
 * shard owning its distinct ids, and one owner applies them in queue order. All events of a distinct id are
 * applied by one thread, so apply loops never wait for each other (person merges across shards are atomic through
 * the shared persons environment).
 *
 * After a crash each log is replayed from its checkpoint and its records are routed again; owners skip what they
 * had applied (positions stored with the events) and events are deduplicated by uuid. Replayed records of
 * different logs reach an owner in no particular order between logs. A worker thread that dies alone is replaced
 * by a thread that holds every part it receives until its recovery is complete (`held`), since within one log the
 * order matters.
 */
import { shardDir, shardLogDir } from '../../stores/data-dir/paths.js';
import { decodeLogRecord, type NormalizedEvent } from '../../domain/ingest/index.js';
import { enrichEvents } from './event-enricher.js';
import type { GroupTypes } from '../../domain/model.js';
import type { SharedState } from '../../protocol/shared-state.js';
import { shardOf } from '../../domain/shard-of.js';
import { IngestLog, LogRecordReader, type LogIo, type LogPosition } from '../../stores/ingest-log/index.js';
import { EventStore, STATE_KEYS } from '../../stores/events/event-store.js';
import { DeadLetterStore, reasonOf, type DeadLetter } from '../../stores/events/dead-letter-store.js';
import { atomically, transact } from '../../stores/lmdb-env.js';
import { ChunkSizer } from './chunk-sizer.js';
import { CHUNK_EVENTS, Lag, catchingUp, chunkLimit } from './chunk-limit.js';
import { isStorageFailureText } from '../../stores/storage-failure.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { PersonProcessor, groupTypeNamesOf, type PersonOutcome } from './person-processor.js';
import { SourceLog } from './source-log.js';
import type { ApplyPacer } from './apply-pacer.js';
import { BACKLOG_RESUME } from './part-publisher.js';
import type { RingPart } from '../../protocol/part-rings.js';
import type { ColumnCache } from '../../stores/scan/column-cache.js';
import type { HotPersons } from './hot-persons.js';
import type { ScanEvent } from '../../stores/scan/block-builder.js';
import { SCAN_LAYOUT_VERSION } from '../../stores/scan/scan-store.js';
import type { Logger } from '../../observability/logger.js';
import type { RetentionCounters } from '../retention.js';
import { ApplyBudget } from './apply-budget.js';
import { applyFault } from './apply-faults.js';
import { letRequestsPass } from '../waiting-requests.js';
import { aloneMarks, ApplyMarker, deathsOf, inRanges, rangesOf, suspectTreatment, type ApplyMark } from './apply-marker.js';

export interface ApplyContext {
  persons: PersonStore;
  shared: SharedState;
  groupTypes(team: number): GroupTypes;
  /** Assigns indexes to new group type names (metadata write + replication); resolves with the new mapping. */
  ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes>;
  /** Records that these event names were seen (event definitions, last_seen_at). */
  recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void>;
  log: Logger;
  /** Shards in the data directory (fixed), for telling which events of a record are this shard's. */
  shardCount: number;
  /** The ingest log directory of a shard. */
  logDir(shard: number): string;
  pacer: ApplyPacer;
  /** This thread's cache of decoded scan-layout columns. */
  columnCache: ColumnCache;
  /** This thread's recently seen persons, for the apply's person processing. */
  hotPersons: HotPersons;
  /**
   * Events queued and not applied above which this shard stops taking parts from its ring, and requests wait
   * before publishing more (config backlogHigh; src/worker/ingest/ingest-service.ts).
   */
  backlogHigh: number;
  /**
   * This thread replaces one that died: parts wait until its logs are replayed and other workers have re-sent
   * what their logs hold for this thread's shards (Shard.releaseHeldParts).
   */
  holdParts: boolean;
  /**
   * How long a stop keeps applying the backlog before closing the stores (config stopApplySeconds). What is left
   * stays in the ingest logs and is applied at the next start, so a stop never waits for millions of queued events
   * (container and systemd grace periods are 10-30 s; past them comes a SIGKILL).
   */
  stopApplyMs: number;
  /** Time one apply attempt may take (config applyBudgetS; src/worker/ingest/apply-budget.ts). */
  applyBudgetMs: number;
  /** Size of an ingest log segment file (config logSegmentMb). */
  segmentBytes: number;
  /** The ClickHouse export is on: a log keeps its records until they are exported too (src/worker/export/). */
  exporting: boolean;
  /** The log's file operations when a test traces them (src/worker/ingest/durability-trace.ts); else the real ones. */
  logIo?: LogIo;
  /** QUILL_FAULT_INJECTION: events may carry faults into the apply (src/worker/ingest/apply-faults.ts). */
  faultInjection?: boolean;
}

/**
 * A log record holding events one shard owns: a reference (the source shard, the record's end there as a position
 * number, its payload length, and how many of its events the owner owns); the events stay in the source's log.
 */
export type Part = RingPart;

/** A part in an owner's queue, with when it was queued (the apply's lag). */
interface QueuedPart extends Part {
  queuedAt: number;
}

/** An event of a chunk: its project, and the record it came from (to set it aside if it cannot be applied). */
interface ChunkEvent {
  team: number;
  event: NormalizedEvent;
  source: number;
  end: number;
  record: Buffer;
}

/** What a chunk's records hold for this shard, in queue order, and the records that could not be read back. */
interface ChunkContent {
  events: ChunkEvent[];
  unreadable: DeadLetter[];
}

/**
 * An error thrown by processing an event (inside a transaction callback), as opposed to a failure of the storage
 * (a commit, a log read, a metadata write). Only these make the apply loop look for the event at fault; anything
 * else means the chunk waits and is tried again whole, and is never a reason to set an event aside.
 */
class EventFailure extends Error {
  constructor(readonly failure: unknown) {
    super(reasonOf(failure));
  }
}

function isEventFailure(error: unknown): error is EventFailure {
  return error instanceof EventFailure && !isStorageFailureText(error.message);
}

/** Runs `fn`, marking what it throws as the events' failure (EventFailure). */
function processing<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new EventFailure(error);
  }
}

function reachedBy(chunk: readonly Part[]): Record<string, number> {
  const reached: Record<string, number> = {};
  for (const part of chunk) reached[part.source] = Math.max(reached[part.source] ?? 0, part.end);
  return reached;
}

const APPLIED_FROM_KEY = STATE_KEYS.appliedFrom;


/*
 * The backlog bound (ApplyContext.backlogHigh, 4 million events by default): the events wait in the ingest logs
 * (about 0.5 KB each on disk), so it bounds the disk a sustained overload may take and the replay after a crash.
 * Whoever waits for it resumes once the backlog is under BACKLOG_RESUME of the bound.
 */
const RETRY_MS = 1000;
/**
 * How long a partial chunk may wait for more events before it is applied. Every apply commits two LMDB
 * transactions, each flushed to disk; under a steady trickle of single events, committing per trickle made those
 * flushes compete with the ingest log's fdatasync on the same disk and doubled the acknowledgement latency. A
 * waiting reader (the API's read-your-writes barrier) cuts the wait short. (Measured with wrk c8 on /capture/:
 * 2 ms and 20 ms gave the same rate; 100 ms was slower, its larger flushes delaying the log's fdatasync more.)
 */
const APPLY_DELAY_MS = 20;
/** How often the owner drains its ring while parts are arriving, and while none arrived for a second. */
const RING_POLL_BUSY_MS = 2;
const RING_POLL_IDLE_MS = 20;
const RING_IDLE_AFTER_MS = 1000;
/** How often a source looks whether other shards have applied its records (moving its checkpoint). */
const SOURCE_ADVANCE_MS = 250;
/**
 * A record holding more events than this many chunks' worth is applied alone, in slices of a chunk each, one
 * transaction per slice: one request of 100,000 events held its shard's transaction for seconds. A slice commits
 * its events without the record's log position; the last slice commits the position, and a crash in between
 * replays the record, whose applied events are known by their uuids.
 */
const SLICE_RECORD_CHUNKS = 2;
/**
 * The bytes a chunk takes per event its limit allows: chunks are sized in events (chunk-limit.ts), for events of
 * the SDKs' size (0.4-2 KB), and a chunk of 400 events of a megabyte each would hold the thread for seconds; so a
 * chunk also stops at limit × this many bytes of records, and a record's slices are cut to it.
 */
const CHUNK_BYTES_PER_EVENT = 1024;
/** How often a chunk waiting for a suspect's turn to end looks again. */
const SUSPECT_TURN_POLL_MS = 5;
/** What a record set aside whole keeps of its text in the dead-letter store (the evidence, not a copy). */
const SET_ASIDE_TEXT = 1024 * 1024;

/** How the next chunk is applied (Shard.nextChunk). */
interface ChunkPlan {
  /** Parts taken from the head of the queue, and their events. */
  take: number;
  events: number;
  /** What the crash marker says of these records (src/worker/ingest/apply-marker.ts), for a chunk not alone. */
  attempts: number;
  /** A suspect record applied alone (or set aside): the crash marker counts only deaths in its own code. */
  alone: boolean;
  mode: 'chunk' | 'slices' | 'set-aside';
}

export class Shard {
  private readonly queue: QueuedPart[] = [];
  private readonly reader = new LogRecordReader();
  /** A pause between chunks (ApplyPacer), cut short by a read-your-writes wait. */
  private pausing: { timer: NodeJS.Timeout; resume: () => void } | null = null;
  private closing = false;
  /** When a stop gives up applying the backlog (performance.now() time). */
  private closeDeadline = Infinity;
  private ringPoll: NodeJS.Timeout | null = null;
  private lastPartAt = -Infinity;
  private backlog = 0;
  /** Whether the backlog is over its bound (new parts wait), for logging the crossings once each. */
  private overBacklog = false;
  /** Whether the backlog is an overload rather than a lag the apply can catch up with (behind). */
  private readonly lag = new Lag();
  private running = false;
  /** Caps chunks by their measured cost (chunk-sizer.ts); the longest callback of the chunk being applied. */
  private readonly sizer = new ChunkSizer();
  private longestCallbackS = 0;
  /** Parts queued and applied since start: the read-your-writes barrier compares them. */
  private queuedParts = 0;
  private appliedParts = 0;
  private barriers: { target: number; resolve: () => void }[] = [];
  private admission: { resolve: () => void }[] = [];
  /** Fault injection (POST /_fault/pause-apply): the apply loop waits here until resumed. */
  private paused: { until: Promise<void>; resume: () => void } | null = null;
  private delayed: NodeJS.Timeout | null = null;
  private readonly deadLetters: DeadLetterStore;
  /** Per source shard, how far its log has been applied here (stored with the events). */
  private readonly appliedFrom: Record<string, number>;
  private readonly advanceTimer: NodeJS.Timeout;
  /** Totals since start, for stats and benchmarks. */
  readonly totals = { appendedEvents: 0, appliedEvents: 0, duplicateEvents: 0, droppedEvents: 0, deadLetteredEvents: 0, personUpdatesRejected: 0 };
  /** Data retention on this shard since start (src/worker/retention.ts keeps them). */
  readonly retention: RetentionCounters = { passes: 0, deletedEvents: 0, running: false };
  /** The time and memory one apply attempt may take (src/worker/ingest/apply-budget.ts). */
  private readonly budget: ApplyBudget;
  /** While a suspect record is applied alone: the crash marker's two marks for it (`ownWork`). */
  private alone: { working: ApplyMark; waiting: ApplyMark } | null = null;

  private constructor(
    readonly id: number,
    readonly events: EventStore,
    readonly source: SourceLog,
    private readonly ctx: ApplyContext,
    /** Written before every chunk: the records being applied (src/worker/ingest/apply-marker.ts). */
    private readonly marker: ApplyMarker,
    /** Records that were being applied when the process (or this shard's thread) last died, if not applied since. */
    private readonly suspects: ApplyMark | null,
  ) {
    this.budget = new ApplyBudget(ctx.applyBudgetMs);
    this.appliedFrom = { ...((events.state.get(APPLIED_FROM_KEY) as Record<string, number> | undefined) ?? {}) };
    this.deadLetters = new DeadLetterStore(events.env);
    for (const [source, position] of Object.entries(this.appliedFrom)) ctx.shared.publishAppliedFrom(id, Number(source), position);
    this.advanceTimer = setInterval(() => {
      if (this.source.pending > 0) void this.source.advance();
    }, SOURCE_ADVANCE_MS);
    this.advanceTimer.unref();
    ctx.shared.publishQueued(id, 0);
    if (ctx.holdParts) {
      let release!: () => void;
      this.held = { parts: [], events: 0, released: new Promise<void>((r) => (release = r)), release };
    }
    this.pollRing();
  }

  /**
   * Parts that a replacement thread keeps aside while it recovers (`releaseHeldParts`): from its ring, from its own
   * logs' replay (which goes through the rings) and re-sent by the other workers from theirs. The thread that died
   * had taken parts and died with them unapplied, while later parts of the same logs stayed in the ring or kept
   * coming; a part at or before its log's applied position counts as applied (`accept`; the log's checkpoint moves
   * past it too), so applying a later part first loses the earlier ones: 1% of the events acknowledged around
   * worker crashes were lost that way (test/e2e/worker-crash-soak.test.ts). Re-sent parts are held too: a peer's
   * call to a thread that died is delivered again to its replacement, so a re-send meant for the previous thread
   * can arrive in the middle of this one's. Released in log order per source, each record once.
   */
  private held: { parts: Part[]; events: number; released: Promise<void>; release: () => void } | null = null;

  /** Queues the parts held since start-up (recovery is complete); from now on none is held. */
  releaseHeldParts(): number {
    const held = this.held;
    if (!held) return 0;
    this.held = null;
    // Ring leftovers, replayed and re-sent copies of one record meet here: one of each, in log order per source.
    const parts = held.parts.sort((a, b) => a.source - b.source || a.end - b.end);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const previous = parts[i - 1];
      if (previous && previous.source === part.source && previous.end === part.end) continue;
      this.accept(part);
    }
    this.publishBacklog();
    held.release();
    this.kick();
    return parts.length;
  }

  static async open(dataDir: string, id: number, ctx: ApplyContext): Promise<Shard> {
    const events = new EventStore(shardDir(dataDir, id), ctx.columnCache, id);
    await convertLegacyLayout(id, events, ctx);
    // fsync: every acknowledgement waits for its record's fdatasync (test/e2e/ingestion-fsync.test.ts checks it).
    const log = await IngestLog.open({ dir: shardLogDir(dataDir, id), fsync: true, segmentBytes: ctx.segmentBytes, ...(ctx.logIo ? { io: ctx.logIo } : {}),
      warn: (m) => ctx.log.warn({ event: 'log_recovery', shard: id }, m),
    });
    const { marker, last } = ApplyMarker.open(shardDir(dataDir, id));
    const suspects = last && Object.keys(last.ranges).length > 0 ? last : null;
    if (suspects) {
      const treatment = suspectTreatment(suspects);
      ctx.log.warn({ event: 'apply_suspects', shard: id, attempts: suspects.attempts, waits: suspects.waits ?? 0, ranges: suspects.ranges },
        `shard ${id}: the process stopped while applying records ${JSON.stringify(suspects.ranges)} (${suspects.attempts} earlier attempts, ${suspects.waits ?? 0} while waiting); those not applied yet are tried ${treatment === 'again' ? 'again' : treatment === 'alone' ? 'one at a time' : 'no more and set aside'}`);
    }
    return new Shard(id, events, new SourceLog(id, log, events.env, events.state, ctx.shared, (m) => ctx.log.error(m), ctx.exporting), ctx, marker, suspects);
  }

  /**
   * Logs a request durably (a record of src/domain/ingest/log-record.ts holding `events` events); resolves with
   * the record's end once it is fdatasync'ed. Owners read the record back when they apply it (`recordEvents`).
   */
  async log(record: Buffer, events: number): Promise<LogPosition> {
    const end = await this.source.append(record);
    this.totals.appendedEvents += events;
    return end;
  }

  /**
   * Takes a part of a durable record to apply, not through the ring (re-sent to a replacement thread); resolves
   * once it is queued (waiting while the backlog is over its bound).
   */
  async enqueue(part: Part): Promise<void> {
    if (this.held) {
      this.hold(part, this.held);
      return;
    }
    while (this.backlog > this.ctx.backlogHigh) await new Promise<void>((resolve) => this.admission.push({ resolve }));
    this.accept(part);
    this.kick();
  }

  /** Queues a part, unless its record was applied here already (a replay after a crash). */
  private accept(part: Part): void {
    if (part.end <= (this.appliedFrom[part.source] ?? 0)) return;
    // Named fields: a key added to a spread copy takes V8's slow path (src/domain/merge-properties.ts).
    this.queue.push({ source: part.source, end: part.end, bytes: part.bytes, events: part.events, queuedAt: performance.now() });
    this.backlog += part.events;
    this.publishBacklog();
    this.queuedParts++;
    if (this.backlog > this.ctx.backlogHigh && !this.overBacklog) {
      this.overBacklog = true;
      this.ctx.log.warn({ event: 'backlog_high', shard: this.id, backlog: this.backlog, limit: this.ctx.backlogHigh },
        `shard ${this.id}: ${this.backlog} acknowledged events wait to be applied; new ingestion requests are refused until it is under ${this.ctx.backlogHigh * BACKLOG_RESUME}`);
    }
  }

  /** What peers and /_stats see as this shard's backlog: queued events, and parts held while recovering. */
  private publishBacklog(): void {
    this.ctx.shared.publishQueued(this.id, this.backlog + (this.held?.events ?? 0));
  }

  private hold(part: Part, held: NonNullable<Shard['held']>): void {
    held.parts.push(part);
    held.events += part.events;
    this.publishBacklog();
  }

  /** Moves what other threads published in this shard's ring into the queue, while the backlog is under its bound. */
  private takeFromRing(): number {
    let taken = 0;
    while (this.backlog + (this.held?.events ?? 0) <= this.ctx.backlogHigh) {
      const parts = this.ctx.shared.rings.take(this.id, 1024);
      if (parts.length === 0) break;
      for (const part of parts) {
        if (this.held) this.hold(part, this.held);
        else this.accept(part);
      }
      taken += parts.length;
    }
    if (taken > 0) {
      this.lastPartAt = performance.now();
      this.kick();
    }
    return taken;
  }

  private pollRing(): void {
    if (this.closing) return;
    this.takeFromRing();
    const idle = performance.now() - this.lastPartAt > RING_IDLE_AFTER_MS;
    this.ringPoll = setTimeout(() => this.pollRing(), idle ? RING_POLL_IDLE_MS : RING_POLL_BUSY_MS);
    this.ringPoll.unref();
  }

  /**
   * Resolves once every part queued before the call has been applied (read-your-writes for the API), including
   * the parts a replacement holds while it recovers, unless `heldToo` is false (that recovery itself).
   */
  applied(heldToo = true): Promise<void> {
    if (this.held && heldToo) return this.held.released.then(() => this.applied());
    this.takeFromRing();
    const target = this.queuedParts;
    if (this.appliedParts >= target) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.barriers.push({ target, resolve }));
    this.applyNow();
    return done;
  }

  stats() {
    this.takeFromRing();
    // How long the oldest acknowledged event not yet applied has waited: the ingestion lag an operator watches.
    const lagMs = this.queue.length > 0 ? Math.round(performance.now() - this.queue[0]!.queuedAt) : 0;
    const shared = this.ctx.shared;
    return {
      shard: this.id, backlog: shared.behind(this.id), lagMs, waitingRequests: shared.waitingFor(this.id), queuedParts: this.queue.length, ...this.totals,
      deadLetters: this.deadLetters.stats(), unreleasedRecords: this.source.pending, log: this.source.logStats,
      scan: this.events.columns.stats(), retention: { ...this.retention },
    };
  }

  /** Keeps a sample of an event capture dropped (src/stores/events/dead-letter-store.ts); not on the ack's path. */
  async sampleDropped(team: number, reason: string, content: string): Promise<void> {
    await atomically(this.events.env, () =>
      this.deadLetters.sample({ team, uuid: null, source: this.id, reason, at: new Date().toISOString(), content }));
  }

  /** What this shard set aside, and its samples of dropped events. */
  deadLetterEntries(): DeadLetter[] {
    return this.deadLetters.list();
  }

  /** Fault injection only: stops (or restarts) applying; parts keep being queued up to the backlog bound. */
  pauseApply(pause: boolean): void {
    if (pause) {
      if (this.paused) return;
      let resume!: () => void;
      const until = new Promise<void>((r) => (resume = r));
      this.paused = { until, resume };
    } else if (this.paused) {
      this.paused.resume();
      this.paused = null;
    }
  }

  /**
   * Stops applying and closes the shard's stores. A normal stop applies up to `stopApplyMs` of backlog first; a
   * `fatal` one (the thread dies of an uncaught exception) only lets the chunk in flight finish and leaves the ring
   * and the queue to the replacement thread's replay.
   */
  async close(opts: { fatal?: boolean } = {}): Promise<void> {
    clearInterval(this.advanceTimer);
    this.closing = true;
    this.closeDeadline = opts.fatal ? -Infinity : performance.now() + this.ctx.stopApplyMs;
    this.pauseApply(false);
    if (this.ringPoll) clearTimeout(this.ringPoll);
    if (!opts.fatal) this.takeFromRing();
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = null;
    this.endPause();
    await this.drainAll();
    this.reader.close();
    this.marker.close();
    await this.source.close();
    await this.events.close();
  }

  /** A full chunk is applied at once; a partial one after APPLY_DELAY_MS unless someone is waiting for it. */
  private kick(): void {
    if (this.running) return;
    if (this.backlog >= CHUNK_EVENTS || this.barriers.length > 0) this.applyNow();
    else this.delayed ??= setTimeout(() => this.applyNow(), APPLY_DELAY_MS);
  }

  private applyNow(): void {
    if (this.delayed) {
      clearTimeout(this.delayed);
      this.delayed = null;
    }
    this.endPause();
    if (!this.running) void this.drain();
  }

  private endPause(): void {
    if (!this.pausing) return;
    clearTimeout(this.pausing.timer);
    this.pausing.resume();
  }

  /** Waits `ms` unless a read-your-writes wait (applyNow) cuts it short. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const resume = () => {
        this.pausing = null;
        resolve();
      };
      this.pausing = { timer: setTimeout(resume, ms), resume };
    });
  }

  /** Applies everything queued now, without the delay (close). */
  private async drainAll(): Promise<void> {
    while (this.running) await new Promise((r) => setTimeout(r, 5));
    await this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // kick() decided when to start; from here everything queued is applied, chunk by chunk (parts that arrive
      // meanwhile join the next chunk).
      while (performance.now() < this.closeDeadline && (this.takeFromRing() > 0 || this.queue.length > 0)) {
        if (this.paused) {
          await this.paused.until;
          continue;
        }
        // Flag and API requests on their way to this thread start before the next chunk does (and size it).
        await letRequestsPass();
        if (this.paused || this.queue.length === 0) continue;
        const pacer = this.ctx.pacer;
        const behind = this.behind();
        let limit = chunkLimit(pacer, this.backlog, this.sizer, behind);
        if (catchingUp(pacer, this.backlog)) {
          // Requests that queued while the last chunk blocked this thread are noted only when their frame is
          // dispatched: let the event loop deliver what is waiting before committing to a long chunk.
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (this.paused) continue;
          limit = chunkLimit(pacer, this.backlog, this.sizer, behind);
        }
        const plan = this.nextChunk(limit);
        const take = plan.take;
        const n = plan.events;
        const chunk = this.queue.slice(0, take);
        const started = performance.now();
        this.longestCallbackS = 0;
        try {
          const done = await this.inTurn(plan.alone, async () => {
            if (plan.alone) {
              this.alone = aloneMarks(this.suspects!, rangesOf(chunk));
              this.marker.mark(this.alone.waiting);
            } else this.marker.mark({ attempts: plan.attempts, ranges: rangesOf(chunk) });
            try {
              if (plan.mode === 'set-aside') await this.setAsideRecord(chunk[0]!, this.suspects!);
              else if (plan.mode === 'slices') return await this.applyInSlices(chunk[0]!);
              else {
                await this.applyChunk(chunk);
                this.sizer.observe(n, this.longestCallbackS);
              }
              return true;
            } finally {
              this.alone = null;
            }
          });
          if (!done) break; // the stop's deadline came during a sliced record: it stays queued
        } catch (error) {
          // The events are safe in their logs; retry later rather than drop anything.
          this.ctx.log.error(`shard ${this.id}: apply failed, retrying in ${RETRY_MS} ms: ${(error as Error)?.stack ?? error}`);
          await new Promise((r) => setTimeout(r, RETRY_MS));
          continue;
        }
        this.queue.splice(0, take);
        this.appliedParts += take;
        this.backlog -= n;
        this.publishBacklog();
        this.resolveWaiters();
        if (this.queue.length > 0 && this.barriers.length === 0 && !this.closing && !this.behind()) {
          const now = performance.now();
          const wait = pacer.pauseAfter(now - started, now - this.queue[0]!.queuedAt);
          if (wait > 0) await this.pause(wait);
        }
      }
    } finally {
      this.running = false;
    }
    if (this.queue.length > 0 && !this.closing) this.kick();
  }

  /**
   * The next chunk: the parts at the head of the queue up to `limit` events, except a record so large it is
   * applied alone in slices, and the records the crash marker names (`suspects`): applied as usual the first time
   * after a crash, then one at a time, then set aside (src/worker/ingest/apply-marker.ts `suspectTreatment`).
   */
  private nextChunk(limit: number): ChunkPlan {
    const queue = this.queue;
    const first = queue[0]!;
    const maxBytes = limit * CHUNK_BYTES_PER_EVENT;
    const large = (p: Part) => p.events > 1 && (p.events > SLICE_RECORD_CHUNKS * limit || p.bytes > SLICE_RECORD_CHUNKS * maxBytes);
    const suspects = this.suspects;
    const suspect = (p: Part) => suspects !== null && inRanges(suspects.ranges, p.source, p.end);
    const treatment = suspects === null ? 'again' : suspectTreatment(suspects);
    if (treatment !== 'again' && suspect(first)) {
      const mode = treatment === 'set-aside' ? 'set-aside' : large(first) ? 'slices' : 'chunk';
      return { take: 1, events: first.events, attempts: 0, alone: true, mode };
    }
    const attempts = suspects !== null && treatment === 'again' ? 1 : 0;
    if (large(first)) return { take: 1, events: first.events, attempts: suspect(first) ? attempts : 0, alone: false, mode: 'slices' };
    let n = 0;
    let bytes = 0;
    let take = 0;
    let anySuspect = false;
    while (take < queue.length && (take === 0 || (n < limit && bytes < maxBytes))) {
      const part = queue[take]!;
      // A large record waits for its own turn; a suspect that gets a turn alone waits for it.
      if (take > 0 && (large(part) || (treatment !== 'again' && suspect(part)))) break;
      anySuspect ||= suspect(part);
      n += part.events;
      bytes += part.bytes;
      take++;
    }
    return { take, events: n, attempts: anySuspect ? attempts : 0, alone: false, mode: 'chunk' };
  }

  /**
   * Runs one chunk's apply in its turn. A suspect record applied alone (`alone`: the crash marker's second and third
   * chances) waits until it is the only record being applied in the process, and no other shard starts a chunk
   * until it is done: a death in that window is the suspect's, so its marker's count goes up, while a death caused
   * by another shard's record can never be counted against an innocent one and set it aside. Other chunks wait while
   * a suspect has its turn (only after two deaths; never in normal running).
   */
  private async inTurn<T>(alone: boolean, apply: () => Promise<T>): Promise<T> {
    const shared = this.ctx.shared;
    const wait = () => new Promise<void>((resolve) => setTimeout(resolve, SUSPECT_TURN_POLL_MS));
    if (alone) {
      while (!shared.takeSuspectTurn(this.id)) await wait();
      try {
        while (shared.chunksApplying() > 0) await wait();
        return await apply();
      } finally {
        shared.endSuspectTurn(this.id);
      }
    }
    while (!shared.beginApply(this.id)) await wait();
    try {
      return await apply();
    } finally {
      shared.endApply();
    }
  }

  /**
   * Applies one large record in slices of a chunk's worth of events, each in its own transactions, yielding to the
   * thread's requests between them; the last slice commits the record's log position. False when a stop's deadline
   * came first (the record stays queued and is applied again, its applied events found by their uuids).
   */
  private async applyInSlices(part: Part): Promise<boolean> {
    const chunk = [part];
    const content = this.recordEvents(chunk);
    const total = content.events.length;
    let lo = 0;
    do {
      if (performance.now() >= this.closeDeadline) return false;
      const limit = chunkLimit(this.ctx.pacer, this.backlog, this.sizer, this.behind());
      // Events of a chunk's worth, and of a chunk's bytes (the record's average event size).
      const byBytes = Math.floor((limit * CHUNK_BYTES_PER_EVENT) / Math.max(1, part.bytes / Math.max(1, part.events)));
      const hi = Math.min(total, lo + Math.max(1, Math.min(limit, byBytes)));
      const last = hi === total;
      this.longestCallbackS = 0;
      try {
        await this.applyEvents(content.events.slice(lo, hi), last ? content.unreadable : [], last ? reachedBy(chunk) : null);
      } catch (error) {
        if (!isEventFailure(error)) throw error;
        this.ctx.log.error(`shard ${this.id}: events ${lo}-${hi} of a record of ${total} failed (${reasonOf(error.failure)}); applying them in halves to set aside what cannot be applied`);
        await this.applyRange(chunk, lo, hi);
        if (last) await this.applyEvents([], this.recordEvents(chunk).unreadable, reachedBy(chunk));
      }
      this.sizer.observe(hi - lo, this.longestCallbackS);
      lo = hi;
      // The thread's requests (acknowledgements, flags) go first between slices.
      if (!last) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        await letRequestsPass();
      }
    } while (lo < total);
    return true;
  }

  /**
   * Sets aside a whole record without applying it: the process died while applying it in a chunk and then, each
   * time, while its own code ran alone (the crash marker), so another attempt would most likely die too. It is kept in the dead-letter store with the reason (and its text,
   * up to SET_ASIDE_TEXT), and the shard moves past its position.
   */
  private async setAsideRecord(part: Part, suspect: ApplyMark): Promise<void> {
    const record = this.reader.readAll(this.ctx.logDir(part.source), [part])[0]!;
    const text = record.toString('utf8', 0, Math.min(record.length, SET_ASIDE_TEXT));
    const { deaths, own } = deathsOf(suspect);
    const reason = `the process stopped ${deaths} times while applying this record (${part.events} events, ${record.length} bytes; ${own} times while its own processing ran alone)`;
    this.ctx.log.error({ event: 'record_set_aside', shard: this.id, source: part.source, end: part.end }, `shard ${this.id}: ${reason}; set aside`);
    const letter: DeadLetter = { kind: 'record', team: teamOfRecord(record), uuid: null, source: part.source, end: part.end, reason, at: new Date().toISOString(), content: text };
    await this.applyEvents([], [letter], reachedBy([part]));
  }

  /** Whether the apply fell behind a load it can keep up with (chunk-limit.ts). */
  private behind(): boolean {
    const oldest = this.queue[0];
    return this.lag.behind(this.backlog, oldest === undefined ? null : performance.now() - oldest.queuedAt);
  }

  private resolveWaiters(): void {
    if (this.barriers.length > 0) {
      const still: typeof this.barriers = [];
      for (const b of this.barriers) (this.appliedParts >= b.target ? b.resolve() : still.push(b));
      this.barriers = still;
    }
    if (this.overBacklog && this.backlog <= this.ctx.backlogHigh * BACKLOG_RESUME) {
      this.overBacklog = false;
      this.ctx.log.info({ event: 'backlog_low', shard: this.id, backlog: this.backlog }, `shard ${this.id}: backlog back under ${this.ctx.backlogHigh * BACKLOG_RESUME}`);
    }
    if (this.backlog <= this.ctx.backlogHigh * BACKLOG_RESUME && this.admission.length > 0) {
      const waiting = this.admission;
      this.admission = [];
      for (const w of waiting) w.resolve();
    }
  }

  /** The events of the chunk's records that this shard owns, in queue order. */
  private recordEvents(chunk: readonly Part[]): ChunkContent {
    return this.ownWork(() => this.decodeRecords(chunk));
  }

  private decodeRecords(chunk: readonly Part[]): ChunkContent {
    // Each source's records are read in log order, neighbours with one read.
    const bySource = new Map<number, number[]>();
    chunk.forEach((part, i) => {
      const list = bySource.get(part.source);
      if (list) list.push(i);
      else bySource.set(part.source, [i]);
    });
    const payloads: Buffer[] = new Array(chunk.length);
    for (const [source, indexes] of bySource) {
      indexes.sort((a, b) => chunk[a]!.end - chunk[b]!.end);
      const read = this.reader.readAll(this.ctx.logDir(source), indexes.map((i) => chunk[i]!));
      indexes.forEach((i, k) => (payloads[i] = read[k]!));
    }
    const content: ChunkContent = { events: [], unreadable: [] };
    const shards = this.ctx.shardCount;
    const mine = shards === 1 ? undefined : (team: number, distinctId: string) => shardOf(team, distinctId, shards) === this.id;
    payloads.forEach((record, i) => {
      const { source, end } = chunk[i]!;
      let decoded: ReturnType<typeof decodeLogRecord>;
      try {
        decoded = decodeLogRecord(record, mine);
      } catch (error) {
        content.unreadable.push({
          kind: 'record', team: null, uuid: null, source, end, reason: reasonOf(error), at: new Date().toISOString(), content: record.toString('utf8'),
        });
        return;
      }
      enrichEvents(decoded.events);
      for (const event of decoded.events) content.events.push({ team: decoded.team, event, source, end, record });
    });
    return content;
  }

  /**
   * Applies a chunk: everything in it at once (the fast path), and if processing an event failed (EventFailure:
   * not the storage), event by event in halves, setting aside the events that cannot be applied (applyIsolating).
   * Either way the chunk ends with its log positions committed, so the loop moves on.
   */
  private async applyChunk(chunk: Part[]): Promise<void> {
    const content = this.recordEvents(chunk);
    try {
      await this.applyEvents(content.events, content.unreadable, reachedBy(chunk));
    } catch (error) {
      if (!isEventFailure(error)) throw error;
      await this.applyIsolating(chunk, content.events.length, error.failure);
    }
  }

  /**
   * One poison event must not cost another: the chunk is applied in halves, recursively, down to single events,
   * and an event that fails alone is set aside (DeadLetterStore). A failed attempt leaves nothing behind in the
   * persons environment (PersonStore.write rolls back) nor in the events environment, and every attempt reads its
   * events afresh from the logs (processing an event changes it). The one thing a failed attempt can leave is a
   * persons commit followed by a failed events commit; the halves then process those events' persons again, which
   * gives the same persons: creation and merges find their work done, `$set`, `$set_once` and `$unset` write the
   * same values in the same order (only the rows' internal version counter moves).
   */
  private async applyIsolating(chunk: Part[], count: number, failure: unknown): Promise<void> {
    this.ctx.log.error(`shard ${this.id}: a chunk of ${count} events failed (${reasonOf(failure)}); applying it in halves to set aside what cannot be applied`);
    await this.applyRange(chunk, 0, count);
    await this.applyEvents([], this.recordEvents(chunk).unreadable, reachedBy(chunk));
  }

  private async applyRange(chunk: Part[], lo: number, hi: number): Promise<void> {
    if (lo >= hi) return;
    const events = this.recordEvents(chunk).events.slice(lo, hi);
    try {
      await this.applyEvents(events, [], null);
    } catch (error) {
      if (!isEventFailure(error)) throw error;
      if (hi - lo === 1) return this.setAside(events[0]!, error.failure);
      const mid = (lo + hi) >>> 1;
      await this.applyRange(chunk, lo, mid);
      await this.applyRange(chunk, mid, hi);
    }
  }

  private letterFor(e: ChunkEvent, error: unknown): DeadLetter {
    let content: string;
    try {
      content = JSON.stringify(e.event);
    } catch {
      content = e.record.toString('utf8');
    }
    return { kind: 'event', team: e.team, uuid: e.event.uuid, source: e.source, end: e.end, reason: reasonOf(error), at: new Date().toISOString(), content };
  }

  private async setAside(e: ChunkEvent, error: unknown): Promise<void> {
    const letter = this.letterFor(e, error);
    this.ctx.log.error(`shard ${this.id}: event ${e.event.uuid} of project ${e.team} cannot be applied and is set aside: ${letter.reason}`);
    await atomically(this.events.env, () => this.deadLetters.write(letter));
    this.deadLetters.committed([letter]);
    this.totals.deadLetteredEvents++;
  }

  /**
   * Applies events (persons first, then the events with, when `reached` is given, the log positions they cover, in
   * one transaction) and sets aside in that same transaction `unreadable` records and events whose properties
   * cannot be serialised. Throws, having committed nothing to the events environment, when something fails.
   */
  private async applyEvents(chunkEvents: readonly ChunkEvent[], unreadable: readonly DeadLetter[], reached: Record<string, number> | null): Promise<void> {
    this.budget.start();
    const byTeam = new Map<number, ChunkEvent[]>();
    for (const e of chunkEvents) {
      const list = byTeam.get(e.team);
      if (list) list.push(e);
      else byTeam.set(e.team, [e]);
    }
    let stored = 0;
    const scanned = new Map<number, ScanEvent[]>();
    const setAside: DeadLetter[] = [...unreadable];
    // Uuids of this attempt only: what a failed attempt saw was not stored, so it must not count as stored later.
    const seen = new Set<string>();
    let duplicates = 0;
    let dropped = 0;
    for (const [team, events] of byTeam) {
      const fresh: ChunkEvent[] = [];
      for (const e of events) {
        const uuid = e.event.uuid;
        const key = `${team}:${uuid}`;
        if (seen.has(key) || this.events.has(team, uuid) || this.deadLetters.has(team, uuid)) {
          duplicates++;
          continue;
        }
        seen.add(key);
        fresh.push(e);
      }
      if (fresh.length === 0) continue;
      let groupTypes = this.ctx.groupTypes(team);
      const newTypes = new Set<string>();
      for (const { event } of fresh) for (const name of groupTypeNamesOf(event)) if (groupTypes[name] === undefined) newTypes.add(name);
      if (newTypes.size > 0) groupTypes = await this.ctx.ensureGroupTypes(team, [...newTypes]);

      let outcomes: ReturnType<PersonProcessor['process']>[];
      // Person updates the size bound rejected in this team's transaction (counted once it committed).
      let rejected = () => 0;
      try {
        outcomes = await this.ctx.persons.write(() => this.timed(() => processing(() => {
          const processor = new PersonProcessor(this.ctx.persons, team, groupTypes, fresh.length, this.ctx.hotPersons);
          rejected = () => processor.sizeViolations;
          const out = fresh.map(({ event }) => {
            this.budget.check();
            if (this.ctx.faultInjection) applyFault(event);
            return processor.process(event);
          });
          processor.flush();
          if (this.ctx.exporting) this.keepSnapshots(fresh, out);
          return out;
        })));
      } catch (error) {
        // The cache took the rows this transaction wrote as committed: rolled back (or not committed), they are not.
        this.ctx.hotPersons.clear();
        throw error;
      }
      this.totals.personUpdatesRejected += rejected();
      const lastSeen = new Map<string, string>();
      const forScan: ScanEvent[] = [];
      scanned.set(team, forScan);
      fresh.forEach((ce, i) => {
        const outcome = outcomes[i];
        const e = ce.event;
        if (!outcome) {
          dropped++;
          return;
        }
        const ts = Date.parse(e.timestamp);
        stored++;
        forScan.push({
          uuid: e.uuid, ts, event: e.event, distinctId: e.distinct_id, personId: outcome.personId ?? 0, personUuid: outcome.personUuid,
          personCreatedAt: outcome.createdAt === null ? NaN : Date.parse(outcome.createdAt),
          properties: e.properties, personProperties: outcome.properties, elementsChain: e.elements_chain,
        });
        const prev = lastSeen.get(e.event);
        if (!prev || prev < e.timestamp) lastSeen.set(e.event, e.timestamp);
      });
      await this.ctx.recordEventNames(team, lastSeen);
    }
    if (stored === 0 && setAside.length === 0 && reached === null) return;
    // A duplicate part re-sent after a crash may be older than what was applied: positions only move forward.
    if (reached) for (const source of Object.keys(reached)) reached[source] = Math.max(reached[source]!, this.appliedFrom[source] ?? 0);
    const appliedFrom = reached ? { ...this.appliedFrom, ...reached } : null;
    await this.events.write(() => this.timed(() => processing(() => {
      for (const [team, events] of scanned) {
        this.events.add(team, events);
        this.budget.check(true);
      }
      for (const letter of setAside) this.deadLetters.write(letter);
      if (appliedFrom) this.events.state.put(APPLIED_FROM_KEY, appliedFrom);
    })));
    this.deadLetters.committed(setAside);
    this.totals.appliedEvents += stored;
    this.totals.duplicateEvents += duplicates;
    this.totals.droppedEvents += dropped;
    this.totals.deadLetteredEvents += setAside.length;
    for (const team of scanned.keys()) this.ctx.shared.projectChanged(team);
    if (reached) this.advanced(reached);
  }

  /**
   * With the ClickHouse export on: the person properties each event is applied with (what its column block keeps),
   * for the exporter of its log to send as the event's person_properties, and the person itself (its uuid and
   * created_at, also as the block keeps them), which the exporter then need not read. Inside the persons write
   * transaction.
   */
  private keepSnapshots(events: readonly ChunkEvent[], outcomes: readonly (PersonOutcome | null)[]): void {
    const writer = this.ctx.persons.eventSnapshots.writer();
    events.forEach((e, i) => {
      const outcome = outcomes[i];
      if (!outcome) return;
      if (outcome.personless) writer.add(e.source, e.end, e.event.uuid, null);
      else writer.add(e.source, e.end, e.event.uuid, outcome.properties, outcome.createdAt === null ? undefined : { uuid: outcome.personUuid, createdAt: outcome.createdAt });
    });
    writer.commit();
  }

  /**
   * Runs a transaction callback of the chunk being applied, noting the longest one for the chunk sizer and counting
   * its time against the attempt's budget.
   */
  private timed<T>(callback: () => T): T {
    const started = performance.now();
    this.budget.enter();
    try {
      return this.ownWork(callback);
    } finally {
      this.budget.leave();
      this.longestCallbackS = Math.max(this.longestCallbackS, (performance.now() - started) / 1000);
    }
  }

  /**
   * Runs the code of the records being applied (decoding them, processing their persons, building their rows).
   * For a suspect applied alone, the crash marker says `working` meanwhile and `waiting` again after: only a death
   * in its own code counts against it (src/worker/ingest/apply-marker.ts).
   */
  private ownWork<T>(work: () => T): T {
    const alone = this.alone;
    if (alone === null) return work();
    this.marker.mark(alone.working);
    try {
      return work();
    } finally {
      this.marker.mark(alone.waiting);
    }
  }

  /** After the commit of `reached`: sources may forget those records once both environments have flushed them. */
  private advanced(reached: Record<string, number>): void {
    Object.assign(this.appliedFrom, reached);
    void Promise.all([this.ctx.persons.env.flushed, this.events.env.flushed])
      .then(() => {
        for (const [source, position] of Object.entries(reached)) this.ctx.shared.publishAppliedFrom(this.id, Number(source), position);
        if (reached[this.id] !== undefined) void this.source.advance();
      })
      .catch((error: unknown) => this.ctx.log.error(`shard ${this.id}: waiting for a flush failed: ${error}`));
  }
}

/**
 * The project of a log record from its header line alone (src/domain/ingest/log-record.ts), without normalising its
 * events (a record set aside may be one whose processing kills the process); null when it cannot be read.
 */
function teamOfRecord(record: Buffer): number | null {
  const newline = record.indexOf(0x0a);
  try {
    const header = JSON.parse(record.toString('utf8', 0, newline < 0 ? Math.min(record.length, 4096) : newline)) as { t?: unknown };
    return typeof header.t === 'number' ? header.t : null;
  } catch {
    return null;
  }
}

/**
 * Converts a version 1 events environment (a row per event, and blocks derived from the rows without the uuid
 * column) to blocks only: the blocks are built again from the rows, which are then dropped. A new environment is
 * marked current. Person properties at each event were not kept in the rows: the converted blocks carry the
 * persons' current ones.
 */
async function convertLegacyLayout(id: number, events: EventStore, ctx: ApplyContext): Promise<void> {
  const version = events.columns.version;
  if (version === SCAN_LAYOUT_VERSION) {
    // Converted, and stopped before the rows were dropped.
    if (events.hasLegacyRows()) await events.dropLegacyRows();
    return;
  }
  if (!events.hasLegacyRows()) {
    if (version !== 0) throw new Error(`shard ${id}: the events environment has scan layout version ${version} and no rows to convert it from`);
    await transact(events.env, () => events.columns.markCurrent());
    return;
  }
  const started = performance.now();
  const persons = new Map<string, { properties: Record<string, unknown>; createdAt: number } | null>();
  const count = await events.columns.rebuild((emit) => {
    for (const e of events.legacyEvents()) {
      let person: { properties: Record<string, unknown>; createdAt: number } | null = null;
      if (e.personId !== null) {
        const key = `${e.team}:${e.personId}`;
        person = persons.get(key) ?? null;
        if (!persons.has(key)) {
          const row = ctx.persons.resolve(e.team, e.personId);
          person = row ? { properties: row.properties, createdAt: Date.parse(row.created_at) } : null;
          persons.set(key, person);
        }
      }
      emit(e.team, {
        uuid: e.uuid, ts: e.ts, event: e.event, distinctId: e.distinctId, personId: e.personId ?? 0, personUuid: e.personUuid,
        personCreatedAt: person?.createdAt ?? NaN, properties: e.properties, personProperties: person?.properties ?? {},
        elementsChain: e.elementsChain,
      });
    }
  });
  await events.dropLegacyRows();
  ctx.log.info(`shard ${id}: converted ${count} stored events to the column layout (version ${SCAN_LAYOUT_VERSION}) in ${Math.round(performance.now() - started)} ms`);
}
