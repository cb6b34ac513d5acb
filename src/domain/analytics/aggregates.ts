/**
 * Partial aggregation states: what one shard returns for one series and one breakdown value, one entry per bucket,
 * and how states of several shards merge (ClickHouse's "-State / -Merge" split). A shard adds rows; the worker
 * coordinating the query merges the shards' states and finalises them into numbers.
 *
 * Distinct persons are bitmaps over person ids (ids are dense integers), so merging is OR and counting a popcount;
 * a person whose distinct ids live on several shards is counted once whatever shard saw which event.
 */

export type Measure =
  | { kind: 'count' }
  | { kind: 'persons' }
  /** Distinct values of a column (unique_session: `$session_id`, unique_group: `$group_N`). */
  | { kind: 'distinct'; column: string }
  /** A numeric event property: sum/count/min/max, and every value when a quantile is asked. */
  | { kind: 'numeric'; property: string; keepValues: boolean }
  /** Events per actor (the `*_count_per_actor` maths and the actors of a data point). */
  | { kind: 'actor_counts' }
  /** Per person, the smallest value of a column over its events (first event time, earliest created_at). */
  | { kind: 'person_min'; column: 'ts' | 'person_created_at' }
  /** Both of the above in one pass over the rows (lifecycle: who was active when, and when each was created). */
  | { kind: 'persons_and_min'; column: 'ts' | 'person_created_at' };

export interface NumericState {
  sum: Float64Array;
  count: Float64Array;
  min: Float64Array;
  max: Float64Array;
  values: number[][] | null;
}

/** One breakdown value's state over the buckets; the variant matches the Measure kind. */
export type BucketStates =
  | { kind: 'count'; counts: Float64Array }
  | { kind: 'persons'; sets: (Uint32Array | null)[] }
  | { kind: 'distinct'; sets: Set<string>[] }
  | { kind: 'numeric'; state: NumericState }
  | { kind: 'actor_counts'; maps: Map<number, number>[] }
  /** Indexed by person id; Infinity where the person has no event. One "bucket" only. */
  | { kind: 'person_min'; values: Float64Array }
  | { kind: 'persons_and_min'; sets: (Uint32Array | null)[]; values: Float64Array };

/** Every breakdown value's states (the key is the breakdown value's text; "" without a breakdown). */
export type Partial = Map<string, BucketStates>;

export function emptyStates(measure: Measure, buckets: number, maxPersonId = 0): BucketStates {
  switch (measure.kind) {
    case 'person_min':
      return { kind: 'person_min', values: new Float64Array(maxPersonId + 1).fill(Infinity) };
    case 'persons_and_min':
      return { kind: 'persons_and_min', sets: new Array<Uint32Array | null>(buckets).fill(null), values: new Float64Array(maxPersonId + 1).fill(Infinity) };
    case 'count':
      return { kind: 'count', counts: new Float64Array(buckets) };
    case 'persons':
      return { kind: 'persons', sets: new Array<Uint32Array | null>(buckets).fill(null) };
    case 'distinct':
      return { kind: 'distinct', sets: Array.from({ length: buckets }, () => new Set<string>()) };
    case 'numeric':
      return {
        kind: 'numeric',
        state: {
          sum: new Float64Array(buckets), count: new Float64Array(buckets),
          min: new Float64Array(buckets).fill(Infinity), max: new Float64Array(buckets).fill(-Infinity),
          values: measure.keepValues ? Array.from({ length: buckets }, () => [] as number[]) : null,
        },
      };
    case 'actor_counts':
      return { kind: 'actor_counts', maps: Array.from({ length: buckets }, () => new Map<number, number>()) };
  }
}

/** Words of a person bitmap able to hold ids up to `maxPersonId`. */
export function bitmapWords(maxPersonId: number): number {
  return (maxPersonId >>> 5) + 1;
}

