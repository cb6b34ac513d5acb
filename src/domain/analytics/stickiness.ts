/**
 * Stickiness (analytics.md §6): how many persons were active in exactly k of the range's intervals.
 */
import type { DateRange } from './date-range.js';
import { toLocal } from './time-zone.js';

/**
 * §6.2: floor((date_to - date_from) / interval) + 2 in local wall-clock time (weeks: whole days / 7 + 2; months: calendar months apart + 2);
 * the answer has total_intervals - 1 points, for k = 1 … total_intervals - 1. A range that ends before it starts
 * (`date_from` in the future) has none: 1.
 */
export function stickinessIntervals(range: DateRange): number {
  return Math.max(1, wallIntervals(range));
}

function wallIntervals(range: DateRange): number {
  // Wall-clock time, as Python subtracts two datetimes of one zone: a 25-hour local day is still a day.
  const wall = (ms: number) => {
    const l = toLocal(ms, range.timeZone);
    return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second, l.ms);
  };
  const span = wall(range.to) - wall(range.from);
  switch (range.interval) {
    case 'hour':
      return Math.floor(span / 3_600_000) + 2;
    case 'day':
      return Math.floor(span / 86_400_000) + 2;
    case 'week':
      return Math.floor(Math.floor(span / 86_400_000) / 7) + 2;
    case 'month': {
      const a = toLocal(range.from, range.timeZone);
      const b = toLocal(range.to, range.timeZone);
      return (b.year * 12 + b.month) - (a.year * 12 + a.month) + 2;
    }
  }
}

/** Active-interval count per person, from per-interval person bitmaps. */
export function activeIntervals(sets: readonly (Uint32Array | null)[], maxPersonId: number): Uint16Array {
  const counts = new Uint16Array(maxPersonId + 1);
  for (const set of sets) {
    if (!set) continue;
    for (let w = 0; w < set.length; w++) {
      let v = set[w]!;
      while (v !== 0) {
        const bit = 31 - Math.clz32(v & -v);
        const id = w * 32 + bit;
        if (id < counts.length) counts[id]!++;
        v &= v - 1;
      }
    }
  }
  return counts;
}

/** data[k - 1] = persons active in exactly k intervals, k = 1 … points. */
export function stickinessHistogram(counts: Uint16Array, points: number): number[] {
  const data = new Array<number>(points).fill(0);
  for (let i = 0; i < counts.length; i++) {
    const k = counts[i]!;
    if (k >= 1 && k <= points) data[k - 1]!++;
  }
  return data;
}

export function stickinessLabel(k: number, interval: string): string {
  return `${k} ${interval}${k === 1 ? '' : 's'}`;
}
