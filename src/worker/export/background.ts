/**
 * The export is the least urgent work of a worker: its lag costs nothing but freshness in ClickHouse, while flag
 * answers, acknowledgements and the apply are owed within milliseconds. So its work runs in slices of SLICE_MS, and
 * while flag or API requests arrive, the CPUs are saturated (the apply pacer's view of the thread,
 * src/worker/ingest/apply-pacer.ts) or the apply has a backlog to catch up with (on any shard: the workers share
 * the cores), it pauses after each slice so that it takes at most SHARE_WHEN_BUSY of the thread, and cuts smaller
 * batches. Measured with the flags case right after a saturating load and with the export bench (bench/README.md).
 * An export that took what it wanted while the apply drained a burst delayed the apply by as much.
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { requestsWaiting } from '../waiting-requests.js';

/** What the export gives way to: the thread's traffic (the apply pacer's view) and the apply's backlog. */
export interface Foreground {
  readonly interactive: boolean;
  readonly contended: boolean;
  /** Acknowledged events wait to be applied (APPLY_BACKLOG_MIN or more, on the node). */
  readonly applying: boolean;
}

/** A backlog the apply is working through, rather than the few events of a record being applied now. */
export const APPLY_BACKLOG_MIN = 1_000;

const SLICE_MS = 2;
const SHARE_WHEN_BUSY = 0.2;

/** Whether the export should give way now. */
export function foregroundBusy(f: Foreground): boolean {
  return f.interactive || f.contended || f.applying;
}

export class BackgroundSlicer {
  private start = performance.now();

  constructor(private readonly foreground: Foreground) {}

  /** Whether this slice has run its time (cheap; a loop asks it before awaiting `pace`). */
  due(): boolean {
    return performance.now() - this.start >= SLICE_MS || requestsWaiting();
  }

  /** Yields once the slice has run its time, and then pauses long enough to keep its share while others wait. */
  async pace(): Promise<void> {
    const ran = performance.now() - this.start;
    if (!this.due()) return;
    await yieldToLoop();
    if (foregroundBusy(this.foreground)) await sleep(ran * (1 / SHARE_WHEN_BUSY - 1));
    this.start = performance.now();
  }
}
