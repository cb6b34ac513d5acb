/**
 * What one shard worker thread tells `GET /metrics` (the front gathers every worker's answer and merges them with
 * its own request counters: src/front/metrics.ts). Most series are read from the shards' own counters when
 * scraped (src/observability/snapshot-metric.ts); the analysis durations are a prom-client histogram observed
 * as queries finish. Reading the LMDB file sizes is a stat per file, done here because workers may touch the disk
 * and the front may not.
 */
import { diskBytes } from '../stores/disk-bytes.js';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { Histogram, Registry } from '../observability/prom.js';
import { SYNC_BOUNDS_MS } from '../stores/ingest-log/ingest-log.js';
import { histogramSamples, SnapshotMetric, type Sample } from '../observability/snapshot-metric.js';
import type { WorkerRuntime } from './runtime.js';
import { QueryCancelledError, QueryMemoryError, QueryTimeoutError } from './query-budget.js';
import { CALLBACK_BOUNDS, SECONDS_BOUNDS, txnMeters, type TxnSummary } from '../stores/txn-meter.js';
import { eventsEnvPath, META_ENV, PERSONS_ENV } from '../stores/data-dir/paths.js';
import type { Shard } from './ingest/shard.js';
import { processMemory } from '../observability/process-memory.js';

/** A queued part (source, position, length, events, when queued) as a small object, in bytes. */
const QUEUED_PART_BYTES = 96;

type ShardStats = ReturnType<Shard['stats']>;

/** Analysis durations, seconds: from cached answers (well under a millisecond) to full scans of millions of events. */
const INSIGHT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];


export class WorkerMetrics {
  readonly registry = new Registry();
  readonly insightSeconds: Histogram<'query'>;
  /** Requests stopped by their query budget, by reason (src/worker/query-budget.ts). */
  private readonly budgetStops = { timeout: 0, memory: 0, cancelled: 0 };

  /** Counts an operation's error if it is a budget stop. */
  noteQueryError(error: unknown): void {
    if (error instanceof QueryTimeoutError) this.budgetStops.timeout++;
    else if (error instanceof QueryMemoryError) this.budgetStops.memory++;
    else if (error instanceof QueryCancelledError) this.budgetStops.cancelled++;
  }

  private readonly backups = { ok: 0, failed: 0, lastSuccess: 0 };
  private readonly startedAt = Date.now() / 1000;

