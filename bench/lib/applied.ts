/**
 * "Applied": every acknowledged event has moved from the ingest log into LMDB (persons, events). An ack only
 * promises durability in the log, so the ingestion cases report both rates, and need to know when the backlog is
 * gone. Ways to tell, best first:
 *
 *  1. the stats hook: `GET /_stats` (personal key) answering `{shards: [{backlog, appliedEvents, ...}]}`;
 *  2. (older builds without it) reading the shard event stores read-only from this process (LMDB allows
 *     concurrent readers in other processes) and counting their uuid entries, one per stored event in every
 *     build: exact, but tied to the data-directory layout (shards/N/events.mdb, table `by_uuid_v2`);
 *  3. the private events API: a read waits until everything acknowledged before it is applied (bounded wait), so
 *     a read that returns well before the bound means the backlog is gone;
 *  4. none: the caller reports the ack rate only.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { sumSyncs, type SyncSnapshot } from './log-syncs.js';
import { PERSONAL_KEY } from './paths.js';

export type AppliedSource = 'stats-hook' | 'lmdb-read-only' | 'events-api-barrier' | 'none';

export interface AppliedResult {
  source: AppliedSource;
  /** Milliseconds from `since` until everything was applied; null when unknown (timeout or no way to tell). */
  drain_ms: number | null;
  /** Events stored in total when applied (stats hook and LMDB count only). */
  stored_events: number | null;
  timed_out: boolean;
}

const AUTH = { authorization: `Bearer ${PERSONAL_KEY}` };
const EVENTS_PROBE = '/api/projects/@current/events/?limit=1';
/** The events API's read-your-writes wait is bounded (10 s in the server); a read slower than this may have given up. */
const BARRIER_BOUND_MS = 9_000;

interface ShardStats {
  backlog?: number;
  appliedEvents?: number;
}

async function statsHook(base: string): Promise<ShardStats[] | null> {
  try {
    const res = await fetch(`${base}/_stats`, { headers: AUTH, signal: AbortSignal.timeout(30_000) });
    if (res.status !== 200) return null;
    const body = (await res.json()) as { shards?: unknown };
    return Array.isArray(body.shards) ? (body.shards as ShardStats[]) : null;
  } catch {
    return null;
  }
}

/** Stored events (uuid entries) of every shard, read through short-lived read-only environments; null if unreadable. */
export async function storedEvents(dataDir: string): Promise<number | null> {
  const shardsDir = join(dataDir, 'shards');
  if (!existsSync(shardsDir)) return null;
  let total = 0;
  for (const shard of readdirSync(shardsDir)) {
    const path = join(shardsDir, shard, 'events.mdb');
    if (!existsSync(path)) return null;
    // Opened and closed per poll: a reader left open would keep the server from reusing freed pages.
    const env = open({ path, readOnly: true, maxDbs: 32, compression: false });
    try {
      total += (env.openDB('by_uuid_v2', {}).getStats() as { entryCount: number }).entryCount;
    } catch {
      return null;
    } finally {
      await env.close();
    }
  }
  return total;
}

async function eventsApiAnswers(base: string): Promise<boolean> {
  try {
    const res = await fetch(base + EVENTS_PROBE, { headers: AUTH, signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

export class AppliedProbe {
  private constructor(readonly source: AppliedSource, private readonly base: string, private readonly dataDir: string) {}

  /** Picks the best way available on this server build. */
  static async detect(base: string, dataDir: string): Promise<AppliedProbe> {
    if (await statsHook(base)) return new AppliedProbe('stats-hook', base, dataDir);
    if ((await storedEvents(dataDir)) !== null) return new AppliedProbe('lmdb-read-only', base, dataDir);
    if (await eventsApiAnswers(base)) return new AppliedProbe('events-api-barrier', base, dataDir);
    return new AppliedProbe('none', base, dataDir);
  }

  /** Events applied so far (null when this source cannot count). */
  async count(): Promise<number | null> {
    if (this.source === 'stats-hook') {
      const shards = await statsHook(this.base);
      return shards ? shards.reduce((n, s) => n + (s.appliedEvents ?? 0), 0) : null;
    }
    if (this.source === 'lmdb-read-only') return storedEvents(this.dataDir);
    return null;
  }

  /** The ingest logs' sync counters now (stats hook only; null elsewhere or on an older build). */
  async logSyncs(): Promise<SyncSnapshot | null> {
    if (this.source !== 'stats-hook') return null;
    const shards = await statsHook(this.base);
    return shards ? sumSyncs(shards as Parameters<typeof sumSyncs>[0]) : null;
  }

  /**
   * Waits until the backlog is applied. `atLeast`: the stored count that proves it (acknowledged events plus what
   * was there before; in-flight requests cut off at the end of a run may add a few more, so the count must also
   * stop moving for `stableMs`). `since`: performance.now() when the load stopped.
   */
  async wait(opts: { atLeast: number; since: number; timeoutMs: number; stableMs?: number }): Promise<AppliedResult> {
    const deadline = opts.since + opts.timeoutMs;
    const stableMs = opts.stableMs ?? 1000;
    const result = (drain: number | null, stored: number | null, timedOut = false): AppliedResult =>
      ({ source: this.source, drain_ms: drain === null ? null : Math.round(drain), stored_events: stored, timed_out: timedOut });
    if (this.source === 'none') return result(null, null);

    if (this.source === 'stats-hook') {
      for (;;) {
        const shards = await statsHook(this.base);
        const now = performance.now();
        if (shards && shards.every((s) => (s.backlog ?? 0) === 0)) {
          return result(now - opts.since, shards.reduce((n, s) => n + (s.appliedEvents ?? 0), 0));
        }
        if (now > deadline) return result(null, null, true);
        await sleep(100);
      }
    }

    if (this.source === 'events-api-barrier') {
      for (;;) {
        const t0 = performance.now();
        const ok = await eventsApiAnswers(this.base);
        const now = performance.now();
        if (ok && now - t0 < BARRIER_BOUND_MS) return result(now - opts.since, null);
        if (now > deadline) return result(null, null, true);
      }
    }

    // LMDB count: the backlog is gone when the count reached `atLeast` and then stopped changing.
    let last = -1;
    let lastChange = performance.now();
    for (;;) {
      const n = await storedEvents(this.dataDir);
      const now = performance.now();
      if (n !== last) {
        last = n ?? -1;
        lastChange = now;
      }
      if (n !== null && n >= opts.atLeast && now - lastChange >= stableMs) return result(lastChange - opts.since, n);
      if (now > deadline) return result(null, n, true);
      await sleep(100);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
