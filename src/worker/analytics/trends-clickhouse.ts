/**
 * Trends answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same TrendsQuery, date range and buckets as
 * src/worker/analytics/trends.ts, each series one query printed by src/domain/analytics/clickhouse/trends-sql.ts,
 * run after the same bounded wait for the export as HogQL (src/worker/query/hogql-clickhouse.ts). Breakdowns
 * follow the local engine's two steps: the top values by event count (ties by value), then the series of those.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { ownerOf, ROLLING_ACTIVE, rollingActiveSql, trendsActorsSql, trendsSeriesSql, type PropertyOwner, type TrendsSqlOptions } from '../../domain/analytics/clickhouse/trends-sql.js';
import { andFilters, cohortLeaf, type FilterNode } from '../../domain/analytics/property-filters.js';
import { CUMULATIVE_DISPLAY, NON_TIME_SERIES_DISPLAYS, type SeriesNode, type TrendsQuery } from '../../domain/analytics/query.js';
import { smooth } from '../../domain/analytics/trends-values.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { actorValuesOnClickHouse } from './actors-clickhouse.js';
import { clickHouseSqlOptions, queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { comparePeriods, formulaResults, seriesRange, type SeriesResult, type TrendsRun } from './trends.js';

export interface ClickHouseTrendsRun extends TrendsRun {
  caughtUp: boolean;
}

/** Each point plus all before it (cumulative displays of counts and property maths, as the local engine's). */
export function runningSum(values: readonly number[]): number[] {
  let total = 0;
  return values.map((v) => (total += v));
}

/** Rows of [breakdown,] bucket, value into one data array per breakdown value ('' without a breakdown). */
export function seriesData(rows: readonly unknown[][], buckets: number, withBreakdown: boolean): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const row of rows) {
    const key = withBreakdown ? String(row[0] ?? '') : '';
    const bucket = Number(row[withBreakdown ? 1 : 0]);
    const value = Number(row[withBreakdown ? 2 : 1] ?? 0);
    let data = out.get(key);
    if (!data) out.set(key, (data = new Array<number>(buckets).fill(0)));
    // No numeric value in a bucket is 0, as the local engine answers it.
    if (bucket >= 0 && bucket < buckets) data[bucket] = Number.isFinite(value) ? value : 0;
  }
  return out;
}

/** Rows of [breakdown,] then one value per point (rolling active users) into one data array per breakdown value. */
export function wideSeriesData(rows: readonly unknown[][], withBreakdown: boolean): Map<string, number[]> {
  return new Map(rows.map((row) => [withBreakdown ? String(row[0] ?? '') : '', row.slice(withBreakdown ? 1 : 0).map((v) => Number(v ?? 0))]));
}

/**
 * The state buckets each point of a rolling active series reads: its own window, or on a cumulative display every
 * bucket of its window and those before (the local engine's "distinct actors so far", a union of the windows).
 */
export function rollingWindows(windows: readonly (readonly number[])[], cumulative: boolean): number[][] {
  if (!cumulative) return windows.map((w) => [...w]);
  const seen = new Set<number>();
  return windows.map((w) => {
    for (const b of w) seen.add(b);
    return [...seen].sort((a, b) => a - b);
  });
}

export async function runTrendsOnClickHouse(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number, offset = 0): Promise<ClickHouseTrendsRun> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.series.map((s) => s.properties)], q.breakdown?.type === 'cohort' ? q.breakdown.cohorts : []);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const timeSeries = !NON_TIME_SERIES_DISPLAYS.has(q.display);
  const opts: TrendsSqlOptions = clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx);
  const caughtUp = await exportCaughtUp(rt, requested);
  const select = async (printed: { sql: string; params: Record<string, string> }) => (await selectOnClickHouse(rt, printed.sql, printed.params)).data;
  const results: SeriesResult[] = [];
  let more = false;
  const cumulative = q.display === CUMULATIVE_DISPLAY && timeSeries;
  const periods = comparePeriods(range, q.compare === true, timeSeries);
  for (const period of periods) {
    for (const s of q.series) {
      const filter = andFilters(q.properties, s.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
      const sr = seriesRange(period.range, s.math, timeSeries);
      const name = s.customName ?? s.name;
      // Rolling active users read each point's window of state buckets, cumulative ones already (no running sum).
      const rolling = ROLLING_ACTIVE.has(s.math);
      const windows = rolling ? rollingWindows(sr.windows, cumulative) : [];
      const push = (data: number[] | undefined, breakdownValue: string | number | undefined, label: string) => {
        const values = data ?? new Array<number>(sr.starts.length).fill(0);
        results.push({ series: s, breakdownValue, label, data: smooth(cumulative && !rolling ? runningSum(values) : values, q.smoothingIntervals), sr, compareLabel: period.label });
      };
      // Cumulative unique users: each person counted in their first bucket, summed up below like the counts.
      const firstSeen = cumulative && s.math === 'dau';
      const points = async (only: { property: string; of: PropertyOwner; only: string[] } | null, events: FilterNode | null = filter) => (rolling
        ? wideSeriesData(await select(rollingActiveSql(s, events, sr.stateStarts, windows, sr.scanFrom, sr.scanTo, only, opts)), only !== null)
        : seriesData(await select(trendsSeriesSql(s, events, sr.starts, sr.scanFrom, sr.scanTo, { kind: 'buckets', breakdown: only, firstSeen }, opts)), sr.starts.length, only !== null));
      if (!q.breakdown) {
        push((await points(null)).get(''), undefined, name);
        continue;
      }
      if (q.breakdown.type === 'cohort') {
        // One series per cohort (0: all users), its filter and the cohort's leaf, as the local engine scans them.
        for (const id of q.breakdown.cohorts) {
          const data = await points(null, id === 0 ? filter : andFilters(filter, cohortLeaf(id)));
          push(data.get(''), id === 0 ? 'all' : id, `${name} - ${id === 0 ? 'All Users' : ctx.cohortNames.get(id) ?? String(id)}`);
        }
        continue;
      }
      const property = q.breakdown.property!;
      const of = ownerOf(q.breakdown.type, q.breakdown.groupTypeIndex);
      const counts = await select(trendsSeriesSql(s, filter, sr.starts, sr.scanFrom, sr.scanTo, { kind: 'breakdown_counts', property, of }, opts));
      const ranked = counts.map((row) => [String(row[0] ?? ''), Number(row[1])] as const)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      const page = ranked.slice(offset, offset + q.breakdown.limit).map(([key]) => key);
      if (ranked.length > offset + q.breakdown.limit) more = true;
      const data = await points({ property, of, only: page });
      for (const key of page) push(data.get(key), key, `${name} - ${key}`);
    }
  }
  // Formulas combine the series' numbers: the local engine's own code, whichever engine made them.
  return { ctx, range, results: q.formula !== null ? formulaResults(q, results) : results, more, caughtUp };
}

/**
 * The persons behind one trends point (`/persons/trends/`) with their event counts, as local person ids: the same
 * series, final filter (the breakdown value's leaf included) and window the local engine scans.
 */
export async function runTrendsActorsOnClickHouse(
  rt: WorkerRuntime, team: number, s: SeriesNode, filter: FilterNode | null, window: { from: number; to: number }, ctx: QueryContext, now: number,
): Promise<{ values: Map<number, number | null>; caughtUp: boolean }> {
  const requested = Date.now();
  const printed = trendsActorsSql(s, filter, window.from, window.to, clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx));
  const caughtUp = await exportCaughtUp(rt, requested);
  return { values: await actorValuesOnClickHouse(rt, team, printed), caughtUp };
}
