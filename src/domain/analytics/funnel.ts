/**
 * What one person did in a funnel (analytics.md §2.2), from the person's events in time order, each with the bit
 * set of the steps (and exclusions) it matches. Pure: the engine gathers sequences and sums the outcomes.
 *
 * One event fills at most one step of an attempt, whatever the steps' filters (a later step may equal, narrow or
 * widen an earlier one: `signup {plan: pro}` then `signup` needs two signups), as PostHog's funnels require.
 *
 * Ordered: every event matching step 0 starts a candidate; each later step is the earliest matching event after
 * the previous step's event, all within the window from the start. Strict: step i must be the i-th event after the
 * start. Unordered: each step may be the first; the others count when one of their events follows within the
 * window, each step with an event of its own (the most steps such events can fill, earliest events first). A
 * candidate with an exclusion event strictly between the steps it spans is dropped. The person's result is the
 * best candidate; conversion times are averaged (and their median taken) over the person's best candidates.
 */

export type FunnelOrder = 'ordered' | 'strict' | 'unordered';

export interface FunnelShape {
  steps: number;
  order: FunnelOrder;
  windowMs: number;
  /** Exclusions: bit index in the mask, and the step range they guard. */
  exclusions: { bit: number; from: number; to: number }[];
}

export interface PersonFunnel {
  /** Steps reached by the best candidate (0 = never entered). */
  reached: number;
  /** Per step i > 0: the person's average seconds from step i-1 to i over its best candidates (NaN if not reached). */
  averages: number[];
  medians: number[];
  /** Per best candidate (or the first one only: see `KeepChains`), the row of each reached step. */
  chains: number[][];
  /** With `periodOf`: the steps reached from the best start in each entrance period (funnel trends). */
  byPeriod: Map<number, number> | null;
}

/** Scratch buffers reused from person to person (the engine reduces one person at a time per thread). */
let nextScratch: Int32Array = new Int32Array(0);
const chainScratch = new Int32Array(64);

/**
 * Next row at or after each row matching each step (n when none), one backward pass per step, in one buffer:
 * step s's table starts at s * (n + 1).
 */
function nextRows(mask: Uint32Array, n: number, steps: number): Int32Array {
  const width = n + 1;
  if (nextScratch.length < width * steps) nextScratch = new Int32Array(Math.max(width * steps, nextScratch.length * 2));
  const next = nextScratch;
  for (let s = 0; s < steps; s++) {
    const base = s * width;
    const b = 1 << s;
    next[base + n] = n;
    for (let i = n - 1; i >= 0; i--) next[base + i] = (mask[i]! & b) !== 0 ? i : next[base + i + 1]!;
  }
  return next;
}

/**
 * Whether an exclusion event lies strictly between the steps it guards: after step `from`'s event and before step
 * `to`'s, or before step `from` + the window when step `to` was not reached.
 */
function excluded(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, chain: Int32Array, length: number): boolean {
  for (const ex of shape.exclusions) {
    if (length <= ex.from) continue;
    const lo = ts[chain[ex.from]!]!;
    const hi = length > ex.to ? ts[chain[ex.to]!]! : lo + shape.windowMs;
    const b = 1 << ex.bit;
    for (let r = chain[ex.from]! + 1; r < n && ts[r]! < hi; r++) if ((mask[r]! & b) !== 0 && ts[r]! > lo) return true;
  }
  return false;
}

/** Fills `chain` from `start`; returns how many steps it reached. */
function ordered(ts: Float64Array, n: number, shape: FunnelShape, next: Int32Array, start: number, chain: Int32Array): number {
  const width = n + 1;
  const limit = ts[start]! + shape.windowMs;
  chain[0] = start;
  let at = start;
  let length = 1;
  for (let s = 1; s < shape.steps; s++) {
    // The next row, never the previous step's own: rows are events in time order, so a later row is another
    // event at the same time or after.
    const r = next[s * width + at + 1]!;
    if (r >= n || ts[r]! > limit) break;
    chain[length++] = r;
    at = r;
  }
  return length;
}

