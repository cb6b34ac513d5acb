/**
 * Paths answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same PathsQuery, date range and cleaning rules as
 * src/worker/analytics/paths.ts. ClickHouse gathers each person's events that may be path items (one query printed
 * by src/domain/analytics/clickhouse/path-sql.ts, after the same bounded wait for the export as HogQL); they then
 * go through the local engine's own fold (pathReducer), so both engines share one definition of a path.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { pathEventsSql } from '../../domain/analytics/clickhouse/path-sql.js';
import { rawItem, type PathsQuery } from '../../domain/analytics/paths.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { foldGatheredRows, type RowColumns } from './gathered-events.js';
import { pathReducer, pathRules, type PathParams, type PathRun } from './paths.js';
import { gatheredLocalId } from './actors-clickhouse.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';

/** How a row of pathEventsSql, (person, ms, mask, event, item property), carries its name and raw path item. */
export const PATH_ROW: RowColumns = {
  name: (row) => String(row[3]),
  value: (row) => rawItem(String(row[3]), String(row[4] ?? ''), String(row[4] ?? '')),
};

/**
 * `persons` (/persons/path/): keep the persons whose paths hold the edge or end at the node, as the local engine's
 * person ids (localPersonIdOf), so that the persons endpoint pages them exactly as it pages the local engine's.
 */
export async function runPathsOnClickHouse(
  rt: WorkerRuntime, team: number, q: PathsQuery, now: number, persons: PathParams['persons'] = null,
): Promise<PathRun & { caughtUp: boolean; gatheredParts: number }> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.includeActions.map((a) => a.filter)], []);
  const range = resolveDateRange(q.dates, 'day', ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const printed = pathEventsSql(q, filter, range.from, range.to, clickHouseSqlOptions(rt, team, ctx.timeZone, now));
  const caughtUp = await exportCaughtUp(rt, requested);
  const reducer = pathReducer({ query: q, actionNames: q.includeActions.map((a) => a.name), rules: pathRules(ctx, q), persons });
  const partial = reducer.empty();
  const { uuids, parts } = await foldGatheredRows(rt, printed, PATH_ROW, (person) => reducer.add(partial, person));
  if (persons) {
    partial.persons = partial.persons.map(gatheredLocalId(rt, team, uuids));
  }
  return { ctx, partial, caughtUp, gatheredParts: parts };
}