  constructor(private readonly rt: WorkerRuntime) {
    this.insightSeconds = new Histogram({
      name: 'quill_insight_query_duration_seconds', help: 'Duration of analysis requests served by this node (insights/trend, persons/trends).',
      labelNames: ['query'], buckets: INSIGHT_BUCKETS, registers: [this.registry],
    });
    const shards = () => this.shardStats();
    const perShard = (read: (s: ShardStats) => number) => (): Sample[] => shards().map((s) => ({ labels: { shard: s.shard }, value: read(s) }));
    const metrics = [
      new SnapshotMetric('quill_events_acknowledged_total', 'Events durably logged (and acknowledged) by the shard that received them.', 'counter', perShard((s) => s.appendedEvents)),
      new SnapshotMetric('quill_events_applied_total', 'Events moved from the ingest logs into the events store, by owning shard.', 'counter', perShard((s) => s.appliedEvents)),
      new SnapshotMetric('quill_events_dropped_total', 'Events not stored, by reason: refused at capture (as /_stats dropped), a repeated uuid, a person event without a profile, or set aside by the apply (dead letter).', 'counter', () => this.droppedSamples(shards())),
      new SnapshotMetric('quill_ingest_backlog_events', 'Acknowledged events waiting in the ingest logs to be applied, by owning shard.', 'gauge', perShard((s) => s.backlog)),
      new SnapshotMetric('quill_ingest_apply_lag_seconds', 'How long the oldest acknowledged event not yet applied has waited, by owning shard.', 'gauge', perShard((s) => s.lagMs / 1000)),
      new SnapshotMetric('quill_ingest_log_bytes', 'Bytes in a shard\'s ingest log segments (acknowledged records not yet released).', 'gauge', perShard((s) => s.log.bytes)),
      new SnapshotMetric('quill_ingest_log_fsync_seconds', 'fdatasync latency of the ingest logs (one per commit group).', 'histogram', () => shards().flatMap(({ shard, log }) =>
        histogramSamples('quill_ingest_log_fsync_seconds', { shard }, SYNC_BOUNDS_MS.map((ms) => ms / 1000), log.syncLatency.counts, log.syncMs / 1000))),
      new SnapshotMetric('quill_ingest_log_failed_appends_total', 'Log appends that failed (disk full, I/O error): their requests got 503.', 'counter', perShard((s) => s.log.failedAppends)),
      new SnapshotMetric('quill_scan_layout_events', 'Events in the analytics scan layout, by shard.', 'gauge', perShard((s) => s.scan.sealedEvents + s.scan.openEvents)),
      new SnapshotMetric('quill_lmdb_bytes', 'Disk space taken by each LMDB environment (events per shard; meta and persons are shared).', 'gauge', () => this.lmdbSamples(), 'max'),
      new SnapshotMetric('quill_retention_deleted_events_total', 'Events deleted because they were older than their project\'s event_retention_days, by shard.', 'counter', () =>
        shards().map((s) => ({ labels: { shard: s.shard }, value: s.retention.deletedEvents }))),
      new SnapshotMetric('quill_retention_passes_total', 'Completed retention passes, by shard.', 'counter', () =>
        shards().map((s) => ({ labels: { shard: s.shard }, value: s.retention.passes }))),
      new SnapshotMetric('quill_backups_total', 'Backups made through POST /_backup or before an upgrade, by result.', 'counter', () =>
        [{ labels: { result: 'ok' }, value: this.backups.ok }, { labels: { result: 'failed' }, value: this.backups.failed }]),
      new SnapshotMetric('quill_backup_last_success_timestamp_seconds', 'When the last successful backup made by this node finished (0: none).', 'gauge', () =>
        [{ labels: {}, value: this.backups.lastSuccess }], 'max'),
      new SnapshotMetric('quill_lmdb_txn_callbacks', 'Transaction callbacks (apply chunks, person writes…) that lmdb-js ran in one LMDB write transaction, by environment.', 'histogram', () =>
        this.txnSamples('quill_lmdb_txn_callbacks', CALLBACK_BOUNDS, (s) => [s.callbackCounts, s.callbackSum])),
      new SnapshotMetric('quill_lmdb_txn_js_seconds', 'JavaScript time spent inside one LMDB write transaction, by environment.', 'histogram', () =>
        this.txnSamples('quill_lmdb_txn_js_seconds', SECONDS_BOUNDS, (s) => [s.secondsCounts, s.secondsSum])),
      new SnapshotMetric('quill_lmdb_txn_max_callbacks', 'The most callbacks one LMDB write transaction carried since start, by environment and worker.', 'gauge', () =>
        [...txnMeters].map(([env, m]) => ({ labels: { env, worker: rt.index }, value: m.summary.maxCallbacks }))),
      new SnapshotMetric('quill_lmdb_txn_max_js_seconds', 'The longest JavaScript time in one LMDB write transaction since start, by environment and worker.', 'gauge', () =>
        [...txnMeters].map(([env, m]) => ({ labels: { env, worker: rt.index }, value: m.summary.maxSeconds }))),
      new SnapshotMetric('quill_queries_running', 'Analyses and queries running now, by worker (at most QUILL_QUERY_CONCURRENCY each).', 'gauge', () =>
        [{ labels: { worker: rt.index }, value: rt.queries.counts().running }]),
      new SnapshotMetric('quill_queries_queued', 'Analyses and queries waiting for a place, by worker (at most QUILL_QUERY_QUEUE each).', 'gauge', () =>
        [{ labels: { worker: rt.index }, value: rt.queries.counts().queued }]),
      new SnapshotMetric('quill_queries_rejected_total', 'Analyses and queries refused with 429 because the worker\'s queue was full.', 'counter', () =>
        [{ labels: { worker: rt.index }, value: rt.queries.counts().rejected }]),
      new SnapshotMetric('quill_query_budget_exceeded_total', 'Requests stopped by their query budget, by reason: timeout (504), memory (400), or an async query cancelled (DELETE query/:id).', 'counter', () =>
        [{ labels: { reason: 'timeout' }, value: this.budgetStops.timeout }, { labels: { reason: 'memory' }, value: this.budgetStops.memory }, { labels: { reason: 'cancelled' }, value: this.budgetStops.cancelled }]),
      new SnapshotMetric('quill_query_budget_seconds', 'The time budget of an analysis or query (QUILL_QUERY_TIMEOUT_S).', 'gauge', () =>
        [{ labels: {}, value: rt.config.queryTimeoutS }], 'max'),
      new SnapshotMetric('quill_query_memory_budget_bytes', 'How much a worker\'s heap may grow while one analysis or query runs (QUILL_QUERY_MEMORY_MB).', 'gauge', () =>
        [{ labels: {}, value: rt.config.queryMemoryMb * 1024 * 1024 }], 'max'),
      new SnapshotMetric('quill_memory_budget_refusals_total', 'Ingestion requests refused because the process was over its memory budget (503 memory_budget).', 'counter', () =>
        [{ labels: {}, value: rt.ingest.memoryRefusals }]),
      new SnapshotMetric('quill_memory_bytes', 'Memory of each worker by component: its JavaScript heap (used and reserved), memory outside the heap held by its objects (buffers), and estimates of what the hot-persons cache, the open column blocks, the column cache and the part queue hold within it.', 'gauge', () =>
        this.memorySamples()),
      new SnapshotMetric('quill_worker_start_timestamp_seconds', 'When each worker thread started (a replaced thread shows a new time).', 'gauge', () =>
        [{ labels: { worker: rt.index }, value: this.startedAt }]),
    ];
    if (rt.export) {
      const exporters = () => rt.export!.shardStats();
      const perExporter = (read: (s: ReturnType<typeof exporters>[number]) => number) => (): Sample[] =>
        exporters().map((s) => ({ labels: { shard: s.shard }, value: read(s) }));
      metrics.push(
        new SnapshotMetric('quill_export_events_total', 'Events exported to ClickHouse since start, by the shard whose ingest log held them.', 'counter', perExporter((s) => s.rows)),
        new SnapshotMetric('quill_export_lag_events', 'Events logged by a shard and not yet in ClickHouse (since start).', 'gauge', perExporter((s) => s.lagEvents)),
        new SnapshotMetric('quill_export_lag_seconds', 'How long the oldest event logged by a shard and not yet in ClickHouse has waited.', 'gauge', perExporter((s) => s.lagSeconds)),
        new SnapshotMetric('quill_export_failures_total', 'Failed export attempts (each retried with the same batch), by shard.', 'counter', perExporter((s) => s.failures)),
        new SnapshotMetric('quill_export_backfill_remaining_blocks', 'Stored blocks of events a shard has still to export (the backfill of what it held before the export was configured).', 'gauge',
          perExporter((s) => (s.backfill ? s.backfill.blocks - s.backfill.blocksDone : 0))),
        new SnapshotMetric('quill_export_backfill_events_total', 'Stored events the backfill has exported, by shard.', 'counter', perExporter((s) => s.backfill?.events ?? 0)),
      );
      if (rt.index === 0) {
        metrics.push(new SnapshotMetric('quill_export_person_changes_lag', 'Person and group changes not yet exported to ClickHouse.', 'gauge', () =>
          [{ labels: {}, value: rt.export!.personStats()?.lagChanges ?? 0 }], 'first'));
      }
    }
    if (rt.index === 0) {
      // Process-wide figures, reported once (by worker 0) so that merging workers does not add them up.
      metrics.push(
        new SnapshotMetric('process_resident_memory_bytes', 'Resident memory of the Quill process.', 'gauge', () => [{ labels: {}, value: process.memoryUsage.rss() }], 'first'),
        new SnapshotMetric('quill_memory_anonymous_bytes', 'Anonymous resident memory of the Quill process (RssAnon: what QUILL_MEMORY_MB bounds).', 'gauge', () => [{ labels: {}, value: processMemory().anonymous ?? 0 }], 'first'),
        new SnapshotMetric('quill_memory_budget_bytes', 'The memory budget (QUILL_MEMORY_MB; 0 = none).', 'gauge', () => [{ labels: {}, value: Math.round(rt.config.memoryMb * 1048576) }], 'first'),
        new SnapshotMetric('quill_memory_over_budget', 'Whether the process is over its memory budget (1): ingestion answers 503 meanwhile.', 'gauge', () => [{ labels: {}, value: rt.shared.memoryOver ? 1 : 0 }], 'first'),
        new SnapshotMetric('process_cpu_seconds_total', 'CPU time of the Quill process (user and system).', 'counter', () => {
          const u = process.cpuUsage();
          return [{ labels: {}, value: (u.user + u.system) / 1e6 }];
        }, 'first'),
      );
    }
    for (const m of metrics) this.registry.registerMetric(m as never);
  }

