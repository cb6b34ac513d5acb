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
 * different logs reach an owner in no particular order between logs.
 */
import { join } from 'node:path';
import { decodeLogRecord, type NormalizedEvent } from '../../domain/ingest/index.js';
import type { GroupTypes } from '../../domain/model.js';
import type { SharedState } from '../../protocol/shared-state.js';
import { shardOf } from '../../domain/shard-of.js';
import { IngestLog, LogRecordReader, type LogIo, type LogPosition } from '../../stores/ingest-log/index.js';
import { EventStore, type StoredEvent } from '../../stores/events/event-store.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { PersonProcessor, groupTypeNamesOf } from './person-processor.js';
import { SourceLog } from './source-log.js';
import type { ApplyPacer } from './apply-pacer.js';
import { BACKLOG_RESUME } from './part-publisher.js';
import type { RingPart } from '../../protocol/part-rings.js';
import type { ColumnCache } from '../../stores/scan/column-cache.js';
import type { HotPersons } from './hot-persons.js';
import type { ScanEvent } from '../../stores/scan/block-builder.js';

export interface ApplyContext {
  persons: PersonStore;
  shared: SharedState;
  groupTypes(team: number): GroupTypes;
  /** Assigns indexes to new group type names (metadata write + replication); resolves with the new mapping. */
  ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes>;
  /** Records that these event names were seen (event definitions, last_seen_at). */
  recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void>;
  log: { error(msg: string): void; info(msg: string): void };
  /** Shards in the data directory (fixed), for telling which events of a record are this shard's. */
  shardCount: number;
  /** The ingest log directory of a shard. */
  logDir(shard: number): string;
  pacer: ApplyPacer;
  /** This thread's cache of decoded scan-layout columns. */
  columnCache: ColumnCache;
  /** This thread's recently seen persons, for the apply's person processing. */
  hotPersons: HotPersons;
  /** Rebuild the scan layout from the rows at start-up even if it is current (QUILL_REBUILD_SCAN_LAYOUT). */
  rebuildScanLayout: boolean;
  /**
   * Events queued and not applied above which this shard stops taking parts from its ring, and requests wait
   * before publishing more (config backlogHigh; src/worker/ingest/ingest-service.ts).
   */
  backlogHigh: number;
  /** Size of an ingest log segment file (config logSegmentMb). */
  segmentBytes: number;
  /** The log's file operations when a test traces them (src/worker/ingest/durability-trace.ts); else the real ones. */
  logIo?: LogIo;
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

const APPLIED_FROM_KEY = 'applied_from';

function shardDir(dataDir: string, shard: number): string {
  return join(dataDir, 'shards', String(shard));
}

/** Where a shard's ingest log lives (owners read records there by position). */
export function shardLogDir(dataDir: string, shard: number): string {
  return join(shardDir(dataDir, shard), 'log');
}

/**
 * Events applied per chunk: large enough to amortise transactions, small enough to hold the persons lock briefly.
 * Measured with `npm run bench:million`: 2,000 applied 14.4k events/s, 10,000 16.3k/s but doubled the ack p99
 * (the chunk's person updates run synchronously on the worker's event loop). While requests are arriving, chunks
 * are smaller: each blocks this worker's requests for its whole length (~50 µs per event). Measured with wrk c8 on
 * /capture/: 250 gave a p99 of 15-18 ms, 60 gave 9-12 ms, at the same rate; 100 keeps most of that gain with
 * fewer commits.
 */
const CHUNK_EVENTS = 2000;
const CHUNK_EVENTS_BUSY = 100;
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

export class Shard {
  private readonly queue: QueuedPart[] = [];
  private readonly reader = new LogRecordReader();
  /** A pause between chunks (ApplyPacer), cut short by a read-your-writes wait. */
  private pausing: { timer: NodeJS.Timeout; resume: () => void } | null = null;
  private closing = false;
  private ringPoll: NodeJS.Timeout | null = null;
  private lastPartAt = -Infinity;
  private backlog = 0;
  private running = false;
  /** Parts queued and applied since start: the read-your-writes barrier compares them. */
  private queuedParts = 0;
  private appliedParts = 0;
  private barriers: { target: number; resolve: () => void }[] = [];
  private admission: { resolve: () => void }[] = [];
  /** Fault injection (POST /_fault/pause-apply): the apply loop waits here until resumed. */
  private paused: { until: Promise<void>; resume: () => void } | null = null;
  private delayed: NodeJS.Timeout | null = null;
  private readonly seenUuids = new Set<string>();
  /** Per source shard, how far its log has been applied here (stored with the events). */
  private readonly appliedFrom: Record<string, number>;
  private readonly advanceTimer: NodeJS.Timeout;
  /** Totals since start, for stats and benchmarks. */
  readonly totals = { appendedEvents: 0, appliedEvents: 0, duplicateEvents: 0, droppedEvents: 0 };

