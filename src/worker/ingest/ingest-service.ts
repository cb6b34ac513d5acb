/**
 * Ingestion inside a worker: logging each request in a shard this worker owns, then handing its events to the
 * shards owning their distinct ids (src/worker/ingest/shard.ts); opening and recovering the shards; and what the
 * apply loop needs from the metadata environment (group types, event definitions).
 */
import { randomUUID } from 'node:crypto';
import { decodeLogRecord, type NormalizedEvent } from '../../domain/ingest/index.js';
import { installEnrichment } from './event-enricher.js';
import { Errors } from '../../protocol/errors.js';
import { MEMORY_RETRY_AFTER_S } from '../../domain/memory-budget.js';
import type { EventDefinition, GroupTypes } from '../../domain/model.js';
import { ownerOf, shardOf } from '../../domain/shard-of.js';
import { positionNumber, type LogPosition } from '../../stores/ingest-log/index.js';
import { transact } from '../../stores/lmdb-env.js';
import { PersonStore } from '../../stores/persons/person-store.js';
import { replicate } from '../replication.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { PartPublisher, type OwnedPart } from './part-publisher.js';
import { Shard, type ApplyContext, type Part } from './shard.js';
import { shardLogDir } from '../../stores/data-dir/paths.js';
import { HotPersons } from './hot-persons.js';
import { loopDelaySinceLastRead } from '../loop-delay.js';

/** Drop reasons worth a sample: the shape bounds (src/domain/ingest/event-shape.ts), not a missing name or id. */
const SAMPLED_REASONS: ReadonlySet<string> = new Set(['too_deep', 'message_size_too_large', 'too_many_properties', 'array_too_long', 'group_key_too_long']);
const SAMPLE_EVERY_MS = 60_000;
const SAMPLE_BYTES = 16 * 1024;

/** PostHog never creates a definition for its internal metrics event. */
const NO_DEFINITION = new Set(['$$plugin_metrics']);
const MAX_GROUP_TYPES = 5;
const HOUR_MS = 3_600_000;
/** A peer re-sends its whole unreleased log, part by part: minutes when millions of events wait. */
const RESEND_TIMEOUT_MS = 30 * 60_000;
const RESEND_BATCH_PARTS = 2_000;

export class IngestService {
  readonly shards = new Map<number, Shard>();
  shardCount = 1;
  private readonly lastSeenWritten = new Map<string, number>();
  /**
   * Events of the capture requests this worker received that were not stored, by reason since start
   * (src/domain/ingest/accept-events.ts), whether the request was answered 200 or refused.
   */
  readonly dropped = new Map<string, number>();
  /** This worker's shards, taken in turn by successive requests. */
  private own: Shard[] = [];
  private turn = 0;
  /** Publishes the parts of logged records to their owners, in log order (src/worker/ingest/part-publisher.ts). */
  private readonly publisher: PartPublisher;

  /** Persons the apply loops of this thread saw recently (src/worker/ingest/hot-persons.ts). */
  readonly hotPersons: HotPersons;

  constructor(private readonly rt: WorkerRuntime, readonly persons: PersonStore) {
    this.publisher = new PartPublisher(rt.shared, rt.config.backlogHigh);
    this.hotPersons = new HotPersons(rt.shared, rt.config.hotPersonsMb * 1024 * 1024);
  }

  /** Opens the shards this worker owns; from then on other workers may queue parts here (`recover` next). */
  async openShards(shardCount: number): Promise<void> {
    this.shardCount = shardCount;
    installEnrichment(this.rt.config);
    const ctx = this.applyContext();
    for (let s = 0; s < shardCount; s++) {
      if (ownerOf(s, this.rt.workerCount) !== this.rt.index || this.shards.has(s)) continue;
      this.shards.set(s, await Shard.open(this.rt.config.dataDir, s, ctx));
    }
    this.own = [...this.shards.values()];
  }

  /**
   * Replays what this worker's logs hold after their checkpoints, routing every record again (owners skip what
   * they had applied). Every worker recovers at the same time: replayed parts go to other workers' shards too.
   * Resolves once every record is queued with its owners, not once they are applied.
   */
  async recoverShards(): Promise<void> {
    await Promise.all(this.own.map(async (shard) => {
      let replayed = 0;
      for await (const { payload, end } of shard.source.replay()) {
        const { team, events } = decodeLogRecord(payload);
        await this.route(shard, end, payload.length, team, events);
        replayed += events.length;
      }
      if (replayed > 0) this.rt.log.info(`shard ${shard.id}: replayed ${replayed} logged events`);
    }));
    // The replayed records are queued in log order before any new request is taken, so what is acknowledged after
    // the start is applied after them; their apply goes on while the node serves, as any backlog does (the API
    // waits for what was acknowledged before a read). Waiting for it here kept a node that crashed with a large
    // backlog (up to QUILL_BACKLOG_HIGH, 4 million events) out of service for minutes.
  }

