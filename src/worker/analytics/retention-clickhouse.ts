/**
 * Retention answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same RetentionQuery and window as the local
 * engine (src/worker/analytics/person-analyses.ts), the cohort sizes and returns as two queries printed by
 * src/domain/analytics/clickhouse/retention-sql.ts, run after the same bounded wait for the export as HogQL.
 */
import { retentionCohortsSql, retentionReturnsSql, retentionValueReturnsSql, retentionValueSizesSql } from '../../domain/analytics/clickhouse/retention-sql.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { rankRetentionValues, retentionWindow, type RetentionQuery } from '../../domain/analytics/retention.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import type { RetentionRun } from './person-analyses.js';
import { queryContext } from './query-context.js';

/** counts[i][k] (cohort i, offset k < n - i) from the cohort sizes and the returns' rows. */
export function retentionMatrixOfRows(n: number, cohorts: readonly unknown[][], returns: readonly unknown[][]): number[][] {
  const matrix = Array.from({ length: n }, (_, i) => new Array<number>(n - i).fill(0));
  for (const [bucket, persons] of cohorts) {
    const i = Number(bucket);
    if (i >= 0 && i < n) matrix[i]![0] = Number(persons);
  }
  for (const [cohort, offset, persons] of returns) {
    const i = Number(cohort);
    const k = Number(offset);
    if (i >= 0 && i < n && k >= 1 && k < n - i) matrix[i]![k] = Number(persons);
  }
  return matrix;
}

/** With a breakdown: per value its counts over the offsets (k = 0: the persons in any of its cohorts), ranked. */
export function retentionByValueOfRows(n: number, sizes: readonly unknown[][], returns: readonly unknown[][]): { value: string; counts: number[] }[] {
  const byValue = new Map<string, number[]>();
  for (const [value, persons] of sizes) byValue.set(String(value), [Number(persons), ...new Array<number>(n - 1).fill(0)]);
  for (const [value, later, persons] of returns) {
    const counts = byValue.get(String(value));
    const k = Number(later);
    if (counts && k >= 1 && k < n) counts[k] = Number(persons);
  }
  return rankRetentionValues([...byValue].map(([value, counts]) => ({ value, counts })));
}

export async function runRetentionOnClickHouse(rt: WorkerRuntime, team: number, q: RetentionQuery, now: number): Promise<Pick<RetentionRun, 'ctx' | 'window' | 'matrix' | 'byValue'> & { caughtUp: boolean }> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, q.target.properties, q.returning.properties]);
  const window = retentionWindow(q, ctx.timeZone, now);
  const test = q.filterTestAccounts ? ctx.testAccountFilters : null;
  const targetFilter = andFilters(q.properties, q.target.properties, test);
  const returningFilter = andFilters(q.properties, q.returning.properties, test);
  const caughtUp = await exportCaughtUp(rt, requested);
  const opts = { team, database: rt.config.clickhouseDatabase, timeZone: ctx.timeZone, now };
  const select = async (printed: { sql: string; params: Record<string, string> }) => (await selectOnClickHouse(rt, printed.sql, printed.params)).data;
  if (q.breakdown) {
    const [sizes, returns] = await Promise.all([
      select(retentionValueSizesSql(q, targetFilter, window, opts)),
      select(retentionValueReturnsSql(q, targetFilter, returningFilter, window, opts)),
    ]);
    return { ctx, window, matrix: [], byValue: retentionByValueOfRows(window.starts.length, sizes, returns), caughtUp };
  }
  const [cohorts, returns] = await Promise.all([
    select(retentionCohortsSql(q, targetFilter, window, opts)),
    select(retentionReturnsSql(q, targetFilter, returningFilter, window, opts)),
  ]);
  return { ctx, window, matrix: retentionMatrixOfRows(window.starts.length, cohorts, returns), byValue: null, caughtUp };
}
