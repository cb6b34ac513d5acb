/**
 * The shard side of a series: every block of a project overlapping the query's range, filtered by event name and
 * property filters, bucketed by time, split by breakdown value and aggregated into partial states
 * (src/domain/analytics/aggregates.ts). Pure over block views: the peer handler feeds it the worker's shards.
 */
import { emptyStates, type BucketStates, type Measure, type Partial } from '../../domain/analytics/aggregates.js';
import { BucketIndex } from '../../domain/analytics/date-range.js';
import { propertyNumber, propertyText, type FilterNode } from '../../domain/analytics/property-filters.js';
import { COL, EVENT_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView } from '../../stores/scan/column-block.js';
import { rowMask, type FilterContext } from './block-filter.js';
import type { PersonResolution } from './person-resolution.js';

export type BreakdownScan =
  /** By a column's value (`p:<key>` event property, `pp:<key>` person property); `only` keeps just these values. */
  | { kind: 'column'; column: string; only: string[] | null }
  /** By a property of the event's group of one type. */
  | { kind: 'group'; typeIndex: number; property: string; only: string[] | null }
  /** One value per cohort the event's person is in (key = cohort id; filter null = all users). */
  | { kind: 'cohorts'; cohorts: { key: string; filter: FilterNode | null }[] };

export interface SeriesScan {
  team: number;
  event: string | null;
  filter: FilterNode | null;
  /** Inclusive bounds of the events read, epoch ms. */
  from: number;
  to: number;
  bucketStarts: number[];
  /** Inclusive end of the last bucket. */
  bucketEnd: number;
  measure: Measure;
  breakdown: BreakdownScan | null;
  /** Only events of these (resolved) persons, when set (the actors of a data point). */
  persons: number[] | null;
}

/** The breakdown value of a row that has none (PostHog shows missing values as ""). */
export const NO_VALUE = '';

export interface ScanEnv extends FilterContext {
  resolution: PersonResolution;
  maxPersonId: number;
}

/** Adds one block's matching events to `out`. */
export function scanBlock(block: BlockView, q: SeriesScan, env: ScanEnv, out: Partial): void {
  if (block.maxTs < q.from || block.minTs > q.to) return;
  const n = block.n;
  let nameCode = -1;
  const names = block.dict(COL.event);
  if (q.event !== null) {
    const at = names ? names.values.indexOf(q.event) : -1;
    if (at < 0) return;
    nameCode = at + 1;
  }
  const ts = block.f64(COL.ts)!;
  const nameCodes = names?.codes;
  const mask = q.filter === null ? null : rowMask(q.filter, block, env);
  const wanted = q.persons === null ? null : new Set(q.persons);
  const needsPersons = q.measure.kind === 'persons' || q.measure.kind === 'actor_counts' || wanted !== null;
  const persons = needsPersons ? env.resolution.resolveAll(block.u32(COL.personId)!) : null;
  const buckets = new BucketIndex(q.bucketStarts, q.bucketEnd);
  const from = q.from;
  const to = q.to;

  // Rows that pass, with their bucket.
  const rows: number[] = [];
  const rowBuckets: number[] = [];
  for (let i = 0; i < n; i++) {
    if (nameCode > 0 && nameCodes![i] !== nameCode) continue;
    if (mask !== null && mask[i] === 0) continue;
    const t = ts[i]!;
    if (t < from || t > to) continue;
    const b = buckets.of(t);
    if (b < 0) continue;
    if (wanted !== null && !wanted.has(persons![i]!)) continue;
    rows.push(i);
    rowBuckets.push(b);
  }
  if (rows.length === 0) return;

  const add = adder(block, q.measure, persons, env);
  const bucketCount = q.bucketStarts.length;
  const statesOf = (key: string): BucketStates => {
    let s = out.get(key);
    if (!s) out.set(key, (s = emptyStates(q.measure, bucketCount)));
    return s;
  };

  const bd = q.breakdown;
  if (bd === null) {
    const states = statesOf(NO_VALUE);
    for (let k = 0; k < rows.length; k++) add(states, rowBuckets[k]!, rows[k]!);
    return;
  }
  if (bd.kind === 'cohorts') {
    for (const c of bd.cohorts) {
      const m = c.filter === null ? null : rowMask(c.filter, block, env);
      const states = statesOf(c.key);
      for (let k = 0; k < rows.length; k++) if (m === null || m[rows[k]!] === 1) add(states, rowBuckets[k]!, rows[k]!);
    }
    return;
  }
  const keyOf = breakdownKeys(block, bd, env);
  const only = bd.only === null ? null : new Set(bd.only);
  const byCode = new Map<number, BucketStates | null>();
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k]!;
    const code = keyOf.codes === null ? 0 : keyOf.codes[row]!;
    let states = byCode.get(code);
    if (states === undefined) {
      const key = keyOf.key(code);
      states = only !== null && !only.has(key) ? null : statesOf(key);
      byCode.set(code, states);
    }
    if (states !== null) add(states, rowBuckets[k]!, row);
  }
}

