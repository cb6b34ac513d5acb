/**
 * The memory the front shares with every worker thread (one SharedArrayBuffer, handed over in `workerData`):
 *
 *  - `started`: becomes 1 once the data-directory lock is held, bootstrap ran and every shard recovered, so a thread
 *    Piscina starts later to replace one that died knows it may open its shards by itself (src/worker/entry.ts);
 *  - `memory over budget`: 1 while the process is over QUILL_MEMORY_MB (written by the front's sampler,
 *    src/front/memory-guard.ts; read by every ingestion request and by the workers' cache relief);
 *  - for every pair of shards (owner, source): how far into the source's ingest log the owner has applied, and
 *    flushed to disk, the events it owns (src/worker/ingest/shard.ts). A source may forget a log record once
 *    every owner of one of its events has applied it;
 *  - person write counters: a slot per (project, person id) hash, bumped after every committed write of a person
 *    row, so a worker's cache of persons knows when an entry is stale (src/worker/person-cache.ts);
 *  - person apply counters: the same slots, bumped *inside* each write transaction that writes a person row, before
 *    it commits. The apply loops read persons only inside write transactions (which LMDB runs one at a time), so a
 *    cached row whose counter has not moved is exactly the committed one (src/worker/ingest/hot-persons.ts);
 *  - a queue per shard of references to the log records holding its events (src/protocol/part-rings.ts);
 *  - project data versions: a slot per project hash, bumped after every apply commit that stored events of the
 *    project, so cached analysis results know when they are stale (src/worker/analytics/result-cache.ts);
 *  - per shard, the events its owner has queued and not applied, and how many requests wait for that backlog to
 *    shrink (the backlog bound, src/worker/ingest/ingest-service.ts);
 *  - per worker, its watchdog heartbeat: when its event loop last turned, and since when its oldest unfinished
 *    request has run (src/worker/watchdog.ts writes them, src/front/watchdog.ts reads them). A thread stuck in
 *    synchronous work cannot answer a message, but the front can still read how long it has not beaten;
 *  - project flag versions: a slot per project hash, bumped once a change to the project's flags, cohorts or group
 *    types is replicated to every worker (src/worker/replication.ts), so the front, while flag streams are open,
 *    learns of changes by reading a number (src/front/flag-streams.ts) and nothing on the flag path is touched.
 *
 * Positions travel as one number (positionNumber, src/stores/ingest-log/position.ts).
 */
import { PartRings, ringBytes } from './part-rings.js';

/** Upper bound of shards in a data directory (the shard count is the worker count at creation, at most 64). */
export const MAX_SHARDS = 64;

const STARTED = 0;
const MEMORY_OVER = 1;
/** The shard (plus one) applying a suspect record alone (src/worker/ingest/apply-marker.ts); 0: none. */
const SUSPECT_TURN = 2;
/** Apply chunks in flight in the process, outside a suspect's turn. */
const CHUNKS_APPLYING = 3;
/** Int32 words before the positions (16 bytes keeps the BigInt64 view aligned). */
const HEADER_BYTES = 16;

/** Person write counter slots (a power of two); persons sharing a slot only invalidate each other's cache entries. */
const PERSON_SLOTS = 1 << 16;

/** Project version slots (a power of two); projects sharing a slot only invalidate each other's cached results. */
const PROJECT_SLOTS = 1 << 12;

const PERSON_WRITES_AT = HEADER_BYTES + MAX_SHARDS * MAX_SHARDS * 8;
const PERSON_APPLY_WRITES_AT = PERSON_WRITES_AT + PERSON_SLOTS * 4;
const PROJECT_VERSIONS_AT = PERSON_APPLY_WRITES_AT + PERSON_SLOTS * 4;
/** Per shard: [queued events, waiting requests] (Int32). */
const BACKLOG_AT = PROJECT_VERSIONS_AT + PROJECT_SLOTS * 4;
const QUEUED = 0;
const WAITING = 1;
/** Per worker: [heartbeat, oldest unfinished request's start] (Float64, epoch ms; 0 = none). */
const WATCHDOG_AT = BACKLOG_AT + MAX_SHARDS * 2 * 4;
const HEARTBEAT = 0;
const OLDEST_REQUEST = 1;
/** Per project slot: flag definition changes (Int32). */
const FLAG_VERSIONS_AT = WATCHDOG_AT + MAX_SHARDS * 2 * 8;
/** Per worker: requests other than ingestion the front has posted and the worker has not started yet (Int32). */
const WAITING_AT = FLAG_VERSIONS_AT + PROJECT_SLOTS * 4;
const RINGS_AT = WAITING_AT + MAX_SHARDS * 4;

