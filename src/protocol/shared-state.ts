/**
 * The memory the front shares with every worker thread (one SharedArrayBuffer, handed over in `workerData`):
 *
 *  - `started`: becomes 1 once the data-directory lock is held, bootstrap ran and every shard recovered, so a thread
 *    Piscina starts later to replace one that died knows it may open its shards by itself (src/worker/entry.ts);
 *  - per shard, two log positions: `durable` (the end of the last record made durable and so acknowledged) and
 *    `applied` (everything up to here is in LMDB). The apply loops use them to keep causal order across shards
 *    (src/worker/ingest/shard.ts): a record remembers how far every other shard was durable when it was logged,
 *    and is applied only once those shards have applied that far;
 *  - an apply generation, bumped whenever a shard's `applied` moves, that a waiting apply loop sleeps on.
 *
 * Positions travel as one number, `segment * 2^32 + offset` (exact: segments stay far below 2^21).
 */
import type { LogPosition } from '../stores/ingest-log/index.js';

/** Upper bound of shards in a data directory (the shard count is the worker count at creation, at most 64). */
export const MAX_SHARDS = 64;

const STARTED = 0;
const APPLY_GENERATION = 1;
/** Int32 words before the positions (16 bytes keeps the BigInt64 view aligned). */
const HEADER_BYTES = 16;

export function createSharedState(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + MAX_SHARDS * 2 * 8);
}

export function positionNumber(p: LogPosition): number {
  return p.segment * 0x1_0000_0000 + p.offset;
}

export class SharedState {
  private readonly words: Int32Array;
  private readonly positions: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.positions = new BigInt64Array(buffer, HEADER_BYTES, MAX_SHARDS * 2);
  }

  get started(): boolean {
    return Atomics.load(this.words, STARTED) === 1;
  }

  markStarted(): void {
    Atomics.store(this.words, STARTED, 1);
  }

  durable(shard: number): number {
    return Number(Atomics.load(this.positions, shard * 2));
  }

  /** Positions only move forward (a late publisher never takes one back). */
  publishDurable(shard: number, position: number): void {
    if (position > this.durable(shard)) Atomics.store(this.positions, shard * 2, BigInt(position));
  }

  applied(shard: number): number {
    return Number(Atomics.load(this.positions, shard * 2 + 1));
  }

  /**
   * Sets a shard's applied position and wakes every apply loop waiting for one. `reset` allows moving back: a
   * shard reopened by a replacement thread starts again from its stored checkpoint.
   */
  publishApplied(shard: number, position: number, reset = false): void {
    if (reset || position > this.applied(shard)) Atomics.store(this.positions, shard * 2 + 1, BigInt(position));
    Atomics.add(this.words, APPLY_GENERATION, 1);
    Atomics.notify(this.words, APPLY_GENERATION);
  }

  /** The current apply generation; pass it to `waitForApply` to sleep until it changes. */
  applyGeneration(): number {
    return Atomics.load(this.words, APPLY_GENERATION);
  }

  /**
   * Resolves when some shard's applied position moved after `generation` was read, or after `timeoutMs` at the
   * latest. Never blocks the thread (Atomics.waitAsync); the timer also keeps the event loop alive meanwhile.
   */
  waitForApply(generation: number, timeoutMs: number): Promise<void> {
    const wait = Atomics.waitAsync(this.words, APPLY_GENERATION, generation, timeoutMs);
    if (!wait.async) return Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      wait.value.then(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]).finally(() => clearTimeout(timer));
  }
}
