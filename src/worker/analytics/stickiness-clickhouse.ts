/**
 * Stickiness answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same TrendsQuery, periods and intervals as
 * the local engine (src/worker/analytics/person-analyses.ts), each series' histogram one query printed by
 * src/domain/analytics/clickhouse/stickiness-sql.ts, run after the same bounded wait for the export as HogQL.
 */
import { bucketStarts, resolveDateRange, type DateRange } from '../../domain/analytics/date-range.js';
import type { TrendsSqlOptions } from '../../domain/analytics/clickhouse/trends-sql.js';
import { stickinessActorsSql, stickinessSql } from '../../domain/analytics/clickhouse/stickiness-sql.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import type { TrendsQuery } from '../../domain/analytics/query.js';
import { stickinessIntervals } from '../../domain/analytics/stickiness.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { actorValuesOnClickHouse } from './actors-clickhouse.js';
import { stickinessPeriods, type StickinessSeries } from './person-analyses.js';
import { clickHouseSqlOptions, queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';

/** data[k - 1] = persons active in exactly k intervals, k = 1 … points, from rows of (intervals, persons). */
export function histogramOfRows(rows: readonly unknown[][], points: number): number[] {
  const data = new Array<number>(points).fill(0);
  for (const [intervals, persons] of rows) {
    const k = Number(intervals);
    if (k >= 1 && k <= points) data[k - 1] = Number(persons);
  }
  return data;
}

/** The query's context and range, as the local engine resolves them. */
async function prepared(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number): Promise<{ ctx: QueryContext; range: DateRange; opts: TrendsSqlOptions }> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.series.map((s) => s.properties)]);
  // date_from=all starts at Quill's own first event (block metadata, events after 2015), so both engines' ranges
  // are the same instants; only the counting is ClickHouse's.
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first);
  return { ctx, range, opts: clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx) };
}

export async function runStickinessOnClickHouse(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number): Promise<{ ctx: QueryContext; series: Omit<StickinessSeries, 'counts'>[]; caughtUp: boolean }> {
  const requested = Date.now();
  const { ctx, range, opts } = await prepared(rt, team, q, now);
  const caughtUp = await exportCaughtUp(rt, requested);
  const out: Omit<StickinessSeries, 'counts'>[] = [];
  for (const period of stickinessPeriods(q, range)) {
    const points = stickinessIntervals(period.range) - 1;
    for (const s of q.series) {
      const filter = andFilters(q.properties, s.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
      const printed = stickinessSql(s, filter, bucketStarts(period.range), period.range.from, period.range.to, opts);
      const rows = (await selectOnClickHouse(rt, printed.sql, printed.params)).data;
      out.push({ index: s.index, range: period.range, data: histogramOfRows(rows, points), compareLabel: period.label });
    }
  }
  return { ctx, series: out, caughtUp };
}

/**
 * The persons of one stickiness point (§6.4): those active in exactly `intervals` intervals of the range of `q`'s
 * one series (the current period: the persons endpoint asks without compare), as local person ids.
 */
export async function runStickinessActorsOnClickHouse(rt: WorkerRuntime, team: number, q: TrendsQuery, intervals: number, now: number): Promise<{ values: Map<number, number | null>; caughtUp: boolean }> {
  const requested = Date.now();
  const { ctx, range, opts } = await prepared(rt, team, q, now);
  const s = q.series[0]!;
  const filter = andFilters(q.properties, s.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const printed = stickinessActorsSql(s, filter, bucketStarts(range), range.from, range.to, intervals, opts);
  const caughtUp = await exportCaughtUp(rt, requested);
  return { values: await actorValuesOnClickHouse(rt, team, printed), caughtUp };
}
