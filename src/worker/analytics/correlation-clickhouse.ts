/**
 * Funnel correlation answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same FunnelsQuery and date range as
 * src/worker/analytics/correlation.ts. ClickHouse gathers every event of the persons who may enter the funnel, each
 * tagged with the funnel's bit set and its name (funnelEventsSql, gathering every event); they then go through the
 * local engine's own fold (correlationReducer: the first attempt, its window, the candidates), so both engines
 * share one definition. Property correlation reads the population's persons as Quill holds them now, by the uuid
 * ClickHouse resolved each event to, as the local engine reads them by id.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { funnelEventsSql } from '../../domain/analytics/clickhouse/funnel-sql.js';
import type { FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { correlationParams, correlationReducer, type CorrelationRun } from './correlation.js';
import { foldGatheredRows } from './gathered-events.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { gatheredLocalId } from './actors-clickhouse.js';

/** A row of funnelEventsSql without a breakdown, names gathered: (person, ms, mask, event). */
const nameOfRow = (row: readonly unknown[]) => String(row[3]);

/**
 * `localIds` (/persons/funnel/correlation/): the population's persons as the local engine's person ids
 * (localPersonIdOf), so that the persons endpoint filters and pages them exactly as it does the local engine's.
 */
export async function runCorrelationOnClickHouse(
  rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, exclude: string[], personsOf: string | null, localIds = false,
): Promise<CorrelationRun & { caughtUp: boolean; gatheredParts: number }> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)], []);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  // Correlation reads no breakdown: the same rows whatever the funnel's breakdown.
  const printed = funnelEventsSql({ ...q, breakdown: null }, filter, range.from, range.to,
    clickHouseSqlOptions(rt, team, ctx.timeZone, now), { everyEvent: true, names: true });
  const caughtUp = await exportCaughtUp(rt, requested);
  // Every event of the persons who may enter comes back, part after part (a part's persons at a time).
  const reducer = correlationReducer(correlationParams(q, range.to, exclude, personsOf));
  const partial = reducer.empty();
  const { uuids, parts } = await foldGatheredRows(rt, printed, { name: nameOfRow }, (person) => reducer.add(partial, person));
  if (localIds) {
    const localId = gatheredLocalId(rt, team, uuids);
    partial.persons = partial.persons.map(([pid, converted]) => [localId(pid), converted]);
  }
  return { ctx, partial, caughtUp, gatheredParts: parts, person: (pid) => rt.persons.personByUuid(team, uuids[pid - 1]!) };
}
