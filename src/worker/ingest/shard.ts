/**
 * A shard actor, in two roles:
 *
 *  - source: its ingest log (src/worker/ingest/source-log.ts), where the worker owning the shard logs every
 *    request it receives, whole. `append` resolves only after the record is fdatasync'ed (design.md §2).
 *  - owner: the events whose distinct id hashes to this shard (src/domain/shard-of.ts), whichever shard logged
 *    them, reach its queue as parts of log records, once those records are durable. Its apply loop moves them
 *    into LMDB — persons first, then the events with the per-source applied positions in the same transaction —
 *    and its event store keeps them.
 *
 * The worker that received a request acknowledges it only after every part has been queued by its owner (a
 * local call, or one message to the owning worker; no second fdatasync). That gives the order of a log
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
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import type { GroupTypes } from '../../domain/model.js';
import type { SharedState } from '../../protocol/shared-state.js';
import { IngestLog, type LogPosition } from '../../stores/ingest-log/index.js';
import { EventStore, type StoredEvent } from '../../stores/events/event-store.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { PersonProcessor, groupTypeNamesOf } from './person-processor.js';
import { SourceLog } from './source-log.js';

export interface ApplyContext {
  persons: PersonStore;
  shared: SharedState;
  groupTypes(team: number): GroupTypes;
  /** Assigns indexes to new group type names (metadata write + replication); resolves with the new mapping. */
  ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes>;
  /** Records that these event names were seen (event definitions, last_seen_at). */
  recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void>;
  log: { error(msg: string): void; info(msg: string): void };
}

/** The events of one log record that one shard owns. */
export interface Part {
  /** The shard whose log holds the record, and the record's end there (a position number). */
  source: number;
  end: number;
  team: number;
  events: NormalizedEvent[];
}

const APPLIED_FROM_KEY = 'applied_from';

/**
 * Events applied per chunk: large enough to amortise transactions, small enough to hold the persons lock briefly.
 * Measured with `npm run bench:million`: 2,000 applied 14.4k events/s, 10,000 16.3k/s but doubled the ack p99
 * (the chunk's person updates run synchronously on the worker's event loop).
 */
const CHUNK_EVENTS = 2000;
/** Backlog (events queued but not applied) above which new parts wait: bounds memory under sustained overload. */
const BACKLOG_HIGH = 200_000;
const BACKLOG_LOW = 100_000;
const RETRY_MS = 1000;
/**
 * How long a partial chunk may wait for more events before it is applied. Every apply commits two LMDB
 * transactions, each flushed to disk; under a steady trickle of single events, committing per trickle made those
 * flushes compete with the ingest log's fdatasync on the same disk and doubled the acknowledgement latency. A
 * waiting reader (the API's read-your-writes barrier) cuts the wait short. (Measured with wrk c8 on /capture/:
 * 2 ms and 20 ms gave the same rate; 100 ms was slower, its larger flushes delaying the log's fdatasync more.)
 */
const APPLY_DELAY_MS = 20;
/** How often a source looks whether other shards have applied its records (moving its checkpoint). */
const SOURCE_ADVANCE_MS = 250;

export class Shard {
  private readonly queue: Part[] = [];
  private backlog = 0;
  private running = false;
  /** Parts queued and applied since start: the read-your-writes barrier compares them. */
  private queuedParts = 0;
  private appliedParts = 0;
  private barriers: { target: number; resolve: () => void }[] = [];
  private admission: { resolve: () => void }[] = [];
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
  }

  static async open(dataDir: string, id: number, ctx: ApplyContext): Promise<Shard> {
    const dir = join(dataDir, 'shards', String(id));
    const events = new EventStore(dir);
    const log = await IngestLog.open({ dir: join(dir, 'log') });
    return new Shard(id, events, new SourceLog(id, log, events.env, events.state, ctx.shared, ctx.log.error), ctx);
  }

  /** Logs a request's events durably; resolves with the record's end once they are fdatasync'ed. */
  async log(team: number, events: NormalizedEvent[]): Promise<LogPosition> {
    const end = await this.source.append(Buffer.from(`{"t":${team},"e":${JSON.stringify(events)}}`, 'utf8'));
    this.totals.appendedEvents += events.length;
    return end;
  }

  /**
   * Takes a part of a durable record to apply; resolves once it is queued (waiting while the backlog is over its
   * bound). Parts of records already applied here (a replay after a crash) are skipped.
   */
  async enqueue(part: Part): Promise<void> {
    if (part.end <= (this.appliedFrom[part.source] ?? 0)) return;
    while (this.backlog > BACKLOG_HIGH) await new Promise<void>((resolve) => this.admission.push({ resolve }));
    this.queue.push(part);
    this.backlog += part.events.length;
    this.queuedParts++;
    this.kick();
  }

  /** Resolves once every part queued before the call has been applied (read-your-writes for the API). */
  applied(): Promise<void> {
    const target = this.queuedParts;
    if (this.appliedParts >= target) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.barriers.push({ target, resolve }));
    this.applyNow();
    return done;
  }

  stats() {
    return { shard: this.id, backlog: this.backlog, ...this.totals, unreleasedRecords: this.source.pending, log: this.source.logStats };
  }

  async close(): Promise<void> {
    clearInterval(this.advanceTimer);
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = null;
    await this.drainAll();
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
    if (!this.running) void this.drain();
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
      while (this.queue.length > 0) {
        let n = 0;
        let take = 0;
        while (take < this.queue.length && (take === 0 || n < CHUNK_EVENTS)) n += this.queue[take++]!.events.length;
        const chunk = this.queue.slice(0, take);
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
        this.resolveWaiters();
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
    if (this.backlog <= BACKLOG_LOW && this.admission.length > 0) {
      const waiting = this.admission;
      this.admission = [];
      for (const w of waiting) w.resolve();
    }
  }

  private async applyChunk(chunk: Part[]): Promise<void> {
    // Events per project, in queue order; how far each source's log is covered by this chunk.
    const byTeam = new Map<number, NormalizedEvent[]>();
    const reached: Record<string, number> = {};
    for (const part of chunk) {
      let list = byTeam.get(part.team);
      if (!list) byTeam.set(part.team, (list = []));
      for (const e of part.events) list.push(e);
      reached[part.source] = Math.max(reached[part.source] ?? 0, part.end);
    }
    const stored: StoredEvent[] = [];
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
        const processor = new PersonProcessor(this.ctx.persons, team, groupTypes, fresh.length);
        const out = fresh.map((e) => processor.process(e));
        processor.flush();
        return out;
      });
      const lastSeen = new Map<string, string>();
      fresh.forEach((e, i) => {
        const outcome = outcomes[i];
        if (!outcome) {
          this.totals.droppedEvents++;
          return;
        }
        stored.push({
          team, uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, person_id: outcome.personId,
          person_uuid: outcome.personUuid, timestamp: e.timestamp, ts: Date.parse(e.timestamp),
          properties_json: JSON.stringify(e.properties), elements_chain: e.elements_chain,
        });
        const prev = lastSeen.get(e.event);
        if (!prev || prev < e.timestamp) lastSeen.set(e.event, e.timestamp);
      });
      await this.ctx.recordEventNames(team, lastSeen);
    }
    const appliedFrom = { ...this.appliedFrom, ...reached };
    await this.events.env.transaction(() => {
      for (const e of stored) this.events.put(e);
      this.events.flushCounts();
      this.events.state.put(APPLIED_FROM_KEY, appliedFrom);
    });
    Object.assign(this.appliedFrom, reached);
    this.totals.appliedEvents += stored.length;
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
