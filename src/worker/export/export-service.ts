/**
 * The ClickHouse export of one worker (on only with `QUILL_CLICKHOUSE_URL`): an event exporter per shard whose ingest
 * log this worker writes, and on worker 0 the person exporter. Each runs its own retry loop
 * (src/worker/export/export-loop.ts); what they have done and how far behind they are goes to `/_stats` and
 * `/metrics`. The client library is loaded here, so a node without the export never loads it.
 */
import type { Config } from '../../config/schema.js';
import { formatPosition } from '../../stores/ingest-log/index.js';
import { ClickHouseReader } from '../../stores/clickhouse/reader.js';
import { ClickHouseSink, failureText } from '../../stores/clickhouse/sink.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import type { Shard } from '../ingest/shard.js';
import { BackfillExporter, startingPointOf, takeStartingPoint } from './backfill.js';
import { APPLY_BACKLOG_MIN, type Foreground } from './background.js';
import { EventExporter } from './event-exporter.js';
import { ExportLoop, type ExportLoopStats } from './export-loop.js';
import { PersonExporter } from './person-exporter.js';

export const EXPORT_OLDEST = 'export.oldest';
export const EXPORT_STARTING_POINTS = 'export.starting_points';
export const EXPORT_PERSONS_POSITION = 'export.persons_position';

/** Peer message: this worker's shards' backfill starting points (a log exporter's first start needs every shard's). */
export const exportStartingPointsHandler: PeerHandler = async (rt) => {
  if (!rt.export) throw new Error('the ClickHouse export is not configured on this worker');
  return rt.export.startingPoints();
};



/** Peer message: the oldest unexported event of this worker (for deletions, which wait until it is past them). */
export const exportOldestHandler: PeerHandler = async (rt) => rt.export?.oldestUnexported() ?? null;

/** Peer message: the persons change log's position, from the worker that exports it (null from the others). */
export const exportPersonsPositionHandler: PeerHandler = async (rt) => rt.export?.personsPosition() ?? null;

export interface ShardExportStats extends ExportLoopStats {
  shard: number;
  /** Events logged on this shard and not yet in ClickHouse, and how long the oldest has waited. */
  lagEvents: number;
  lagSeconds: number;
  exportedUpTo: string | null;
  /** The backfill of what the shard stored before the export was configured. */
  backfill: { blocks: number; blocksDone: number; events: number; skippedBlocks: number; done: boolean; failures: number; error: string | null } | null;
}

export interface PersonExportStats extends ExportLoopStats {
  /** Person change entries not yet exported. */
  lagChanges: number;
}

export class ExportService {
  private sink: ClickHouseSink | null = null;
  private readerOpening: Promise<ClickHouseReader> | null = null;
  private lookup: 'overrides' | 'every_distinct_id' = 'every_distinct_id';
  private lookupAsked: Promise<void> | null = null;
  private readonly shardLoops = new Map<number, { exporter: EventExporter; loop: ExportLoop; shard: Shard; backfill: BackfillExporter; backfillLoop: ExportLoop }>();
  private markPointsTaken!: () => void;
  /** Resolves once this worker's shards have their backfill starting points (other workers' log exporters ask). */
  private readonly pointsTaken = new Promise<void>((resolve) => (this.markPointsTaken = resolve));
  private persons: { exporter: PersonExporter; loop: ExportLoop } | null = null;
  private closed = false;

  /** What the exporters give way to (src/worker/export/background.ts). */
  private readonly foreground: Foreground;

  constructor(private readonly rt: WorkerRuntime) {
    const { pacer, shared } = rt;
    const loops = this.shardLoops;
    this.foreground = {
      get interactive() {
        return pacer.interactive;
      },
      get contended() {
        return pacer.contended;
      },
      get applying() {
        return shared.totalBehind() >= APPLY_BACKLOG_MIN;
      },
      // The person exporter (worker 0) goes by its worker's event exporters: person changes come with events.
      get exportLagS() {
        let lag = 0;
        for (const { shard } of loops.values()) lag = Math.max(lag, shard.source.exportLag().seconds);
        return lag;
      },
    };
  }

