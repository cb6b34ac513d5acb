/**
 * The process's memory budget (QUILL_MEMORY_MB). The front samples the process's anonymous resident memory every
 * SAMPLE_MS (one read of /proc/self/status: memory is per process, so one sampler serves every thread) and writes
 * "over budget" into the memory it shares with the workers. While it is set, every ingestion request is refused
 * with 503 and Retry-After before anything is written (src/worker/ingest/ingest-service.ts), and each worker empties
 * its caches once (src/worker/memory-relief.ts); the apply keeps draining what was acknowledged, which is what
 * gives memory back. Flags and the API keep answering.
 */
import { overBudget } from '../domain/memory-budget.js';
import type { Logger } from '../observability/logger.js';
import { processMemory } from '../observability/process-memory.js';
import type { SharedState } from '../protocol/shared-state.js';

const SAMPLE_MS = 250;

export class MemoryGuard {
  private over = false;
  private toldAtRest = false;
  private readonly timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly budgetBytes: number,
    private readonly shared: SharedState,
    private readonly log: Logger,
    private readonly anonymousBytes: () => number | null = () => processMemory().anonymous,
    private readonly eventsWaiting: () => number = () => shared.totalBehind(),
  ) {
    if (budgetBytes <= 0) return;
    if (this.sample() === null) {
      log.warn({ event: 'memory_budget_unavailable' }, 'QUILL_MEMORY_MB is set but this system does not report anonymous resident memory (/proc/self/status RssAnon): the budget is not enforced');
      return;
    }
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /** Reads the memory once and updates the shared flag; null when it cannot be read. */
  sample(): number | null {
    const anonymous = this.anonymousBytes();
    if (anonymous === null) return null;
    const waiting = this.eventsWaiting();
    const over = overBudget(this.over, anonymous, this.budgetBytes, waiting > 0);
    if (over !== this.over) {
      this.over = over;
      this.shared.setMemoryOver(over);
      const mb = Math.round(anonymous / 1048576);
      const budgetMb = Math.round(this.budgetBytes / 1048576);
      if (over) {
        this.log.warn({ event: 'memory_over_budget', anonymous_mb: mb, budget_mb: budgetMb }, `memory over its budget (${mb} MB of ${budgetMb} MB): ingestion answers 503 with Retry-After until it is back under 90 % (under the budget once nothing waits to be applied)`);
      } else {
        this.log.info({ event: 'memory_under_budget', anonymous_mb: mb, budget_mb: budgetMb }, `memory back under its budget (${mb} MB of ${budgetMb} MB): accepting events again`);
      }
    }
    if (over && waiting === 0 && !this.toldAtRest) {
      this.toldAtRest = true;
      this.log.warn({ event: 'memory_over_budget_at_rest', anonymous_mb: Math.round(anonymous / 1048576), budget_mb: Math.round(this.budgetBytes / 1048576) }, 'memory over its budget with nothing left to apply: QUILL_MEMORY_MB is below what this node needs at rest; ingestion stays refused until it is raised');
    }
    return anonymous;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
