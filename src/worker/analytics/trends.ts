/**
 * Trends (analytics.md §1), coordinated by the worker that received the request: the date range and buckets in
 * the project's time zone, one scan of every shard per series (two with a property breakdown: the top values by
 * event count first, then the series for those values), then the numbers and the series JSON of §1.4.
 */
import type { Measure, Partial } from '../../domain/analytics/aggregates.js';
import { bucketDay, bucketLabel, bucketStarts, resolveDateRange, type DateRange } from '../../domain/analytics/date-range.js';
import { andFilters, cohortLeaf, type FilterNode } from '../../domain/analytics/property-filters.js';
import { CUMULATIVE_DISPLAY, NON_TIME_SERIES_DISPLAYS, PROPERTY_MATHS, QUANTILES, isPerActorMath, type SeriesNode, type TrendsQuery } from '../../domain/analytics/query.js';
import { addIntervals } from '../../domain/analytics/time-zone.js';
import { applyFormula, parseFormula, seriesValues, smooth } from '../../domain/analytics/trends-values.js';
import { EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll, scanEverywhere } from './scatter.js';
import type { BreakdownScan, SeriesScan } from './series-scan.js';

/** The buckets a series is computed over, and which state buckets each output point reads. */
export interface SeriesRange {
  range: DateRange;
  /** Output bucket starts (one, spanning the range, for non-time-series displays). */
  starts: number[];
  /** State bucket starts (earlier ones prepended for rolling active users). */
  stateStarts: number[];
  windows: number[][];
  /** Inclusive bounds of the events scanned. */
  scanFrom: number;
  scanTo: number;
}

const ROLLING_DAYS: Readonly<Record<string, number>> = { weekly_active: 7, monthly_active: 30 };

export function measureOf(s: SeriesNode): Measure {
  if (s.math === 'dau' || s.math === 'weekly_active' || s.math === 'monthly_active') return { kind: 'persons' };
  if (s.math === 'unique_session') return { kind: 'distinct', column: `${EVENT_PROP}$session_id` };
  if (s.math === 'unique_group') return { kind: 'distinct', column: `${EVENT_PROP}$group_${s.mathGroupTypeIndex}` };
  if (PROPERTY_MATHS.has(s.math)) return { kind: 'numeric', property: s.mathProperty!, keepValues: QUANTILES[s.math] !== undefined };
  if (isPerActorMath(s.math)) return { kind: 'actor_counts' };
  return { kind: 'count' };
}

/** Output and state buckets of a series over `range`. */
export function seriesRange(range: DateRange, math: string, timeSeries: boolean): SeriesRange {
  const rollingDays = ROLLING_DAYS[math];
  if (!timeSeries) {
    const from = rollingDays ? addIntervals(range.from, 'day', -rollingDays, range.timeZone) + 1 : range.from;
    return { range, starts: [range.from], stateStarts: [from], windows: [[0]], scanFrom: from, scanTo: range.to };
  }
  const starts = bucketStarts(range);
  if (!rollingDays) return { range, starts, stateStarts: starts, windows: starts.map((_, i) => [i]), scanFrom: range.from, scanTo: range.to };
  // Point k counts actors active in (start_k - N days, start_k]: the buckets starting in that window.
  const earliest = addIntervals(starts[0]!, 'day', -rollingDays, range.timeZone);
  const before: number[] = [];
  for (let b = addIntervals(starts[0]!, range.interval, -1, range.timeZone); b > earliest; b = addIntervals(b, range.interval, -1, range.timeZone)) before.unshift(b);
  const stateStarts = [...before, ...starts];
  const windows = starts.map((s) => {
    const lo = addIntervals(s, 'day', -rollingDays, range.timeZone);
    const w: number[] = [];
    stateStarts.forEach((b, j) => {
      if (b > lo && b <= s) w.push(j);
    });
    return w;
  });
  return { range, starts, stateStarts, windows, scanFrom: stateStarts[0]!, scanTo: range.to };
}

/** The same range `count` intervals earlier (compare=true). */
export function shiftedRange(range: DateRange, count: number): DateRange {
  return {
    ...range,
    from: addIntervals(range.from, range.interval, -count, range.timeZone),
    to: addIntervals(range.to + 1, range.interval, -count, range.timeZone) - 1,
  };
}

/** The periods a trend computes: its range, and with compare=true the same range as many buckets earlier. */
export function comparePeriods(range: DateRange, compare: boolean, timeSeries: boolean): { range: DateRange; label?: 'current' | 'previous' }[] {
  if (!compare) return [{ range }];
  return [{ range, label: 'current' }, { range: shiftedRange(range, timeSeries ? bucketStarts(range).length : 1), label: 'previous' }];
}

export interface SeriesResult {
  series: SeriesNode;
  /** Breakdown value as the answer shows it (undefined without a breakdown). */
  breakdownValue?: string | number;
  label: string;
  data: number[];
  sr: SeriesRange;
  compareLabel?: 'current' | 'previous';
}

