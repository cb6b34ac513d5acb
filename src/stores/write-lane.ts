/**
 * The bound on what one LMDB write transaction carries. lmdb-js runs every `transaction()` callback that is queued
 * before its write thread starts the next transaction in that one transaction, however many there are; a thread
 * that queues faster than transactions commit (a catch-up, a burst of API writes, a commit slowed by a busy disk)
 * grows one transaction without end, and LMDB's dirty-page list costs more per page as it grows: the worker-crash
 * soak's stalls were such a transaction, its callbacks taking seconds each.
 *
 * A lane holds the callbacks of an environment that this thread has handed to lmdb-js but lmdb-js has not
 * finished (committed or failed). At most MAX_CALLBACKS_PER_TXN are handed over at once; the rest wait here, in
 * order, until one finishes. A transaction only holds callbacks handed over and unfinished, so it carries at most
 * that many, by construction; each caller bounds its own callback (the apply sizes its chunks by their measured
 * cost: src/worker/ingest/chunk-sizer.ts; deletions and retention work in steps).
 *
 * 8: concurrent API writes still share a transaction (a commit costs far more than a small callback), while eight
 * of the largest callbacks the apply writes stay within one transaction's time bound.
 */
import type { RootDatabase } from 'lmdb';

export const MAX_CALLBACKS_PER_TXN = 8;

class WriteLane {
  private handedOver = 0;
  private readonly waiting: (() => void)[] = [];

  async run<T>(queue: () => Promise<T>): Promise<T> {
    if (this.handedOver >= MAX_CALLBACKS_PER_TXN) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.handedOver++;
    try {
      return await queue();
    } finally {
      this.handedOver--;
      this.waiting.shift()?.();
    }
  }
}

const lanes = new WeakMap<RootDatabase, WriteLane>();

/**
 * Queues `callback` as a write transaction callback of `env` through its lane. Inside a running write transaction
 * of this thread lmdb-js runs a nested call at once, in that transaction: it must not wait for the lane, whose
 * slot the running transaction holds.
 */
export function inLane<T>(env: RootDatabase, callback: () => T): Promise<T> {
  if ((env as unknown as { env: { writeTxn?: unknown } }).env.writeTxn) return Promise.resolve(env.transaction(callback));
  let lane = lanes.get(env);
  if (!lane) lanes.set(env, (lane = new WriteLane()));
  return lane.run(() => env.transaction(callback));
}
