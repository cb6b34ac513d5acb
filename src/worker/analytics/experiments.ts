/**
 * An experiment's per-variant data for one metric, from the engine's per-person scan (sequences.ts): every worker
 * collects the exposure events and the metric's events of its shards, reduces the persons it holds whole, and the
 * coordinator reduces the persons spread over workers. Nothing replays the events API.
 *
 * Per person (events in time order): the exposure is the first exposure event; its variant is the variant the
 * person is in. A person whose exposure events name several variants is left out (`exclude`, the default) or kept
 * in the first one (`first_seen`). Only events at or after that first exposure count for the metric:
 *  - mean metric: the person's value (event count for `total`, Σ of the property for `sum`, its mean for `avg`;
 *    0 without events) adds to `sum` and its square to `sum_squares`; every exposed person is a sample;
 *    with a CUPED lookback, the same value over the lookback before the exposure is the covariate x (Σx, Σx², Σxy);
 *  - funnel metric: the steps the person completed in order after the exposure; `step_counts[k]` counts persons
 *    who reached step k + 1.
 *
 * Bit layout of an event's matcher mask: bits 0 … V − 1 are the variants' exposure matchers, the metric's
 * matchers follow (one for a mean metric, one per step for a funnel).
 */
import { andFilters, parseFilters, propertyNumber, type FilterNode } from '../../domain/analytics/property-filters.js';
import { EVENT_PROP } from '../../stores/scan/block-builder.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext } from './query-context.js';
import { reduceEverywhere, registerReducer, type Matcher, type PersonEvents, type SequenceReducer, type SequenceSpec } from './sequences.js';

/** Mask bits are 32: variants plus funnel steps must fit. */
export const MAX_MATCHERS = 32;
const DAY_MS = 86_400_000;
/** The exposures per day cover at most this many days (a longer window counts its later days in the last one). */
export const MAX_TIMELINE_DAYS = 3_660;

/** Days in the window [from, to] (ms, inclusive), for the exposures per day. */
export function timelineDays(from: number, to: number): number {
  return Math.min(MAX_TIMELINE_DAYS, Math.max(1, Math.floor((to - from) / DAY_MS) + 1));
}

export interface ExposureSpec {
  /** null: `$feature_flag_called` for the flag, the variant in `$feature_flag_response`. */
  event: string | null;
  /** Raw PostHog property filters of a custom exposure event. */
  properties: unknown;
  multipleVariantHandling: 'exclude' | 'first_seen';
  filterTestAccounts: boolean;
}

export type MetricSpec =
  | { type: 'mean'; event: string | null; properties: unknown; math: 'total' | 'sum' | 'avg'; mathProperty: string | null }
  | { type: 'funnel'; steps: { event: string | null; properties: unknown }[] };

export interface VariantData {
  key: string;
  exposures: number;
  number_of_samples: number;
  sum: number;
  sum_squares: number;
  /** Funnel metrics only. */
  step_counts?: number[];
  /** Mean metrics with a CUPED lookback: Σx, Σx², Σxy of the pre-exposure value x over the same persons. */
  covariate?: { sum: number; sum_squares: number; sum_product: number };
}

export interface ExperimentData {
  variants: VariantData[];
  /** First exposures per variant and day of the window (day k = [from + k days, from + k + 1 days)). */
  exposuresByDay: number[][];
  /** Persons whose exposure events named several variants and were left out (`exclude`). */
  excluded_multiple_variants: number;
}

interface Params {
  variants: number;
  metric: 'mean' | 'funnel' | 'none';
  math: 'total' | 'sum' | 'avg';
  steps: number;
  firstSeen: boolean;
  /** Exposures count from here (the scan may start earlier, for the covariate's lookback). */
  start: number;
  /** CUPED: the covariate is the metric's value over this many ms before each person's exposure; 0 = none. */
  lookbackMs: number;
  /** Days of the window, for the exposures per day. */
  days: number;
}

interface Partial {
  exposures: number[];
  sum: number[];
  sumSq: number[];
  steps: number[][];
  excluded: number;
  sumX: number[];
  sumX2: number[];
  sumXY: number[];
  daily: number[][];
}

