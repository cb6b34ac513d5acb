/**
 * The session recordings of a worker thread: every shard's recordings environment (any worker appends to any
 * session's shard: src/stores/recordings/recording-store.ts), the ingestion of what posthog-js posts to `/s/`, and
 * the deletions (API, a person's data, retention and the disk budget: ./cleanup.ts, run by the worker owning each
 * shard). A `WorkerService` (src/worker/service.ts): it knows its host, not the runtime.
 *
 * Sessions are sharded by `(project, session id)` with the events' hash (src/domain/shard-of.ts), so every chunk of a
 * session lands in one environment, whichever distinct id or tab sent it.
 */
import { promisify } from 'node:util';
import { gzip, constants as zlib } from 'node:zlib';
import { ownerOf, shardOf } from '../../domain/shard-of.js';
import { chunkLines, type SnapshotDrop, type SnapshotItem } from '../../domain/recordings/snapshot-items.js';
import { RecordingStore, type AppendResult, type PreparedChunk } from '../../stores/recordings/recording-store.js';
import { recordingsEnvPath } from '../../stores/data-dir/paths.js';
import { SnapshotMetric, type Sample } from '../../observability/snapshot-metric.js';
import { diskBytes } from '../../stores/disk-bytes.js';
import { ServiceKey, type ServiceHost, type WorkerService } from '../service.js';
import { RecordingCleanup, type CleanupCounters } from './cleanup.js';

const gzipAsync = promisify(gzip);
/**
 * Level 3: rrweb JSON compresses about 8-10× at every level; past 3 each level costs far more CPU for a few percent
 * (the chunks are compressed on libuv's thread pool, but on two cores that is the same CPUs as the requests').
 */
const GZIP_LEVEL = 3;

export const RECORDINGS = new ServiceKey<RecordingsService>('recordings');

export class RecordingsService implements WorkerService {
  readonly name = 'recordings';
  private stores: RecordingStore[] = [];
  private readonly cleanup: RecordingCleanup;
  /** This worker's ingestion counters since start. */
  private readonly counters = { requests: 0, chunks: 0, duplicates: 0, snapshotBytes: 0, storedBytes: 0, failedRequests: 0 };
  private readonly dropped = new Map<string, number>();

  constructor(private readonly host: ServiceHost) {
    this.cleanup = new RecordingCleanup(host, () => this.owned());
  }

  start(shardCount: number): void {
    if (this.stores.length > 0) return;
    this.stores = Array.from({ length: shardCount }, (_, s) => RecordingStore.open(this.host.config.dataDir, s));
    this.cleanup.setShardCount(shardCount);
    this.cleanup.start();
  }

  async close(): Promise<void> {
    await this.cleanup.close();
    const stores = this.stores;
    this.stores = [];
    for (const s of stores) await s.close();
  }

  /** The store holding a session. */
  storeOf(team: number, sessionId: string): RecordingStore {
    const store = this.stores[shardOf(team, sessionId, this.stores.length)];
    if (!store) throw new Error('recordings: the shards are not open yet');
    return store;
  }

  all(): readonly RecordingStore[] {
    return this.stores;
  }

  /** The shards this worker owns: it runs their retention and budget, and reports them in /_stats and /metrics. */
  owned(): RecordingStore[] {
    return this.stores.filter((s) => ownerOf(s.shard, this.host.workerCount) === this.host.index);
  }

