/**
 * The order of a block's events by (timestamp, uuid): the order the events API lists them in. Blocks hold events in
 * arrival order, which is close to time order but not the same (late events, imports), so a sealed block stores
 * this permutation as its `order` column: a page of events is then a binary search and a walk, not a sort of
 * the whole block per request.
 */
import type { DictColumn } from './column-block.js';

/** Row numbers of a block sorted by timestamp, then uuid (both ascending). */
export function rowOrder(ts: Float64Array, uuids: DictColumn | null, n: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const values = uuids?.values;
  const codes = uuids?.codes;
  order.sort((a, b) => {
    const byTime = ts[a]! - ts[b]!;
    if (byTime !== 0 || !values || !codes) return byTime;
    const ua = values[codes[a]! - 1] as string;
    const ub = values[codes[b]! - 1] as string;
    return ua < ub ? -1 : ua > ub ? 1 : 0;
  });
  return order;
}

/**
 * The first position of `order` whose row's timestamp is above `bound` (or equal to it, when `inclusive`);
 * `order.length` when there is none. A binary search: timestamps ascend along `order`.
 */
export function firstPosition(order: Uint32Array, ts: Float64Array, bound: number, inclusive: boolean): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = ts[order[mid]!]!;
    if (t > bound || (inclusive && t === bound)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
