/**
 * What the worker's background jobs that delete old data (event retention, src/worker/retention.ts; recording
 * cleanup, src/worker/recordings/cleanup.ts) share: when a pass runs, and how a pass shares its thread.
 *
 * A first pass once start-up has settled, then one every interval. Passes never overlap: a request while one runs
 * makes exactly one more run after it (the running one may have read the old settings), and any number of requests
 * meanwhile still make only that one.
 */

/** The first pass waits for start-up (replay, the other workers) to settle. */
const FIRST_PASS_DELAY_MS = 5_000;
/** Node fires a timer longer than 2^31-1 ms (about 24.8 days) after 1 ms instead: intervals are capped there. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The share of its thread a background job may take while the machine is saturated. */
export const SHARE_UNDER_LOAD = 0.2;

export class PeriodicPass {
  private requested = false;
  private loop: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  /** `pass` runs one whole pass; `onError` hears a pass that threw (not while closing: the store may be going). */
  constructor(private readonly pass: () => Promise<void>, private readonly onError: (error: unknown) => void) {}

  /** Whether close() was called: a pass checks it between steps and returns early. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Schedules the first pass and then one every `everyMs`. */
  start(everyMs: number): void {
    const every = Math.min(everyMs, MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      void this.request();
      this.timer = setInterval(() => void this.request(), every);
      this.timer.unref();
    }, Math.min(FIRST_PASS_DELAY_MS, every));
    this.timer.unref();
  }

  /** Asks for a pass; resolves when the passes that run because of it have finished. */
  request(): Promise<void> {
    this.requested = true;
    this.loop ??= this.run().finally(() => (this.loop = null));
    return this.loop;
  }

  /** No more passes; waits for the running one to return (it stops at its next step). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
  }

  private async run(): Promise<void> {
    try {
      while (this.requested && !this.stopped) {
        this.requested = false;
        await this.pass();
      }
    } catch (error) {
      if (!this.stopped) this.onError(error);
    }
  }
}

/**
 * Between two steps of a background job (each a short write transaction): lets requests and the apply loop run, and
 * while the machine is saturated pauses long enough that the job takes at most SHARE_UNDER_LOAD of its thread.
 */
export function yieldAfterStep(stepMs: number, contended: boolean): Promise<void> {
  const pause = contended ? stepMs * (1 / SHARE_UNDER_LOAD - 1) : 0;
  return new Promise((resolve) => (pause > 0 ? setTimeout(resolve, pause) : setImmediate(resolve)));
}
