/**
 * At most `concurrency` analyses run at once on a worker; up to `queue` more wait their turn in arrival order;
 * beyond that a request is refused at once with 429 and `Retry-After`. Slices keep one analysis from holding the
 * thread, but many at once would still share it with flags and acknowledgements in proportion to their number, and
 * their partial states add up in one heap.
 */
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

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  /** Runs `fn` when a place is free; throws the 429 ApiError when the queue is full. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        this.rejected++;
        throw Errors.throttled(RETRY_AFTER_S);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    this.admitted++;
    try {
      return await fn();
    } finally {
      // The place passes straight to the next waiter (running stays counted), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  counts(): GateCounts {
    return { running: this.running, queued: this.waiting.length, admitted: this.admitted, rejected: this.rejected };
  }
}
