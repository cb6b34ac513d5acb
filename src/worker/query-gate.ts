/**
 * At most `concurrency` analyses run at once on a worker; up to `queue` more wait their turn in arrival order;
 * beyond that a request is refused at once with 429 and `Retry-After`. Slices keep one analysis from holding the
 * thread, but many at once would still share it with flags and acknowledgements in proportion to their number, and
 * their partial states add up in one heap.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Errors } from '../protocol/errors.js';

/** What the 429 asks a client to wait: about one typical analysis. */
const RETRY_AFTER_S = 2;

export interface GateCounts {
  running: number;
  queued: number;
  admitted: number;
  rejected: number;
}

export class QueryGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private admitted = 0;
  private rejected = 0;
  /** The place the analysis running in this async context holds (see `outside`). */
  private readonly place = new AsyncLocalStorage<{ held: boolean }>();

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  /** Runs `fn` when a place is free; throws the 429 ApiError when the queue is full. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency && this.waiting.length >= this.queue) {
      this.rejected++;
      throw Errors.throttled(RETRY_AFTER_S);
    }
    await this.take(false);
    this.admitted++;
    const place = { held: true };
    try {
      return await this.place.run(place, fn);
    } finally {
      if (place.held) this.free();
    }
  }

  /**
   * Awaits `wait` without holding the caller's place, then takes one again (ahead of the queue, never refused).
   * For the read-your-writes wait of an analysis (until the events acknowledged before it are applied): it costs
   * no CPU nor heap, and while the apply was behind, requests waiting for it held both places and the rest were
   * refused 429 (10 events-list probes a second right after a 3M-event burst: 30 of 180 requests).
   */
  async outside<T>(wait: Promise<T>): Promise<T> {
    const place = this.place.getStore();
    if (!place?.held) return wait;
    place.held = false;
    this.free();
    try {
      return await wait;
    } finally {
      await this.take(true);
      place.held = true;
    }
  }

  private take(first: boolean): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (first ? this.waiting.unshift(resolve) : this.waiting.push(resolve)));
  }

  /** The place passes straight to the next waiter (running stays counted), or is freed. */
  private free(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  counts(): GateCounts {
    return { running: this.running, queued: this.waiting.length, admitted: this.admitted, rejected: this.rejected };
  }
}
