/**
 * The memory the front shares with every worker thread (one SharedArrayBuffer, handed over in `workerData`):
 *
 *  - `started`: becomes 1 once the data-directory lock is held, bootstrap ran and every shard recovered, so a thread
 *    Piscina starts later to replace one that died knows it may open its shards by itself (src/worker/entry.ts);
 *  - for every pair of shards (owner, source): how far into the source's ingest log the owner has applied, and
 *    flushed to disk, the events it owns (src/worker/ingest/shard.ts). A source may forget a log record once
 *    every owner of one of its events has applied it.
 *
 * Positions travel as one number, `segment * 2^32 + offset` (exact: segments stay far below 2^21).
 */
import type { LogPosition } from '../stores/ingest-log/index.js';

/** Upper bound of shards in a data directory (the shard count is the worker count at creation, at most 64). */
export const MAX_SHARDS = 64;

const STARTED = 0;
/** Int32 words before the positions (16 bytes keeps the BigInt64 view aligned). */
const HEADER_BYTES = 16;

export function createSharedState(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + MAX_SHARDS * MAX_SHARDS * 8);
}

export function positionNumber(p: LogPosition): number {
  return p.segment * 0x1_0000_0000 + p.offset;
}

export class SharedState {
  private readonly words: Int32Array;
  private readonly applied: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.words = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.applied = new BigInt64Array(buffer, HEADER_BYTES, MAX_SHARDS * MAX_SHARDS);
  }

  get started(): boolean {
    return Atomics.load(this.words, STARTED) === 1;
  }

  markStarted(): void {
    Atomics.store(this.words, STARTED, 1);
  }

  /** How far into `source`'s log `owner` has applied (and flushed) its events. */
  appliedFrom(owner: number, source: number): number {
    return Number(Atomics.load(this.applied, owner * MAX_SHARDS + source));
  }

  /** Positions only move forward. */
  publishAppliedFrom(owner: number, source: number, position: number): void {
    const i = owner * MAX_SHARDS + source;
    if (position > Number(Atomics.load(this.applied, i))) Atomics.store(this.applied, i, BigInt(position));
  }
}
