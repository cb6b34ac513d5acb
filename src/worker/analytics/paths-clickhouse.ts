/**
 * Paths answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same PathsQuery, date range and cleaning rules as
 * src/worker/analytics/paths.ts. ClickHouse selects each person's events that may be path items (one query printed by
 * src/domain/analytics/clickhouse/path-sql.ts, after the same bounded wait for the export as HogQL) and folds them
 * per person itself (path-fold-sql.ts: the local engine's sessions, cleaning and limits written with arrays, held
 * to pathReducer by test/chdb/path-fold.test.ts), so only the heaviest edges, or the persons asked for, come back.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { pathEdgesFoldSql, pathPersonsFoldSql, type PathFold } from '../../domain/analytics/clickhouse/path-fold-sql.js';
import { pathEventsSql } from '../../domain/analytics/clickhouse/path-sql.js';
import type { PathsQuery } from '../../domain/analytics/paths.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { addNamedEdge, pathRules, type PathParams, type PathPartial, type PathRun } from './paths.js';
import { ACTOR_ROWS_MAX, localPersonIdOf } from './actors-clickhouse.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';

/**
 * `persons` (/persons/path/): the persons whose paths hold the edge or end at the node, as the local engine's person
 * ids (localPersonIdOf), so that the persons endpoint pages them exactly as it pages the local engine's.
 */
export async function runPathsOnClickHouse(
  rt: WorkerRuntime, team: number, q: PathsQuery, now: number, persons: PathParams['persons'] = null,
): Promise<PathRun & { caughtUp: boolean; gatheredParts: number; bytesReceived: number; foldedInClickHouse: boolean }> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.includeActions.map((a) => a.filter)], []);
  const range = resolveDateRange(q.dates, 'day', ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const gathered = pathEventsSql(q, filter, range.from, range.to, clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx), true);
  const caughtUp = await exportCaughtUp(rt, requested);
  const fold: PathFold = { query: q, actionNames: q.includeActions.map((a) => a.name), rules: pathRules(ctx, q) };
  const partial: PathPartial = { items: [], ids: new Map(), edges: new Map(), persons: [] };
  const base = { ctx, partial, caughtUp, gatheredParts: 0, foldedInClickHouse: true };
  if (persons !== null) {
    const printed = pathPersonsFoldSql(gathered, fold, persons);
    const answer = await selectOnClickHouse(rt, printed.sql, printed.params, ACTOR_ROWS_MAX);
    const localId = localPersonIdOf(rt, team);
    partial.persons = answer.data.map(([uuid]) => localId(String(uuid)));
    return { ...base, bytesReceived: answer.bytes };
  }
  const printed = pathEdgesFoldSql(gathered, fold, q.edgeLimit, q.minEdgeWeight, q.maxEdgeWeight);
  const answer = await selectOnClickHouse(rt, printed.sql, printed.params);
  for (const [source, target, value, time] of answer.data) addNamedEdge(partial, String(source), String(target), Number(value), Number(time));
  return { ...base, bytesReceived: answer.bytes };
}
