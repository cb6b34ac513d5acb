/**
 * Ingestion inside a worker: routing a request's events to the shards that own them (local, or another worker
 * over the peer channel) and waiting until every part is durable; plus what the apply loop needs from the
 * metadata environment (group types, event definitions).
 */
import { randomUUID } from 'node:crypto';
import type { NormalizedEvent } from '../../domain/ingest/index.js';
import type { EventDefinition, GroupTypes } from '../../domain/model.js';
import { ownerOf, shardOf } from '../../domain/shard-of.js';
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

  constructor(private readonly rt: WorkerRuntime, readonly persons: PersonStore) {}

  /** Opens (and recovers) the shards this worker owns. */
  async openShards(shardCount: number): Promise<void> {
    this.shardCount = shardCount;
    const ctx = this.applyContext();
    for (let s = 0; s < shardCount; s++) {
      if (ownerOf(s, this.rt.workerCount) !== this.rt.index || this.shards.has(s)) continue;
      this.shards.set(s, await Shard.open(this.rt.config.dataDir, s, ctx));
    }
  }

  /**
   * Logs the events of one request durably, each in the shard that owns its distinct id. Resolves when all parts
   * are fdatasync'ed; rejects if any part could not be written (the caller answers 503).
   */
  async ingest(team: number, events: NormalizedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const parts = new Map<number, NormalizedEvent[]>();
    for (const e of events) {
      const s = shardOf(team, e.distinct_id, this.shardCount);
      let list = parts.get(s);
      if (!list) parts.set(s, (list = []));
      list.push(e);
    }
    const writes: Promise<unknown>[] = [];
    for (const [s, list] of parts) {
      const text = `{"t":${team},"e":${JSON.stringify(list)}}`;
      const local = this.shards.get(s);
      if (local) writes.push(local.append(team, text, list, list.length));
      else writes.push(this.rt.peers.call(ownerOf(s, this.rt.workerCount), { kind: 'append', shard: s, team, text, count: list.length }));
    }
    await Promise.all(writes);
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

/** Peer message: append a part of a request to a shard this worker owns. */
export const appendHandler: PeerHandler = async (rt, msg) => {
  const m = msg as unknown as { shard: number; team: number; text: string; count: number };
  const shard = rt.ingest.shards.get(m.shard);
  if (!shard) throw new Error(`shard ${m.shard} is not owned by worker ${rt.index}`);
  await shard.append(m.team, m.text, null, m.count);
  return true;
};

export const appliedHandler: PeerHandler = async (rt) => {
  await rt.ingest.localApplied();
  return true;
};

export const statsHandler: PeerHandler = async (rt) => [...rt.ingest.shards.values()].map((s) => s.stats());
