/**
 * Lifecycle (analytics.md §5) as ClickHouse SQL, for `QUILL_ANALYTICS=clickhouse`: per period of the range, how
 * many persons were new, returning, resurrecting and dormant, as two HogQL queries printed by the team-guarded
 * printer (src/domain/hogql/clickhouse-printer.ts). The periods are the local engine's (lifecycleWindow: the
 * range's bucket starts with the period before them at index 0), so the project's time zone matches it; "new" is
 * the period of the person's created_at as its current row has it (a merge keeps the earlier one), or as its events
 * carried it once the row is deleted, as the local engine reads it.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { parseQuery } from '../../hogql/parser.js';
import type { FilterNode } from '../property-filters.js';
import type { LifecycleStatus } from '../lifecycle.js';
import type { SeriesNode, TrendsQuery } from '../query.js';
import { hadActor } from './person-events.js';
import { periodNumbers } from './period-numbers.js';
import { bucketExpr, eventSeriesGap, type TrendsSqlOptions } from './trends-sql.js';

/** Why a lifecycle query cannot run on ClickHouse yet (null: it can); the local engine answers it then. */
export function clickHouseLifecycleGap(q: TrendsQuery, filters: readonly (FilterNode | null)[]): string | null {
  return eventSeriesGap(q, filters);
}

export interface LifecyclePeriods {
  /** The period before the range, then the range's bucket starts (epoch ms). */
  withBefore: readonly number[];
  /** The last period's last instant. */
  end: number;
}

/** The series' events in the periods (the one before the range included), as a WHERE condition. */
function seriesWhere(s: SeriesNode, p: LifecyclePeriods, values: Record<string, unknown>): string {
  values.from = new Date(p.withBefore[0]!);
  values.to = new Date(p.end);
  let event = '';
  if (s.event !== null) {
    values.event = s.event;
    event = ' AND event = {event}';
  }
  return `timestamp >= {from} AND timestamp <= {to}${event} AND {filters} AND ${hadActor(values)}`;
}

/**
 * One row per person of the series: the periods it was active in (groupUniqArray; period 0 is the one before the
 * range) and the smallest created_at its events carried, from one read of the events. The statuses are then told
 * per person from that row (has(periods, k - 1), …) rather than by joining a (person, period) set to itself: measured
 * on 3M events (seed 777, chdb), the self-joins read the events two and three times and needed 512 MB-1 GB.
 */
function personPeriods(s: SeriesNode, p: LifecyclePeriods, values: Record<string, unknown>): string {
  return `SELECT person_id, groupUniqArray(${bucketExpr(p.withBefore, values)}) AS periods, min(person.created_at) AS first_created FROM events WHERE ${seriesWhere(s, p, values)} GROUP BY person_id`;
}

/**
 * (person_id, periods, born) of the series' persons: born is the period the person was created in when in the
 * range (else -1: before it, or after it, never "new" here), from the created_at of the person's row, or — for a
 * person deleted since, whose events stay — the smallest created_at its events carried, as the local engine falls
 * back to its events' snapshot. An event without a person carried 1970-01-01 00:00:05 (PostHog's, which its
 * lifecycle takes as the smallest created_at of the person's events): an actor with one among its events is never
 * new, even once it has a person, as on the local engine (a row's created_at is never after its events' own).
 */
function bornPersons(s: SeriesNode, p: LifecyclePeriods, values: Record<string, unknown>): string {
  values.first_start = new Date(p.withBefore[1]!);
  const withBornAt = `SELECT f.person_id AS person_id, f.periods AS periods, least(f.first_created, ifNull(r.created_at, f.first_created)) AS born_at FROM (${personPeriods(s, p, values)}) AS f LEFT JOIN persons AS r ON r.id = f.person_id`;
  const born = bucketExpr(p.withBefore, values, 'born_at');
  return `SELECT person_id, periods, if(born_at >= {first_start} AND born_at <= {to}, ${born}, -1) AS born FROM (${withBornAt})`;
}

/**
 * (person_id, period, status) of the persons active in a period of the range (period ≥ 1): 'new' when created in
 * it, else 'returning' when active in the period before, else 'resurrecting'.
 */
function activeStatusRows(s: SeriesNode, p: LifecyclePeriods, values: Record<string, unknown>): string {
  const last = p.withBefore.length - 1;
  return `SELECT a.person_id AS person_id, n.k AS period, multiIf(a.born = n.k, 'new', has(a.periods, n.k - 1), 'returning', 'resurrecting') AS status
    FROM (${bornPersons(s, p, values)}) AS a CROSS JOIN (${periodNumbers(1, last)}) AS n
    WHERE has(a.periods, n.k)`;
}

/** (person_id, period): the persons active in period `period` (of withBefore) and not in the next one (dormant there). */
function dormantRows(s: SeriesNode, p: LifecyclePeriods, values: Record<string, unknown>): string {
  const last = p.withBefore.length - 1;
  return `SELECT a.person_id AS person_id, n.k AS period
    FROM (${personPeriods(s, p, values)}) AS a CROSS JOIN (${periodNumbers(0, last - 1)}) AS n
    WHERE has(a.periods, n.k) AND NOT has(a.periods, n.k + 1)`;
}

/** Rows (period, status, persons): how many persons were new, returning and resurrecting in each period ≥ 1. */
export function lifecycleActiveSql(s: SeriesNode, filter: FilterNode | null, p: LifecyclePeriods, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = {};
  const text = `SELECT period, status, count() AS persons FROM (${activeStatusRows(s, p, values)}) GROUP BY period, status`;
  return printClickHouse(parseQuery(text), [{ name: 'period', type: 'Int' }, { name: 'status', type: 'String' }, { name: 'persons', type: 'Int' }],
    { ...opts, values, filters: null, filterTree: filter });
}

/** Rows (period, persons): the persons active in the period before `period` of the range and not in it (dormant). */
export function lifecycleDormantSql(s: SeriesNode, filter: FilterNode | null, p: LifecyclePeriods, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = {};
  const text = `SELECT period, count() AS persons FROM (${dormantRows(s, p, values)}) GROUP BY period`;
  return printClickHouse(parseQuery(text), [{ name: 'period', type: 'Int' }, { name: 'persons', type: 'Int' }], { ...opts, values, filters: null, filterTree: filter });
}

/**
 * Rows (person_id): the persons of one status in period `period` of the range (0 = its first; §5.4), from the same
 * subqueries as the counts, so that a point's persons are exactly those it counted.
 */
export function lifecycleActorsSql(s: SeriesNode, filter: FilterNode | null, p: LifecyclePeriods, period: number, status: LifecycleStatus, opts: TrendsSqlOptions): PrintedClickHouse {
  // Active statuses are rows of period + 1 (row 0 is the period before the range); dormant ones of the period
  // before it, the row the counts' `period` names.
  const values: Record<string, unknown> = status === 'dormant' ? { target_period: period } : { status, target_period: period + 1 };
  const text = status === 'dormant'
    ? `SELECT person_id FROM (${dormantRows(s, p, values)}) WHERE period = {target_period}`
    : `SELECT person_id FROM (${activeStatusRows(s, p, values)}) WHERE period = {target_period} AND status = {status}`;
  return printClickHouse(parseQuery(text), [{ name: 'person_id', type: 'Person' }], { ...opts, values, filters: null, filterTree: filter });
}
