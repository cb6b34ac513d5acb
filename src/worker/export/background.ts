/**
 * The export is the least urgent work of a worker: its lag costs nothing but freshness in ClickHouse, while flag
 * answers, acknowledgements and the apply are owed within milliseconds. So its work runs in slices of SLICE_MS, and
 * while flag or API requests arrive, the CPUs are saturated (the apply pacer's view of the thread,
 * src/worker/ingest/apply-pacer.ts) or the apply has a backlog to catch up with (on any shard: the workers share
 * the cores), it pauses after each slice so that it keeps only its share of the thread (exportShare), and cuts
 * smaller batches. While it gives way to ingestion, the share grows with the export's own lag, so that a sustained
 * load still ends exported within minutes; while flags are served it stays at the share they were measured with. Measured with the flags case right after a saturating
 * load and with the export bench (bench/README.md): an export that took what it wanted while the apply drained a
 * burst delayed the apply by as much.
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { requestsWaiting } from '../waiting-requests.js';

/** What the export gives way to: the thread's traffic (the apply pacer's view) and the apply's backlog. */
export interface Foreground {
  readonly interactive: boolean;
  readonly contended: boolean;
  /** Acknowledged events wait to be applied (APPLY_BACKLOG_MIN or more, on the node). */
  readonly applying: boolean;
  /** How long the oldest event this worker's exporters have not sent yet has waited, in seconds. */
  readonly exportLagS: number;
}

/** A backlog the apply is working through, rather than the few events of a record being applied now. */
export const APPLY_BACKLOG_MIN = 1_000;

const SLICE_MS = 2;
/** The export's share of the thread while it gives way to ingestion: MIN_SHARE at once, all of it at FULL_SHARE_LAG_S of lag. */
const MIN_SHARE = 0.1;
const FULL_SHARE_LAG_S = 300;
/**
 * …and while flag or API requests arrive, whatever its lag: the share the flags floor was measured with right after
 * a large load (bench/README.md, the export bench).
 */
const SHARE_WHILE_INTERACTIVE = 0.2;

/** The share of its thread the export keeps while it gives way, its oldest unexported event `lagS` seconds old. */
export function exportShare(f: Foreground): number {
  if (f.interactive) return SHARE_WHILE_INTERACTIVE;
  return Math.min(1, MIN_SHARE + ((1 - MIN_SHARE) * Math.max(0, f.exportLagS)) / FULL_SHARE_LAG_S);
}

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
    if (foregroundBusy(this.foreground)) {
      const share = exportShare(this.foreground);
      if (share < 1) await sleep(ran * (1 / share - 1));
    }
    this.start = performance.now();
  }
}
