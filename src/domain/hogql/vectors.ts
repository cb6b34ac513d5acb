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

/** A coded vector of `fn(timestamp)` computed once per 15-minute slot the batch's timestamps fall in. */
function slotted(ts: Float64Array, batch: Batch, fn: (slotStart: number) => Value): Vec {
  const n = batch.n;
  const codes = new Int32Array(n);
  const values: Value[] = [null];
  const [min, max] = batch.timeRange!;
  const first = Math.floor(min / SLOT_MS);
  const span = Math.floor(max / SLOT_MS) - first + 1;
  if (span > 0 && span <= MAX_SLOT_TABLE) {
    const table = new Int32Array(span).fill(-1);
    for (let i = 0; i < n; i++) {
      const t = ts[i]!;
      if (t !== t) continue;
      const s = Math.floor(t / SLOT_MS) - first;
      let c = table[s]!;
      if (c < 0) {
        c = values.push(fn((s + first) * SLOT_MS)) - 1;
        table[s] = c;
      }
      codes[i] = c;
    }
    return codedVec(codes, values);
  }
  const memo = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const t = ts[i]!;
    if (t !== t) continue;
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

/** Rows of the batch where `b` is true (1) rather than false or null (0). */
export function mask(b: Bound, batch: Batch, ctx: ValueContext, cache: VecCache): Uint8Array {
  const n = batch.n;
  if (b.k === 'const') return new Uint8Array(n).fill(truth(b.value) === true ? 1 : 0);
  if (b.k === 'filter') return batch.filterMask(b.node);
  if (b.k === 'fn' && (b.name === 'and' || b.name === 'or')) {
    let out: Uint8Array | null = null;
    for (const part of b.args) {
      const m = mask(part, batch, ctx, cache);
      if (out === null) out = m.slice();
      else if (b.name === 'and') for (let i = 0; i < n; i++) out[i]! &= m[i]!;
      else for (let i = 0; i < n; i++) out[i]! |= m[i]!;
    }
    return out!;
  }
  if (b.k === 'fn' && COMPARISONS[b.name] && b.args.length === 2) {
    const fast = numericComparison(b, batch, ctx, cache);
    if (fast) return fast;
  }
  const v = vec(b, batch, ctx, cache);
  const out = new Uint8Array(n);
  if (v.constant) return out.fill(truth(v.at(0)) === true ? 1 : 0);
  if (v.codes) {
    const table = Uint8Array.from(v.values!, (x) => (truth(x) === true ? 1 : 0));
    const codes = v.codes;
    for (let i = 0; i < n; i++) out[i] = table[codes[i]!]!;
    return out;
  }
  for (let i = 0; i < n; i++) if (truth(v.at(i)) === true) out[i] = 1;
  return out;
}

/** `timestamp >= '2024-01-01'` and the like: one loop over the column against a number converted once. */
function numericComparison(b: Extract<Bound, { k: 'fn' }>, batch: Batch, ctx: ValueContext, cache: VecCache): Uint8Array | null {
  let [left, right] = b.args as [Bound, Bound];
  let op = b.name;
  if (left.k === 'const' && right.k !== 'const') {
    [left, right] = [right, left];
    op = FLIPPED[op]!;
  }
  if (right.k !== 'const' || !(left.type === 'DateTime' || isNumeric(left.type))) return null;
  const column = vec(left, batch, ctx, cache).f64;
  if (!column) return null;
  const c = left.type === 'DateTime' ? dateTimeOf(right.value, right.type, ctx) : isNumeric(right.type) ? numberOf(right.value, right.type) : null;
  const n = batch.n;
  const out = new Uint8Array(n);
  if (c === null || Number.isNaN(c)) return out;
  const test = COMPARISONS[op]!;
  for (let i = 0; i < n; i++) {
    const x = column[i]!;
    if (x === x && test(x, c)) out[i] = 1;
  }
  return out;
}

/** Indices of the rows a mask keeps. */
export function selection(m: Uint8Array): { rows: Int32Array; count: number } {
  const rows = new Int32Array(m.length);
  let count = 0;
  for (let i = 0; i < m.length; i++) if (m[i] === 1) rows[count++] = i;
  return { rows, count };
}
