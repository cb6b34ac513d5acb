/**
 * Funnel correlation (analytics.md §3) folded inside ClickHouse (issue 51): the funnel's per-person fold
 * (funnel-fold-sql.ts) over every event of the persons who may enter, each with its name, and from it what the local
 * engine's correlationReducer (src/worker/analytics/correlation.ts) counts:
 * - the population: every person whose best attempt reached a step; converted when it reached every step;
 * - the person's window: from the first best attempt's entry to its last step when it converted, else to the entry
 *   plus the conversion window (cut at the range's end), both ends excluded;
 * - per event name (other than the steps' own and the names excluded), the converted and the other persons who did
 *   it inside their window, each person once.
 * What comes back is a row per event name, or the persons asked for, never the events. Pure: SQL text and
 * parameters out.
 */
import type { PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import type { FunnelShape } from '../funnel.js';
import { hexList, NO_PERSON, personFoldSql } from './funnel-fold-sql.js';

/** The event names never counted, as an array expression (the parameter `fold_skip`). */
const SKIPPED = `arrayMap(x -> unhex(x), arrayFilter(x -> x != '', splitByChar(',', {fold_skip:String})))`;

/**
 * Per person of the population: whether it converted and the distinct names of its events inside its window
 * (`did`), the names counted or not.
 */
function populationSql(gathered: PrintedClickHouse, shape: FunnelShape, to: number, extra: readonly string[]): string {
  const window = [
    'arrayFirstIndex(l -> l = best, attempt_steps) AS first_best',
    'start_ts[first_best] AS entered',
    `best = ${shape.steps} AS converted`,
    `if(converted, final_ts[first_best], least(entered + ${shape.windowMs}, toFloat64(${to.toFixed(0)}))) AS left_at`,
    'arrayDistinct(arrayMap(x -> x.3, arrayFilter(x -> x.1 > entered AND x.1 < left_at, ev))) AS did',
  ];
  return `SELECT * FROM (${personFoldSql(gathered, shape, null, [...window, ...extra], true)}) WHERE best > 0`;
}

const paramsOf = (gathered: PrintedClickHouse, skip: readonly string[]) =>
  ({ ...gathered.params, fold_no_person: NO_PERSON, fold_skip: hexList(skip) });

/**
 * One row per event name `[name, converted persons, other persons]`, and one whose name is null: the population's
 * converted and other persons. `gathered`: funnelEventsSql's rows with every event and its name, for a fold.
 */
export function correlationFoldSql(gathered: PrintedClickHouse, shape: FunnelShape, to: number, skip: readonly string[]): PrintedClickHouse {
  const named = `SELECT converted, arrayJoin(arrayPushFront(arrayMap(x -> toNullable(x), did), NULL)) AS name FROM (${populationSql(gathered, shape, to, [])})`;
  const sql = `SELECT name, countIf(converted), countIf(NOT converted) FROM (${named}) WHERE name IS NULL OR NOT has(${SKIPPED}, name) GROUP BY name`;
  return { sql, params: paramsOf(gathered, skip) };
}

/**
 * The population's persons `[uuid, converted]`: all of them (`personsOf` ''), or those who did the event named
 * `personsOf` inside their window (none when it is a name never counted).
 */
export function correlationPersonsSql(gathered: PrintedClickHouse, shape: FunnelShape, to: number, skip: readonly string[], personsOf: string): PrintedClickHouse {
  const params: Record<string, string> = { ...paramsOf(gathered, skip), fold_persons_of: personsOf };
  const where = personsOf === '' ? 'true' : `has(did, {fold_persons_of:String}) AND NOT has(${SKIPPED}, {fold_persons_of:String})`;
  const sql = `SELECT person_uuid, converted FROM (${populationSql(gathered, shape, to, ['toString(c0) AS person_uuid'])}) WHERE ${where}`;
  return { sql, params };
}
