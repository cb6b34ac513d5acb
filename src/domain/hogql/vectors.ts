/**
 * Evaluating bound expressions over a batch of rows: a block of the scan layout on a shard, or a chunk of an
 * in-memory relation on the coordinating worker. An expression becomes a `Vec`, a value per row, in the cheapest
 * form its inputs allow:
 *
 *   - coded: a code per row and a value per code. A dictionary column (the event name, a property) is one, and so
 *     is any function of one dictionary column and constants: the function runs once per distinct value of the
 *     block, not once per row (`lower(properties.$browser) = 'chrome'` is decided per browser);
 *   - a function of the timestamp that is constant within 15-minute slots (`toStartOfDay(timestamp)`) runs once
 *     per slot of the block and becomes coded too;
 *   - f64 / u32: the timestamp and the person id columns themselves;
 *   - per row: anything else, through a closure.
 *
 * Filters become a mask (one byte per row): comparisons of the timestamp with a constant are one typed-array loop,
 * coded predicates a table lookup per row.
 */
import type { FilterNode } from '../analytics/property-filters.js';
import { callFn, inSetValue, type Bound } from './bind.js';
import type { ColumnRef } from './plan.js';
import { dateTimeOf, isNumeric, numberOf, truth, type Type, type Value, type ValueContext } from './values.js';

export interface Vec {
  at(row: number): Value;
  /** Coded: the value of row i is `values[codes[i]]`. */
  codes?: ArrayLike<number>;
  values?: Value[];
  /** A numeric column (NaN is null). */
  f64?: Float64Array;
  /** Bounds of the f64 column's values when known (a block's timestamps): comparisons decided per block. */
  range?: [number, number];
  /** A person id column (0 is null). */
  u32?: Uint32Array;
  constant?: boolean;
}

export interface Batch {
  readonly n: number;
  column(ref: ColumnRef, type: Type): Vec;
  /** Rows passing a property filter tree (only batches of events have one). */
  filterMask(node: FilterNode): Uint8Array;
  /** The earliest and latest timestamp of the batch (sizes the slot tables). */
  readonly timeRange: [number, number] | null;
  /**
   * Once the batch's rows are filtered, the rows later vectors are read at (set by the scan): vectors built after
   * that (grouping keys, aggregate arguments) may compute only those rows.
   */
  selected: { rows: Int32Array; count: number } | null;
  /**
   * A scratch array of `n` ints for this batch's evaluation, with no promise about its contents. Block batches
   * lend pooled arrays, returned when the block is done: a scan allocates little per block.
   */
  scratch(n: number): Int32Array;
}

const SLOT_MS = 900_000;
const MAX_SLOT_TABLE = 1 << 20;

export function constVec(value: Value): Vec {
  return { at: () => value, constant: true };
}

export function codedVec(codes: ArrayLike<number>, values: Value[]): Vec {
  return { at: (row) => values[codes[row]!]!, codes, values };
}

/** Per-batch memo of the vectors already built (a bound node shared by several parts is evaluated once). */
export type VecCache = Map<Bound, Vec>;

export function vec(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): Vec {
  let v = cache.get(b);
  if (!v) {
    v = build(b, batch, ctx, cache);
    cache.set(b, v);
  }
  return v;
}

function build(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): Vec {
  switch (b.k) {
    case 'const':
      return constVec(b.value);
    case 'col':
      return batch.column(b.ref, b.type);
    case 'filter':
      return codedVec(batch.filterMask(b.node), [false, true]);
    case 'inSet': {
      const arg = vec(b.arg, batch, ctx, cache);
      if (arg.codes) return codedVec(arg.codes, arg.values!.map((v) => inSetValue(b, v)));
      return { at: (row) => inSetValue(b, arg.at(row)) };
    }
    case 'fn':
      return fnVec(b, batch, ctx, cache);
  }
}

