/**
 * A shard actor: the ingest log and event store of one shard, and the apply loop between them.
 *
 * Durability contract (design.md §2): `append` resolves only after the request's events are fdatasync'ed in the
 * shard's ingest log — that is when the HTTP 200 may be sent. The apply loop then moves logged events into LMDB
 * (persons, events, definitions) in chunks and records a checkpoint in the events environment in the same
 * transaction as the events. On start, everything after the checkpoint is replayed. Replays are harmless: events
 * are keyed by uuid (a repeat is stored once and skips person processing) and the person operations of an event
 * are idempotent when re-applied in the same order.
 *
 * Ordering: all events of one distinct id land in one shard (hash of project and distinct id), are appended in
 * acknowledgement order and applied in log order, like a partitioned log.
 */
import { join } from 'node:path';
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import type { GroupTypes } from '../../domain/model.js';
import { IngestLog, comparePositions, type LogPosition } from '../../stores/ingest-log/index.js';
import { EventStore } from '../../stores/events/event-store.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { PersonProcessor, groupTypeNamesOf } from './person-processor.js';

export interface ApplyContext {
  persons: PersonStore;
  groupTypes(team: number): GroupTypes;
  /** Assigns indexes to new group type names (metadata write + replication); resolves with the new mapping. */
  ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes>;
  /** Records that these event names were seen (event definitions, last_seen_at). */
  recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void>;
  log: { error(msg: string): void; info(msg: string): void };
}

interface LogRecord {
  team: number;
  /** Present when the events were decoded in this thread; otherwise parsed from `text` when applied. */
  events: NormalizedEvent[] | null;
  text: string | null;
  /** Events in the record (known before it is parsed: chunks are sized by it). */
  count: number;
  end: LogPosition;
}

/** Events applied per chunk: large enough to amortise transactions, small enough to hold the persons lock briefly. */
const CHUNK_EVENTS = 2000;
/** Backlog (events logged but not applied) above which new appends wait: bounds memory under sustained overload. */
const BACKLOG_HIGH = 200_000;
const BACKLOG_LOW = 100_000;
const RETRY_MS = 1000;
/**
 * How long a partial chunk may wait for more events before it is applied. Every apply commits two LMDB
 * transactions, each flushed to disk; under a steady trickle of single events, committing per trickle made those
 * flushes compete with the ingest log's fdatasync on the same disk and doubled the acknowledgement latency. A
 * waiting reader (the API's read-your-writes barrier) cuts the wait short.
 */
const APPLY_DELAY_MS = 20;

export class Shard {
  private readonly queue: LogRecord[] = [];
  private backlog = 0;
  private running = false;
  private checkpoint: LogPosition | null;
  private barriers: { target: LogPosition; resolve: () => void }[] = [];
  private admission: { resolve: () => void }[] = [];
  private readonly seenUuids = new Set<string>();
  private delayed: NodeJS.Timeout | null = null;
  /** Totals since start, for stats and benchmarks. */
  readonly totals = { appendedEvents: 0, appliedEvents: 0, duplicateEvents: 0, droppedEvents: 0 };

  private constructor(
    readonly id: number,
    readonly events: EventStore,
    private readonly log: IngestLog,
    private readonly ctx: ApplyContext,
  ) {
    this.checkpoint = (events.state.get('checkpoint') as LogPosition | undefined) ?? null;
  }

  static async open(dataDir: string, id: number, ctx: ApplyContext): Promise<Shard> {
    const dir = join(dataDir, 'shards', String(id));
    const events = new EventStore(dir);
    const log = await IngestLog.open({ dir: join(dir, 'log') });
    const shard = new Shard(id, events, log, ctx);
    await shard.recover();
    return shard;
  }

  /** Replays what was logged after the checkpoint, applying as it reads (startup; before any append). */
  private async recover(): Promise<void> {
    let replayed = 0;
    for await (const { payload, end } of this.log.replay(this.checkpoint)) {
      const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
      const { t, e } = JSON.parse(text) as { t: number; e: NormalizedEvent[] };
      this.queue.push({ team: t, events: e, text: null, count: e.length, end });
      this.backlog += e.length;
      replayed += e.length;
      if (this.backlog >= CHUNK_EVENTS) await this.drain();
    }
    await this.drainAll();
    if (replayed > 0) this.ctx.log.info(`shard ${this.id}: replayed ${replayed} logged events`);
  }

