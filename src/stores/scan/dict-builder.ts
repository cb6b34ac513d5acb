/**
 * One dictionary column of the open block while it grows (src/stores/scan/block-builder.ts): the distinct values
 * and one code per row.
 *
 * Sparse until it is worth being dense. A column starts as the list of the rows that have a value (ascending) with
 * their codes, 8 bytes per value; it becomes one code per row (4 bytes a row, at the block's capacity) once more
 * than 1/16 of the rows have one. So what a column costs is linear in the values it holds: a property only a few
 * events carry (one wide event's thousand names, a name unique to one event) costs those few entries, not a
 * 32,768-row array each, while the columns most events carry are the plain arrays every scan reads fast.
 *
 * Rows are only appended, and arrays replaced rather than rewritten when they grow, are cut back (`truncate`) or
 * turn dense, so a view taken at `n` rows keeps seeing exactly those rows.
 */
import { Dictionary } from './dictionary.js';

/** Below this share of filled rows a column stays sparse. */
const DENSE_SHARE = 16;

export class DictBuilder {
  readonly dictionary = new Dictionary();
  /** One code per row once dense; null while sparse. */
  private dense: Uint32Array | null = null;
  /** Sparse: rows holding a value, ascending, and their codes (the first `count` entries). */
  private rows: Uint32Array = new Uint32Array(4);
  private codes: Uint32Array = new Uint32Array(4);
  private count = 0;

  constructor(private capacity: number) {}

  get isDense(): boolean {
    return this.dense !== null;
  }

  /** Rows holding a value (sparse) or the capacity's codes (dense), in bytes, plus the dictionary's values. */
  approxBytes(): number {
    const codes = this.dense ? this.dense.byteLength : this.rows.byteLength + this.codes.byteLength;
    return codes + this.dictionary.approxBytes();
  }

  /** Sets row `row` to `value` (rows are set in ascending order, each once). */
  set(row: number, value: unknown): number {
    const code = this.dictionary.codeOf(value);
    this.setCode(row, code);
    return code;
  }

  /** Sets row `row` to an existing code (rows in ascending order, each once). */
  setCode(row: number, code: number): void {
    if (this.dense) {
      this.dense[row] = code;
      return;
    }
    if (this.count === this.rows.length) {
      if ((this.count + 1) * DENSE_SHARE > this.capacity) {
        this.densify();
        this.dense![row] = code;
        return;
      }
      this.rows = grown(this.rows, this.count * 2);
      this.codes = grown(this.codes, this.count * 2);
    }
    this.rows[this.count] = row;
    this.codes[this.count++] = code;
  }

  /** The code of a row (0: no value). */
  codeAt(row: number): number {
    if (this.dense) return this.dense[row]!;
    const i = this.lowerBound(row);
    return i < this.count && this.rows[i] === row ? this.codes[i]! : 0;
  }

  /** Calls `fn(row, code)` for every row in [from, to) that holds a value, in row order. */
  forEachIn(from: number, to: number, fn: (row: number, code: number) => void): void {
    if (this.dense) {
      const d = this.dense;
      for (let row = from; row < to; row++) if (d[row] !== 0) fn(row, d[row]!);
      return;
    }
    for (let i = this.lowerBound(from); i < this.count && this.rows[i]! < to; i++) fn(this.rows[i]!, this.codes[i]!);
  }

  /** Whether any row in [from, to) holds a value. */
  anyIn(from: number, to: number): boolean {
    if (this.dense) {
      for (let row = from; row < to; row++) if (this.dense[row] !== 0) return true;
      return false;
    }
    const i = this.lowerBound(from);
    return i < this.count && this.rows[i]! < to;
  }

  /**
   * The codes of rows [0, n) as one array, for readers: the live array itself when dense (rows added later are
   * written past n), a new one when sparse (`denseView` is called lazily, by the columns a query reads).
   */
  denseView(n: number): () => Uint32Array {
    if (this.dense) {
      const view = this.dense.subarray(0, n);
      return () => view;
    }
    const rows = this.rows.subarray(0, this.count);
    const codes = this.codes.subarray(0, this.count);
    let made: Uint32Array | null = null;
    return () => {
      if (!made) {
        made = new Uint32Array(n);
        for (let i = 0; i < rows.length && rows[i]! < n; i++) made[rows[i]!] = codes[i]!;
      }
      return made;
    };
  }

  grow(capacity: number): void {
    this.capacity = capacity;
    if (this.dense) {
      const next = new Uint32Array(capacity);
      next.set(this.dense);
      this.dense = next;
    }
  }

  /** Forgets rows from `n` on; the arrays are replaced, since a view taken before may still be read. */
  truncate(n: number): void {
    if (this.dense) {
      const next = this.dense.slice();
      next.fill(0, n);
      this.dense = next;
      return;
    }
    const keep = this.lowerBound(n);
    this.rows = this.rows.slice(0, Math.max(4, keep));
    this.codes = this.codes.slice(0, Math.max(4, keep));
    this.count = keep;
  }

  private densify(): void {
    const dense = new Uint32Array(this.capacity);
    for (let i = 0; i < this.count; i++) dense[this.rows[i]!] = this.codes[i]!;
    this.dense = dense;
    this.rows = new Uint32Array(0);
    this.codes = new Uint32Array(0);
    this.count = 0;
  }

  /** The first sparse entry whose row is >= `row`. */
  private lowerBound(row: number): number {
    let lo = 0;
    let hi = this.count;
    // The common questions are about the newest rows.
    if (hi > 0 && this.rows[hi - 1]! < row) return hi;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid]! < row) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function grown(a: Uint32Array, length: number): Uint32Array<ArrayBuffer> {
  const next = new Uint32Array(length);
  next.set(a);
  return next;
}
