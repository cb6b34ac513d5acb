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

  constructor(private readonly budgetBytes: number) {}

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
    if (bytes > this.budgetBytes) return;
    this.delete(key);
    this.entries.set(key, { column, bytes });
    this.bytes += bytes;
    while (this.bytes > this.budgetBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /** Drops every entry (the memory budget's relief, src/worker/memory-relief.ts). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.bytes;
  }
}
