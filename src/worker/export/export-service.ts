/**
 * The ClickHouse export of one worker (on only with `QUILL_CLICKHOUSE_URL`): an event exporter per shard whose ingest
 * log this worker writes, and on worker 0 the person exporter. Each runs its own retry loop
 * (src/worker/export/export-loop.ts); what they have done and how far behind they are goes to `/_stats` and
 * `/metrics`. The client library is loaded here, so a node without the export never loads it.
 */
import type { Config } from '../../config/schema.js';
import { formatPosition } from '../../stores/ingest-log/index.js';
import { ClickHouseSink } from '../../stores/clickhouse/sink.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import type { Shard } from '../ingest/shard.js';
import { EventExporter } from './event-exporter.js';
import { ExportLoop, type ExportLoopStats } from './export-loop.js';
import { PersonExporter } from './person-exporter.js';

export const EXPORT_OLDEST = 'export.oldest';

/** Peer message: the oldest unexported event of this worker (for deletions, which wait until it is past them). */
export const exportOldestHandler: PeerHandler = async (rt) => rt.export?.oldestUnexported() ?? null;

export interface ShardExportStats extends ExportLoopStats {
  shard: number;
  /** Events logged on this shard and not yet in ClickHouse, and how long the oldest has waited. */
  lagEvents: number;
  lagSeconds: number;
  exportedUpTo: string | null;
}

export interface PersonExportStats extends ExportLoopStats {
  /** Person change entries not yet exported. */
  lagChanges: number;
}

export class ExportService {
  private sink: ClickHouseSink | null = null;
  private readonly shardLoops = new Map<number, { exporter: EventExporter; loop: ExportLoop; shard: Shard }>();
  private persons: { exporter: PersonExporter; loop: ExportLoop } | null = null;

  constructor(private readonly rt: WorkerRuntime) {}

  /** Starts the exporters once this worker's shards are open and recovered. */
  async start(): Promise<void> {
    const config = this.rt.config;
    this.sink = await ClickHouseSink.open(sinkConfig(config));
    for (const shard of this.rt.ingest.shards.values()) {
      const exporter = new EventExporter(shard, this.rt.persons, this.sink, (team) => this.rt.cache.groupTypes(team));
      const loop = new ExportLoop(`events of shard ${shard.id}`, this.rt.log, () => exporter.step());
      this.shardLoops.set(shard.id, { exporter, loop, shard });
      loop.start();
    }
    if (this.rt.index === 0) {
      const exporter = new PersonExporter(this.rt.persons, this.sink, (at) => this.exportedEverywhereUntil(at));
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

  private async exportedEverywhereUntil(at: number): Promise<boolean> {
    const oldest = await this.rt.peers.all<number | null>({ kind: EXPORT_OLDEST });
    return oldest.every((o) => o === null || o > at);
  }

  /** Whether new requests logged on this shard must be refused: the lag policy is back-pressure and it is over the bound. */
  overLag(shard: number): boolean {
    if (this.rt.config.clickhouseLagPolicy !== 'backpressure') return false;
    const entry = this.shardLoops.get(shard);
    return entry !== undefined && entry.shard.source.exportLag().events > this.rt.config.clickhouseMaxLag;
  }

  shardStats(): ShardExportStats[] {
    return [...this.shardLoops.values()].map(({ exporter, loop, shard }) => {
      const lag = shard.source.exportLag();
      const upTo = exporter.exportedUpTo;
      return { shard: shard.id, ...loop.stats, lagEvents: lag.events, lagSeconds: lag.seconds, exportedUpTo: upTo ? formatPosition(upTo) : null };
    });
  }

  personStats(): PersonExportStats | null {
    return this.persons ? { ...this.persons.loop.stats, lagChanges: this.persons.exporter.lag() } : null;
  }

  async close(): Promise<void> {
    await Promise.all([...this.shardLoops.values()].map(({ loop }) => loop.stop()));
    await this.persons?.loop.stop();
    await this.sink?.close();
  }
}

function sinkConfig(config: Readonly<Config>) {
  return {
    url: config.clickhouseUrl!, user: config.clickhouseUser, password: config.clickhousePassword,
    database: config.clickhouseDatabase, cluster: config.clickhouseCluster,
  };
}