function fnVec(b: Extract<Bound, { k: 'fn' }>, batch: Batch, ctx: ValueContext, cache: VecCache): Vec {
  const args = b.args.map((a) => vec(a, batch, ctx, cache));
  const varying = args.filter((a) => !a.constant);
  if (varying.length === 0) return constVec(callFn(b, args.map((a) => a.at(0))));
  const values = new Array<Value>(args.length);
  // A function of one dictionary column (and constants): once per distinct value.
  if (varying.every((a) => a.codes !== undefined && a.codes === varying[0]!.codes)) {
    const codes = varying[0]!.codes!;
    const size = varying[0]!.values!.length;
    const out = new Array<Value>(size);
    for (let c = 0; c < size; c++) {
      for (let i = 0; i < args.length; i++) values[i] = args[i]!.constant ? args[i]!.at(0) : args[i]!.values![c]!;
      out[c] = callFn(b, values);
    }
    return codedVec(codes, out);
  }
  // A function of the timestamp constant within 15-minute slots: once per slot.
  if (b.slots && varying.length === 1 && args[0] === varying[0] && args[0]!.f64 && b.args[0]!.type === 'DateTime' && batch.timeRange) {
    const consts = args.map((a) => (a.constant ? a.at(0) : null));
    return slotted(args[0]!.f64, batch, (t) => {
      consts[0] = t;
      return callFn(b, consts);
    });
  }
  switch (args.length) {
    case 1: {
      const a = args[0]!;
      return {
        at: (row) => {
          values[0] = a.at(row);
          return callFn(b, values);
        },
      };
    }
    case 2: {
      const a = args[0]!;
      const c = args[1]!;
      return {
        at: (row) => {
          values[0] = a.at(row);
          values[1] = c.at(row);
          return callFn(b, values);
        },
      };
    }
    default:
      return {
        at: (row) => {
          for (let i = 0; i < args.length; i++) values[i] = args[i]!.at(row);
          return callFn(b, values);
        },
      };
  }
}

/**
 * A coded vector of `fn(timestamp)` computed once per 15-minute slot the batch's timestamps fall in (only at the
 * batch's selected rows when it has been filtered already).
 */
function slotted(ts: Float64Array, batch: Batch, fn: (slotStart: number) => Value): Vec {
  const n = batch.n;
  const codes = batch.scratch(n);
  const values: Value[] = [null];
  const [min, max] = batch.timeRange!;
  const first = Math.floor(min / SLOT_MS);
  const span = Math.floor(max / SLOT_MS) - first + 1;
  const sel = batch.selected;
  const count = sel ? sel.count : n;
  const rows = sel ? sel.rows : null;
  if (span > 0 && span <= MAX_SLOT_TABLE) {
    const table = new Int32Array(span).fill(-1);
    // Events come mostly in time order: a row in the previous row's slot reuses its code without a division.
    let lo = Infinity;
    let hi = -Infinity;
    let code = 0;
    for (let k = 0; k < count; k++) {
      const i = rows === null ? k : rows[k]!;
      const t = ts[i]!;
      if (t >= lo && t < hi) {
        codes[i] = code;
        continue;
      }
      if (t !== t) {
        codes[i] = 0;
        continue;
      }
      const s = Math.floor(t / SLOT_MS) - first;
      let c = table[s]!;
      if (c < 0) {
        c = values.push(fn((s + first) * SLOT_MS)) - 1;
        table[s] = c;
      }
      codes[i] = code = c;
      lo = (s + first) * SLOT_MS;
      hi = lo + SLOT_MS;
    }
    return codedVec(codes, values);
  }
  const memo = new Map<number, number>();
  for (let k = 0; k < count; k++) {
    const i = rows === null ? k : rows[k]!;
    const t = ts[i]!;
    if (t !== t) {
      codes[i] = 0;
      continue;
    }
    const s = Math.floor(t / SLOT_MS);
    let c = memo.get(s);
    if (c === undefined) {
      c = values.push(fn(s * SLOT_MS)) - 1;
      memo.set(s, c);
    }
    codes[i] = c;
  }
  return codedVec(codes, values);
}

const COMPARISONS: Record<string, (x: number, c: number) => boolean> = {
  less: (x, c) => x < c,
  lessOrEquals: (x, c) => x <= c,
  greater: (x, c) => x > c,
  greaterOrEquals: (x, c) => x >= c,
  equals: (x, c) => x === c,
  notEquals: (x, c) => x !== c,
};
const FLIPPED: Record<string, string> = { less: 'greater', lessOrEquals: 'greaterOrEquals', greater: 'less', greaterOrEquals: 'lessOrEquals', equals: 'equals', notEquals: 'notEquals' };

/** `timestamp >= '2024-01-01'` and the like: a numeric column against a number converted once. */
interface NumericComparison {
  column: Float64Array;
  op: string;
  c: number;
  range: [number, number] | undefined;
}

function numericComparison(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): NumericComparison | 'none' | null {
  if (b.k !== 'fn' || !COMPARISONS[b.name] || b.args.length !== 2) return null;
  let [left, right] = b.args as [Bound, Bound];
  let op = b.name;
  if (left.k === 'const' && right.k !== 'const') {
    [left, right] = [right, left];
    op = FLIPPED[op]!;
  }
  if (right.k !== 'const' || !(left.type === 'DateTime' || isNumeric(left.type))) return null;
  const v = vec(left, batch, ctx, cache);
  if (!v.f64) return null;
  const c = left.type === 'DateTime' ? dateTimeOf(right.value, right.type, ctx) : isNumeric(right.type) ? numberOf(right.value, right.type) : null;
  if (c === null || Number.isNaN(c)) return 'none';
  return { column: v.f64, op, c, range: v.range };
}