  /**
   * Logs the events of one request durably in one of this worker's shards, then hands each event to the shard
   * owning its distinct id. Resolves when all are queued there (the caller may acknowledge); rejects if the
   * record could not be written (the caller answers 503).
   */
  async ingest(team: number, events: NormalizedEvent[], record: Buffer): Promise<void> {
    if (events.length === 0) return;
    if (this.rt.shared.memoryOver) {
      this.memoryRefusals++;
      throw Errors.memoryBudget(MEMORY_RETRY_AFTER_S);
    }
    this.refuseOverBound(team, events);
    const shard = this.own[this.turn++ % this.own.length];
    if (!shard) throw new Error(`worker ${this.rt.index} owns no shard`);
    if (this.rt.export?.overLag(shard.id)) {
      this.refusedRequests++;
      throw Errors.exportBehind(5);
    }
    const end = await shard.log(record, events.length);
    await this.route(shard, end, record.length, team, events);
    this.rt.durabilityTrace?.ack(shardLogDir(this.rt.config.dataDir, shard.id), end);
  }

  /**
   * Back-pressure: when a shard owning some of these events has more than the backlog bound waiting to be applied,
   * the request is refused (503 with Retry-After) before anything is written, rather than kept waiting — PostHog's
   * SDKs retry it. (A record logged just before the bound was crossed still waits to be published, in log order.)
   */
  private refuseOverBound(team: number, events: NormalizedEvent[]): void {
    const high = this.rt.config.backlogHigh;
    let worst = 0;
    for (const owner of this.byOwner(team, events).keys()) worst = Math.max(worst, this.rt.shared.behind(owner) - high);
    if (worst <= 0) {
      if (this.overBound) {
        this.overBound = false;
        this.rt.log.info(`backlog back under its bound (${high} events): accepting requests again`);
      }
      return;
    }
    this.refusedRequests++;
    if (!this.overBound) {
      this.overBound = true;
      this.rt.log.info(`backlog over its bound (${high} events waiting to be applied): answering 503 with Retry-After`);
    }
    // About the time the apply needs for the excess at ~20k events/s, within the 30 s PostHog's SDKs honour.
    throw Errors.overloaded(Math.min(30, Math.max(1, Math.ceil(worst / 20_000))));
  }

  private overBound = false;
  /** Requests refused by back-pressure since start (stats). */
  refusedRequests = 0;
  /** Requests refused because the process was over its memory budget (QUILL_MEMORY_MB), since start. */
  memoryRefusals = 0;

  /**
   * This thread replaces one that died; its own logs are replayed: asks every other worker to re-send what its logs
   * hold for this thread's shards, then lets the shards queue every part they held meanwhile, in log order per
   * source (Shard.releaseHeldParts). A peer that cannot answer is logged and the parts are released anyway.
   */
  async recoverAsReplacement(): Promise<void> {
    const others = Array.from({ length: this.rt.workerCount }, (_, w) => w).filter((w) => w !== this.rt.index);
    await Promise.all(others.map((w) => this.rt.peers.call(w, { kind: 'resend-parts' }, RESEND_TIMEOUT_MS).catch((error: unknown) => {
      if (!this.closing) this.rt.log.error(`worker ${w} did not re-send its logged parts: ${(error as Error)?.stack ?? error}`);
    })));
    if (this.closing) return; // this thread is dying too: its replacement starts over
    let held = 0;
    for (const shard of this.shards.values()) held += shard.releaseHeldParts();
    this.rt.log.info(`replacement thread: recovered (its logs replayed, other workers re-sent theirs); ${held} parts held meanwhile are queued in log order`);
  }

  /**
   * A worker's thread was replaced (it asked, `resend-parts`): the events it had queued from this worker's logs but
   * not applied died with it. Sends it again every part of what these logs still hold, in log order (it holds them
   * until its recovery ends, then skips what it had applied).
   */
  async resendTo(worker: number): Promise<void> {
    // In batches: one round trip per part took minutes under load (each waits for a turn of a busy event loop).
    let parts: { shard: number; part: Part }[] = [];
    const send = async () => {
      if (parts.length > 0) await this.rt.peers.call(worker, { kind: 'enqueue', parts });
      parts = [];
    };
    for (const shard of this.own) {
      for await (const { payload, end } of shard.source.replay()) {
        const { team, events: recorded } = decodeLogRecord(payload);
        for (const [owner, events] of this.byOwner(team, recorded)) {
          if (ownerOf(owner, this.rt.workerCount) !== worker) continue;
          parts.push({ shard: owner, part: { source: shard.id, end: positionNumber(end), bytes: payload.length, events } });
          if (parts.length >= RESEND_BATCH_PARTS) await send();
        }
      }
      await send();
    }
  }

