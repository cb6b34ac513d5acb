/**
 * One shard's session recordings: an LMDB environment of its own (shards/<n>/recordings.mdb), holding the sessions
 * whose session id hashes to the shard. A session is its metadata record (folded as chunks arrive:
 * src/domain/recordings/metadata.ts) and its chunks, appended in arrival order: one chunk per `$snapshot` event
 * the SDK sent, its rrweb events as the JSONL lines the snapshots API serves (`[windowId, event]`), gzipped.
 *
 *   sessions    [team, session id]              → SessionMetadata
 *   chunks      [team, session id, n]           → StoredChunk (n = 0, 1, …: the chunk's blob key)
 *   seen        [team, session id, uuid]        → null   the SDK's uuid of each stored chunk: a retry is skipped
 *   by_start    [start ms, team, session id]    → null   oldest first, for retention and the disk budget
 *   by_distinct [team, distinct id, session id] → null   a person's recordings (their deletion)
 *   viewed      [team, session id, user id]     → ISO time the user first opened it
 *   totals      'totals'                        → Totals (this shard's sessions, chunks and bytes)
 *
 * Every worker thread opens every shard's environment (LMDB serialises writers of one environment across threads,
 * as for the persons environment), so the worker that received a request appends to the session's shard itself.
 * An append is one transaction, all or nothing, flushed to disk before it resolves: the request is acknowledged
 * after that, so an acknowledged chunk survives a kill -9 (or a power loss, if the disk honours flushes) and its
 * retry is recognised by its uuid.
 */
import { openEnv, openIndex, openTable, atomically, all, type Env, type Table } from '../lmdb-env.js';
import { recordingsEnvPath } from '../data-dir/paths.js';
import { foldChunk, type ChunkFacts, type SessionMetadata } from '../../domain/recordings/metadata.js';
import type { RrwebEvent } from '../../domain/recordings/rrweb.js';

export interface StoredChunk {
  /** Window id (a tab of the session). */
  w: string;
  /** First and last rrweb timestamps, and the number of events. */
  s: number;
  e: number;
  n: number;
  /** gzip of the chunk's JSONL lines. */
  z: Uint8Array;
}

export interface Totals {
  sessions: number;
  chunks: number;
  storedBytes: number;
}

/** A chunk ready to append: its facts, compressed lines and dedup key. */
export interface PreparedChunk {
  uuid: string | null;
  sessionId: string;
  windowId: string | null;
  distinctId: string;
  lib: string | null;
  events: readonly RrwebEvent[];
  /** The chunk's JSONL lines, gzipped. */
  compressed: Uint8Array;
  /** Length of the lines before compression (what the SDK sent, re-serialised). */
  snapshotBytes: number;
  receivedMs: number;
}

export interface AppendResult {
  stored: number;
  duplicates: number;
  storedBytes: number;
}

type SessionKey = [number, string];

const TOTALS_KEY = 'totals';
const NO_TOTALS: Totals = { sessions: 0, chunks: 0, storedBytes: 0 };

export class RecordingStore {
  readonly env: Env;
  private readonly sessions: Table<SessionMetadata, SessionKey>;
  private readonly chunks: Table<StoredChunk, [number, string, number]>;
  private readonly seen: Table<null, [number, string, string]>;
  private readonly byStart: Table<null, [number, number, string]>;
  private readonly byDistinct: Table<null, [number, string, string]>;
  private readonly viewed: Table<string, [number, string, number]>;
  private readonly totalsTable: Table<Totals, string>;

  private constructor(readonly shard: number, env: Env) {
    this.env = env;
    this.sessions = openTable(env, 'sessions');
    this.chunks = openTable(env, 'chunks');
    this.seen = openIndex(env, 'seen');
    this.byStart = openIndex(env, 'by_start');
    this.byDistinct = openIndex(env, 'by_distinct');
    this.viewed = openTable(env, 'viewed');
    this.totalsTable = openTable(env, 'totals');
  }

  static open(dataDir: string, shard: number): RecordingStore {
    return new RecordingStore(shard, openEnv(recordingsEnvPath(dataDir, shard)));
  }

  totals(): Totals {
    return this.totalsTable.get(TOTALS_KEY) ?? NO_TOTALS;
  }

  /**
   * Appends chunks (of any sessions of this shard) in one transaction, skipping those whose uuid is stored, and
   * resolves once it is on disk. Only whole transactions commit: a failure (a full disk) stores none of them.
   */
  async append(team: number, chunks: readonly PreparedChunk[]): Promise<AppendResult> {
    const result = await atomically(this.env, () => {
      const out: AppendResult = { stored: 0, duplicates: 0, storedBytes: 0 };
      const totals = { ...this.totals() };
      for (const c of chunks) {
        if (c.uuid !== null && this.seen.get([team, c.sessionId, c.uuid]) !== undefined) {
          out.duplicates++;
          continue;
        }
        const key: SessionKey = [team, c.sessionId];
        const before = this.sessions.get(key);
        const facts: ChunkFacts = {
          events: c.events, windowId: c.windowId, distinctId: c.distinctId, lib: c.lib, receivedMs: c.receivedMs,
          snapshotBytes: c.snapshotBytes, storedBytes: c.compressed.byteLength,
        };
        const after = foldChunk(before, team, c.sessionId, facts);
        let first = Infinity;
        let last = -Infinity;
        for (const e of c.events) {
          if (e.timestamp < first) first = e.timestamp;
          if (e.timestamp > last) last = e.timestamp;
        }
        // The chunk's number is how many the session held: blob keys count up from 0 in arrival order.
        this.chunks.put([team, c.sessionId, before?.chunks ?? 0], { w: c.windowId ?? '', s: first, e: last, n: c.events.length, z: c.compressed });
        if (c.uuid !== null) this.seen.put([team, c.sessionId, c.uuid], null);
        if (before === undefined) {
          totals.sessions++;
          this.byDistinct.put([team, after.distinctId, c.sessionId], null);
        }
        if (before === undefined || before.startMs !== after.startMs) {
          if (before !== undefined && Number.isFinite(before.startMs)) this.byStart.remove([before.startMs, team, c.sessionId]);
          this.byStart.put([after.startMs, team, c.sessionId], null);
        }
        this.sessions.put(key, after);
        totals.chunks++;
        totals.storedBytes += c.compressed.byteLength;
        out.stored++;
        out.storedBytes += c.compressed.byteLength;
      }
      if (out.stored > 0) this.totalsTable.put(TOTALS_KEY, totals);
      return out;
    });
    // The acknowledgement's guarantee: the commit is on disk, not only handed to the OS (src/stores/lmdb-env.ts).
    await this.env.flushed;
    return result;
  }

