/**
 * A shard actor: the ingest log and event store of one shard, and the apply loop between them.
 *
 * Durability contract (design.md §2): `append` resolves only after the request's events are fdatasync'ed in the
 * shard's ingest log — that is when the HTTP 200 may be sent. The apply loop then moves logged events into LMDB
 * (persons, events, definitions) in chunks and records a checkpoint in the events environment in the same
 * transaction as the events. On start, everything after the checkpoint is replayed. Replays are harmless: every
 * event uuid is recorded once for all shards (PersonStore `eventUuids`) in the same transaction as its person
 * changes, so a replayed or retried event is stored once and changes its person once.
 *
 * Placement: a worker logs a request in a shard it owns, whichever distinct ids it carries. Acknowledging never
 * waits for another thread (forwarding each event to the shard owning its distinct id cost a thread round trip
 * per request: wrk c8 latency 2.4 ms instead of 1.4 ms). Events of one distinct id may therefore sit in several
 * shards, which reads gather anyway.
 *
 * Order: person changes must follow the order in which a client's requests were acknowledged (an `$identify`
 * acknowledged before a `$set` is sent must be applied before it), also when the two went to different shards.
 * Each record therefore carries, for every other shard, how far that shard's log was durable when the record was
 * logged (src/protocol/shared-state.ts), and is applied only once those shards have applied that far. Requests
 * in flight at the same time have no defined order, as in PostHog. The rule cannot deadlock: a record only waits
 * for records acknowledged before it was logged, so following waits always leads to an older record, and some
 * shard's oldest unapplied record waits for nothing.
 */
import { join } from 'node:path';
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import type { GroupTypes } from '../../domain/model.js';
import { positionNumber, type SharedState } from '../../protocol/shared-state.js';
import { IngestLog, comparePositions, type LogPosition } from '../../stores/ingest-log/index.js';
import { EventStore, type StoredEvent } from '../../stores/events/event-store.js';
import type { PersonStore } from '../../stores/persons/person-store.js';
import { PersonProcessor, groupTypeNamesOf } from './person-processor.js';

export interface ApplyContext {
  persons: PersonStore;
  shared: SharedState;
  shardCount: number;
  groupTypes(team: number): GroupTypes;
  /** Assigns indexes to new group type names (metadata write + replication); resolves with the new mapping. */
  ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes>;
  /** Records that these event names were seen (event definitions, last_seen_at). */
  recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void>;
  log: { error(msg: string): void; info(msg: string): void };
}

/** A log record: `{"t": team, "d": [durable position of every shard when logged], "e": [events]}`. */
interface RecordJson {
  t: number;
  d: number[];
  e: NormalizedEvent[];
}

interface LogRecord {
  team: number;
  /** Present when the events were decoded in this thread; otherwise parsed from `text` when applied. */
  events: NormalizedEvent[] | null;
  text: string | null;
  /** Events in the record (known before it is parsed: chunks are sized by it). */
  count: number;
  /** How far every shard was durable when this record was logged (this shard's own entry is ignored). */
  deps: number[];
  end: LogPosition;
}

/**
 * Events applied per chunk: large enough to amortise transactions, small enough to hold the persons lock briefly.
 * Measured with `npm run bench:million`: 2,000 applied 14.4k events/s, 10,000 16.3k/s but doubled the ack p99
 * (the chunk's person updates run synchronously on the worker's event loop).
 */
const CHUNK_EVENTS = 2000;
/** Backlog (events logged but not applied) above which new appends wait: bounds memory under sustained overload. */
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
/** Longest sleep of an apply loop waiting for another shard to apply what its next record depends on. */
const DEPENDENCY_WAIT_MS = 50;
/** How long a closing shard keeps waiting for other shards before it leaves the rest to the next start. */
const CLOSE_WAIT_MS = 10_000;

export class Shard {
  private readonly queue: LogRecord[] = [];
  private backlog = 0;
  private running = false;
  private checkpoint: LogPosition | null;
  private barriers: { target: LogPosition; resolve: () => void }[] = [];
  private admission: { resolve: () => void }[] = [];
  private delayed: NodeJS.Timeout | null = null;
  /** Set by `close`: when an apply loop waiting for another shard gives up. */
  private closeBy: number | null = null;
  /** Totals since start, for stats and benchmarks. */
  readonly totals = { appendedEvents: 0, appliedEvents: 0, duplicateEvents: 0, droppedEvents: 0 };