/** Merges `b` into `a` (same measure, same buckets). */
export function mergeStates(a: BucketStates, b: BucketStates): void {
  switch (a.kind) {
    case 'count': {
      const x = a.counts;
      const y = (b as typeof a).counts;
      for (let i = 0; i < x.length; i++) x[i]! += y[i]!;
      return;
    }
    case 'persons':
      mergeSets(a.sets, (b as typeof a).sets);
      return;
    case 'persons_and_min':
      mergeSets(a.sets, (b as typeof a).sets);
      mergeMins(a.values, (b as typeof a).values);
      return;
    case 'distinct': {
      const y = (b as typeof a).sets;
      a.sets.forEach((set, i) => {
        for (const v of y[i]!) set.add(v);
      });
      return;
    }
    case 'numeric': {
      const x = a.state;
      const y = (b as typeof a).state;
      for (let i = 0; i < x.sum.length; i++) {
        x.sum[i]! += y.sum[i]!;
        x.count[i]! += y.count[i]!;
        if (y.min[i]! < x.min[i]!) x.min[i] = y.min[i]!;
        if (y.max[i]! > x.max[i]!) x.max[i] = y.max[i]!;
        if (x.values && y.values) for (const v of y.values[i]!) x.values[i]!.push(v);
      }
      return;
    }
    case 'actor_counts': {
      const y = (b as typeof a).maps;
      a.maps.forEach((map, i) => {
        for (const [actor, n] of y[i]!) map.set(actor, (map.get(actor) ?? 0) + n);
      });
      return;
    }
    case 'person_min':
      mergeMins(a.values, (b as typeof a).values);
      return;
  }
}

/** Person bitmaps per bucket: OR. */
function mergeSets(x: (Uint32Array | null)[], y: readonly (Uint32Array | null)[]): void {
  x.forEach((set, i) => {
    const other = y[i];
    if (!other) return;
    if (!set) x[i] = other.slice();
    else for (let w = 0; w < set.length; w++) set[w]! |= other[w]!;
  });
}

/** Per-person minima: the smaller. */
function mergeMins(x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < x.length && i < y.length; i++) if (y[i]! < x[i]!) x[i] = y[i]!;
}

/** a AND b (null = empty set). */
export function intersect(a: Uint32Array | null, b: Uint32Array | null): Uint32Array | null {
  if (!a || !b) return null;
  const out = new Uint32Array(Math.min(a.length, b.length));
  for (let w = 0; w < out.length; w++) out[w] = a[w]! & b[w]!;
  return out;
}

/** a AND NOT b. */
export function without(a: Uint32Array | null, b: Uint32Array | null): Uint32Array | null {
  if (!a) return null;
  const out = a.slice();
  if (b) for (let w = 0; w < out.length && w < b.length; w++) out[w]! &= ~b[w]!;
  return out;
}

export function hasMember(set: Uint32Array | null, id: number): boolean {
  return set !== null && id >>> 5 < set.length && (set[id >>> 5]! & (1 << (id & 31))) !== 0;
}

/** A bitmap of the given person ids. */
export function bitmapOf(ids: Iterable<number>, maxPersonId: number): Uint32Array {
  const out = new Uint32Array(bitmapWords(maxPersonId));
  for (const id of ids) if (id >>> 5 < out.length) out[id >>> 5]! |= 1 << (id & 31);
  return out;
}

/** Merges partial `b` into `a`. */
export function mergePartials(a: Partial, b: Partial): Partial {
  for (const [key, states] of b) {
    const mine = a.get(key);
    if (mine) mergeStates(mine, states);
    else a.set(key, states);
  }
  return a;
}

export function popcount(words: Uint32Array | null): number {
  if (!words) return 0;
  let n = 0;
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
}

/** The union of several bitmaps (null when all are empty). */
export function unionOf(sets: readonly (Uint32Array | null)[]): Uint32Array | null {
  let out: Uint32Array | null = null;
  for (const s of sets) {
    if (!s) continue;
    if (!out) out = s.slice();
    else for (let w = 0; w < out.length; w++) out[w]! |= s[w]!;
  }
  return out;
}

/** Person ids present in a bitmap, ascending. */
export function membersOf(words: Uint32Array | null): number[] {
  const out: number[] = [];
  if (!words) return out;
  for (let w = 0; w < words.length; w++) {
    let v = words[w]!;
    while (v !== 0) {
      const bit = 31 - Math.clz32(v & -v);
      out.push(w * 32 + bit);
      v &= v - 1;
    }
  }
  return out;
}

/** Linear-interpolation quantile of unsorted values (DuckDB's quantile_cont), 0 for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