/** Per row, the breakdown value's text, through the breakdown column's codes (one text per distinct value). */
function breakdownKeys(block: BlockView, bd: Exclude<BreakdownScan, { kind: 'cohorts' }>, env: ScanEnv): { codes: ArrayLike<number> | null; key: (code: number) => string } {
  const column = bd.kind === 'column' ? bd.column : `${EVENT_PROP}$group_${bd.typeIndex}`;
  const col = block.dict(column);
  if (!col) return { codes: null, key: () => NO_VALUE };
  if (bd.kind === 'column') return { codes: col.codes, key: (c) => (c === 0 ? NO_VALUE : propertyText(col.values[c - 1])) };
  return {
    codes: col.codes,
    key: (c) => {
      if (c === 0) return NO_VALUE;
      const props = env.groupProperties(bd.typeIndex, String(col.values[c - 1]));
      const v = props && Object.hasOwn(props, bd.property) ? props[bd.property] : undefined;
      return v === undefined ? NO_VALUE : propertyText(v);
    },
  };
}

type Adder = (states: BucketStates, bucket: number, row: number) => void;

/** How one row is added to a state, for the measure (the block's columns looked up once). */
function adder(block: BlockView, measure: Measure, persons: Uint32Array | null, env: ScanEnv): Adder {
  switch (measure.kind) {
    case 'count':
      return (s, b) => {
        (s as Extract<BucketStates, { kind: 'count' }>).counts[b]!++;
      };
    case 'persons': {
      const words = (env.maxPersonId >>> 5) + 1;
      return (s, b, row) => {
        const pid = persons![row]!;
        if (pid === 0) return;
        const sets = (s as Extract<BucketStates, { kind: 'persons' }>).sets;
        let set = sets[b];
        if (!set) sets[b] = set = new Uint32Array(words);
        set[pid >>> 5]! |= 1 << (pid & 31);
      };
    }
    case 'actor_counts':
      return (s, b, row) => {
        const pid = persons![row]!;
        if (pid === 0) return;
        const map = (s as Extract<BucketStates, { kind: 'actor_counts' }>).maps[b]!;
        map.set(pid, (map.get(pid) ?? 0) + 1);
      };
    case 'distinct': {
      const col = block.dict(measure.column);
      if (!col) return () => undefined;
      const texts = col.values.map(propertyText);
      return (s, b, row) => {
        const c = col.codes[row]!;
        if (c !== 0 && col.values[c - 1] !== null && texts[c - 1] !== '') (s as Extract<BucketStates, { kind: 'distinct' }>).sets[b]!.add(texts[c - 1]!);
      };
    }
    case 'numeric': {
      const col = block.dict(EVENT_PROP + measure.property);
      if (!col) return () => undefined;
      const numbers = col.values.map(propertyNumber);
      return (s, b, row) => {
        const c = col.codes[row]!;
        if (c === 0) return;
        const v = numbers[c - 1];
        if (v === null || v === undefined) return;
        const st = (s as Extract<BucketStates, { kind: 'numeric' }>).state;
        st.sum[b]! += v;
        st.count[b]!++;
        if (v < st.min[b]!) st.min[b] = v;
        if (v > st.max[b]!) st.max[b] = v;
        if (st.values) st.values[b]!.push(v);
      };
    }
  }
}

/** The earliest event time at or after `after` in a set of blocks (`date_from=all`), or null. */
export function firstEventIn(blocks: readonly BlockView[], after: number): number | null {
  let best = Infinity;
  for (const b of blocks) {
    if (b.maxTs < after || b.minTs >= best) continue;
    if (b.minTs >= after) {
      best = b.minTs;
      continue;
    }
    const ts = b.f64(COL.ts)!;
    for (let i = 0; i < ts.length; i++) if (ts[i]! >= after && ts[i]! < best) best = ts[i]!;
  }
  return best === Infinity ? null : best;
}