  private constructor(
    readonly id: number,
    readonly events: EventStore,
    private readonly log: IngestLog,
    private readonly ctx: ApplyContext,
  ) {
    this.checkpoint = (events.state.get('checkpoint') as LogPosition | undefined) ?? null;
    // Until the replay has run, only the checkpoint is known to be applied (a replacement thread starts again
    // from there, so the position may move back).
    ctx.shared.publishApplied(id, this.checkpoint ? positionNumber(this.checkpoint) : 0, true);
    ctx.shared.publishDurable(id, positionNumber(log.endPosition));
  }

  /** Opens the shard's stores; call `recover` (for every shard of the data directory at once) before appending. */
  static async open(dataDir: string, id: number, ctx: ApplyContext): Promise<Shard> {
    const dir = join(dataDir, 'shards', String(id));
    const events = new EventStore(dir);
    const log = await IngestLog.open({ dir: join(dir, 'log') });
    return new Shard(id, events, log, ctx);
  }

  /**
   * Replays what was logged after the checkpoint. Records may wait for other shards' replays (causal order), so
   * all shards must recover concurrently, also those of other workers.
   */
  async recover(): Promise<void> {
    let replayed = 0;
    for await (const { payload, end } of this.log.replay(this.checkpoint)) {
      const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
      const { t, d, e } = JSON.parse(text) as RecordJson;
      this.queue.push({ team: t, events: e, text: null, count: e.length, deps: d ?? [], end });
      this.backlog += e.length;
      replayed += e.length;
      if (this.backlog >= CHUNK_EVENTS) await this.drain();
    }
    await this.drainAll();
    // Everything logged before the start is applied now.
    this.ctx.shared.publishApplied(this.id, positionNumber(this.log.endPosition));
    if (replayed > 0) this.ctx.log.info(`shard ${this.id}: replayed ${replayed} logged events`);
  }

  /** Logs a request's events durably; resolves once they are fdatasync'ed (the caller may then acknowledge). */
  async append(team: number, events: NormalizedEvent[]): Promise<void> {
    while (this.backlog > BACKLOG_HIGH) await new Promise<void>((resolve) => this.admission.push({ resolve }));
    const deps = this.dependencies();
    const text = `{"t":${team},"d":[${deps.join(',')}],"e":${JSON.stringify(events)}}`;
    const end = await this.log.append(Buffer.from(text, 'utf8'));
    // Published before the acknowledgement goes out: a request the client sends after it depends on this one.
    this.ctx.shared.publishDurable(this.id, positionNumber(end));
    this.queue.push({ team, events, text: null, count: events.length, deps, end });
    this.backlog += events.length;
    this.totals.appendedEvents += events.length;
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
    // Apply what can be applied; records still waiting for another shard after the bound stay in the log and are
    // replayed at the next start (a shutdown must end).
    this.closeBy = Date.now() + CLOSE_WAIT_MS;
    await this.drainAll();
    await this.log.close();
    await this.events.close();
  }

  /** How far every shard is durable now (this shard's own entry is not used). */
  private dependencies(): number[] {
    const deps: number[] = [];
    for (let s = 0; s < this.ctx.shardCount; s++) deps.push(s === this.id ? 0 : this.ctx.shared.durable(s));
    return deps;
  }

