/**
 * Lifecycle answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same query and periods as the local engine
 * (lifecycleWindow, src/worker/analytics/person-analyses.ts), the statuses as two queries printed by
 * src/domain/analytics/clickhouse/lifecycle-sql.ts, run after the same bounded wait for the export as HogQL.
 */
import { lifecycleActiveSql, lifecycleActorsSql, lifecycleDormantSql } from '../../domain/analytics/clickhouse/lifecycle-sql.js';
import { LIFECYCLE_STATUSES, type LifecycleStatus } from '../../domain/analytics/lifecycle.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import type { TrendsQuery } from '../../domain/analytics/query.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { actorValuesOnClickHouse } from './actors-clickhouse.js';
import { lifecyclePeriodOf, lifecycleWindow, type LifecycleRun } from './person-analyses.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';

/** The four statuses' values over `periods` periods (dormant negative) from the two queries' rows. */
export function lifecycleCountsOfRows(periods: number, active: readonly unknown[][], dormant: readonly unknown[][]): Record<LifecycleStatus, number[]> {
  const counts = Object.fromEntries(LIFECYCLE_STATUSES.map((s) => [s, new Array<number>(periods).fill(0)])) as Record<LifecycleStatus, number[]>;
  for (const [period, status, persons] of active) {
    // Period 0 of the rows is the one before the range.
    const p = Number(period) - 1;
    if (p >= 0 && p < periods && (LIFECYCLE_STATUSES as readonly unknown[]).includes(status)) counts[status as LifecycleStatus][p] = Number(persons);
  }
  for (const [period, persons] of dormant) {
    const p = Number(period);
    if (p >= 0 && p < periods) counts.dormant[p] = -Number(persons);
  }
  return counts;
}

/** The query's periods and filter, as the local engine resolves them. */
async function prepared(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number) {
  const series = q.series[0]!;
  const ctx = queryContext(rt, team, now, [q.properties, series.properties]);
  // date_from=all starts at Quill's own first event (block metadata, events after 2015), so both engines' periods
  // are the same instants; only the counting is ClickHouse's.
  const first = await firstEventIfAll(rt, team, q.dates);
  const { range, starts, before, end } = lifecycleWindow(q, ctx.timeZone, now, first);
  const filter = andFilters(q.properties, series.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const opts = clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx);
  return { series, ctx, range, starts, filter, opts, periods: { withBefore: [before, ...starts], end } };
}

export async function runLifecycleOnClickHouse(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number): Promise<Pick<LifecycleRun, 'ctx' | 'range' | 'starts' | 'counts'> & { caughtUp: boolean }> {
  const requested = Date.now();
  const { series, ctx, range, starts, filter, opts, periods } = await prepared(rt, team, q, now);
  const caughtUp = await exportCaughtUp(rt, requested);
  const select = async (printed: { sql: string; params: Record<string, string> }) => (await selectOnClickHouse(rt, printed.sql, printed.params)).data;
  const [active, dormant] = await Promise.all([select(lifecycleActiveSql(series, filter, periods, opts)), select(lifecycleDormantSql(series, filter, periods, opts))]);
  return { ctx, range, starts, counts: lifecycleCountsOfRows(starts.length, active, dormant), caughtUp };
}

/**
 * The persons of one status in the period of `targetDate` (§5.4), as local person ids in ascending order (the
 * local engine's bitmap order, which its persons endpoint pages).
 */
export async function runLifecycleActorsOnClickHouse(rt: WorkerRuntime, team: number, q: TrendsQuery, targetDate: string, status: LifecycleStatus, now: number): Promise<{ ids: number[]; caughtUp: boolean }> {
  const requested = Date.now();
  const { series, ctx, range, starts, filter, opts, periods } = await prepared(rt, team, q, now);
  const period = lifecyclePeriodOf(starts, range, targetDate, now, ctx.timeZone);
  if (period < 0) return { ids: [], caughtUp: true };
  const printed = lifecycleActorsSql(series, filter, periods, period, status, opts);
  const caughtUp = await exportCaughtUp(rt, requested);
  const ids = [...(await actorValuesOnClickHouse(rt, team, printed)).keys()].sort((a, b) => a - b);
  return { ids, caughtUp };
}
