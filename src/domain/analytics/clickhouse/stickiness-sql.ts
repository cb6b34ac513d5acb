/**
 * Stickiness (analytics.md §6) as ClickHouse SQL, for `QUILL_ANALYTICS=clickhouse`: for one series and period, how
 * many persons were active in exactly k of the period's intervals. Pure: a HogQL query printed by the team-guarded
 * printer (src/domain/hogql/clickhouse-printer.ts), as trends' series are (./trends-sql.ts): the same bucket
 * starts as the local engine, so intervals in the project's time zone match it exactly; `person_id` is the person
 * an event counts for now (merges followed), as the local engine resolves it.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { parseQuery } from '../../hogql/parser.js';
import type { FilterNode } from '../property-filters.js';
import type { SeriesNode, TrendsQuery } from '../query.js';
import { hadActor } from './person-events.js';
import { bucketExpr, eventSeriesGap, type TrendsSqlOptions } from './trends-sql.js';

/** Why a stickiness query cannot run on ClickHouse yet (null: it can); the local engine answers it then. */
export function clickHouseStickinessGap(q: TrendsQuery, filters: readonly (FilterNode | null)[]): string | null {
  return eventSeriesGap(q, filters);
}

/**
 * (person_id, intervals): each person with events of series `s` and in how many of the buckets that start at
 * `starts` (epoch ms, ascending; events in [from, to], `to` inclusive) they had some.
 */
function intervalsPerPerson(s: SeriesNode, starts: readonly number[], from: number, to: number, values: Record<string, unknown>): string {
  values.from = new Date(from);
  values.to = new Date(to);
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}', hadActor(values)];
  if (s.event !== null) {
    values.event = s.event;
    where.push('event = {event}');
  }
  return `SELECT person_id, uniq(${bucketExpr(starts, values)}) AS intervals FROM events WHERE ${where.join(' AND ')} GROUP BY person_id`;
}

/** Rows (intervals, persons): how many persons had events of series `s` in exactly `intervals` of the buckets. */
export function stickinessSql(s: SeriesNode, filter: FilterNode | null, starts: readonly number[], from: number, to: number, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = {};
  const text = `SELECT intervals, count() AS persons FROM (${intervalsPerPerson(s, starts, from, to, values)}) GROUP BY intervals`;
  const columns = [{ name: 'intervals', type: 'Int' as const }, { name: 'persons', type: 'Int' as const }];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter });
}

/** Rows (person_id): the persons of one stickiness point, active in exactly `intervals` of the buckets (§6.4). */
export function stickinessActorsSql(s: SeriesNode, filter: FilterNode | null, starts: readonly number[], from: number, to: number, intervals: number, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { intervals };
  const text = `SELECT person_id FROM (${intervalsPerPerson(s, starts, from, to, values)}) WHERE intervals = {intervals}`;
  return printClickHouse(parseQuery(text), [{ name: 'person_id', type: 'Person' }], { ...opts, values, filters: null, filterTree: filter });
}