  private constructor(
    readonly id: number,
    readonly events: EventStore,
    readonly source: SourceLog,
    private readonly ctx: ApplyContext,
  ) {
    this.appliedFrom = { ...((events.state.get(APPLIED_FROM_KEY) as Record<string, number> | undefined) ?? {}) };
    for (const [source, position] of Object.entries(this.appliedFrom)) ctx.shared.publishAppliedFrom(id, Number(source), position);
    this.advanceTimer = setInterval(() => {
      if (this.source.pending > 0) void this.source.advance();
    }, SOURCE_ADVANCE_MS);
    this.advanceTimer.unref();
    ctx.shared.publishQueued(id, 0);
    this.pollRing();
  }

  static async open(dataDir: string, id: number, ctx: ApplyContext): Promise<Shard> {
    const events = new EventStore(shardDir(dataDir, id), ctx.columnCache, id);
    if (ctx.rebuildScanLayout) await events.columns.forgetLayout();
    if (events.columns.needsRebuild) await rebuildScanLayout(id, events, ctx);
    // fsync: every acknowledgement waits for its record's fdatasync (test/e2e/ingestion-fsync.test.ts checks it).
    const log = await IngestLog.open({ dir: shardLogDir(dataDir, id), fsync: true, segmentBytes: ctx.segmentBytes, ...(ctx.logIo ? { io: ctx.logIo } : {}) });
    return new Shard(id, events, new SourceLog(id, log, events.env, events.state, ctx.shared, ctx.log.error), ctx);
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
    this.ctx.shared.publishQueued(this.id, this.backlog);
    this.queuedParts++;
  }

