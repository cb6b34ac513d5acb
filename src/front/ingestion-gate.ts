/**
 * Flags first at the front (issue 55). Ordering work inside a worker thread (src/worker/waiting-requests.ts) does
 * not stop a saturating ingestion from taking the CPUs: on 2 cores the shard workers, V8's GC helpers, the front
 * and the load generators time-share, and a flag request waits its turn behind all of them (perf, beside case).
 * So while a worker is answering flag or API requests, ingestion requests reach it at most IN_FLIGHT_WHILE_ASKED
 * at a time; the others wait here, already read, and go as earlier ones are answered. Ingestion then runs at the
 * rate those few in flight allow (each waits for its fdatasync), and the CPU it no longer takes answers flags.
 * When no flag or API request came for INTERACTIVE_RECENT_MS, ingestion goes unthrottled again. Nothing is
 * refused or dropped: a held request is answered later, never not at all.
 *
 * The limit trades flags for ingestion while both run (beside case, 2 rounds alternated, flags from 8 connections
 * beside /batch/ from 16; bench/results/ab-issue55-gate-limit-2026-12-02.json): 1 in flight gave 1,413/1,929 flag
 * req/s and 30k/40k events/s acknowledged, 2 gave 1,177/1,748 and 36k/52k, 4 gave 1,033/1,595 and 52k/75k, no gate
 * 777/1,147 and 66k/81k; p99 26-45 ms in every setting. 4 keeps most of ingestion and a third more flags.
 */
export const IN_FLIGHT_WHILE_ASKED = 4;
export const INTERACTIVE_RECENT_MS = 50;

export class IngestionGate {
  private inFlight = 0;
  /** Ingestion requests that had to wait here since start (for /metrics). */
  heldTotal = 0;
  private lastAskedAt = Number.NEGATIVE_INFINITY;
  private readonly held: (() => void)[] = [];

  constructor(private readonly limit = IN_FLIGHT_WHILE_ASKED, private readonly recentMs = INTERACTIVE_RECENT_MS) {}

  /** A flag or API request was sent to this worker at `now` (ms, monotonic). */
  asked(now: number): void {
    this.lastAskedAt = now;
  }

  /** Whether an ingestion request may go to the worker now; if not, `go` runs when it may. */
  admit(now: number, go: () => void): boolean {
    if (this.open(now)) {
      this.inFlight++;
      return true;
    }
    this.held.push(go);
    this.heldTotal++;
    return false;
  }

  /** An admitted ingestion request was answered or failed at `now`: the next held ones go if the gate allows. */
  finished(now: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    while (this.held.length > 0 && this.open(now)) {
      this.inFlight++;
      this.held.shift()!();
    }
  }

  /** The worker's thread died: nothing it had is in flight any more, and every held request goes (to its replacement). */
  reset(): void {
    const all = this.held.splice(0);
    this.inFlight = all.length;
    for (const go of all) go();
  }

  /** Ingestion requests waiting here. */
  get waiting(): number {
    return this.held.length;
  }

  private open(now: number): boolean {
    return this.inFlight < this.limit || now - this.lastAskedAt >= this.recentMs;
  }
}