export function createSharedState(): SharedArrayBuffer {
  // Pages no shard uses are never touched, so the rings of absent shards cost address space only.
  return new SharedArrayBuffer(RINGS_AT + ringBytes(MAX_SHARDS));
}

export class SharedState {
  private readonly words: Int32Array;
  private readonly applied: BigInt64Array;
  private readonly personWrites: Int32Array;
  private readonly personApplyWrites: Int32Array;
  private readonly projectVersions: Int32Array;
  private readonly backlog: Int32Array;
  private readonly flagVersions: Int32Array;
  private readonly waiting: Int32Array;
  /** Written by one worker and read by the front: plain stores of doubles are enough for a liveness signal. */
  private readonly watchdog: Float64Array;
  /** Parts waiting for each shard's owner. */
  readonly rings: PartRings;

  constructor(buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.applied = new BigInt64Array(buffer, HEADER_BYTES, MAX_SHARDS * MAX_SHARDS);
    this.personWrites = new Int32Array(buffer, PERSON_WRITES_AT, PERSON_SLOTS);
    this.personApplyWrites = new Int32Array(buffer, PERSON_APPLY_WRITES_AT, PERSON_SLOTS);
    this.projectVersions = new Int32Array(buffer, PROJECT_VERSIONS_AT, PROJECT_SLOTS);
    this.backlog = new Int32Array(buffer, BACKLOG_AT, MAX_SHARDS * 2);
    this.watchdog = new Float64Array(buffer, WATCHDOG_AT, MAX_SHARDS * 2);
    this.flagVersions = new Int32Array(buffer, FLAG_VERSIONS_AT, PROJECT_SLOTS);
    this.waiting = new Int32Array(buffer, WAITING_AT, MAX_SHARDS);
    this.rings = new PartRings(buffer, RINGS_AT, MAX_SHARDS);
  }

  /**
   * A shard is about to apply a chunk: counted in flight, unless another shard holds a suspect's turn (then false,
   * and nothing counted: wait and ask again). Counted before the turn is read, so a shard that takes the turn and
   * then sees no chunk in flight knows that no chunk starts after it (Atomics are sequentially consistent).
   */
  beginApply(shard: number): boolean {
    Atomics.add(this.words, CHUNKS_APPLYING, 1);
    const turn = Atomics.load(this.words, SUSPECT_TURN);
    if (turn === 0 || turn === shard + 1) return true;
    Atomics.sub(this.words, CHUNKS_APPLYING, 1);
    return false;
  }

  endApply(): void {
    Atomics.sub(this.words, CHUNKS_APPLYING, 1);
  }

  /** Takes the suspects' turn for a shard: no other shard starts a chunk until `endSuspectTurn`. False: taken. */
  takeSuspectTurn(shard: number): boolean {
    return Atomics.compareExchange(this.words, SUSPECT_TURN, 0, shard + 1) === 0;
  }

  endSuspectTurn(shard: number): void {
    Atomics.compareExchange(this.words, SUSPECT_TURN, shard + 1, 0);
  }

  /** Chunks other shards have in flight (a suspect's turn waits until none is). */
  chunksApplying(): number {
    return Atomics.load(this.words, CHUNKS_APPLYING);
  }

  /**
   * Flag and API requests on their way to a worker: the front adds those of each frame it posts, the worker takes
   * them off as it starts them. Work that can wait (the next apply chunk, a slice of an analysis or of the export,
   * the next ingestion request) reads it and lets the thread's event loop deliver them first.
   */
  postInteractive(worker: number, requests: number): void {
    Atomics.add(this.waiting, worker, requests);
  }

  startedInteractive(worker: number, requests: number): void {
    Atomics.sub(this.waiting, worker, requests);
  }

  interactiveWaiting(worker: number): boolean {
    return Atomics.load(this.waiting, worker) > 0;
  }

  /** The worker's thread died: what was posted to it will never be started (its replacement starts from zero). */
  clearInteractive(worker: number): void {
    Atomics.store(this.waiting, worker, 0);
  }

  /** A worker's heartbeat: its event loop turned at `now`; its oldest unfinished request began at `oldestRequest` (0: none). */
  beat(worker: number, now: number, oldestRequest: number): void {
    this.watchdog[worker * 2 + HEARTBEAT] = now;
    this.watchdog[worker * 2 + OLDEST_REQUEST] = oldestRequest;
  }