  /** Moves what other threads published in this shard's ring into the queue, while the backlog is under its bound. */
  private takeFromRing(): number {
    let taken = 0;
    while (this.backlog <= this.ctx.backlogHigh) {
      const parts = this.ctx.shared.rings.take(this.id, 1024);
      if (parts.length === 0) break;
      for (const part of parts) this.accept(part);
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

  /** Resolves once every part queued before the call has been applied (read-your-writes for the API). */
  applied(): Promise<void> {
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
      shard: this.id, backlog: shared.behind(this.id), lagMs, waitingRequests: shared.waitingFor(this.id), ...this.totals,
      unreleasedRecords: this.source.pending, log: this.source.logStats, scan: this.events.columns.stats(),
    };
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

  async close(): Promise<void> {
    clearInterval(this.advanceTimer);
    this.closing = true;
    this.pauseApply(false);
    if (this.ringPoll) clearTimeout(this.ringPoll);
    this.takeFromRing();
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = null;
    this.endPause();
    await this.drainAll();
    this.reader.close();
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
      while (this.takeFromRing() > 0 || this.queue.length > 0) {
        if (this.paused) {
          await this.paused.until;
          continue;
        }
        const pacer = this.ctx.pacer;
        const limit = pacer.busy ? CHUNK_EVENTS_BUSY : CHUNK_EVENTS;
        let n = 0;
        let take = 0;
        while (take < this.queue.length && (take === 0 || n < limit)) n += this.queue[take++]!.events;
        const chunk = this.queue.slice(0, take);
        const started = performance.now();
        try {
          await this.applyChunk(chunk);
        } catch (error) {
          // The events are safe in their logs; retry later rather than drop anything.
          this.ctx.log.error(`shard ${this.id}: apply failed, retrying in ${RETRY_MS} ms: ${(error as Error)?.stack ?? error}`);
          await new Promise((r) => setTimeout(r, RETRY_MS));
          continue;
        }
        this.queue.splice(0, take);
        this.appliedParts += take;
        this.backlog -= n;
        this.ctx.shared.publishQueued(this.id, this.backlog);
        this.resolveWaiters();
        if (this.queue.length > 0 && this.barriers.length === 0 && !this.closing) {
          const now = performance.now();
          const wait = pacer.pauseAfter(now - started, now - this.queue[0]!.queuedAt);
          if (wait > 0) await this.pause(wait);
        }
      }
    } finally {
      this.running = false;
    }
    if (this.queue.length > 0) this.kick();
  }

  private resolveWaiters(): void {
    if (this.barriers.length > 0) {
      const still: typeof this.barriers = [];
      for (const b of this.barriers) (this.appliedParts >= b.target ? b.resolve() : still.push(b));
      this.barriers = still;
    }
    if (this.backlog <= this.ctx.backlogHigh * BACKLOG_RESUME && this.admission.length > 0) {
      const waiting = this.admission;
      this.admission = [];
      for (const w of waiting) w.resolve();
    }
  }

  /** The events of the chunk's records that this shard owns, per project, in queue order. */
  private recordEvents(chunk: readonly Part[]): Map<number, NormalizedEvent[]> {
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
    const byTeam = new Map<number, NormalizedEvent[]>();
    const shards = this.ctx.shardCount;
    const mine = shards === 1 ? undefined : (team: number, distinctId: string) => shardOf(team, distinctId, shards) === this.id;
    for (const payload of payloads) {
      const { team, events } = decodeLogRecord(payload, mine);
      const list = byTeam.get(team);
      if (list) list.push(...events);
      else byTeam.set(team, events);
    }
    return byTeam;
  }

  private async applyChunk(chunk: Part[]): Promise<void> {
    const byTeam = this.recordEvents(chunk);
    // How far each source's log is covered by this chunk.
    const reached: Record<string, number> = {};
    for (const part of chunk) reached[part.source] = Math.max(reached[part.source] ?? 0, part.end);
    const stored: StoredEvent[] = [];
    const scanned = new Map<number, ScanEvent[]>();
    for (const [team, events] of byTeam) {
      const fresh: NormalizedEvent[] = [];
      for (const e of events) {
        const key = `${team}:${e.uuid}`;
        if (this.seenUuids.has(key) || this.events.has(team, e.uuid)) {
          this.totals.duplicateEvents++;
          continue;
        }
        this.seenUuids.add(key);
        fresh.push(e);
      }
      if (fresh.length === 0) continue;
      let groupTypes = this.ctx.groupTypes(team);
      const newTypes = new Set<string>();
      for (const e of fresh) for (const name of groupTypeNamesOf(e)) if (groupTypes[name] === undefined) newTypes.add(name);
      if (newTypes.size > 0) groupTypes = await this.ctx.ensureGroupTypes(team, [...newTypes]);

      const outcomes = await this.ctx.persons.write(() => {
        const processor = new PersonProcessor(this.ctx.persons, team, groupTypes, fresh.length, this.ctx.hotPersons);
        const out = fresh.map((e) => processor.process(e));
        processor.flush();
        return out;
      });
      const lastSeen = new Map<string, string>();
      const forScan: ScanEvent[] = [];
      scanned.set(team, forScan);
      fresh.forEach((e, i) => {
        const outcome = outcomes[i];
        if (!outcome) {
          this.totals.droppedEvents++;
          return;
        }
        const ts = Date.parse(e.timestamp);
        stored.push({
          team, uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, person_id: outcome.personId,
          person_uuid: outcome.personUuid, timestamp: e.timestamp, ts,
          properties_json: JSON.stringify(e.properties), elements_chain: e.elements_chain,
        });
        forScan.push({
          ts, event: e.event, distinctId: e.distinct_id, personId: outcome.personId ?? 0,
          personCreatedAt: outcome.createdAt === null ? NaN : Date.parse(outcome.createdAt),
          properties: e.properties, personProperties: outcome.properties, elementsChain: e.elements_chain,
        });
        const prev = lastSeen.get(e.event);
        if (!prev || prev < e.timestamp) lastSeen.set(e.event, e.timestamp);
      });
      await this.ctx.recordEventNames(team, lastSeen);
    }
    const appliedFrom = { ...this.appliedFrom, ...reached };
    try {
      await this.events.env.transaction(() => {
        for (const e of stored) this.events.put(e);
        this.events.flushCounts();
        for (const [team, events] of scanned) this.events.columns.append(team, events);
        this.events.state.put(APPLIED_FROM_KEY, appliedFrom);
      });
    } catch (error) {
      // The open scan blocks in memory took events that were not stored.
      this.events.columns.reloadOpen();
      throw error;
    }
    Object.assign(this.appliedFrom, reached);
    this.totals.appliedEvents += stored.length;
    for (const team of scanned.keys()) this.ctx.shared.projectChanged(team);
    // The uuid set only has to cover events not yet committed; after the commit the index answers.
    this.seenUuids.clear();
    // Sources may forget these records once both environments have flushed them (power-loss safety).
    void Promise.all([this.ctx.persons.env.flushed, this.events.env.flushed])
      .then(() => {
        for (const [source, position] of Object.entries(reached)) this.ctx.shared.publishAppliedFrom(this.id, Number(source), position);
        if (reached[this.id] !== undefined) void this.source.advance();
      })
      .catch((error: unknown) => this.ctx.log.error(`shard ${this.id}: waiting for a flush failed: ${error}`));
  }
}

/**
 * Builds the scan layout of a shard from its stored rows (a data directory from before the layout existed, or of an
 * older layout version). Person properties are the persons' current ones: what they were at each event was not kept.
 */
async function rebuildScanLayout(id: number, events: EventStore, ctx: ApplyContext): Promise<void> {
  const started = performance.now();
  const persons = new Map<string, { properties: Record<string, unknown>; createdAt: number } | null>();
  const count = await events.columns.rebuild((emit) => {
    for (const e of events.all()) {
      let person: { properties: Record<string, unknown>; createdAt: number } | null = null;
      if (e.person_id !== null) {
        const key = `${e.team}:${e.person_id}`;
        person = persons.get(key) ?? null;
        if (!persons.has(key)) {
          const row = ctx.persons.resolve(e.team, e.person_id);
          person = row ? { properties: row.properties, createdAt: Date.parse(row.created_at) } : null;
          persons.set(key, person);
        }
      }
      emit(e.team, {
        ts: e.ts, event: e.event, distinctId: e.distinct_id, personId: e.person_id ?? 0,
        personCreatedAt: person?.createdAt ?? NaN, properties: JSON.parse(e.properties_json) as Record<string, unknown>,
        personProperties: person?.properties ?? {}, elementsChain: e.elements_chain,
      });
    }
  });
  if (count > 0) ctx.log.info(`shard ${id}: built the scan layout of ${count} stored events in ${Math.round(performance.now() - started)} ms`);
}