export interface TrendsRun {
  ctx: QueryContext;
  range: DateRange;
  results: SeriesResult[];
  /** Breakdown values left out by the limit (the answer's `next`). */
  more: boolean;
}

function scanOf(team: number, s: SeriesNode, filter: FilterNode | null, sr: SeriesRange, measure: Measure, breakdown: BreakdownScan | null): SeriesScan {
  return {
    team, event: s.event, filter, from: sr.scanFrom, to: sr.scanTo, bucketStarts: sr.stateStarts,
    bucketEnd: sr.scanTo, measure, breakdown, persons: null,
  };
}

/** The breakdown as a scan reads it, for property breakdowns (cohorts are handled per cohort). */
function propertyBreakdown(q: TrendsQuery, only: string[] | null): BreakdownScan | null {
  const b = q.breakdown;
  if (!b || b.type === 'cohort') return null;
  if (b.type === 'group') return { kind: 'group', typeIndex: b.groupTypeIndex!, property: b.property!, only };
  return { kind: 'column', column: (b.type === 'person' ? PERSON_PROP : EVENT_PROP) + b.property, only };
}

export async function runTrends(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number, offset = 0): Promise<TrendsRun> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.series.map((s) => s.properties)], q.breakdown?.type === 'cohort' ? q.breakdown.cohorts : []);
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first);
  const timeSeries = !NON_TIME_SERIES_DISPLAYS.has(q.display);
  const cumulative = q.display === CUMULATIVE_DISPLAY;
  const results: SeriesResult[] = [];
  let more = false;
  const periods = comparePeriods(range, q.compare === true, timeSeries);

  for (const period of periods) {
    for (const s of q.series) {
      const filter = andFilters(q.properties, s.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
      const sr = seriesRange(period.range, s.math, timeSeries);
      const measure = measureOf(s);
      const name = s.customName ?? s.name;
      const push = (partial: Partial, key: string, breakdownValue: string | number | undefined, label: string) => {
        const data = seriesValues(partial.get(key), s.math, sr.windows, cumulative && timeSeries);
        results.push({ series: s, breakdownValue, label, data: smooth(data, q.smoothingIntervals), sr, compareLabel: period.label });
      };
      if (!q.breakdown) {
        push(await scanEverywhere(rt, scanOf(team, s, filter, sr, measure, null), ctx.scan), '', undefined, name);
        continue;
      }
      if (q.breakdown.type === 'cohort') {
        const cohorts = q.breakdown.cohorts.map((id) => ({ key: String(id), filter: id === 0 ? null : cohortLeaf(id) }));
        const partial = await scanEverywhere(rt, scanOf(team, s, filter, sr, measure, { kind: 'cohorts', cohorts }), ctx.scan);
        for (const id of q.breakdown.cohorts) {
          const cohortName = id === 0 ? 'All Users' : ctx.cohortNames.get(id) ?? String(id);
          push(partial, String(id), id === 0 ? 'all' : id, `${name} - ${cohortName}`);
        }
        continue;
      }
      // Top values by event count over the range, then the series of those values.
      const counts = await scanEverywhere(rt, scanOf(team, s, filter, sr, { kind: 'count' }, propertyBreakdown(q, null)), ctx.scan);
      const ranked = [...counts].map(([key, st]) => [key, (st as { counts: Float64Array }).counts.reduce((a, b) => a + b, 0)] as const)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const page = ranked.slice(offset, offset + q.breakdown.limit).map(([key]) => key);
      if (ranked.length > offset + q.breakdown.limit) more = true;
      const partial = measure.kind === 'count' ? counts : await scanEverywhere(rt, scanOf(team, s, filter, sr, measure, propertyBreakdown(q, page)), ctx.scan);
      for (const key of page) push(partial, key, key, `${name} - ${key}`);
    }
  }
  if (q.formula !== null) return { ctx, range, results: formulaResults(q, results), more };
  return { ctx, range, results, more };
}

/** One series per breakdown value (and period) computed by the formula from the entity series. */
export function formulaResults(q: TrendsQuery, results: SeriesResult[]): SeriesResult[] {
  const formula = parseFormula(q.formula!, q.series.length);
  const groups = new Map<string, SeriesResult[]>();
  for (const r of results) {
    const key = JSON.stringify([r.compareLabel ?? '', r.breakdownValue ?? null]);
    const list = groups.get(key) ?? [];
    list[r.series.index] = r;
    groups.set(key, list);
  }
  const out: SeriesResult[] = [];
  for (const list of groups.values()) {
    const any = list.find((r) => r !== undefined)!;
    const data = applyFormula(formula, q.series.map((s) => list[s.index]?.data ?? []), any.data.length);
    const label = any.breakdownValue === undefined ? q.formula! : `${q.formula} - ${any.breakdownValue}`;
    out.push({ ...any, label, data });
  }
  return out;
}

export { bucketDay, bucketLabel };