function experimentReducer(raw: unknown): SequenceReducer<Partial> {
  const p = raw as Params;
  const V = p.variants;
  const allVariants = (1 << V) - 1 || 0;
  return {
    kind: 'experiment',
    empty: () => ({
      exposures: new Array<number>(V).fill(0), sum: new Array<number>(V).fill(0), sumSq: new Array<number>(V).fill(0),
      steps: Array.from({ length: V }, () => new Array<number>(p.steps).fill(0)), excluded: 0,
      sumX: new Array<number>(V).fill(0), sumX2: new Array<number>(V).fill(0), sumXY: new Array<number>(V).fill(0),
      daily: Array.from({ length: V }, () => new Array<number>(p.days).fill(0)),
    }),
    add(into, e: PersonEvents) {
      let first = -1;
      let seen = 0;
      for (let k = 0; k < e.n; k++) {
        const bits = e.mask[k]! & allVariants;
        if (bits === 0 || e.ts[k]! < p.start) continue;
        if (first < 0) first = k;
        seen |= bits;
      }
      if (first < 0) return;
      const firstBits = e.mask[first]! & allVariants;
      if (!p.firstSeen && (seen & (seen - 1)) !== 0) {
        into.excluded++;
        return;
      }
      const v = 31 - Math.clz32(firstBits & -firstBits);
      into.exposures[v]!++;
      const since = e.ts[first]!;
      into.daily[v]![Math.min(p.days - 1, Math.floor((since - p.start) / DAY_MS))]!++;
      if (p.metric === 'mean') {
        const bit = 1 << V;
        // The person's value over [from, to) of their events: count, sum or mean of the property.
        const valueOver = (from: number, to: number): number => {
          let count = 0;
          let total = 0;
          for (let k = 0; k < e.n; k++) {
            const t = e.ts[k]!;
            if (t < from || t >= to || (e.mask[k]! & bit) === 0) continue;
            if (p.math === 'total') {
              count++;
              continue;
            }
            const x = e.value[k]! < 0 ? null : propertyNumber(e.values[e.value[k]!]);
            if (x === null) continue;
            count++;
            total += x;
          }
          return p.math === 'total' ? count : p.math === 'sum' ? total : count === 0 ? 0 : total / count;
        };
        const y = valueOver(since, Infinity);
        into.sum[v]! += y;
        into.sumSq[v]! += y * y;
        if (p.lookbackMs > 0) {
          const x = valueOver(since - p.lookbackMs, since);
          into.sumX[v]! += x;
          into.sumX2[v]! += x * x;
          into.sumXY[v]! += x * y;
        }
      } else if (p.metric === 'funnel') {
        let reached = 0;
        for (let k = first; k < e.n && reached < p.steps; k++) {
          if (e.ts[k]! < since) continue;
          if ((e.mask[k]! & (1 << (V + reached))) !== 0) reached++;
        }
        for (let s = 0; s < reached; s++) into.steps[v]![s]!++;
      }
    },
    merge(into, other) {
      for (let v = 0; v < V; v++) {
        into.exposures[v]! += other.exposures[v]!;
        into.sum[v]! += other.sum[v]!;
        into.sumSq[v]! += other.sumSq[v]!;
        for (let s = 0; s < p.steps; s++) into.steps[v]![s]! += other.steps[v]![s]!;
        into.sumX[v]! += other.sumX[v]!;
        into.sumX2[v]! += other.sumX2[v]!;
        into.sumXY[v]! += other.sumXY[v]!;
        for (let d = 0; d < p.days; d++) into.daily[v]![d]! += other.daily[v]![d]!;
      }
      into.excluded += other.excluded;
    },
  };
}

registerReducer('experiment', experimentReducer as (params: unknown) => SequenceReducer<unknown>);

const leaf = (key: string, value: string) => ({ key, value, operator: 'exact', type: 'event' });

/** One metric's per-variant data over [from, to] (ms, inclusive). */
export async function experimentData(
  rt: WorkerRuntime, team: number, flagKey: string, variants: string[], exposure: ExposureSpec, metric: MetricSpec | null,
  from: number, to: number, now: number, lookbackMs = 0,
): Promise<ExperimentData> {
  const lookback = metric?.type === 'mean' ? Math.max(0, lookbackMs) : 0;
  const exposureProps = exposure.event === null ? null : parseFilters(exposure.properties ?? null, 'exposure_criteria');
  const matchers: Matcher[] = variants.map((variant) => (exposure.event === null
    ? { event: '$feature_flag_called', filter: parseFilters([leaf('$feature_flag', flagKey), leaf('$feature_flag_response', variant)]) }
    : { event: exposure.event, filter: andFilters(exposureProps, parseFilters([leaf(`$feature/${flagKey}`, variant)])) }));
  const trees: (FilterNode | null)[] = matchers.map((m) => m.filter);
  let valueColumn: string | null = null;
  if (metric?.type === 'mean') {
    const filter = parseFilters(metric.properties ?? null, 'metrics');
    matchers.push({ event: metric.event, filter });
    trees.push(filter);
    if (metric.math !== 'total' && metric.mathProperty) valueColumn = EVENT_PROP + metric.mathProperty;
  } else if (metric?.type === 'funnel') {
    for (const step of metric.steps) {
      const filter = parseFilters(step.properties ?? null, 'metrics');
      matchers.push({ event: step.event, filter });
      trees.push(filter);
    }
  }
  if (matchers.length > MAX_MATCHERS) throw new RangeError('too many variants and funnel steps for one scan');
  const ctx = queryContext(rt, team, now, trees);
  const spec: SequenceSpec = {
    team, from: from - lookback, to,
    filter: exposure.filterTestAccounts ? ctx.testAccountFilters : null,
    matchers, allEvents: false, valueColumn, names: false,
  };
  const steps = metric?.type === 'funnel' ? metric.steps.length : 0;
  const params: Params = {
    variants: variants.length, metric: metric?.type ?? 'none', math: metric?.type === 'mean' ? metric.math : 'total',
    steps, firstSeen: exposure.multipleVariantHandling === 'first_seen', start: from, lookbackMs: lookback,
    days: timelineDays(from, to),
  };
  const r = await reduceEverywhere<Partial>(rt, spec, ctx.scan, { kind: 'experiment', params });
  return {
    variants: variants.map((key, v) => ({
      key, exposures: r.exposures[v]!, number_of_samples: r.exposures[v]!, sum: r.sum[v]!, sum_squares: r.sumSq[v]!,
      ...(metric?.type === 'funnel' ? { step_counts: r.steps[v]! } : {}),
      ...(lookback > 0 ? { covariate: { sum: r.sumX[v]!, sum_squares: r.sumX2[v]!, sum_product: r.sumXY[v]! } } : {}),
    })),
    exposuresByDay: r.daily,
    excluded_multiple_variants: r.excluded,
  };
}
