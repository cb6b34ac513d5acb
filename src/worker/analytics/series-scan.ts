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

/** Scratch for the rows a block selects and their buckets (one scan runs at a time on a thread). */
let selected = new Int32Array(1 << 15);
let selectedBuckets = new Int32Array(1 << 15);

/**
 * Adds one block's matching events to `out`. Two tight passes over typed arrays: the first selects the rows (event
 * name code, filter mask, time range, bucket), the second adds them to the states of their breakdown value with a
 * loop specialised for the measure. No object is made per event.
 */
export function scanBlock(block: BlockView, q: SeriesScan, env: ScanEnv, out: Partial): void {
  if (block.maxTs < q.from || block.minTs > q.to) return;
  const n = block.n;
  let nameCode = 0;
  const names = block.dict(COL.event);
  if (q.event !== null) {
    const at = names ? names.values.indexOf(q.event) : -1;
    if (at < 0) return;
    nameCode = at + 1;
  }
  const needsPersons = PERSON_MEASURES.has(q.measure.kind) || q.persons !== null;
  const persons = needsPersons ? env.resolution.resolveAll(block.u32(COL.personId)!) : null;
  const count = select(block, q, nameCode, names?.codes ?? null, q.filter === null ? null : rowMask(q.filter, block, env), persons);
  if (count === 0) return;
  const rows = selected;
  const buckets = selectedBuckets;
  const bucketCount = q.bucketStarts.length;
  const statesOf = (key: string): BucketStates => {
    let s = out.get(key);
    if (!s) out.set(key, (s = emptyStates(q.measure, bucketCount, env.maxPersonId)));
    return s;
  };
  const add = adder(block, q.measure, persons, env);

  const bd = q.breakdown;
  if (bd === null) {
    add(statesOf(NO_VALUE), rows, buckets, count, null, null);
    return;
  }
  if (bd.kind === 'cohorts') {
    for (const c of bd.cohorts) add(statesOf(c.key), rows, buckets, count, null, c.filter === null ? null : rowMask(c.filter, block, env));
    return;
  }
  // One state per breakdown value, found through the breakdown column's code of each row.
  const keyOf = breakdownKeys(block, bd, env);
  const only = bd.only === null ? null : new Set(bd.only);
  const codes = keyOf.codes;
  const size = keyOf.size + 1;
  const byCode: (BucketStates | null)[] = new Array<BucketStates | null>(size).fill(null);
  const used = new Uint8Array(size);
  for (let k = 0; k < count; k++) used[codes === null ? 0 : codes[rows[k]!]!] = 1;
  for (let c = 0; c < size; c++) {
    if (used[c] === 0) continue;
    const key = keyOf.key(c);
    byCode[c] = only !== null && !only.has(key) ? null : statesOf(key);
  }
  add(null, rows, buckets, count, { codes, byCode }, null);
}

/** Fills the scratch arrays with the rows of `block` that pass; returns how many. */
function select(block: BlockView, q: SeriesScan, nameCode: number, nameCodes: ArrayLike<number> | null, mask: Uint8Array | null, persons: Uint32Array | null): number {
  const n = block.n;
  if (selected.length < n) {
    selected = new Int32Array(n);
    selectedBuckets = new Int32Array(n);
  }
  const rows = selected;
  const out = selectedBuckets;
  const ts = block.f64(COL.ts)!;
  const index = new BucketIndex(q.bucketStarts, q.bucketEnd);
  const from = q.from;
  const to = q.to;
  const start = q.bucketStarts[0]!;
  const step = index.step;
  const last = q.bucketStarts.length - 1;
  const wanted = q.persons === null ? null : new Set(q.persons);
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (nameCode !== 0 && nameCodes![i] !== nameCode) continue;
    if (mask !== null && mask[i] === 0) continue;
    const t = ts[i]!;
    if (t < from || t > to) continue;
    let b: number;
    if (step !== 0) {
      b = Math.floor((t - start) / step);
      if (b > last) b = last;
      if (b < 0) continue;
    } else {
      b = index.of(t);
      if (b < 0) continue;
    }
    if (wanted !== null && !wanted.has(persons![i]!)) continue;
    rows[count] = i;
    out[count++] = b;
  }
  return count;
}

interface ByCode {
  codes: ArrayLike<number> | null;
  byCode: (BucketStates | null)[];
}

/** The breakdown column's codes and each code's breakdown value (one text per distinct value). */
function breakdownKeys(block: BlockView, bd: Exclude<BreakdownScan, { kind: 'cohorts' }>, env: ScanEnv): { codes: ArrayLike<number> | null; size: number; key: (code: number) => string } {
  const column = bd.kind === 'column' ? bd.column : `${EVENT_PROP}$group_${bd.typeIndex}`;
  const col = block.dict(column);
  if (!col) return { codes: null, size: 0, key: () => NO_VALUE };
  if (bd.kind === 'column') return { codes: col.codes, size: col.values.length, key: (c) => (c === 0 ? NO_VALUE : propertyText(col.values[c - 1])) };
  return {
    codes: col.codes,
    size: col.values.length,
    key: (c) => {
      if (c === 0) return NO_VALUE;
      const props = env.groupProperties(bd.typeIndex, String(col.values[c - 1]));
      const v = props && Object.hasOwn(props, bd.property) ? props[bd.property] : undefined;
      return v === undefined ? NO_VALUE : propertyText(v);
    },
  };
}