  countDropped(counts: ReadonlyMap<SnapshotDrop, number>): void {
    for (const [reason, n] of counts) this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + n);
  }

  noteFailedRequest(): void {
    this.counters.failedRequests++;
  }

  /**
   * Stores the chunks of one request, each shard's in one durable transaction (the shards' in parallel). Resolves
   * once all are on disk: the caller acknowledges then. Rejects if any shard could not write (nothing of that shard
   * is stored; others may be, and the SDK's retry is recognised chunk by chunk by their uuids).
   */
  async ingest(team: number, items: readonly SnapshotItem[], receivedMs: number): Promise<AppendResult> {
    this.counters.requests++;
    const prepared = await Promise.all(items.map(async (item): Promise<[RecordingStore, PreparedChunk]> => {
      const lines = Buffer.from(chunkLines(item), 'utf8');
      const compressed = await gzipAsync(lines, { level: GZIP_LEVEL, strategy: zlib.Z_DEFAULT_STRATEGY });
      return [this.storeOf(team, item.sessionId), {
        uuid: item.uuid, sessionId: item.sessionId, windowId: item.windowId, distinctId: item.distinctId, lib: item.lib,
        events: item.events, compressed, snapshotBytes: lines.byteLength, receivedMs,
      }];
    }));
    const byStore = new Map<RecordingStore, PreparedChunk[]>();
    for (const [store, chunk] of prepared) {
      const list = byStore.get(store);
      if (list) list.push(chunk);
      else byStore.set(store, [chunk]);
    }
    const results = await Promise.all([...byStore].map(([store, chunks]) => store.append(team, chunks)));
    const total: AppendResult = { stored: 0, duplicates: 0, storedBytes: 0 };
    for (const r of results) {
      total.stored += r.stored;
      total.duplicates += r.duplicates;
      total.storedBytes += r.storedBytes;
    }
    this.counters.chunks += total.stored;
    this.counters.duplicates += total.duplicates;
    this.counters.storedBytes += total.storedBytes;
    for (const [, c] of prepared) this.counters.snapshotBytes += c.snapshotBytes;
    if (total.stored > 0) this.cleanup.noteWritten();
    return total;
  }

  /** Deletes sessions of a project (the API's DELETE); returns how many existed. */
  async deleteSessions(team: number, sessionIds: readonly string[]): Promise<number> {
    const byStore = new Map<RecordingStore, [number, string][]>();
    for (const id of sessionIds) {
      const store = this.storeOf(team, id);
      byStore.set(store, [...(byStore.get(store) ?? []), [team, id]]);
    }
    let deleted = 0;
    for (const [store, keys] of byStore) deleted += (await store.deleteSessions(keys)).sessions;
    this.cleanup.counters.deletedByApi += deleted;
    return deleted;
  }

  /** Deletes every recording of these distinct ids (a person deleted with their data). */
  async deleteOfDistinctIds(team: number, distinctIds: readonly string[]): Promise<number> {
    let deleted = 0;
    for (const store of this.stores) {
      const keys = distinctIds.flatMap((d) => store.sessionIdsOf(team, d).map((id): [number, string] => [team, id]));
      if (keys.length > 0) deleted += (await store.deleteSessions(keys)).sessions;
    }
    this.cleanup.counters.deletedByApi += deleted;
    return deleted;
  }

  /** Runs a retention and budget pass now on this worker's shards (a project's retention changed). */
  cleanNow(): Promise<void> {
    return this.cleanup.request();
  }

  stats(): Record<string, unknown> {
    const c: CleanupCounters = this.cleanup.counters;
    return {
      shards: this.owned().map((s) => ({ shard: s.shard, ...s.totals(), disk_bytes: diskBytes(recordingsEnvPath(this.host.config.dataDir, s.shard)) })),
      requests: this.counters.requests,
      failed_requests: this.counters.failedRequests,
      chunks_acknowledged: this.counters.chunks,
      duplicate_chunks: this.counters.duplicates,
      snapshot_bytes_acknowledged: this.counters.snapshotBytes,
      stored_bytes_acknowledged: this.counters.storedBytes,
      dropped: Object.fromEntries(this.dropped),
      deleted_sessions: { retention: c.deletedByRetention, budget: c.deletedByBudget, api: c.deletedByApi },
      // Null without a budget (QUILL_RECORDINGS_MAX_MB=0).
      budget_bytes: this.host.config.recordingsMaxMb > 0 ? Math.round(this.cleanup.budgetBytesPerShard() * this.owned().length) : null,
    };
  }

  metrics(): SnapshotMetric[] {
    const perShard = (read: (s: RecordingStore) => number) => (): Sample[] => this.owned().map((s) => ({ labels: { shard: s.shard }, value: read(s) }));
    const c = this.cleanup.counters;
    return [
      new SnapshotMetric('quill_recording_requests_total', 'Requests to the recording endpoint (/s/) a worker acknowledged or refused (result).', 'counter', () => [
        { labels: { result: 'acknowledged' }, value: this.counters.requests - this.counters.failedRequests },
        { labels: { result: 'failed' }, value: this.counters.failedRequests },
      ]),
      new SnapshotMetric('quill_recording_chunks_total', 'Snapshot chunks ($snapshot events) stored, and those skipped as retries of stored ones (result).', 'counter', () => [
        { labels: { result: 'stored' }, value: this.counters.chunks },
        { labels: { result: 'duplicate' }, value: this.counters.duplicates },
      ]),
      new SnapshotMetric('quill_recording_snapshot_bytes_total', 'Bytes of snapshot data acknowledged (as JSON text, before compression).', 'counter', () =>
        [{ labels: {}, value: this.counters.snapshotBytes }]),
      new SnapshotMetric('quill_recording_dropped_total', 'Snapshot events (or rrweb events in them) not stored, by reason.', 'counter', () =>
        [...this.dropped].map(([reason, value]) => ({ labels: { reason }, value }))),
      new SnapshotMetric('quill_recording_sessions', 'Recorded sessions stored, by shard.', 'gauge', perShard((s) => s.totals().sessions)),
      new SnapshotMetric('quill_recording_stored_bytes', 'Compressed snapshot bytes stored (what the disk budget counts), by shard.', 'gauge', perShard((s) => s.totals().storedBytes)),
      new SnapshotMetric('quill_recording_lmdb_bytes', 'Disk space taken by each shard\'s recordings environment.', 'gauge', perShard((s) => diskBytes(recordingsEnvPath(this.host.config.dataDir, s.shard)))),
      new SnapshotMetric('quill_recording_deleted_sessions_total', 'Recordings deleted, by reason: retention (recording_retention_days), budget (QUILL_RECORDINGS_MAX_MB, oldest first) or api (DELETE, a person deleted with their data).', 'counter', () => [
        { labels: { reason: 'retention' }, value: c.deletedByRetention },
        { labels: { reason: 'budget' }, value: c.deletedByBudget },
        { labels: { reason: 'api' }, value: c.deletedByApi },
      ]),
    ];
  }
}
