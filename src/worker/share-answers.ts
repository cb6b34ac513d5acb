/**
 * The answers share links serve, kept per worker for QUILL_SHARE_CACHE_S whatever arrives meanwhile: a link posted
 * on a busy page is asked the same questions thousands of times, and each is computed once per period. Computing
 * is bounded as well: one share answer at a time per worker (the others wait behind it, at most QUEUE_LIMIT of
 * them, then 429), the same question asked while it is computed waits for that computation, so public links
 * never take more than one analysis slot of a worker from the signed-in users.
 */
import { Errors } from '../protocol/errors.js';

type Json = Record<string, unknown>;

export interface ShareAnswer {
  value: Json;
  is_cached: boolean;
  last_refresh: string;
}

/** Answers remembered per worker (least recently used first out). */
const MAX_ENTRIES = 500;
/** Share computations waiting per worker beyond which a link answers 429. */
const QUEUE_LIMIT = 16;

export class ShareAnswers {
  private readonly entries = new Map<string, { value: Json; computedAt: number }>();
  private readonly running = new Map<string, Promise<{ value: Json; computedAt: number }>>();
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  /** Answers computed and served from memory since start (tests and /_stats read them). */
  computed = 0;
  served = 0;

  constructor(private readonly freshMs: number) {}

  async answer(key: string, now: number, compute: () => Promise<Json>): Promise<ShareAnswer> {
    this.served++;
    const hit = this.entries.get(key);
    if (hit && now - hit.computedAt < this.freshMs) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return { value: hit.value, is_cached: true, last_refresh: new Date(hit.computedAt).toISOString() };
    }
    const pending = this.running.get(key);
    if (pending) {
      const done = await pending;
      return { value: done.value, is_cached: true, last_refresh: new Date(done.computedAt).toISOString() };
    }
    if (this.waiting >= QUEUE_LIMIT) throw Errors.throttled(5);
    const work = this.inTurn(compute).then((value) => {
      const entry = { value, computedAt: Date.now() };
      this.entries.delete(key);
      this.entries.set(key, entry);
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
      return entry;
    });
    this.running.set(key, work);
    try {
      const done = await work;
      return { value: done.value, is_cached: false, last_refresh: new Date(done.computedAt).toISOString() };
    } finally {
      this.running.delete(key);
    }
  }

  /** Runs `compute` after every share computation queued before it on this worker. */
  private inTurn(compute: () => Promise<Json>): Promise<Json> {
    this.waiting++;
    const turn = this.tail.then(() => {
      this.waiting--;
      this.computed++;
      return compute();
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}
