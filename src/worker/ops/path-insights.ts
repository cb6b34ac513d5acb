/**
 * `/insights/path/` and `/persons/path/` (GET and POST): analytics.md §7.3-§7.4, computed by
 * src/worker/analytics/paths.ts, cached like trends. With `QUILL_ANALYTICS=clickhouse` the insight's events are
 * gathered on ClickHouse (src/worker/analytics/paths-clickhouse.ts), and so are those behind an edge or a drop-off.
 */
import { pathsQueryOf, rankEdges, type PathsQuery } from '../../domain/analytics/paths.js';
import { actorPage } from '../analytics/actors.js';
import { clickHousePathsGap } from '../../domain/analytics/clickhouse/path-sql.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { namedEdges, runPaths, type PathRun } from '../analytics/paths.js';
import { runPathsOnClickHouse } from '../analytics/paths-clickhouse.js';
import { queryContext } from '../analytics/query-context.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { answering, cached, normalisedKey, pagedActors, paramsOf } from './insights.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';

export const path: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  pathsQueryOf(p); // bad parameters answer 400 before any wait
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const key = normalisedKey('path', p, [Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => pathAnswer(rt, team, p, now));
  return json(200, body);
});

/** The paths answer (§7.3) to `p`, computed now. */
export async function pathAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number): Promise<Record<string, unknown>> {
  const q = pathsQueryOf(p);
  const { run, where } = await runOnChosenExecutor<PathRun>(rt, () => pathsGap(rt, team, q, now),
    () => runPathsOnClickHouse(rt, team, q, now), () => runPaths(rt, team, q, now));
  return { result: rankEdges(namedEdges(run.partial), q), timezone: run.ctx.timeZone, ...where };
}

/** Why ClickHouse cannot compute these paths (null: it can): the query's own filters and the test-account ones. */
function pathsGap(rt: WorkerRuntime, team: number, q: PathsQuery, now: number): string | null {
  const testAccounts = q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null;
  return clickHousePathsGap(q, [q.properties, testAccounts]);
}

export async function personsPathAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number, endpoint: string): Promise<Record<string, unknown>> {
  const q = pathsQueryOf(p);
  const limit = p.int('limit', 100, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  await rt.ingest.appliedEverywhere();
  const dropoff = p.string('path_dropoff_key');
  const persons = { start: dropoff ? null : p.string('path_start_key'), end: dropoff ? null : p.string('path_end_key'), dropoff };
  const { run, where } = await runOnChosenExecutor<PathRun>(rt, () => pathsGap(rt, team, q, now),
    () => runPathsOnClickHouse(rt, team, q, now, persons), () => runPaths(rt, team, q, now, persons));
  const values = new Map<number, number | null>(run.partial.persons.map((id) => [id, null]));
  const page = actorPage(rt, team, values, { offset, limit, search: p.string('search'), ranked: false });
  return { ...pagedActors(endpoint, p, page, offset, limit), ...where };
}

export const personsPath: OpHandler = (item, rt) => answering(async () =>
  json(200, await personsPathAnswer(rt, projectIdOf(item), paramsOf(item, rt), item.meta.now, item.meta.url)));