function strict(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, start: number, chain: Int32Array): number {
  const limit = ts[start]! + shape.windowMs;
  chain[0] = start;
  let length = 1;
  for (let s = 1; s < shape.steps; s++) {
    const r = start + s;
    if (r >= n || ts[r]! > limit || (mask[r]! & (1 << s)) === 0) break;
    chain[length++] = r;
  }
  return length;
}

/**
 * Unordered: `start` (matching step `first`) and, for every other step, an event of its own after the start within
 * the window, in time order. Each step takes its earliest event; when two steps would take the same event (it
 * matches both), the events are shared out by augmenting paths (Kuhn's matching) over each step's first few
 * candidates — no step needs more than `steps` of them — so as many steps as possible get one.
 */
function unordered(ts: Float64Array, n: number, shape: FunnelShape, next: Int32Array, start: number, first: number, chain: Int32Array): number {
  const width = n + 1;
  const limit = ts[start]! + shape.windowMs;
  const picks: number[] = [];
  let shared = false;
  for (let s = 0; s < shape.steps; s++) {
    if (s === first) continue;
    const r = next[s * width + start + 1]!;
    if (r >= n || ts[r]! > limit) continue;
    if (picks.includes(r)) shared = true;
    picks.push(r);
  }
  const rows = shared ? matchedRows(ts, n, shape, next, start, first, limit) : picks;
  chain[0] = start;
  let length = 1;
  for (const r of rows) {
    // Insertion in row order (rows are in time order).
    let j = length++;
    while (j > 0 && chain[j - 1]! > r) {
      chain[j] = chain[j - 1]!;
      j--;
    }
    chain[j] = r;
  }
  return length;
}

/** The rows a maximum matching of steps (other than `first`) to distinct events after `start` gives them. */
function matchedRows(ts: Float64Array, n: number, shape: FunnelShape, next: Int32Array, start: number, first: number, limit: number): number[] {
  const width = n + 1;
  const candidates: number[][] = [];
  for (let s = 0; s < shape.steps; s++) {
    const list: number[] = [];
    if (s !== first) {
      for (let r = next[s * width + start + 1]!; r < n && ts[r]! <= limit && list.length < shape.steps; r = next[s * width + r + 1]!) list.push(r);
    }
    candidates.push(list);
  }
  const owner = new Map<number, number>();
  const assign = (s: number, seen: Set<number>): boolean => {
    for (const r of candidates[s]!) {
      if (seen.has(r)) continue;
      seen.add(r);
      const other = owner.get(r);
      if (other === undefined || assign(other, seen)) {
        owner.set(r, s);
        return true;
      }
    }
    return false;
  };
  for (let s = 0; s < shape.steps; s++) if (candidates[s]!.length > 0) assign(s, new Set());
  return [...owner.keys()];
}

/**
 * The person's outcome: `ts` ascending, `mask` bit s = matches step s (exclusions at their own bits). With
 * `periodOf`, also the best number of steps per entrance period (funnel trends); with `keepChains`, the rows of
 * the first or every best attempt.
 */
/** Which best attempts' rows to return: none, the first (correlation's window), or all (attribution by step). */
export type KeepChains = 'none' | 'first' | 'all';

