/**
 * Funnels (analytics.md §2): the events of every step and exclusion gathered per person over all shards
 * (src/worker/analytics/sequences.ts), each person's outcome computed (src/domain/analytics/funnel.ts) and summed
 * per breakdown value: how many persons reached each step, their conversion times, the persons themselves for
 * `/persons/funnel/`, and per entrance period for funnel trends.
 */
import { BucketIndex, bucketStarts, resolveDateRange, type DateRange } from '../../domain/analytics/date-range.js';
import { median, personFunnel, type ConvertBins, type FunnelShape } from '../../domain/analytics/funnel.js';
import { funnelMatchers, funnelShape, type Attribution, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { reduceEverywhere, registerReducer, type PersonEvents, type SequenceReducer, type SequenceSpec } from './sequences.js';

export interface FunnelParams {
  shape: FunnelShape;
  attribution: Attribution;
  attributionStep: number | null;
  breakdown: boolean;
  /** Funnel trends: entrance period starts and the range's end. */
  periods: { starts: number[]; end: number } | null;
  /** Keep the persons (for /persons/funnel/). */
  persons: boolean;
  fromStep: number;
  toStep: number;
}

/** One breakdown value's sums. */
export interface ValueStats {
  /** reached[k]: persons whose best attempt reached exactly k steps (k ≥ 1). */
  reached: number[];
  /** Per step s ≥ 1: each converting person's average / median seconds from step s-1 (lists: the median needs all). */
  averages: number[][];
  medians: number[][];
  /** Per person reaching toStep from fromStep: the sum of its average step times (time_to_convert). */
  toConvert: number[];
  /** persons[k]: ids of the persons who reached exactly k steps (only when asked). */
  persons: number[][] | null;
  /** Funnel trends, per entrance period: persons who reached fromStep+1, toStep+1 steps; and the persons. */
  periodFrom: number[];
  periodTo: number[];
  periodPersons: { from: number[]; to: number[] }[] | null;
}

export type FunnelPartial = Map<string, ValueStats>;

/** The label of the breakdown values past the limit, summed as one. */
export const OTHER_VALUE = 'Other';

/**
 * Breakdown values in the answer's order: by persons entering the funnel (the sum of `reached`), most first, ties
 * by value; whichever engine summed them.
 */
export function rankValues<T extends { value: string; reached: number[] }>(values: T[]): T[] {
  const entered = (v: T) => v.reached.reduce((a, b) => a + b, 0);
  return values.sort((a, b) => entered(b) - entered(a) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

/** Breakdown values by persons entering the funnel, the top `limit` kept and the rest merged into "Other". */
export function rankedValueStats(partial: FunnelPartial, limit: number): [string, ValueStats][] {
  const ranked = rankValues([...partial].map(([value, s]) => ({ value, reached: s.reached, s }))).map(({ value, s }) => [value, s] as [string, ValueStats]);
  if (ranked.length <= limit) return ranked;
  const kept = ranked.slice(0, limit);
  const rest = ranked.slice(limit);
  const other = rest[0]![1];
  for (const [, s] of rest.slice(1)) {
    s.reached.forEach((c, k) => (other.reached[k]! += c));
    s.averages.forEach((l, i) => other.averages[i]!.push(...l));
    s.medians.forEach((l, i) => other.medians[i]!.push(...l));
    other.toConvert.push(...s.toConvert);
    s.periodFrom.forEach((c, i) => (other.periodFrom[i]! += c));
    s.periodTo.forEach((c, i) => (other.periodTo[i]! += c));
  }
  return [...kept, [OTHER_VALUE, other]];
}

/** What the steps answer shows of one breakdown value: persons reaching each step, each step's mean and median time. */
export interface StepsSummary {
  value: string;
  /** reached[k]: persons whose best attempt reached exactly k steps. */
  reached: number[];
  /** Per step s ≥ 1 (index s - 1), null when no one reached it. */
  averages: (number | null)[];
  medians: (number | null)[];
}

/** The local engine's sums as the steps answer reads them. */
export function stepsSummary(value: string, s: ValueStats): StepsSummary {
  return {
    value,
    reached: s.reached,
    averages: s.averages.map((l) => (l.length === 0 ? null : l.reduce((a, b) => a + b, 0) / l.length)),
    medians: s.medians.map((l) => (l.length === 0 ? null : median(l))),
  };
}

export function emptyStats(p: FunnelParams): ValueStats {
  const steps = p.shape.steps;
  const periods = p.periods?.starts.length ?? 0;
  return {
    reached: new Array<number>(steps + 1).fill(0),
    averages: Array.from({ length: steps - 1 }, () => []),
    medians: Array.from({ length: steps - 1 }, () => []),
    toConvert: [],
    persons: p.persons ? Array.from({ length: steps + 1 }, () => []) : null,
    periodFrom: new Array<number>(periods).fill(0),
    periodTo: new Array<number>(periods).fill(0),
    periodPersons: p.persons && p.periods ? Array.from({ length: periods }, () => ({ from: [], to: [] })) : null,
  };
}

/** The per-person fold into sums, also what the ClickHouse executor feeds (src/worker/analytics/funnels-clickhouse.ts). */
export function funnelReducer(params: unknown): SequenceReducer<FunnelPartial> {
  const p = params as FunnelParams;
  const index = p.periods ? new BucketIndex(p.periods.starts, p.periods.end) : null;
  const periodOf = index ? (t: number) => index.of(t) : undefined;
  const statsOf = (out: FunnelPartial, value: string) => {
    let s = out.get(value);
    if (!s) out.set(value, (s = emptyStats(p)));
    return s;
  };
  const record = (out: FunnelPartial, value: string, pid: number, ts: Float64Array, mask: Uint32Array, n: number) => {
    const f = personFunnel(ts, mask, n, p.shape, periodOf);
    if (f.reached === 0) return;
    const s = statsOf(out, value);
    s.reached[f.reached]!++;
    s.persons?.[f.reached]!.push(pid);
    for (let step = 1; step < f.reached; step++) {
      s.averages[step - 1]!.push(f.averages[step - 1]!);
      s.medians[step - 1]!.push(f.medians[step - 1]!);
    }
    if (f.reached > p.toStep && p.toStep > p.fromStep) {
      let total = 0;
      for (let step = p.fromStep + 1; step <= p.toStep; step++) total += f.averages[step - 1]!;
      s.toConvert.push(total);
    }
    if (f.byPeriod) {
      for (const [period, reached] of f.byPeriod) {
        if (reached >= p.fromStep + 1) {
          s.periodFrom[period]!++;
          s.periodPersons?.[period]!.from.push(pid);
        }
        if (reached >= p.toStep + 1) {
          s.periodTo[period]!++;
          s.periodPersons?.[period]!.to.push(pid);
        }
      }
    }
  };
  return {
    kind: 'funnel',
    empty: () => new Map(),
    add(out, person: PersonEvents) {
      if (!p.breakdown) return record(out, '', person.pid, person.ts, person.mask, person.n);
      const text = (k: number) => (person.value[k]! < 0 ? '' : person.values[person.value[k]!]!);
      if (p.attribution === 'all_events') {
        // The value is part of the partition: every step must carry it.
        const byValue = new Map<string, number[]>();
        for (let k = 0; k < person.n; k++) {
          const v = text(k);
          const rows = byValue.get(v) ?? [];
          rows.push(k);
          byValue.set(v, rows);
        }
        for (const [v, rows] of byValue) {
          record(out, v, person.pid, Float64Array.from(rows, (k) => person.ts[k]!), Uint32Array.from(rows, (k) => person.mask[k]!), rows.length);
        }
        return;
      }
      let value = '';
      if (p.attribution === 'step') {
        const f = personFunnel(person.ts, person.mask, person.n, p.shape, undefined, 'all');
        const step = p.attributionStep!;
        const values = new Set(f.chains.filter((c) => c.length > step).map((c) => text(c[step]!)));
        for (const v of values.size === 0 ? [''] : values) record(out, v, person.pid, person.ts, person.mask, person.n);
        return;
      }
      // First touch: the earliest step event with a value; last touch: the latest.
      const steps = (1 << p.shape.steps) - 1;
      const first = p.attribution === 'first_touch';
      for (let i = 0; i < person.n; i++) {
        const k = first ? i : person.n - 1 - i;
        if ((person.mask[k]! & steps) !== 0 && text(k) !== '') {
          value = text(k);
          break;
        }
      }
      record(out, value, person.pid, person.ts, person.mask, person.n);
    },
    merge(into, other) {
      for (const [value, s] of other) {
        const mine = into.get(value);
        if (!mine) {
          into.set(value, s);
          continue;
        }
        s.reached.forEach((c, k) => (mine.reached[k]! += c));
        s.averages.forEach((list, i) => mine.averages[i]!.push(...list));
        s.medians.forEach((list, i) => mine.medians[i]!.push(...list));
        mine.toConvert.push(...s.toConvert);
        s.persons?.forEach((list, k) => mine.persons![k]!.push(...list));
        s.periodFrom.forEach((c, i) => (mine.periodFrom[i]! += c));
        s.periodTo.forEach((c, i) => (mine.periodTo[i]! += c));
        s.periodPersons?.forEach((pp, i) => {
          mine.periodPersons![i]!.from.push(...pp.from);
          mine.periodPersons![i]!.to.push(...pp.to);
        });
      }
    },
  };
}

registerReducer('funnel', funnelReducer);

export interface FunnelRun {
  ctx: QueryContext;
  range: DateRange;
  /** Entrance periods (funnel trends). */
  periods: number[];
  partial: FunnelPartial;
  /** The steps already summed and ranked per breakdown value ("Other" included), when ClickHouse folded them. */
  folded?: StepsSummary[];
  /** Time to convert already binned, when ClickHouse folded it. */
  times?: TimeToConvert;
}

/** §2.4 time to convert: persons per bin of conversion seconds (`[bin start, persons]`), and their mean. */
export interface TimeToConvert {
  bins: [number, number][];
  average_conversion_time: number | null;
}

export function timeToConvertOf(b: ConvertBins, counts: number[], mean: number): TimeToConvert {
  return { bins: counts.map((c, i) => [b.from + i * b.width, c]), average_conversion_time: Math.round(mean * 100) / 100 };
}

/** What the fold needs of the query, whichever engine gathers the events. */
export function funnelParams(q: FunnelsQuery, range: DateRange, periods: number[], persons: boolean): FunnelParams {
  return {
    shape: funnelShape(q), attribution: q.attribution, attributionStep: q.attributionStep, breakdown: q.breakdown !== null,
    periods: q.viz === 'trends' ? { starts: periods, end: range.to } : null, persons, fromStep: q.fromStep, toStep: q.toStep,
  };
}

export async function runFunnel(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, persons = false): Promise<FunnelRun> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)]);
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first);
  const periods = q.viz === 'trends' ? bucketStarts(range) : [];
  const b = q.breakdown;
  if (b && b.type !== 'event' && b.type !== 'person') throw new Error('funnel breakdowns by event or person properties only');
  const spec: SequenceSpec = {
    team, from: range.from, to: range.to,
    filter: andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null),
    matchers: funnelMatchers(q),
    allEvents: q.order === 'strict',
    valueColumn: b ? (b.type === 'person' ? PERSON_PROP : EVENT_PROP) + b.property : null,
    names: false,
  };
  const params = funnelParams(q, range, periods, persons);
  const partial = await reduceEverywhere<FunnelPartial>(rt, spec, ctx.scan, { kind: 'funnel', params });
  return { ctx, range, periods, partial };
}
