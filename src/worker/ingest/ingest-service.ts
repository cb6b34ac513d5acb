/**
 * Ingestion inside a worker: logging each request in a shard this worker owns and waiting until it is durable;
 * opening and recovering the shards; and what the apply loop needs from the metadata environment (group types,
 * event definitions).
 */
import { randomUUID } from 'node:crypto';
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import type { EventDefinition, GroupTypes } from '../../domain/model.js';
import { ownerOf } from '../../domain/shard-of.js';
import { PersonStore } from '../../stores/persons/person-store.js';
import { replicate } from '../replication.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { Shard, type ApplyContext } from './shard.js';

/** PostHog never creates a definition for its internal metrics event. */
const NO_DEFINITION = new Set(['$$plugin_metrics']);
const MAX_GROUP_TYPES = 5;
const HOUR_MS = 3_600_000;

export class IngestService {
  readonly shards = new Map<number, Shard>();
  shardCount = 1;
  private readonly lastSeenWritten = new Map<string, number>();
  /** This worker's shards, taken in turn by successive requests. */
  private own: Shard[] = [];
  private turn = 0;

  constructor(private readonly rt: WorkerRuntime, readonly persons: PersonStore) {}

  /**
   * Opens the shards this worker owns and replays what they logged but had not applied. Replays wait for one
   * another across shards (causal order, see shard.ts), so every worker recovers at the same time.
   */
  async openShards(shardCount: number): Promise<void> {
    this.shardCount = shardCount;
    const ctx = this.applyContext();
    const opened: Shard[] = [];
    for (let s = 0; s < shardCount; s++) {
      if (ownerOf(s, this.rt.workerCount) !== this.rt.index || this.shards.has(s)) continue;
      const shard = await Shard.open(this.rt.config.dataDir, s, ctx);
      this.shards.set(s, shard);
      opened.push(shard);
    }
    this.own = [...this.shards.values()];
    await Promise.all(opened.map((shard) => shard.recover()));
  }

  /**
   * Logs the events of one request durably in one of this worker's shards. Resolves when they are fdatasync'ed;
   * rejects if they could not be written (the caller answers 503).
   */
  async ingest(team: number, events: NormalizedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const shard = this.own[this.turn++ % this.own.length];
    if (!shard) throw new Error(`worker ${this.rt.index} owns no shard`);
    await shard.append(team, events);
  }

  /** Waits until every event acknowledged so far, on every shard of every worker, is applied. */
  async appliedEverywhere(timeoutMs = 10_000): Promise<void> {
    const all = this.rt.peers.all({ kind: 'applied' });
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  localApplied(): Promise<void[]> {
    return Promise.all([...this.shards.values()].map((s) => s.applied()));
  }

  async close(): Promise<void> {
    for (const shard of this.shards.values()) await shard.close();
    await this.persons.close();
  }

  private applyContext(): ApplyContext {
    const rt = this.rt;
    return {
      persons: this.persons,
      shared: rt.shared,
      shardCount: this.shardCount,
      groupTypes: (team) => rt.cache.groupTypes(team),
      ensureGroupTypes: (team, names) => this.ensureGroupTypes(team, names),
      recordEventNames: (team, lastSeen) => this.recordEventNames(team, lastSeen),
      log: rt.log,
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
    await meta.env.transaction(() => {
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

export const appliedHandler: PeerHandler = async (rt) => {
  await rt.ingest.localApplied();
  return true;
};

export const statsHandler: PeerHandler = async (rt) => [...rt.ingest.shards.values()].map((s) => s.stats());