export function personFunnel(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, periodOf?: (t: number) => number, keepChains: KeepChains = 'none'): PersonFunnel {
  const steps = shape.steps;
  const byPeriod = periodOf ? new Map<number, number>() : null;
  // Most persons of a range never enter most funnels: no row can start an attempt, nothing to work out.
  const startBits = shape.order === 'unordered' ? (1 << steps) - 1 : 1;
  let anyStart = false;
  for (let r = 0; r < n && !anyStart; r++) anyStart = (mask[r]! & startBits) !== 0;
  if (!anyStart) return { reached: 0, averages: new Array<number>(steps - 1).fill(NaN), medians: new Array<number>(steps - 1).fill(NaN), chains: [], byPeriod };
  const next = shape.order === 'strict' ? nextScratch : nextRows(mask, n, steps);
  const chain = chainScratch;
  let best = 0;
  // The conversion times of the best attempts so far: step s ≥ 1's k-th at (s - 1) * n + k (every best attempt
  // reaches the same steps, so one count serves all steps).
  if (timeScratch.length < (steps - 1) * n) timeScratch = new Float64Array(Math.max((steps - 1) * n, timeScratch.length * 2));
  const times = timeScratch;
  let bestCount = 0;
  const chains: number[][] = [];
  for (let r = 0; r < n; r++) {
    const m = mask[r]!;
    for (let first = 0; first < steps; first++) {
      if ((m & (1 << first)) === 0) continue;
      if (shape.order !== 'unordered' && first !== 0) break;
      const length = shape.order === 'ordered' ? ordered(ts, n, shape, next, r, chain)
        : shape.order === 'strict' ? strict(ts, mask, n, shape, r, chain)
          : unordered(ts, n, shape, next, r, first, chain);
      if (shape.exclusions.length > 0 && excluded(ts, mask, n, shape, chain, length)) continue;
      if (byPeriod !== null) {
        const period = periodOf!(ts[r]!);
        if (period >= 0 && length > (byPeriod.get(period) ?? 0)) byPeriod.set(period, length);
      }
      if (length < best) continue;
      if (length > best) {
        best = length;
        bestCount = 0;
        if (chains.length > 0) chains.length = 0;
      }
      for (let s = 1; s < length; s++) times[(s - 1) * n + bestCount] = (ts[chain[s]!]! - ts[chain[s - 1]!]!) / 1000;
      bestCount++;
      if (keepChains === 'all' || (keepChains === 'first' && chains.length === 0)) chains.push(Array.from(chain.subarray(0, length)));
    }
  }
  const averages: number[] = [];
  const medians: number[] = [];
  for (let s = 1; s < steps; s++) {
    if (s >= best || bestCount === 0) {
      averages.push(NaN);
      medians.push(NaN);
      continue;
    }
    const list = times.subarray((s - 1) * n, (s - 1) * n + bestCount);
    let sum = 0;
    for (let k = 0; k < bestCount; k++) sum += list[k]!;
    averages.push(sum / bestCount);
    medians.push(bestCount === 1 ? list[0]! : medianInPlace(list));
  }
  return { reached: best, averages, medians, chains, byPeriod };
}

/** Conversion times of the best attempts, reused from person to person. */
let timeScratch = new Float64Array(0);

/** The median of `values`, which it sorts (scratch space, numbers only). */
function medianInPlace(values: Float64Array): number {
  values.sort();
  const mid = values.length >> 1;
  return values.length % 2 === 1 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

export function median(values: readonly number[]): number {
  if (values.length === 1) return values[0]!;
  // A typed copy sorts numerically without a comparator call per comparison (persons' medians: tens of thousands).
  return medianInPlace(Float64Array.from(values));
}

/** Time to convert's bins: the first bin's start (whole seconds), each bin's width, and how many bins (one more holds the largest times). */
export interface ConvertBins {
  from: number;
  width: number;
  count: number;
}

/** Bins when none are asked for: the cube root of the persons, rounded up, within these. */
export const AUTO_BINS = { least: 3, most: 60 } as const;
/** Bins a request may ask for. */
export const MAX_BINS = 90;

/**
 * The bins of `persons` conversion times from `least` to `most` seconds (null: no one converted): `binCount` when
 * asked (1-90), else the cube root of the persons rounded up (3-60: the least k with k³ ≥ persons, in integers so
 * that ClickHouse's copy of this rule, funnelTimesSql, agrees to the bin); a width of whole seconds, 60 when all
 * times are equal.
 */
export function convertBins(binCount: number | null, persons: number, least: number, most: number): ConvertBins | null {
  if (persons === 0) return null;
  let count: number;
  if (binCount !== null) count = Math.min(MAX_BINS, Math.max(1, binCount));
  else {
    count = AUTO_BINS.least;
    while (count < AUTO_BINS.most && count * count * count < persons) count++;
  }
  let width = Math.ceil((most - least) / count);
  if (width === 0) width = 60;
  return { from: Math.floor(least), width, count };
}

/** The bin of a conversion time (the last bin holds what lies past the others). */
export const binOf = (b: ConvertBins, seconds: number) => Math.min(b.count, Math.floor((seconds - b.from) / b.width));