  /** Adds series of a hosted service (src/worker/service.ts), read when scraped like the others. */
  register(metrics: readonly SnapshotMetric[]): void {
    for (const m of metrics) this.registry.registerMetric(m as never);
  }

  backupFinished(ok: boolean): void {
    if (ok) {
      this.backups.ok++;
      this.backups.lastSuccess = Date.now() / 1000;
    } else {
      this.backups.failed++;
    }
  }

  /** The registry as prom-client JSON, which the front merges (AggregatorRegistry.aggregate). */
  async json(): Promise<string> {
    try {
      return JSON.stringify(await this.registry.getMetricsAsJSON());
    } finally {
      this.scraped = null;
    }
  }

  /** Every shard's counters, read once per scrape. */
  private scraped: ShardStats[] | null = null;
  private memorySamples(): Sample[] {
    const heap = getHeapStatistics();
    const shards = this.shardStats();
    const worker = this.rt.index;
    const components: Record<string, number> = {
      heap_used: heap.used_heap_size,
      heap_total: heap.total_heap_size,
      external: (heap as { external_memory?: number }).external_memory ?? 0,
      hot_persons: this.rt.ingest.hotPersons.approxBytes,
      open_blocks: shards.reduce((n, s) => n + s.scan.openBytes, 0),
      column_cache: this.rt.columnCache.heldBytes,
      part_queue: shards.reduce((n, s) => n + s.queuedParts, 0) * QUEUED_PART_BYTES,
    };
    return Object.entries(components).map(([component, value]) => ({ labels: { component, worker }, value }));
  }