  /**
   * Logs events durably. `text` is the log record (`{"t":team,"e":[...]}`); `events` are the same events as
   * objects when the caller has them (saves a parse in the apply loop).
   */
  async append(team: number, text: string, events: NormalizedEvent[] | null, count: number): Promise<void> {
    while (this.backlog > BACKLOG_HIGH) await new Promise<void>((resolve) => this.admission.push({ resolve }));
    const end = await this.log.append(Buffer.from(text, 'utf8'));
    this.queue.push({ team, events, text: events ? null : text, count, end });
    this.backlog += count;
    this.totals.appendedEvents += count;
    this.kick();
  }

  /** Resolves once everything appended before the call has been applied (read-your-writes for the API). */
  applied(): Promise<void> {
    const target = this.log.endPosition;
    if (this.checkpoint && comparePositions(this.checkpoint, target) >= 0) return Promise.resolve();
    if (!this.checkpoint && this.queue.length === 0 && !this.running) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.barriers.push({ target, resolve }));
    this.applyNow();
    return done;
  }

  stats() {
    return { shard: this.id, backlog: this.backlog, ...this.totals, log: this.log.stats() };
  }

  async close(): Promise<void> {
    if (this.delayed) clearTimeout(this.delayed);
    this.delayed = null;
    await this.drainAll();
    await this.log.close();
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

  /** Applies everything queued now, without the delay (start-up replay, close). */
  private async drainAll(): Promise<void> {
    while (this.running) await new Promise((r) => setTimeout(r, 5));
    await this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // kick() decided when to start; from here everything queued is applied, chunk by chunk (events that arrive
      // meanwhile join the next chunk).
      while (this.queue.length > 0) {
        let n = 0;
        let take = 0;
        while (take < this.queue.length && (take === 0 || n < CHUNK_EVENTS)) {
          const r = this.queue[take]!;
          n += r.count;
          take++;
        }
        const chunk = this.queue.slice(0, take);
        try {
          await this.applyChunk(chunk);
        } catch (error) {
          // The events are safe in the log; retry later rather than drop anything.
          this.ctx.log.error(`shard ${this.id}: apply failed, retrying in ${RETRY_MS} ms: ${(error as Error)?.stack ?? error}`);
          await new Promise((r) => setTimeout(r, RETRY_MS));
          continue;
        }
        this.queue.splice(0, take);
        this.checkpoint = chunk[chunk.length - 1]!.end;
        this.resolveWaiters();
      }
    } finally {
      this.running = false;
    }
    if (this.queue.length > 0) this.kick();
  }

  private resolveWaiters(): void {
    const cp = this.checkpoint!;
    if (this.barriers.length > 0) {
      const still: typeof this.barriers = [];
      for (const b of this.barriers) (comparePositions(cp, b.target) >= 0 ? b.resolve() : still.push(b));
      this.barriers = still;
    }
    if (this.backlog <= BACKLOG_LOW && this.admission.length > 0) {
      const waiting = this.admission;
      this.admission = [];
      for (const w of waiting) w.resolve();
    }
  }

  private async applyChunk(chunk: LogRecord[]): Promise<void> {
    // Events per project, in log order.
    const byTeam = new Map<number, NormalizedEvent[]>();
    let count = 0;
    for (const r of chunk) {
      const events = r.events ?? (JSON.parse(r.text!) as { e: NormalizedEvent[] }).e;
      r.events = events;
      r.text = null;
      count += events.length;
      let list = byTeam.get(r.team);
      if (!list) byTeam.set(r.team, (list = []));
      for (const e of events) list.push(e);
    }
    const stored: Parameters<EventStore['put']>[0][] = [];
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
    const end = chunk[chunk.length - 1]!.end;
    await this.events.env.transaction(() => {
      for (const e of stored) this.events.put(e);
      this.events.flushCounts();
      this.events.state.put('checkpoint', end);
    });
    this.totals.appliedEvents += stored.length;
    this.backlog -= count;
    // The uuid set only has to cover events not yet committed; after the commit the index answers.
    this.seenUuids.clear();
    // Log segments may go once both environments have flushed past the checkpoint (power-loss safety).
    void Promise.all([this.ctx.persons.env.flushed, this.events.env.flushed])
      .then(() => this.log.releaseUpTo(end))
      .catch((error: unknown) => this.ctx.log.error(`shard ${this.id}: releasing log segments failed: ${error}`));
  }
}