  /** Whether every record this one depends on has been applied by its shard. */
  private ready(r: LogRecord): boolean {
    const deps = r.deps;
    for (let s = 0; s < deps.length; s++) {
      if (s !== this.id && deps[s]! > this.ctx.shared.applied(s)) return false;
    }
    return true;
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
      // meanwhile join the next chunk), each chunk stopping before the first record that must still wait.
      while (this.queue.length > 0) {
        const generation = this.ctx.shared.applyGeneration();
        let n = 0;
        let take = 0;
        while (take < this.queue.length && (take === 0 || n < CHUNK_EVENTS) && this.ready(this.queue[take]!)) {
          n += this.queue[take]!.count;
          take++;
        }
        if (take === 0) {
          if (this.closeBy !== null && Date.now() > this.closeBy) break;
          await this.ctx.shared.waitForApply(generation, DEPENDENCY_WAIT_MS);
          continue;
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
        // With nothing left, everything durable is applied (also the end of a segment nothing was written to yet).
        const appliedTo = this.queue.length === 0 ? this.log.endPosition : this.checkpoint;
        this.ctx.shared.publishApplied(this.id, positionNumber(appliedTo));
        this.resolveWaiters();
      }
    } finally {
      this.running = false;
    }
    if (this.queue.length > 0 && this.closeBy === null) this.kick();
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
      const events = r.events ?? (JSON.parse(r.text!) as RecordJson).e;
      r.events = events;
      r.text = null;
      count += events.length;
      let list = byTeam.get(r.team);
      if (!list) byTeam.set(r.team, (list = []));
      for (const e of events) list.push(e);
    }
    const stored: StoredEvent[] = [];
    for (const [team, events] of byTeam) {
      let groupTypes = this.ctx.groupTypes(team);
      const newTypes = new Set<string>();
      for (const e of events) for (const name of groupTypeNamesOf(e)) if (groupTypes[name] === undefined) newTypes.add(name);
      if (newTypes.size > 0) groupTypes = await this.ctx.ensureGroupTypes(team, [...newTypes]);

      const fresh = await this.ctx.persons.write(() => this.processPersons(team, events, groupTypes, stored));
      const lastSeen = new Map<string, string>();
      for (const e of fresh) {
        const prev = lastSeen.get(e.event);
        if (!prev || prev < e.timestamp) lastSeen.set(e.event, e.timestamp);
      }
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
    // Log segments may go once both environments have flushed past the checkpoint (power-loss safety).
    void Promise.all([this.ctx.persons.env.flushed, this.events.env.flushed])
      .then(() => this.log.releaseUpTo(end))
      .catch((error: unknown) => this.ctx.log.error(`shard ${this.id}: releasing log segments failed: ${error}`));
  }

  /**
   * Inside one persons write transaction: records each event's uuid (an event seen before is skipped: a retry, or
   * a replay of what was already applied), processes persons, and adds the events to store to `stored`. Returns
   * the events processed for the first time.
   */
  private processPersons(team: number, events: NormalizedEvent[], groupTypes: GroupTypes, stored: StoredEvent[]): NormalizedEvent[] {
    const persons = this.ctx.persons;
    const processor = new PersonProcessor(persons, team, groupTypes, events.length);
    const fresh: NormalizedEvent[] = [];
    const inChunk = new Set<string>();
    for (const e of events) {
      const ts = Date.parse(e.timestamp);
      const seen = inChunk.has(e.uuid) ? null : persons.eventUuids.get([team, e.uuid]);
      if (inChunk.has(e.uuid) || seen !== undefined) {
        // A crash between the persons and the events transaction of an earlier apply leaves the uuid recorded
        // but the row missing: this shard then writes the row, with the person it was given then.
        if (seen && seen[0] === this.id && !this.events.exists(team, seen[1], e.uuid, seen[2], seen[3])) {
          processor.prepareProperties(e);
          stored.push(storedEvent(team, e, seen[1], seen[4], seen[5]));
        } else {
          this.totals.duplicateEvents++;
        }
        continue;
      }
      inChunk.add(e.uuid);
      const outcome = processor.process(e);
      if (!outcome) {
        this.totals.droppedEvents++;
        continue;
      }
      persons.eventUuids.put([team, e.uuid], [this.id, ts, e.event, e.distinct_id, outcome.personId, outcome.personUuid]);
      stored.push(storedEvent(team, e, ts, outcome.personId, outcome.personUuid));
      fresh.push(e);
    }
    processor.flush();
    return fresh;
  }
}

function storedEvent(team: number, e: NormalizedEvent, ts: number, personId: number | null, personUuid: string): StoredEvent {
  return {
    team, uuid: e.uuid, event: e.event, distinct_id: e.distinct_id, person_id: personId, person_uuid: personUuid,
    timestamp: e.timestamp, ts, properties_json: JSON.stringify(e.properties), elements_chain: e.elements_chain,
  };
}