/** Whether every value in [min, max] passes (true), none does (false), or it depends on the row (null). */
function decidedByRange(cmp: NumericComparison): boolean | null {
  if (!cmp.range) return null;
  const [min, max] = cmp.range;
  const test = COMPARISONS[cmp.op]!;
  if (cmp.op === 'equals' || cmp.op === 'notEquals') {
    if (cmp.c < min || cmp.c > max) return cmp.op === 'notEquals';
    return null;
  }
  const lo = test(min, cmp.c);
  const hi = test(max, cmp.c);
  return lo === hi ? lo : null;
}

/** Keeps the rows (all rows when `rows` is null) whose column value passes; writes in place. */
function keepNumeric(cmp: NumericComparison, rows: Int32Array | null, count: number, out: Int32Array): number {
  const col = cmp.column;
  const c = cmp.c;
  let kept = 0;
  // One loop per operator: the comparison is inlined, not called per row.
  switch (cmp.op) {
    case 'less':
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        if (col[i]! < c) out[kept++] = i;
      }
      break;
    case 'lessOrEquals':
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        if (col[i]! <= c) out[kept++] = i;
      }
      break;
    case 'greater':
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        if (col[i]! > c) out[kept++] = i;
      }
      break;
    case 'greaterOrEquals':
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        if (col[i]! >= c) out[kept++] = i;
      }
      break;
    case 'equals':
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        if (col[i] === c) out[kept++] = i;
      }
      break;
    default:
      for (let k = 0; k < count; k++) {
        const i = rows === null ? k : rows[k]!;
        const x = col[i]!;
        if (x === x && x !== c) out[kept++] = i;
      }
  }
  return kept;
}

function conjunctsOf(b: Bound): Bound[] {
  return b.k === 'fn' && b.name === 'and' ? b.args.flatMap(conjunctsOf) : [b];
}

/**
 * The rows of the batch where `b` is true: an AND is applied one condition after the other, each over the rows the
 * previous ones kept; a comparison of the timestamp that a block's time range decides costs nothing.
 */
export function filterRows(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): { rows: Int32Array; count: number } {
  const n = batch.n;
  let rows: Int32Array | null = null;
  let count = n;
  for (const part of conjunctsOf(b)) {
    const out: Int32Array = rows ?? batch.scratch(n);
    const cmp = numericComparison(part, batch, ctx, cache);
    if (cmp === 'none') return { rows: out, count: 0 };
    if (cmp !== null) {
      const decided = decidedByRange(cmp);
      if (decided === false) return { rows: out, count: 0 };
      if (decided === true) continue;
      count = keepNumeric(cmp, rows, count, out);
    } else {
      const table = part.k === 'filter' ? batch.filterMask(part.node) : null;
      const v = table ? null : vec(part, batch, ctx, cache);
      let kept = 0;
      if (v?.constant) {
        if (truth(v.at(0)) !== true) return { rows: out, count: 0 };
        continue;
      }
      if (table) {
        for (let k = 0; k < count; k++) {
          const i = rows === null ? k : rows[k]!;
          if (table[i] === 1) out[kept++] = i;
        }
      } else if (v!.codes) {
        const pass = Uint8Array.from(v!.values!, (x) => (truth(x) === true ? 1 : 0));
        const codes = v!.codes;
        if (rows === null) {
          for (let i = 0; i < count; i++) if (pass[codes[i]!] === 1) out[kept++] = i;
        } else {
          for (let k = 0; k < count; k++) {
            const i = rows[k]!;
            if (pass[codes[i]!] === 1) out[kept++] = i;
          }
        }
      } else {
        for (let k = 0; k < count; k++) {
          const i = rows === null ? k : rows[k]!;
          if (truth(v!.at(i)) === true) out[kept++] = i;
        }
      }
      count = kept;
    }
    rows = out;
    if (count === 0) break;
  }
  if (rows === null) {
    rows = batch.scratch(n);
    for (let i = 0; i < n; i++) rows[i] = i;
  }
  return { rows, count };
}

/** Rows of the batch where `b` is true (1) rather than false or null (0). */
export function mask(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): Uint8Array {
  const out = new Uint8Array(batch.n);
  const { rows, count } = filterRows(b, batch, ctx, cache);
  for (let k = 0; k < count; k++) out[rows[k]!] = 1;
  return out;
}