  /**
   * Publishes a durable record in the ring of every shard owning some of its events (src/protocol/part-rings.ts):
   * a reference, the owner reads the record back from the log when it applies it. Resolves once all are published
   * (src/worker/ingest/part-publisher.ts: in log order per source, waiting while an owner is over the backlog bound).
   * Called in log order: right after the record's append resolved, or replaying.
   */
  private async route(source: Shard, end: LogPosition, bytes: number, team: number, events: NormalizedEvent[]): Promise<void> {
    const owners = this.byOwner(team, events);
    source.source.track(end, [...owners.keys()], events.length);
    const at = positionNumber(end);
    const parts: OwnedPart[] = [];
    for (const [owner, count] of owners) parts.push({ owner, part: { source: source.id, end: at, bytes, events: count } });
    const waiting = this.publisher.publish(source.id, parts);
    if (waiting) await waiting;
  }

  /** How many of a record's events each shard owns (by their distinct ids). */
  private byOwner(team: number, events: NormalizedEvent[]): Map<number, number> {
    const owners = new Map<number, number>();
    for (const e of events) {
      const s = shardOf(team, e.distinct_id, this.shardCount);
      owners.set(s, (owners.get(s) ?? 0) + 1);
    }
    return owners;
  }

  countDropped(counts: ReadonlyMap<string, number>): void {
    for (const [reason, n] of counts) this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + n);
  }

  /** When each reason was last sampled here (SAMPLE_EVERY_MS apart at most once). */
  private readonly lastSample = new Map<string, number>();

  /**
   * Keeps, for an operator, the start of a request whose events were dropped for a reason past the shape bounds
   * (at most one a reason every SAMPLE_EVERY_MS per worker, SAMPLE_BYTES of its text) in the dead-letter store of
   * one of this worker's shards. After the answer, never holding it; a failure to write is only logged.
   */
  sampleDropped(team: number, counts: ReadonlyMap<string, number>, text: string): void {
    const now = Date.now();
    for (const reason of counts.keys()) {
      if (!SAMPLED_REASONS.has(reason)) continue;
      if (now - (this.lastSample.get(reason) ?? -Infinity) < SAMPLE_EVERY_MS) continue;
      this.lastSample.set(reason, now);
      const shard = this.own[0];
      if (!shard) return;
      const content = text.length > SAMPLE_BYTES ? `${text.slice(0, SAMPLE_BYTES)}… (${text.length} characters in all)` : text;
      shard.sampleDropped(team, reason, content).catch((error: unknown) => this.rt.log.error(`could not keep a sample of a dropped event: ${error}`));
    }
  }

  /**
   * Waits until every event acknowledged so far, on every shard of every worker, is applied. An analysis waits
   * without holding its place in the query gate (QueryGate.outside).
   */
  async appliedEverywhere(timeoutMs = 10_000): Promise<void> {
    const all = this.rt.peers.all({ kind: 'applied' });
    await this.rt.queries.outside(Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]));
  }

  /** Waits until this worker's shards have applied what they queued (and held, unless `heldToo` is false). */
  localApplied(heldToo = true): Promise<void[]> {
    return Promise.all([...this.shards.values()].map((s) => s.applied(heldToo)));
  }

  private closing = false;

  async close(opts: { fatal?: boolean } = {}): Promise<void> {
    this.closing = true;
    for (const shard of this.shards.values()) await shard.close(opts);
    await this.persons.close();
  }

  private applyContext(): ApplyContext {
    const rt = this.rt;
    return {
      persons: this.persons,
      shared: rt.shared,
      groupTypes: (team) => rt.cache.groupTypes(team),
      ensureGroupTypes: (team, names) => this.ensureGroupTypes(team, names),
      recordEventNames: (team, lastSeen) => this.recordEventNames(team, lastSeen),
      log: rt.log,
      shardCount: this.shardCount,
      logDir: (shard) => shardLogDir(rt.config.dataDir, shard),
      pacer: rt.pacer,
      columnCache: rt.columnCache,
      hotPersons: this.hotPersons,
      backlogHigh: rt.config.backlogHigh,
      holdParts: rt.shared.started,
      stopApplyMs: rt.config.stopApplySeconds * 1000,
      applyBudgetMs: rt.config.applyBudgetS * 1000,
      segmentBytes: Math.floor(rt.config.logSegmentMb * 1024 * 1024),
      exporting: rt.config.clickhouseUrl !== null,
      faultInjection: rt.config.faultInjection,
      ...(rt.durabilityTrace ? { logIo: rt.durabilityTrace.io() } : {}),
    };
  }

  private async ensureGroupTypes(team: number, names: string[]): Promise<GroupTypes> {
    const meta = this.rt.meta;
    const changed = await meta.write(() => {
      const current: GroupTypes = { ...(meta.groupTypes.get(team) ?? {}) };
      let added = false;
      for (const name of names) {
        if (current[name] !== undefined) continue;
        const used = Object.keys(current).length;
        if (used >= MAX_GROUP_TYPES) continue;
        current[name] = used;
        added = true;
      }
      if (added) meta.groupTypes.put(team, current);
      return added;
    });
    if (changed) await replicate(this.rt, { projectId: team });
    else this.rt.cache.invalidate({ projectId: team });
    return this.rt.cache.groupTypes(team);
  }

  /** Creates definitions on first sight and refreshes `last_seen_at` at most once an hour per name. */
  private async recordEventNames(team: number, lastSeen: Map<string, string>): Promise<void> {
    const due: [string, string][] = [];
    for (const [name, at] of lastSeen) {
      if (NO_DEFINITION.has(name)) continue;
      const key = `${team}\u0000${name}`;
      const bucket = Math.floor(Date.parse(at) / HOUR_MS);
      const written = this.lastSeenWritten.get(key);
      if (written !== undefined && written >= bucket) continue;
      due.push([name, at]);
      this.lastSeenWritten.set(key, bucket);
    }
    if (due.length === 0) return;
    const meta = this.rt.meta;
    // Definitions are derived data (a replay recreates them), so this write does not wait for a flush.
    await transact(meta.env, () => {
      const now = new Date().toISOString();
      for (const [name, at] of due) {
        const existing = meta.eventDefinitions.get([team, name]);
        if (!existing) {
          const def: EventDefinition = {
            id: randomUUID(), project_id: team, name, owner: null, description: null, tags: [], created_at: now,
            updated_at: null, updated_by: null, last_seen_at: at, verified: false, verified_at: null, verified_by: null,
            post_to_chat: false,
          };
          meta.eventDefinitions.put([team, name], def);
        } else if (!existing.last_seen_at || existing.last_seen_at < at) {
          meta.eventDefinitions.put([team, name], { ...existing, last_seen_at: at });
        }
      }
    });
  }
}

