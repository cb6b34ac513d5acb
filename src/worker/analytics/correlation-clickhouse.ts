/**
 * Funnel correlation answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same FunnelsQuery and date range as
 * src/worker/analytics/correlation.ts. Every event of the persons who may enter the funnel, each tagged with the
 * funnel's bit set and its name (funnelEventsSql, every event), is folded per person inside ClickHouse
 * (correlation-fold-sql.ts: correlationReducer's definition written with arrays, held to it by
 * test/chdb/correlation-fold.test.ts), so only the counts per event name, or the persons asked for, come back.
 * An unordered funnel in which some event matches two steps is gathered instead: its events go through the local
 * engine's own fold (correlationReducer). Property correlation reads the population's persons as Quill holds them
 * now, by the uuid ClickHouse resolved each event to, as the local engine reads them by id.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { correlationFoldSql, correlationPersonsSql } from '../../domain/analytics/clickhouse/correlation-fold-sql.js';
import { funnelEventsSql } from '../../domain/analytics/clickhouse/funnel-sql.js';
import type { PrintedClickHouse } from '../../domain/hogql/clickhouse-printer.js';
import { funnelShape, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { correlationParams, correlationReducer, type CorrelationParams, type CorrelationPartial, type CorrelationRun } from './correlation.js';
import { foldDecision } from './funnels-clickhouse.js';
import { foldGatheredRows } from './gathered-events.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { ACTOR_ROWS_MAX, gatheredLocalId } from './actors-clickhouse.js';

/** A row of funnelEventsSql without a breakdown, names gathered: (person, ms, mask, event). */
const nameOfRow = (row: readonly unknown[]) => String(row[3]);

export type ClickHouseCorrelationRun = CorrelationRun & { caughtUp: boolean; gatheredParts: number; bytesReceived: number; foldedInClickHouse: boolean };

/**
 * `personsOf`: keep the population's persons (''), or those who did that event (null: keep none). `localIds`
 * (/persons/funnel/correlation/): the persons as the local engine's person ids (localPersonIdOf), so that the persons
 * endpoint filters and pages them exactly as it does the local engine's.
 */
export async function runCorrelationOnClickHouse(
  rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, exclude: string[], personsOf: string | null, localIds = false,
): Promise<ClickHouseCorrelationRun> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)], []);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const opts = clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx);
  // Correlation reads no breakdown: the same rows whatever the funnel's breakdown.
  const funnel = { ...q, breakdown: null };
  const params = correlationParams(q, range.to, exclude, personsOf);
  const { folding, checkBytes } = await foldDecision(rt, funnel, params.shape, () => funnelEventsSql(funnel, filter, range.from, range.to, opts, undefined, true));
  const printed = funnelEventsSql(funnel, filter, range.from, range.to, opts, { everyEvent: true, names: true }, folding);
  const caughtUp = await exportCaughtUp(rt, requested);
  // Folded inside ClickHouse, or every event of the persons who may enter comes back, part after part (a part's
  // persons at a time) and goes through the local engine's fold.
  const { partial, uuids, parts, bytes } = folding ? await foldOnClickHouse(rt, printed, params) : await gather(rt, printed, params);
  if (localIds) {
    const localId = gatheredLocalId(rt, team, uuids);
    partial.persons = partial.persons.map(([pid, converted]) => [localId(pid), converted]);
  }
  return {
    ctx, partial, caughtUp, gatheredParts: parts, bytesReceived: checkBytes + bytes, foldedInClickHouse: folding,
    person: (pid) => rt.persons.personByUuid(team, uuids[pid - 1]!),
  };
}

/** What either path gives: the counts, the uuid of each person number, the parts the events came in, the bytes. */
interface Counted {
  partial: CorrelationPartial;
  uuids: string[];
  parts: number;
  bytes: number;
}

async function gather(rt: WorkerRuntime, printed: PrintedClickHouse, p: CorrelationParams): Promise<Counted> {
  const reducer = correlationReducer(p);
  const partial = reducer.empty();
  const { uuids, parts, bytesReceived } = await foldGatheredRows(rt, printed, { name: nameOfRow }, (person) => reducer.add(partial, person));
  return { partial, uuids, parts, bytes: bytesReceived };
}

/**
 * The correlation folded inside ClickHouse: the counts per event name, or (with `personsOf`) the persons kept,
 * numbered from 1 in the order they came (`uuids[pid - 1]`), as the gathered path numbers them.
 */
async function foldOnClickHouse(rt: WorkerRuntime, gathered: PrintedClickHouse, p: CorrelationParams): Promise<Counted> {
  const partial: CorrelationPartial = { success: 0, failure: 0, events: new Map(), persons: [], keepPersons: p.personsOf !== null };
  const uuids: string[] = [];
  if (p.personsOf === null) {
    const printed = correlationFoldSql(gathered, p.shape, p.to, p.skip);
    const answer = await selectOnClickHouse(rt, printed.sql, printed.params);
    for (const [name, success, failure] of answer.data) {
      if (name === null) [partial.success, partial.failure] = [Number(success), Number(failure)];
      else partial.events.set(String(name), [Number(success), Number(failure)]);
    }
    return { partial, uuids, parts: 0, bytes: answer.bytes };
  }
  const printed = correlationPersonsSql(gathered, p.shape, p.to, p.skip, p.personsOf);
  const answer = await selectOnClickHouse(rt, printed.sql, printed.params, ACTOR_ROWS_MAX);
  for (const [uuid, converted] of answer.data) {
    uuids.push(String(uuid));
    const yes = Number(converted) === 1;
    if (yes) partial.success++;
    else partial.failure++;
    partial.persons.push([uuids.length, yes]);
  }
  return { partial, uuids, parts: 0, bytes: answer.bytes };
}
