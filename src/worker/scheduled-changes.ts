/**
 * Applies scheduled flag changes when they are due. Worker 0 looks at the earliest entry of the due index
 * (`scheduled_changes_due`, [epoch ms, project, id]) every TICK_MS: one LMDB read, so a change runs within about
 * TICK_MS of its time.
 *
 * Exactly once, across crashes and restarts: a change is applied in one metadata write transaction that also sets
 * its `executed_at` (or, for a recurring change, moves it to its next time) and removes its due entry, after
 * checking that the entry still stands for the change as stored (not run, not moved, not cancelled). A crash
 * before the commit leaves everything as it was, and the change is applied at the next start; after the commit it
 * is never applied again. A change whose time passed while the node was down is applied at start and logged
 * (`scheduled_change_late`). A change that cannot be applied (its flag was deleted, its conditions no longer
 * validate) is not retried: `failure_reason` says why and its due entry goes.
 */
import { nextOccurrence, patchFor, type RecurrenceInterval } from '../domain/flags/scheduled-change.js';
import type { ScheduledChange } from '../domain/model.js';
import { ApiError } from '../protocol/errors.js';
import { patchFlagInTxn } from './ops/feature-flags.js';
import { replicate } from './replication.js';
import type { WorkerRuntime } from './runtime.js';

const TICK_MS = 200;
/** Later than this after its time, an applied change is logged as late. */
const LATE_MS = 1_000;

export function dueKey(change: ScheduledChange): [number, number, number] {
  return [Date.parse(change.scheduled_at), change.project_id, change.id];
}

type Outcome = { applied: true; late: number } | { applied: false; reason: string | null };

export class ScheduledChangeRunner {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly rt: WorkerRuntime) {}

  start(): void {
    if (this.rt.index !== 0 || this.timer) return;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.tick();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs whatever is due, unless a run is still going. */
  private tick(): void {
    if (this.running || this.closed) return;
    this.running = this.runDue().catch((error: unknown) => {
      this.rt.log.error({ event: 'scheduled_change_failed', err: error }, 'running scheduled flag changes failed');
    }).finally(() => (this.running = null));
  }

  private async runDue(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      this.rt.meta.env.resetReadTxn();
      let first: [number, number, number] | undefined;
      for (const key of this.rt.meta.scheduledDue.getKeys({ limit: 1 })) first = key as [number, number, number];
      if (!first || first[0] > Date.now()) return;
      const [at, projectId, id] = first;
      const outcome = await this.rt.meta.write(() => this.applyInTxn(at, projectId, id));
      if (outcome.applied) {
        await replicate(this.rt, { projectId });
        const fields = { event: 'scheduled_change_applied', project_id: projectId, scheduled_change_id: id, late_ms: outcome.late };
        if (outcome.late > LATE_MS) this.rt.log.info({ ...fields, event: 'scheduled_change_late' }, `scheduled change ${id} was due ${Math.round(outcome.late / 1000)} s ago (the node was down or busy); applied now`);
        else this.rt.log.info(fields, `scheduled change ${id} applied`);
      } else if (outcome.reason) {
        this.rt.log.warn({ event: 'scheduled_change_refused', project_id: projectId, scheduled_change_id: id, reason: outcome.reason }, `scheduled change ${id} could not be applied: ${outcome.reason}`);
      }
    }
  }

  /** The whole of one change, in one write transaction (see the file comment for why this makes it exactly once). */
  private applyInTxn(at: number, projectId: number, id: number): Outcome {
    const meta = this.rt.meta;
    meta.scheduledDue.remove([at, projectId, id]);
    const change = meta.scheduledChanges.get([projectId, id]);
    // A stale entry: the change ran, was cancelled or moved to another time (its own entry stands for it).
    if (!change || change.executed_at !== null || Date.parse(change.scheduled_at) !== at || change.failure_reason !== null) return { applied: false, reason: null };
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    const next: ScheduledChange = { ...change, updated_at: nowIso };
    let outcome: Outcome;
    try {
      const flag = meta.flags.get([projectId, Number(change.record_id)]);
      if (!flag || flag.deleted) throw new Error('The feature flag no longer exists.');
      patchFlagInTxn(this.rt, projectId, flag.id, patchFor(change.payload, flag.filters), {
        user: null, userId: change.created_by, trigger: { job_type: 'scheduled_change', job_id: String(change.id), payload: change.payload },
      });
      outcome = { applied: true, late: now - at };
      next.last_executed_at = nowIso;
      const end = change.end_date === null ? Infinity : Date.parse(change.end_date);
      const following = change.is_recurring && change.recurrence_interval ? nextOccurrence(at, change.recurrence_interval as RecurrenceInterval, now) : null;
      if (following !== null && following <= end) {
        next.scheduled_at = new Date(following).toISOString();
        meta.scheduledDue.put(dueKey(next), 1);
      } else {
        next.executed_at = nowIso;
      }
    } catch (error) {
      const reason = error instanceof ApiError || error instanceof Error ? error.message : String(error);
      next.failure_reason = reason.slice(0, 400);
      next.failure_count = change.failure_count + 1;
      outcome = { applied: false, reason: next.failure_reason };
    }
    meta.scheduledChanges.put([projectId, id], next);
    return outcome;
  }
}
