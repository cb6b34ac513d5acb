/**
 * Everything one shard worker thread owns: the stores it opened, its in-memory caches, its shards and its peer
 * channel. Created once per thread (src/worker/entry.ts) and passed to every operation.
 */
import { onLargeTransaction } from '../stores/txn-meter.js';
import { QueryGate } from './query-gate.js';
import type { Config } from '../config/schema.js';
import type { SharedState } from '../protocol/shared-state.js';
import { MetaStore } from '../stores/meta/meta-store.js';
import { PersonStore } from '../stores/persons/person-store.js';
import { PersonCache } from './person-cache.js';
import { IngestService } from './ingest/ingest-service.js';
import { ApplyPacer } from './ingest/apply-pacer.js';
import { DurabilityTrace } from './ingest/durability-trace.js';
import { Peers, type PeerMessage } from './peers.js';
import { ProjectCache } from './project-cache.js';
import { ColumnCache } from '../stores/scan/column-cache.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { PersonCreatedAt } from './analytics/person-created-at.js';
import { WorkerMetrics } from './metrics.js';
import { RetentionJob } from './retention.js';
import { ExportService } from './export/export-service.js';
import { FlagUsage, UsageFlusher } from './flag-usage.js';
import { ScheduledChangeRunner } from './scheduled-changes.js';
import { Services, type ServiceHost } from './service.js';

export type PeerHandler = (rt: WorkerRuntime, msg: PeerMessage, from: number) => Promise<unknown>;

export class WorkerRuntime {
  readonly meta: MetaStore;
  readonly cache: ProjectCache;
  readonly persons: PersonStore;
  /** Persons for flag evaluation, from memory while nobody wrote them (src/worker/person-cache.ts). */
  readonly personCache: PersonCache;
  readonly ingest: IngestService;
  /** When the apply loops may use this thread's time (src/worker/ingest/apply-pacer.ts). */
  readonly pacer = new ApplyPacer();
  readonly peers: Peers;
  readonly log: Logger;
  /** Tests only (QUILL_DURABILITY_TRACE): the journal of log writes, syncs and acknowledgements. */
  readonly durabilityTrace: DurabilityTrace | null;
  /** Decoded scan-layout columns of this thread's shards (src/stores/scan/column-cache.ts). */
  readonly columnCache: ColumnCache;
  /** Persons' created_at for lifecycle, kept while their rows are unchanged (src/worker/analytics/person-created-at.ts). */
  readonly personCreatedAt: PersonCreatedAt;
  /** Deletes events past their project's retention (src/worker/retention.ts). */
  readonly retention: RetentionJob;
  /** What GET /metrics reads from this thread (src/worker/metrics.ts). */
  readonly metrics: WorkerMetrics;
  /** How many analyses run at once here (src/worker/query-gate.ts). */
  readonly queries: QueryGate;
  /** The ClickHouse export (src/worker/export/), when QUILL_CLICKHOUSE_URL is set. */
  readonly export: ExportService | null;
  /** Flag evaluations counted in memory (src/worker/flag-usage.ts), and their periodic write. */
  readonly flagUsage = new FlagUsage();
  readonly flagUsageFlusher: UsageFlusher;
  /** Applies scheduled flag changes when they are due (worker 0; src/worker/scheduled-changes.ts). */
  readonly scheduledChanges: ScheduledChangeRunner;
  /**
   * Services hosted through the small interface of src/worker/service.ts (the runtime knows none of them by name;
   * src/worker/entry.ts adds them, an operation finds one by its key).
   */
  readonly services = new Services();

  constructor(
    readonly config: Readonly<Config>,
    readonly index: number,
    /** Memory shared with the front and the other workers (src/protocol/shared-state.ts). */
    readonly shared: SharedState,
    peerHandlers: Record<string, PeerHandler>,
  ) {
    this.log = createLogger(config, `worker ${index}`);
    this.durabilityTrace = config.durabilityTrace ? new DurabilityTrace(config.dataDir, index) : null;
    this.columnCache = new ColumnCache(config.analyticsCacheMb * 1024 * 1024);
    this.meta = new MetaStore(config.dataDir);
    this.cache = new ProjectCache(this.meta);
    this.persons = new PersonStore(config.dataDir, (teamsAndIds) => shared.personsChanged(teamsAndIds), (team, id) => shared.personWriting(team, id));
    // Before any write: the export must see every person change from the first one on.
    if (config.clickhouseUrl !== null) this.persons.exportChanges();
    this.personCache = new PersonCache(this.persons, shared);
    this.personCreatedAt = new PersonCreatedAt(this.persons, shared);
    this.ingest = new IngestService(this, this.persons);
    this.retention = new RetentionJob(this);
    this.export = config.clickhouseUrl !== null ? new ExportService(this) : null;
    this.queries = new QueryGate(config.queryConcurrency, config.queryQueue);
    this.metrics = new WorkerMetrics(this);
    this.flagUsageFlusher = new UsageFlusher(this);
    this.scheduledChanges = new ScheduledChangeRunner(this);
    onLargeTransaction((env, txnId, callbacks, seconds) =>
      this.log.warn(
        { event: 'large_transaction', env, txn: txnId, callbacks, js_seconds: Math.round(seconds * 1000) / 1000 },
        `one ${env} write transaction has run ${callbacks} callbacks for ${seconds.toFixed(2)} s of JavaScript`,
      ));
    this.peers = new Peers(index, config.workers, async (msg, from) => {
      const handler = peerHandlers[msg.kind];
      if (!handler) throw new Error(`unknown peer message ${msg.kind}`);
      // Everything but a reload needs this worker's shards. (A reload must not wait: shard recovery itself may
      // replicate new group types to every worker while they are all still starting.)
      if (msg.kind !== 'reload') await this.ready;
      return handler(this, msg, from);
    });
  }

  get workerCount(): number {
    return this.config.workers;
  }

  /** What a hosted service may use of this worker (src/worker/service.ts). */
  host(): ServiceHost {
    return {
      config: this.config, index: this.index, workerCount: this.workerCount, log: this.log, meta: this.meta,
      contended: () => this.pacer.contended,
    };
  }

  private readonly closeHooks: (() => void)[] = [];
  private markOpened!: () => void;
  /**
   * Resolves once this worker's shards are open (src/worker/entry.ts calls `shardsOpened`). Peer messages other
   * than reloads wait for it: they read or queue into shards this worker has not opened yet.
   */
  readonly ready: Promise<void> = new Promise<void>((resolve) => (this.markOpened = resolve));

  shardsOpened(): void {
    this.markOpened();
  }

  /** Runs `hook` after the stores are closed (e.g. releasing the data-directory lock). */
  onClose(hook: () => void): void {
    this.closeHooks.push(hook);
  }

  /**
   * Closes every store of this thread. `fatal`: the thread is dying of an uncaught exception, so nothing more is
   * applied (the replacement thread replays the logs) — only the chunk in flight is let finish.
   */
  async close(opts: { fatal?: boolean } = {}): Promise<void> {
    await this.retention.close();
    await this.scheduledChanges.close();
    await this.flagUsageFlusher.close();
    await this.export?.close();
    await this.services.close();
    await this.ingest.close(opts);
    this.pacer.close();
    this.peers.close();
    await this.meta.close();
    for (const hook of this.closeHooks) hook();
  }
}
