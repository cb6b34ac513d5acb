/**
 * What one person did in a funnel (analytics.md §2.2), from the person's events in time order, each with the bit
 * set of the steps (and exclusions) it matches. Pure: the engine gathers sequences and sums the outcomes.
 *
 * Ordered: every event matching step 0 starts a candidate; each later step is the earliest matching event at or
 * after the previous step's (a strictly later event when the step equals or narrows the previous one, so one event
 * cannot be two steps), all within the window from the start. Strict: step i must be the i-th event after the
 * start. Unordered: each step may be the first; the others count when one of their events follows within the
 * window. A candidate with an exclusion event strictly between the steps it spans is dropped. The person's result
 * is the best candidate; conversion times are averaged (and their median taken) over the person's best candidates.
 */

export type FunnelOrder = 'ordered' | 'strict' | 'unordered';

export interface FunnelShape {
  steps: number;
  order: FunnelOrder;
  windowMs: number;
  /** For each step i > 0: whether it must be a later event than step i-1 (equal or narrower step). */
  laterEvent: boolean[];
  /** Exclusions: bit index in the mask, and the step range they guard. */
  exclusions: { bit: number; from: number; to: number }[];
}

export interface PersonFunnel {
  /** Steps reached by the best candidate (0 = never entered). */
  reached: number;
  /** Per step i > 0: the person's average seconds from step i-1 to i over its best candidates (NaN if not reached). */
  averages: number[];
  medians: number[];
  /** Time of the first step of each best candidate (funnel trends: the entrance period). */
  starts: number[];
  /** Per best candidate, the row of each reached step (breakdown attribution by step). */
  chains: number[][];
  /** With `periodOf`: the steps reached from the best start in each entrance period (funnel trends). */
  byPeriod: Map<number, number> | null;
}

/** Next row at or after each row matching a bit (n when none): one backward pass per bit. */
function nextRows(mask: Uint32Array, n: number, bit: number): Int32Array {
  const next = new Int32Array(n + 1);
  next[n] = n;
  const b = 1 << bit;
  for (let i = n - 1; i >= 0; i--) next[i] = (mask[i]! & b) !== 0 ? i : next[i + 1]!;
  return next;
}

/**
 * Whether an exclusion event lies strictly between the steps it guards: after step `from`'s event and before step
 * `to`'s, or before step `from` + the window when step `to` was not reached.
 */
function excluded(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, chain: number[]): boolean {
  for (const ex of shape.exclusions) {
    if (chain.length <= ex.from) continue;
    const lo = ts[chain[ex.from]!]!;
    const hi = chain.length > ex.to ? ts[chain[ex.to]!]! : lo + shape.windowMs;
    const b = 1 << ex.bit;
    for (let r = chain[ex.from]! + 1; r < n && ts[r]! < hi; r++) if ((mask[r]! & b) !== 0 && ts[r]! > lo) return true;
  }
  return false;
}

function ordered(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, next: Int32Array[], start: number): number[] {
  const chain = [start];
  const limit = ts[start]! + shape.windowMs;
  let at = start;
  for (let s = 1; s < shape.steps; s++) {
    const from = shape.laterEvent[s] ? at + 1 : at;
    const r = from <= n ? next[s]![from]! : n;
    if (r >= n || ts[r]! > limit) break;
    chain.push(r);
    at = r;
  }
  return chain;
}

function strict(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, start: number): number[] {
  const chain = [start];
  const limit = ts[start]! + shape.windowMs;
  for (let s = 1; s < shape.steps; s++) {
    const r = start + s;
    if (r >= n || ts[r]! > limit || (mask[r]! & (1 << s)) === 0) break;
    chain.push(r);
  }
  return chain;
}

/** Unordered: the rows of the steps that follow `start` (matching `first`) within the window, sorted by time. */
function unordered(ts: Float64Array, n: number, shape: FunnelShape, next: Int32Array[], start: number, first: number): number[] {
  const limit = ts[start]! + shape.windowMs;
  const rows = [start];
  for (let s = 0; s < shape.steps; s++) {
    if (s === first) continue;
    const r = start + 1 <= n ? next[s]![start + 1]! : n;
    if (r < n && ts[r]! <= limit) rows.push(r);
  }
  return rows.sort((a, b) => a - b);
}

/** The person's outcome: `ts` ascending, `mask` bit s = matches step s (exclusions at their own bits). */
export function personFunnel(ts: Float64Array, mask: Uint32Array, n: number, shape: FunnelShape, periodOf?: (t: number) => number): PersonFunnel {
  const byPeriod = periodOf ? new Map<number, number>() : null;
  const next = Array.from({ length: shape.steps }, (_, s) => nextRows(mask, n, s));
  let best = 0;
  const candidates: number[][] = [];
  for (let r = 0; r < n; r++) {
    const m = mask[r]!;
    const firsts: number[] = shape.order === 'unordered'
      ? Array.from({ length: shape.steps }, (_, s) => s).filter((s) => (m & (1 << s)) !== 0)
      : (m & 1) !== 0 ? [0] : [];
    for (const first of firsts) {
      const chain = shape.order === 'ordered' ? ordered(ts, mask, n, shape, next, r)
        : shape.order === 'strict' ? strict(ts, mask, n, shape, r)
          : unordered(ts, n, shape, next, r, first);
      if (shape.exclusions.length > 0 && excluded(ts, mask, n, shape, chain)) continue;
      if (byPeriod !== null) {
        const period = periodOf!(ts[r]!);
        if (period >= 0 && chain.length > (byPeriod.get(period) ?? 0)) byPeriod.set(period, chain.length);
      }
      if (chain.length > best) {
        best = chain.length;
        candidates.length = 0;
      }
      if (chain.length === best) candidates.push(chain);
    }
  }
  const averages: number[] = [];
  const medians: number[] = [];
  for (let s = 1; s < shape.steps; s++) {
    const times = s < best ? candidates.map((c) => (ts[c[s]!]! - ts[c[s - 1]!]!) / 1000) : [];
    averages.push(times.length === 0 ? NaN : times.reduce((a, b) => a + b, 0) / times.length);
    medians.push(times.length === 0 ? NaN : median(times));
  }
  return { reached: best, averages, medians, starts: candidates.map((c) => ts[c[0]!]!), chains: candidates, byPeriod };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
