/**
 * What keeps the recordings bounded, on the shards a worker owns: retention (a project's `recording_retention_days`,
 * default 30: a recording is deleted once its start is older) and the disk budget (QUILL_RECORDINGS_MAX_MB over all
 * shards, an equal share each: past it, the oldest recordings of the shard are deleted, whatever their project, until
 * it is back under). The budget counts the compressed chunks stored; LMDB reuses the pages they free, so the files
 * stop growing rather than shrink.
 *
 * A pass runs 5 s after start-up, every QUILL_RETENTION_INTERVAL_MINUTES, at once when a project's recording
 * retention changes, and after writes while a shard is over its budget (at most once a second). Each step deletes a
 * few sessions in one transaction, oldest first (the `by_start` index), and while the machine is saturated the job
 * pauses between steps so it takes at most a fifth of its thread, as event retention does (src/worker/retention.ts).
 */
import { recordingSettingsOf } from '../../domain/recordings/settings.js';
import type { RecordingStore } from '../../stores/recordings/recording-store.js';
import { PeriodicPass, yieldAfterStep } from '../background-pass.js';
import type { ServiceHost } from '../service.js';

const DAY_MS = 86_400_000;
/** Sessions looked at, and deleted, per step (one transaction each). */
const PAGE = 200;
const DELETE_PER_STEP = 20;
/** After a write past the budget, the next pass waits at least this long (a burst of writes asks for one). */
const BUDGET_PASS_EVERY_MS = 1_000;

export interface CleanupCounters {
  passes: number;
  deletedByRetention: number;
  deletedByBudget: number;
  deletedByApi: number;
}

export class RecordingCleanup {
  readonly counters: CleanupCounters = { passes: 0, deletedByRetention: 0, deletedByBudget: 0, deletedByApi: 0 };
  private readonly passes: PeriodicPass;
  private lastBudgetPass = 0;

  constructor(private readonly host: ServiceHost, private readonly shards: () => RecordingStore[]) {
    this.passes = new PeriodicPass(() => this.pass(), (error) =>
      host.log.error({ event: 'recording_retention_failed', err: error }, `recording retention pass failed: ${(error as Error)?.message ?? error}`));
  }

  start(): void {
    this.passes.start(this.host.config.retentionIntervalMinutes * 60_000);
  }

  /** The stored bytes each shard may hold; Infinity without a budget. */
  budgetBytesPerShard(): number {
    const mb = this.host.config.recordingsMaxMb;
    const shards = Math.max(1, this.shardCount);
    return mb > 0 ? (mb * 1024 * 1024) / shards : Infinity;
  }

  private shardCount = 0;

  private budgetTimer: NodeJS.Timeout | null = null;

  /**
   * Called after an append: when a shard this worker owns is over its budget, a pass runs at once, or as soon as a
   * second has passed since the last one (a burst of writes asks for one pass, and the last write is not forgotten).
   */
  noteWritten(): void {
    const budget = this.budgetBytesPerShard();
    if (budget === Infinity || this.budgetTimer !== null || this.closed) return;
    if (!this.shards().some((s) => s.totals().storedBytes > budget)) return;
    const wait = Math.max(0, BUDGET_PASS_EVERY_MS - (Date.now() - this.lastBudgetPass));
    this.budgetTimer = setTimeout(() => {
      this.budgetTimer = null;
      void this.request();
    }, wait);
    this.budgetTimer.unref();
  }

  request(): Promise<void> {
    return this.passes.request();
  }

  async close(): Promise<void> {
    if (this.budgetTimer) clearTimeout(this.budgetTimer);
    await this.passes.close();
  }

  private get closed(): boolean {
    return this.passes.closed;
  }

  private async pass(): Promise<void> {
    for (const store of this.shards()) {
      if (this.closed) return;
      await this.expire(store);
      await this.enforceBudget(store);
    }
    this.counters.passes++;
  }

  /** Retention days of every project, read as of now (another thread may have just changed one). */
  private retentionDays(): Map<number, number> {
    this.host.meta.env.resetReadTxn();
    const days = new Map<number, number>();
    for (const { value } of this.host.meta.projects.getRange()) days.set(value.id, recordingSettingsOf(value.recordings).retentionDays);
    return days;
  }

  private async expire(store: RecordingStore): Promise<void> {
    const days = this.retentionDays();
    const now = Date.now();
    // Past the shortest retention nothing can have expired: the walk (oldest first) stops there.
    const earliestCutoff = now - Math.min(...days.values(), Infinity) * DAY_MS;
    let after: [number, number, string] | null = null;
    let deleted = 0;
    while (!this.closed) {
      const page = store.oldest(PAGE, after);
      if (page.length === 0) break;
      const due: [number, string][] = [];
      for (const [start, team, sessionId] of page) {
        if (start >= earliestCutoff) break;
        // A project that no longer exists keeps nothing.
        const keepDays = days.get(team) ?? 0;
        if (start < now - keepDays * DAY_MS) due.push([team, sessionId]);
      }
      for (let i = 0; i < due.length && !this.closed; i += DELETE_PER_STEP) {
        deleted += await this.step(() => store.deleteSessions(due.slice(i, i + DELETE_PER_STEP)).then((r) => r.sessions), 'deletedByRetention');
      }
      const last = page[page.length - 1]!;
      if (last[0] >= earliestCutoff || page.length < PAGE) break;
      after = last;
    }
    if (deleted > 0) this.host.log.info({ event: 'recording_retention', shard: store.shard, deleted }, `recordings shard ${store.shard}: deleted ${deleted} recordings past their project's retention`);
  }

  private async enforceBudget(store: RecordingStore): Promise<void> {
    const budget = this.budgetBytesPerShard();
    this.lastBudgetPass = Date.now();
    let deleted = 0;
    for (let excess = store.totals().storedBytes - budget; !this.closed && excess > 0; excess = store.totals().storedBytes - budget) {
      // The oldest sessions whose bytes cover the excess, and no more (at most DELETE_PER_STEP at a time).
      const doomed: [number, string][] = [];
      let freed = 0;
      for (const [, team, sessionId] of store.oldest(DELETE_PER_STEP)) {
        if (freed >= excess) break;
        doomed.push([team, sessionId]);
        freed += store.session(team, sessionId)?.storedBytes ?? 0;
      }
      if (doomed.length === 0) break;
      deleted += await this.step(() => store.deleteSessions(doomed).then((r) => r.sessions), 'deletedByBudget');
    }
    if (deleted > 0) this.host.log.info({ event: 'recording_budget', shard: store.shard, deleted }, `recordings shard ${store.shard}: deleted its ${deleted} oldest recordings to stay within QUILL_RECORDINGS_MAX_MB`);
  }

  /**
   * One deletion step, counted as soon as it has committed (what it deleted is gone for readers from then on), then
   * a pause that keeps the job within its share of the thread while the machine is saturated.
   */
  private async step(run: () => Promise<number>, counter: 'deletedByRetention' | 'deletedByBudget'): Promise<number> {
    const started = performance.now();
    const n = await run();
    this.counters[counter] += n;
    await yieldAfterStep(performance.now() - started, this.host.contended());
    return n;
  }

  /** The data directory's shard count, known at start. */
  setShardCount(n: number): void {
    this.shardCount = n;
  }
}
