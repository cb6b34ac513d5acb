/**
 * Data retention (`event_retention_days` per project, off by default): each worker deletes, from the shards it
 * owns, the events of those projects older than the retention (their column blocks), together with their uuid
 * entries and day counters. Event definitions stay, as PostHog keeps them after their events are gone; their
 * `volume_30_day` is read from the day counters, which follow the deletions.
 *
 * A pass runs at start-up, then every QUILL_RETENTION_INTERVAL_MINUTES, and at once when a project's retention
 * changes (PATCH /api/projects/:id/ asks every worker). It never stalls ingestion: every step is a short write
 * transaction of the shard's events environment (one block dropped or rewritten, with up to SEAL_EVENTS uuid
 * entries removed), and while the machine is saturated the job pauses between steps so that it takes at most
 * SHARE_UNDER_LOAD of its thread's time. Cached analysis answers are dropped once a pass has removed something.
 *
 * An event that arrives with a timestamp already past the retention is stored and deleted by the next pass.
 */
import { all } from '../stores/lmdb-env.js';
import { PeriodicPass, yieldAfterStep } from './background-pass.js';
import type { PeerHandler, WorkerRuntime } from './runtime.js';
import type { Shard } from './ingest/shard.js';

const DAY_MS = 86_400_000;
/** Sealed blocks dropped whole per transaction: each also removes the uuid entry of every event it held. */
const WHOLE_BLOCKS = 1;

export const RETENTION_RUN = 'retention.run';

export interface RetentionCounters {
  passes: number;
  deletedEvents: number;
  running: boolean;
}

export class RetentionJob {
  private readonly passes: PeriodicPass;

  constructor(private readonly rt: WorkerRuntime) {
    this.passes = new PeriodicPass(() => this.run(), (error) =>
      rt.log.error({ event: 'retention_failed', err: error }, `retention pass failed: ${(error as Error)?.message ?? error}`));
  }

  /** Schedules the first pass and the periodic ones. */
  start(): void {
    this.passes.start(this.rt.config.retentionIntervalMinutes * 60_000);
  }

  /** Asks for a pass; one that is running finishes, then another runs (it may have read the old settings). */
  request(): Promise<void> {
    return this.passes.request();
  }

  close(): Promise<void> {
    return this.passes.close();
  }

  private get closed(): boolean {
    return this.passes.closed;
  }

  private async run(): Promise<void> {
    const shards = [...this.rt.ingest.shards.values()];
    for (const s of shards) s.retention.running = true;
    try {
      await this.pass(shards);
    } finally {
      for (const s of shards) s.retention.running = false;
    }
  }

  private async pass(shards: Shard[]): Promise<void> {
    // Another thread may have just changed a project's retention: read the metadata as of now.
    this.rt.meta.env.resetReadTxn();
    const projects = all(this.rt.meta.projects.getRange().map((e) => e.value)).filter((p) => (p.event_retention_days ?? 0) > 0);
    // The ClickHouse export applies each project's retention there too (once per pass, from worker 0: every pass of
    // every worker has the same cutoffs within a few minutes).
    if (this.rt.persons.exporting && this.rt.index === 0 && projects.length > 0) {
      const at = Date.now();
      await this.rt.persons.write(() => {
        for (const p of projects) this.rt.persons.mirrorDeletion({ kind: 'retention', team: p.id, before: at - p.event_retention_days! * DAY_MS, at });
      });
    }
    for (const shard of shards) {
      let deleted = 0;
      for (const project of projects) {
        if (this.closed) return;
        const cutoff = Date.now() - project.event_retention_days! * DAY_MS;
        const removed = await this.expire(shard, project.id, cutoff);
        if (removed > 0) {
          deleted += removed;
          this.rt.shared.projectChanged(project.id);
        }
      }
      shard.retention.passes++;
      shard.retention.deletedEvents += deleted;
      if (deleted > 0) this.rt.log.info({ event: 'retention', shard: shard.id, deleted }, `shard ${shard.id}: deleted ${deleted} events past their project's retention`);
    }
  }

  /** Deletes one project's expired events from one shard, a block at a time. */
  private async expire(shard: Shard, team: number, cutoff: number): Promise<number> {
    const store = shard.events;
    let removed = 0;
    for (let more = true; more && !this.closed;) {
      const started = performance.now();
      const step = await store.write(() => store.expireStep(team, cutoff, WHOLE_BLOCKS));
      removed += step.removed;
      more = step.more;
      await yieldAfterStep(performance.now() - started, this.rt.pacer.contended);
    }
    return removed;
  }
}

/** Peer message: run a retention pass now (a project's retention changed); resolves when it has finished. */
export const retentionRunHandler: PeerHandler = async (rt) => {
  await rt.retention.request();
  return true;
};
