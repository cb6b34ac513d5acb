/**
 * Decoded columns of sealed blocks, kept per worker thread up to a byte budget and evicted least recently used.
 * Sealed blocks never change (they are only deleted or replaced by a new sequence number), so an entry is exact for
 * as long as it lives; the store deletes the entries of blocks it removes.
 */
import type { DictColumn } from './column-block.js';

type Column = Float64Array | Uint32Array | DictColumn;

export class ColumnCache {
  /** Map iteration order is insertion order: re-inserting on a hit makes the first entry the least recently used. */
  private readonly entries = new Map<string, { column: Column; bytes: number }>();
  private bytes = 0;
  /** The budget in use: all of it, or less while the process is over its memory budget. */
  private limit: number;

  constructor(private readonly budgetBytes: number) {
    this.limit = budgetBytes;
  }

  /** Bytes of the columns held now (at most the budget). */
  get heldBytes(): number {
    return this.bytes;
  }

  get(key: string): Column | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.column;
  }

  set(key: string, column: Column, bytes: number): void {
    if (bytes > this.limit) return;
    this.delete(key);
    this.entries.set(key, { column, bytes });
    this.bytes += bytes;
    this.evictTo(this.limit);
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /**
   * Uses `share` (0..1) of the byte budget from now on, evicting the least recently used beyond it at once (the
   * memory budget's relief, src/worker/memory-relief.ts).
   */
  setShare(share: number): void {
    this.limit = this.budgetBytes * share;
    this.evictTo(this.limit);
  }

  private evictTo(limit: number): void {
    while (this.bytes > limit) {
      const oldest = this.entries.keys().next().value as string;
      this.delete(oldest);
    }
  }

  get size(): number {
    return this.bytes;
  }
}
