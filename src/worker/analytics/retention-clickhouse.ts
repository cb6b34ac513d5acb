/**
 * Retention answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same RetentionQuery and window as the local
 * engine (src/worker/analytics/person-analyses.ts), the cohort sizes and returns as two queries printed by
 * src/domain/analytics/clickhouse/retention-sql.ts, run after the same bounded wait for the export as HogQL.
 */
import { retentionActorReturnsSql, retentionCohortActorsSql, retentionCohortsSql, retentionReturnsSql, retentionValueReturnsSql, retentionValueSizesSql } from '../../domain/analytics/clickhouse/retention-sql.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { rankRetentionValues, retentionWindow, type RetentionQuery } from '../../domain/analytics/retention.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { ACTOR_ROWS_MAX, localPersonIdOf } from './actors-clickhouse.js';
import type { RetentionRun } from './person-analyses.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';

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

/** The query's context, window and filters, as the local engine resolves them. */
function prepared(rt: WorkerRuntime, team: number, q: RetentionQuery, now: number) {
  const ctx = queryContext(rt, team, now, [q.properties, q.target.properties, q.returning.properties]);
  const window = retentionWindow(q, ctx.timeZone, now);
  const test = q.filterTestAccounts ? ctx.testAccountFilters : null;
  const targetFilter = andFilters(q.properties, q.target.properties, test);
  const returningFilter = andFilters(q.properties, q.returning.properties, test);
  const opts = clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx);
  return { ctx, window, targetFilter, returningFilter, opts };
}

export async function runRetentionOnClickHouse(rt: WorkerRuntime, team: number, q: RetentionQuery, now: number): Promise<Pick<RetentionRun, 'ctx' | 'window' | 'matrix' | 'byValue'> & { caughtUp: boolean }> {
  const requested = Date.now();
  const { ctx, window, targetFilter, returningFilter, opts } = prepared(rt, team, q, now);
  const caughtUp = await exportCaughtUp(rt, requested);
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

/**
 * The persons of cohort `cohort` (§4.5) as local person ids, each with its appearances over the cohort's periods
 * (1 at offset 0, then 1 where it returned), as the local engine lists them.
 */
export async function runRetentionActorsOnClickHouse(rt: WorkerRuntime, team: number, q: RetentionQuery, cohort: number, now: number): Promise<{ members: number[]; appearances: Map<number, number[]>; caughtUp: boolean }> {
  const requested = Date.now();
  const { window, targetFilter, returningFilter, opts } = prepared(rt, team, q, now);
  const caughtUp = await exportCaughtUp(rt, requested);
  const [members, returns] = await Promise.all([
    selectOnClickHouse(rt, ...printedArgs(retentionCohortActorsSql(q, targetFilter, window, cohort, opts))),
    selectOnClickHouse(rt, ...printedArgs(retentionActorReturnsSql(q, targetFilter, returningFilter, window, cohort, opts))),
  ]);
  const localId = localPersonIdOf(rt, team);
  const length = q.totalIntervals - cohort;
  const appearances = new Map<number, number[]>();
  for (const [uuid] of members.data) appearances.set(localId(String(uuid)), [1, ...new Array<number>(length - 1).fill(0)]);
  for (const [uuid, later] of returns.data) {
    const list = appearances.get(localId(String(uuid)));
    const k = Number(later);
    if (list && k >= 1 && k < length) list[k] = 1;
  }
  return { members: [...appearances.keys()], appearances, caughtUp };
}

/** A printed query as selectOnClickHouse's arguments, bounded as every actors query is. */
function printedArgs(printed: { sql: string; params: Record<string, string> }): [string, Record<string, string>, number] {
  return [printed.sql, printed.params, ACTOR_ROWS_MAX];
}
