/**
 * The front's watchdog over the shard workers (design.md §4a). Each worker writes a heartbeat into shared memory
 * (src/worker/watchdog.ts); a worker whose heartbeat is older than the threshold (QUILL_WATCHDOG_S) is stalled: its
 * thread has not turned its event loop for that long. A stalled worker is reported in `/_health`, the logs and
 * `/metrics`, and gets no new flag or API requests while another worker is healthy (src/front/worker-pool.ts):
 * they would only wait behind it. It gets them again as soon as it beats.
 *
 * A request that runs long while the loop still turns (an analysis in slices, a capture waiting for its fdatasync)
 * is shown (`oldest_request_ms`) but is not a stall.
 */
import type { Logger } from '../observability/logger.js';
import type { SharedState } from '../protocol/shared-state.js';

export interface WorkerWatch {
  worker: number;
  stalled: boolean;
  /** How long since its event loop last turned. */
  heartbeat_age_ms: number;
  /** How long its oldest unfinished request has run (0: none). */
  oldest_request_ms: number;
}

const CHECK_MS = 1000;

export class Watchdog {
  private readonly stalledNow: boolean[];
  /** Stalls seen per worker since start (for /metrics). */
  readonly stalls: number[];
  private readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly shared: SharedState,
    private readonly workers: number,
    private readonly thresholdMs: number,
    private readonly log: Logger,
  ) {
    this.stalledNow = Array.from({ length: workers }, () => false);
    this.stalls = Array.from({ length: workers }, () => 0);
  }

  /** Starts the periodic check that logs stalls and recoveries. */
  start(): void {
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  watch(worker: number, now = Date.now()): WorkerWatch {
    const { beatAt, oldestRequestAt } = this.shared.heartbeatOf(worker);
    // Before a thread's first beat (start-up), count from the front's own start.
    const age = now - (beatAt > 0 ? beatAt : this.startedAt);
    return {
      worker,
      stalled: age > this.thresholdMs,
      heartbeat_age_ms: Math.max(0, Math.round(age)),
      oldest_request_ms: oldestRequestAt > 0 ? Math.max(0, Math.round(now - oldestRequestAt)) : 0,
    };
  }

  /** Whether `worker` is stalled (read on every pick of a worker for a request: two loads from shared memory). */
  stalled(worker: number): boolean {
    const { beatAt } = this.shared.heartbeatOf(worker);
    return Date.now() - (beatAt > 0 ? beatAt : this.startedAt) > this.thresholdMs;
  }

  all(): WorkerWatch[] {
    const now = Date.now();
    return Array.from({ length: this.workers }, (_, i) => this.watch(i, now));
  }

  private check(): void {
    for (const w of this.all()) {
      if (w.stalled === this.stalledNow[w.worker]) continue;
      this.stalledNow[w.worker] = w.stalled;
      if (w.stalled) {
        this.stalls[w.worker]!++;
        this.log.warn(
          { event: 'worker_stalled', worker: w.worker, heartbeat_age_ms: w.heartbeat_age_ms, oldest_request_ms: w.oldest_request_ms },
          `worker ${w.worker} has not turned its event loop for ${w.heartbeat_age_ms} ms; new flag and API requests go to the other workers`,
        );
      } else {
        this.log.info({ event: 'worker_recovered', worker: w.worker }, `worker ${w.worker} is beating again`);
      }
    }
  }
}