  private shardStats(): ShardStats[] {
    this.scraped ??= [...this.rt.ingest.shards.values()].map((s) => s.stats());
    return this.scraped;
  }

  private droppedSamples(stats: ShardStats[]): Sample[] {
    // The reasons of /_stats `dropped` (capture's refusals, src/domain/ingest/accept-events.ts), and the apply's.
    const out: Sample[] = [...this.rt.ingest.dropped].map(([reason, value]) => ({ labels: { reason }, value }));
    out.push({ labels: { reason: 'duplicate_uuid' }, value: stats.reduce((n, s) => n + s.duplicateEvents, 0) });
    out.push({ labels: { reason: 'person_event_without_profile' }, value: stats.reduce((n, s) => n + s.droppedEvents, 0) });
    out.push({ labels: { reason: 'dead_letter' }, value: stats.reduce((n, s) => n + s.deadLetteredEvents, 0) });
    return out;
  }

  private txnSamples(name: string, bounds: readonly number[], pick: (s: TxnSummary) => [number[], number]): Sample[] {
    return [...txnMeters].flatMap(([env, meter]) => {
      const [counts, sum] = pick(meter.summary);
      return histogramSamples(name, { env }, bounds, counts, sum);
    });
  }

  private lmdbSamples(): Sample[] {
    const dir = this.rt.config.dataDir;
    const out: Sample[] = [...this.rt.ingest.shards.keys()].map((id) => ({ labels: { env: 'events', shard: id }, value: diskBytes(eventsEnvPath(dir, id)) }));
    if (this.rt.index === 0) {
      out.push({ labels: { env: 'meta', shard: '' }, value: diskBytes(join(dir, META_ENV)) });
      out.push({ labels: { env: 'persons', shard: '' }, value: diskBytes(join(dir, PERSONS_ENV)) });
    }
    return out;
  }
}