  /**
   * Starts the exporters once this worker's shards are open and recovered. Never fails the worker's start: a
   * failure here (the client library missing, a write error taking the starting points) is logged and retried.
   */
  async start(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        await this.startOnce();
        return;
      } catch (error) {
        this.rt.log.error({ event: 'export_start_failed', error: failureText(error) }, `the ClickHouse export could not start: ${failureText(error)}`);
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** attempt)).unref());
      }
    }
  }

  private async startOnce(): Promise<void> {
    const config = this.rt.config;
    this.sink ??= await ClickHouseSink.open(sinkConfig(config));
    // The schema is there now: the analyses' way of looking up persons can be asked before the first of them.
    if (config.analytics === 'clickhouse') this.personLookup();
    const shards = [...this.rt.ingest.shards.values()];
    for (const shard of shards) {
      const point = await takeStartingPoint(shard);
      if (point.block < point.blocks.length) {
        this.rt.log.info({ event: 'export_backfill', shard: shard.id, blocks: point.blocks.length - point.block },
          `shard ${shard.id}: exporting its ${point.blocks.length - point.block} stored blocks of events to ClickHouse (backfill)`);
      }
    }
    this.markPointsTaken();
    for (const shard of shards) {
      const exporter = new EventExporter(shard, this.rt.persons, this.sink, (team) => this.rt.cache.groupTypes(team), this.rt.ingest.shardCount,
        () => this.rt.peers.all<Record<string, Record<string, number>>>({ kind: EXPORT_STARTING_POINTS }), this.foreground);
      const loop = new ExportLoop(`events of shard ${shard.id}`, this.rt.log, () => exporter.step());
      const backfill = new BackfillExporter(shard, this.rt.persons, this.sink, this.foreground);
      const backfillLoop = new ExportLoop(`backfill of shard ${shard.id}`, this.rt.log, async () => {
        const wasDone = backfill.done;
        const rows = await backfill.step();
        if (!wasDone && backfill.done) {
          const p = backfill.progress()!;
          this.rt.log.info({ event: 'export_backfill_done', shard: shard.id, events: p.events, skipped_blocks: p.skippedBlocks },
            `shard ${shard.id}: backfill done, ${p.events} events exported`);
        }
        return rows;
      });
      this.shardLoops.set(shard.id, { exporter, loop, shard, backfill, backfillLoop });
      loop.start();
      backfillLoop.start();
    }
    if (this.rt.index === 0) {
      const exporter = new PersonExporter(this.rt.persons, this.sink, (at) => this.exportedEverywhereUntil(at), this.foreground);
      const loop = new ExportLoop('persons', this.rt.log, () => exporter.step());
      this.persons = { exporter, loop };
      loop.start();
    }
  }

  /** The log time of the oldest event of this worker's shards not yet exported (null: none waits). */
  oldestUnexported(): number | null {
    let oldest: number | null = null;
    for (const { shard } of this.shardLoops.values()) {
      const since = shard.source.oldestUnexported();
      if (since !== null && (oldest === null || since < oldest)) oldest = since;
    }
    return oldest;
  }

  /** The client for queries on the exported tables (QUILL_ANALYTICS=clickhouse), opened on first use. */
  reader(): Promise<ClickHouseReader> {
    this.readerOpening ??= ClickHouseReader.open(sinkConfig(this.rt.config)).catch((error: unknown) => {
      this.readerOpening = null;
      throw error;
    });
    return this.readerOpening;
  }

  /**
   * Where queries look up events' current persons (ClickHouseReader.personLookup), asked of the database once the
   * reader opens (at the latest once the export has its schema); every distinct id's table until the answer is
   * known (the same answers, only slower).
   */
  personLookup(): 'overrides' | 'every_distinct_id' {
    this.lookupAsked ??= this.reader().then((r) => r.personLookup()).then((lookup) => {
      this.lookup = lookup;
    }, () => {
      this.lookupAsked = null;
    });
    return this.lookup;
  }

  /** This worker's persons exporter's position in the change log (worker 0 only; null elsewhere). */
  personsPosition(): { last: number; done: number } | null {
    return this.persons ? this.persons.exporter.position() : null;
  }

  /** The persons change log's position, wherever its exporter runs. */
  async personsPositionEverywhere(): Promise<{ last: number; done: number } | null> {
    const all = await this.rt.peers.all<{ last: number; done: number } | null>({ kind: EXPORT_PERSONS_POSITION });
    return all.find((p) => p !== null) ?? null;
  }

  /** Whether every event logged on any shard before `at` (epoch ms) is in ClickHouse (read-your-writes of a query). */
  exportedEverywhereUntil(at: number): Promise<boolean> {
    return this.oldestEverywhereAfter(at);
  }

  private async oldestEverywhereAfter(at: number): Promise<boolean> {
    const oldest = await this.rt.peers.all<number | null>({ kind: EXPORT_OLDEST });
    return oldest.every((o) => o === null || o > at);
  }

  /** Whether new requests logged on this shard must be refused: the lag policy is back-pressure and it is over the bound. */
  overLag(shard: number): boolean {
    if (this.rt.config.clickhouseLagPolicy !== 'backpressure') return false;
    const entry = this.shardLoops.get(shard);
    return entry !== undefined && entry.shard.source.exportLag().events > this.rt.config.clickhouseMaxLag;
  }

  /** Per own shard, how far it had applied each source log when its backfill started. */
  async startingPoints(): Promise<Record<string, Record<string, number>>> {
    await this.pointsTaken;
    const out: Record<string, Record<string, number>> = {};
    for (const shard of this.rt.ingest.shards.values()) out[shard.id] = startingPointOf(shard)?.appliedFrom ?? {};
    return out;
  }

  shardStats(): ShardExportStats[] {
    return [...this.shardLoops.values()].map(({ exporter, loop, shard, backfill, backfillLoop }) => {
      const lag = shard.source.exportLag();
      const upTo = exporter.exportedUpTo;
      const p = backfill.progress();
      return {
        shard: shard.id, ...loop.stats, lagEvents: lag.events, lagSeconds: lag.seconds, exportedUpTo: upTo ? formatPosition(upTo) : null,
        backfill: p
          ? { blocks: p.blocks.length, blocksDone: p.block, events: p.events, skippedBlocks: p.skippedBlocks, done: p.block >= p.blocks.length, failures: backfillLoop.stats.failures, error: backfillLoop.stats.error }
          : null,
      };
    });
  }

  personStats(): PersonExportStats | null {
    return this.persons ? { ...this.persons.loop.stats, lagChanges: this.persons.exporter.lag() } : null;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.shardLoops.values()].flatMap(({ loop, backfillLoop }) => [loop.stop(), backfillLoop.stop()]));
    await this.persons?.loop.stop();
    await this.sink?.close();
    await (await this.readerOpening?.catch(() => null))?.close();
  }
}

function sinkConfig(config: Readonly<Config>) {
  return {
    url: config.clickhouseUrl!, user: config.clickhouseUser, password: config.clickhousePassword,
    database: config.clickhouseDatabase, cluster: config.clickhouseCluster,
  };
}