/** Peer message: parts re-sent from another worker's logs (IngestService.resendTo), queued in their order. */
export const enqueueHandler: PeerHandler = async (rt, msg) => {
  for (const { shard: id, part } of (msg as unknown as { parts: { shard: number; part: Part }[] }).parts) {
    const shard = rt.ingest.shards.get(id);
    if (!shard) throw new Error(`shard ${id} is not owned by worker ${rt.index}`);
    await shard.enqueue(part);
  }
  return true;
};

/** Peer message from a replacement thread (IngestService.recoverAsReplacement): re-send it this worker's logged parts. */
export const resendPartsHandler: PeerHandler = async (rt, _msg, from) => {
  await rt.ingest.resendTo(from);
  return true;
};

export const appliedHandler: PeerHandler = async (rt) => {
  await rt.ingest.localApplied();
  return true;
};

/** Peer message: this worker's dead letters and samples (GET /_dead_letters). */
export const deadLettersHandler: PeerHandler = async (rt) => [...rt.ingest.shards.values()].flatMap((s) => s.deadLetterEntries());

/** This worker's part of `/_stats`: its shards' counters and the events its capture requests dropped. */
export const statsHandler: PeerHandler = async (rt) => ({
  shards: [...rt.ingest.shards.values()].map((s) => ({ ...s.stats(), refusedRequests: rt.ingest.refusedRequests, backlogHigh: rt.config.backlogHigh })),
  memoryRefusals: rt.ingest.memoryRefusals,
  dropped: Object.fromEntries(rt.ingest.dropped),
  ...(rt.export ? { export: { shards: rt.export.shardStats(), persons: rt.export.personStats() } } : {}),
  eventLoop: { worker: rt.index, ...loopDelaySinceLastRead() },
  services: rt.services.stats(),
});

/** Peer message (fault injection only): pause or resume the apply loops of this worker's shards. */
export const pauseApplyHandler: PeerHandler = async (rt, msg) => {
  for (const shard of rt.ingest.shards.values()) shard.pauseApply(msg.paused === true);
  return true;
};