  /** A worker's last heartbeat (0 before its first) and its oldest unfinished request's start (0: none). */
  heartbeatOf(worker: number): { beatAt: number; oldestRequestAt: number } {
    return { beatAt: this.watchdog[worker * 2 + HEARTBEAT]!, oldestRequestAt: this.watchdog[worker * 2 + OLDEST_REQUEST]! };
  }

  /** The write counter of a person's slot. */
  personVersion(team: number, personId: number): number {
    return Atomics.load(this.personWrites, personSlot(team, personId));
  }

  /** Called after a persons transaction committed, with the (team, id) pairs of the rows it wrote, flattened. */
  personsChanged(teamsAndIds: readonly number[]): void {
    for (let i = 0; i < teamsAndIds.length; i += 2) Atomics.add(this.personWrites, personSlot(teamsAndIds[i]!, teamsAndIds[i + 1]!), 1);
  }

  /** Changes whenever events of the project were applied (or its slot-mates'). */
  projectVersion(team: number): number {
    return Atomics.load(this.projectVersions, projectSlot(team));
  }

  projectChanged(team: number): void {
    Atomics.add(this.projectVersions, projectSlot(team), 1);
  }

  /** Changes whenever the project's flag definitions may have changed (or its slot-mates'). */
  flagsVersion(team: number): number {
    return Atomics.load(this.flagVersions, projectSlot(team));
  }

  /** Called once a change of the project's flags, cohorts or group types is visible on every worker. */
  flagsChanged(team: number): void {
    Atomics.add(this.flagVersions, projectSlot(team), 1);
  }

  /** The in-transaction write counter of a person's slot (see the module comment). */
  personApplyVersion(team: number, personId: number): number {
    return Atomics.load(this.personApplyWrites, personSlot(team, personId));
  }

  /** Called inside a write transaction of the persons environment, as it writes a person row. */
  personWriting(team: number, personId: number): void {
    Atomics.add(this.personApplyWrites, personSlot(team, personId), 1);
  }

  get started(): boolean {
    return Atomics.load(this.words, STARTED) === 1;
  }

  markStarted(): void {
    Atomics.store(this.words, STARTED, 1);
  }

  /** Whether the process is over its memory budget (always false without one). */
  get memoryOver(): boolean {
    return Atomics.load(this.words, MEMORY_OVER) === 1;
  }

  setMemoryOver(over: boolean): void {
    Atomics.store(this.words, MEMORY_OVER, over ? 1 : 0);
  }

  /** The owner of `shard` publishes how many events it has queued and not applied yet. */
  publishQueued(shard: number, events: number): void {
    Atomics.store(this.backlog, shard * 2 + QUEUED, events);
  }

  /** Events acknowledged for `shard` and not applied yet: queued by its owner, or still in its ring. */
  behind(shard: number): number {
    return Atomics.load(this.backlog, shard * 2 + QUEUED) + this.rings.events(shard);
  }

  /** Events acknowledged and not applied yet, over every shard. */
  totalBehind(): number {
    let n = 0;
    for (let shard = 0; shard < MAX_SHARDS; shard++) n += this.behind(shard);
    return n;
  }

  /** A request starts (+1) or stops (-1) waiting for `shard`'s backlog to shrink. */
  countWaiting(shard: number, delta: 1 | -1): void {
    Atomics.add(this.backlog, shard * 2 + WAITING, delta);
  }

  /** Requests waiting for `shard`'s backlog to shrink right now. */
  waitingFor(shard: number): number {
    return Atomics.load(this.backlog, shard * 2 + WAITING);
  }

  /** How far into `source`'s log `owner` has applied (and flushed) its events. */
  appliedFrom(owner: number, source: number): number {
    return Number(Atomics.load(this.applied, owner * MAX_SHARDS + source));
  }

  /** Positions only move forward. */
  publishAppliedFrom(owner: number, source: number, position: number): void {
    const i = owner * MAX_SHARDS + source;
    if (position > Number(Atomics.load(this.applied, i))) Atomics.store(this.applied, i, BigInt(position));
  }
}

function personSlot(team: number, personId: number): number {
  return (Math.imul(team, 0x9e3779b1) ^ Math.imul(personId, 0x85ebca6b)) & (PERSON_SLOTS - 1);
}

function projectSlot(team: number): number {
  return Math.imul(team, 0x9e3779b1) >>> 20;
}