  session(team: number, sessionId: string): SessionMetadata | undefined {
    return this.sessions.get([team, sessionId]);
  }

  /** Every session of a project on this shard (the list filters and sorts them: src/domain/recordings/list-query.ts). */
  sessionsOf(team: number): SessionMetadata[] {
    return all(this.sessions.getRange({ start: [team], end: [team + 1] }).map((e) => e.value));
  }

  /** The session ids of a project's distinct id on this shard. */
  sessionIdsOf(team: number, distinctId: string): string[] {
    return keysUnder(this.byDistinct, team, distinctId).map((k) => k[2]);
  }

  /** The chunks from `first` to `last` (blob keys, inclusive), in order. */
  chunksOf(team: number, sessionId: string, first: number, last: number): { n: number; chunk: StoredChunk }[] {
    return all(this.chunks.getRange({ start: [team, sessionId, first], end: [team, sessionId, last + 1] }))
      .map((e) => ({ n: e.key[2], chunk: e.value }));
  }

  /** Each chunk's blob key, window and time range (not its content). */
  chunkIndex(team: number, sessionId: string): { n: number; w: string; s: number; e: number }[] {
    return all(this.chunks.getRange({ start: [team, sessionId, 0], end: [team, sessionId, Number.MAX_SAFE_INTEGER] }))
      .map((e) => ({ n: e.key[2], w: e.value.w, s: e.value.s, e: e.value.e }));
  }

  wasViewed(team: number, sessionId: string, userId: number): boolean {
    return this.viewed.get([team, sessionId, userId]) !== undefined;
  }

  async markViewed(team: number, sessionId: string, userId: number, at: string): Promise<void> {
    await atomically(this.env, () => {
      if (this.sessions.get([team, sessionId]) === undefined) return;
      if (this.viewed.get([team, sessionId, userId]) === undefined) this.viewed.put([team, sessionId, userId], at);
    });
    // The answer that follows reads the mark back in this event turn: not from the snapshot read before the write.
    this.env.resetReadTxn();
  }

  /** Deletes sessions (their chunks, indexes and views) in one transaction; returns how many existed. */
  async deleteSessions(keys: readonly SessionKey[]): Promise<{ sessions: number; storedBytes: number }> {
    return atomically(this.env, () => {
      const totals = { ...this.totals() };
      let sessions = 0;
      let bytes = 0;
      for (const [team, sessionId] of keys) {
        const m = this.sessions.get([team, sessionId]);
        if (m === undefined) continue;
        for (const k of all(this.chunks.getKeys({ start: [team, sessionId, 0], end: [team, sessionId, Number.MAX_SAFE_INTEGER] }))) this.chunks.remove(k);
        for (const k of keysUnder(this.seen, team, sessionId)) this.seen.remove(k);
        for (const k of keysUnder(this.viewed, team, sessionId)) this.viewed.remove(k);
        this.byStart.remove([m.startMs, team, sessionId]);
        this.byDistinct.remove([team, m.distinctId, sessionId]);
        this.sessions.remove([team, sessionId]);
        sessions++;
        bytes += m.storedBytes;
        totals.sessions = Math.max(0, totals.sessions - 1);
        totals.chunks = Math.max(0, totals.chunks - m.chunks);
        totals.storedBytes = Math.max(0, totals.storedBytes - m.storedBytes);
      }
      if (sessions > 0) this.totalsTable.put(TOTALS_KEY, totals);
      return { sessions, storedBytes: bytes };
    });
  }

  /** Up to `limit` sessions, oldest start first, from `after` on (exclusive): [start ms, team, session id]. */
  oldest(limit: number, after: [number, number, string] | null = null): [number, number, string][] {
    const keys = all(this.byStart.getKeys({ ...(after ? { start: after } : {}), limit: limit + 1 }));
    const rest = after ? keys.filter((k) => !(k[0] === after[0] && k[1] === after[1] && k[2] === after[2])) : keys;
    return rest.slice(0, limit);
  }

  close(): Promise<void> {
    return this.env.close();
  }
}

/**
 * The keys `[a, b, …]` of a table, in order. Walked from `[a, b]` until the first key past the prefix, rather than
 * bounded by a made-up end key: no string is safely "after" every string with this prefix in LMDB's key order.
 */
function keysUnder<K extends [number, string, string | number]>(table: Table<unknown, K>, a: number, b: string): K[] {
  const out: K[] = [];
  for (const k of table.getKeys({ start: [a, b] as unknown as K })) {
    if (k[0] !== a || k[1] !== b) break;
    out.push(k);
  }
  return out;
}