/**
 * Adds selected rows to a state (`single`) or, with a breakdown, to the state of each row's breakdown code
 * (`split`; rows of values left out have none). `keep` further narrows the rows (one cohort of a cohort breakdown).
 */
type Adder = (single: BucketStates | null, rows: Int32Array, buckets: Int32Array, count: number, split: ByCode | null, keep: Uint8Array | null) => void;

function stateOf(single: BucketStates | null, split: ByCode | null, row: number): BucketStates | null {
  if (split === null) return single;
  return split.byCode[split.codes === null ? 0 : split.codes[row]!]!;
}

/** Sets person `pid`'s bit in bucket `b`'s bitmap (made on first use, `words` long). */
function addPerson(sets: (Uint32Array | null)[], b: number, pid: number, words: number): void {
  let set = sets[b];
  if (!set) sets[b] = set = new Uint32Array(words);
  set[pid >>> 5]! |= 1 << (pid & 31);
}

/** Measures that read each row's person. */
const PERSON_MEASURES: ReadonlySet<Measure['kind']> = new Set(['persons', 'actor_counts', 'person_min', 'persons_and_min']);

/** The adder of a measure, with the block's columns it needs looked up once. */
function adder(block: BlockView, measure: Measure, persons: Uint32Array | null, env: ScanEnv): Adder {
  switch (measure.kind) {
    case 'count':
      return (single, rows, buckets, count, split, keep) => {
        if (split === null && keep === null) {
          const counts = (single as Extract<BucketStates, { kind: 'count' }>).counts;
          for (let k = 0; k < count; k++) counts[buckets[k]!]!++;
          return;
        }
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const s = stateOf(single, split, row);
          if (s !== null) (s as Extract<BucketStates, { kind: 'count' }>).counts[buckets[k]!]!++;
        }
      };
    case 'persons': {
      const words = (env.maxPersonId >>> 5) + 1;
      return (single, rows, buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const pid = persons![row]!;
          if (pid === 0) continue;
          const s = stateOf(single, split, row);
          if (s === null) continue;
          addPerson((s as Extract<BucketStates, { kind: 'persons' }>).sets, buckets[k]!, pid, words);
        }
      };
    }
    case 'actor_counts':
      return (single, rows, buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const pid = persons![row]!;
          if (pid === 0) continue;
          const s = stateOf(single, split, row);
          if (s === null) continue;
          const map = (s as Extract<BucketStates, { kind: 'actor_counts' }>).maps[buckets[k]!]!;
          map.set(pid, (map.get(pid) ?? 0) + 1);
        }
      };
    case 'persons_and_min': {
      // Lifecycle's one pass: the person's bit in the row's bucket, and its minimum of the column.
      const words = (env.maxPersonId >>> 5) + 1;
      const values = block.f64(measure.column === 'ts' ? COL.ts : COL.personCreatedAt)!;
      return (single, rows, buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const pid = persons![row]!;
          if (pid === 0) continue;
          const s = stateOf(single, split, row);
          if (s === null) continue;
          const state = s as Extract<BucketStates, { kind: 'persons_and_min' }>;
          addPerson(state.sets, buckets[k]!, pid, words);
          const v = values[row]!;
          if (v === v && pid < state.values.length && v < state.values[pid]!) state.values[pid] = v;
        }
      };
    }
    case 'person_min': {
      const values = block.f64(measure.column === 'ts' ? COL.ts : COL.personCreatedAt)!;
      return (single, rows, _buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const pid = persons![row]!;
          const v = values[row]!;
          if (pid === 0 || v !== v) continue;
          const s = stateOf(single, split, row);
          if (s === null) continue;
          const mins = (s as Extract<BucketStates, { kind: 'person_min' }>).values;
          if (pid < mins.length && v < mins[pid]!) mins[pid] = v;
        }
      };
    }
    case 'distinct': {
      const col = block.dict(measure.column);
      if (!col) return () => undefined;
      // Values that count: non-null, non-empty texts (one text per distinct value of the block).
      const texts = col.values.map((v) => (v === null ? '' : propertyText(v)));
      return (single, rows, buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const c = col.codes[row]!;
          if (c === 0 || texts[c - 1] === '') continue;
          const s = stateOf(single, split, row);
          if (s !== null) (s as Extract<BucketStates, { kind: 'distinct' }>).sets[buckets[k]!]!.add(texts[c - 1]!);
        }
      };
    }
    case 'numeric': {
      const col = block.dict(EVENT_PROP + measure.property);
      if (!col) return () => undefined;
      const numbers = new Float64Array(col.values.length + 1).fill(NaN);
      col.values.forEach((v, i) => (numbers[i + 1] = propertyNumber(v) ?? NaN));
      return (single, rows, buckets, count, split, keep) => {
        for (let k = 0; k < count; k++) {
          const row = rows[k]!;
          if (keep !== null && keep[row] === 0) continue;
          const v = numbers[col.codes[row]!]!;
          if (v !== v) continue;
          const s = stateOf(single, split, row);
          if (s === null) continue;
          const st = (s as Extract<BucketStates, { kind: 'numeric' }>).state;
          const b = buckets[k]!;
          st.sum[b]! += v;
          st.count[b]!++;
          if (v < st.min[b]!) st.min[b] = v;
          if (v > st.max[b]!) st.max[b] = v;
          if (st.values) st.values[b]!.push(v);
        }
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
