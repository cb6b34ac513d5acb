/**
 * Retention (analytics.md §4) as ClickHouse SQL, for `QUILL_ANALYTICS=clickhouse`: the cohort sizes and the
 * returns of each cohort k periods later, as two HogQL queries printed by the team-guarded printer
 * (src/domain/hogql/clickhouse-printer.ts). The periods are the local engine's own starts (retentionWindow), so
 * the project's time zone and weeks match it exactly; `person_id` is the person an event counts for now.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { parseQuery } from '../../hogql/parser.js';
import type { FilterNode } from '../property-filters.js';
import type { EntityRef, RetentionQuery, RetentionWindow } from '../retention.js';
import { hadActor } from './person-events.js';
import { cohortOffsets, periodNumbers } from './period-numbers.js';
import { breakdownValue, bucketExpr, filterGap, ownerOf, propertyBreakdown, type TrendsSqlOptions } from './trends-sql.js';

/** Why a retention query cannot run on ClickHouse yet (null: it can); the local engine answers it then. */
export function clickHouseRetentionGap(q: RetentionQuery, filters: readonly (FilterNode | null)[]): string | null {
  if (q.breakdown && !propertyBreakdown(q.breakdown.type)) return `${q.breakdown.type} breakdowns are not computed on ClickHouse yet`;
  // An action's steps (their events included) are a filter tree in the entity's properties, checked below.
  for (const f of filters) {
    const gap = f ? filterGap(f) : null;
    if (gap) return gap;
  }
  return null;
}

/**
 * The subquery of (person_id, bucket) a cohort is made of: every period with a target event (recurring), or the
 * period of the person's first target event ever when it falls in the window (first time).
 */
function cohortRows(q: RetentionQuery, filter: FilterNode | null, w: RetentionWindow, values: Record<string, unknown>): string {
  values.target = q.target.event;
  const event = q.target.event === null ? '' : ' AND event = {target}';
  if (q.retentionType === 'retention_first_time') {
    const firsts = `SELECT person_id, min(timestamp) AS first_seen FROM events WHERE timestamp <= {to}${event} AND {target_filters} AND ${hadActor(values)} GROUP BY person_id`;
    return `SELECT person_id, ${bucketExpr(w.starts, values, 'first_seen')} AS bucket FROM (${firsts}) WHERE first_seen >= {from}`;
  }
  return `SELECT DISTINCT person_id, ${bucketExpr(w.starts, values)} AS bucket FROM events WHERE timestamp >= {from} AND timestamp <= {to}${event} AND {target_filters} AND ${hadActor(values)}`;
}

function entityWhere(e: EntityRef, name: string, values: Record<string, unknown>): string {
  values[name] = e.event;
  return e.event === null ? '' : ` AND event = {${name}}`;
}

/** The subquery of (person_id, bucket): every period in which a person had a returning event. */
function returnRows(q: RetentionQuery, w: RetentionWindow, values: Record<string, unknown>): string {
  return `SELECT DISTINCT person_id, ${bucketExpr(w.starts, values)} AS bucket FROM events WHERE timestamp >= {from} AND timestamp <= {to}${entityWhere(q.returning, 'returning', values)} AND {returning_filters} AND ${hadActor(values)}`;
}

/** Rows (bucket, persons): the size of each period's cohort. */
export function retentionCohortsSql(q: RetentionQuery, targetFilter: FilterNode | null, w: RetentionWindow, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to) };
  if (q.retentionType !== 'retention_first_time') {
    // One row per person (its cohorts) rather than DISTINCT (person, period): on 10M events 256-512 MB and 0.9 s
    // instead of 512 MB-1 GB and 2.6 s.
    values.target = q.target.event;
    const event = q.target.event === null ? '' : ' AND event = {target}';
    const persons = `SELECT person_id, groupUniqArray(${bucketExpr(w.starts, values)}) AS cohorts FROM events WHERE timestamp >= {from} AND timestamp <= {to}${event} AND {target_filters} AND ${hadActor(values)} GROUP BY person_id`;
    const text = `SELECT n.k AS bucket, count() AS persons FROM (${persons}) AS p CROSS JOIN (${periodNumbers(0, w.starts.length - 1)}) AS n WHERE has(p.cohorts, n.k) GROUP BY bucket`;
    return print(text, values, [{ name: 'bucket', type: 'Int' }, { name: 'persons', type: 'Int' }], targetFilter, null, opts);
  }
  const text = `SELECT bucket, count() AS persons FROM (${cohortRows(q, targetFilter, w, values)}) GROUP BY bucket`;
  return print(text, values, [{ name: 'bucket', type: 'Int' }, { name: 'persons', type: 'Int' }], targetFilter, null, opts);
}

/**
 * Recurring retention, one row per person from one read of the events: the periods with a target event (its
 * cohorts) and those with a returning event. Joining the two (person, period) sets instead read the events twice
 * and failed at the 1 GB memory bound on 10M events (seed 20261123, chdb).
 */
function personCohortsAndReturns(q: RetentionQuery, w: RetentionWindow, values: Record<string, unknown>): string {
  const bucket = bucketExpr(w.starts, values);
  const target = `(true${entityWhere(q.target, 'target', values)} AND {target_filters})`;
  const returning = `(true${entityWhere(q.returning, 'returning', values)} AND {returning_filters})`;
  return `SELECT person_id, groupUniqArrayIf(${bucket}, ${target}) AS cohorts, groupUniqArrayIf(${bucket}, ${returning}) AS returns FROM events
    WHERE timestamp >= {from} AND timestamp <= {to} AND ${hadActor(values)} AND (${target} OR ${returning}) GROUP BY person_id`;
}

/**
 * First-time retention, one row per person from one read of the events: the period of its first target event ever
 * (its cohort, when that is in the window) and the periods with a returning event. Joining the (person, cohort) and
 * (person, period) sets instead read the events twice: 2.6 s at 10M events (chdb) against 1.6 s for recurring.
 */
function firstCohortAndReturns(q: RetentionQuery, w: RetentionWindow, values: Record<string, unknown>): string {
  const bucket = bucketExpr(w.starts, values);
  const target = `(true${entityWhere(q.target, 'target', values)} AND {target_filters})`;
  const returning = `(true${entityWhere(q.returning, 'returning', values)} AND {returning_filters} AND timestamp >= {from})`;
  const persons = `SELECT person_id, minIf(timestamp, ${target}) AS first_seen, countIf(${target}) AS targets, groupUniqArrayIf(${bucket}, ${returning}) AS returns
    FROM events WHERE timestamp <= {to} AND ${hadActor(values)} AND (${target} OR ${returning}) GROUP BY person_id`;
  return `SELECT ${bucketExpr(w.starts, values, 'first_seen')} AS cohort, returns FROM (${persons}) WHERE targets > 0 AND first_seen >= {from}`;
}

/** Rows (cohort, later, persons): the persons of cohort i with a returning event `later` ≥ 1 periods after it. */
export function retentionReturnsSql(q: RetentionQuery, targetFilter: FilterNode | null, returningFilter: FilterNode | null, w: RetentionWindow, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to) };
  const columns: { name: string; type: 'Int' }[] = [{ name: 'cohort', type: 'Int' }, { name: 'later', type: 'Int' }, { name: 'persons', type: 'Int' }];
  if (q.retentionType !== 'retention_first_time' && w.starts.length > 1) {
    const text = `SELECT n.i AS cohort, n.k AS later, count() AS persons FROM (${personCohortsAndReturns(q, w, values)}) AS p CROSS JOIN (${cohortOffsets(w.starts.length)}) AS n
      WHERE has(p.cohorts, n.i) AND has(p.returns, n.i + n.k) GROUP BY cohort, later`;
    return print(text, values, columns, targetFilter, returningFilter, opts);
  }
  if (w.starts.length > 1) {
    const text = `SELECT n.i AS cohort, n.k AS later, count() AS persons FROM (${firstCohortAndReturns(q, w, values)}) AS p CROSS JOIN (${cohortOffsets(w.starts.length)}) AS n
      WHERE p.cohort = n.i AND has(p.returns, n.i + n.k) GROUP BY cohort, later`;
    return print(text, values, columns, targetFilter, returningFilter, opts);
  }
  const cohorts = cohortRows(q, targetFilter, w, values);
  const returns = returnRows(q, w, values);
  const text = `SELECT c.bucket AS cohort, r.bucket - c.bucket AS later, count() AS persons FROM (${cohorts}) AS c INNER JOIN (${returns}) AS r ON c.person_id = r.person_id WHERE r.bucket > c.bucket GROUP BY cohort, later`;
  return print(text, values, columns, targetFilter, returningFilter, opts);
}


/** With a breakdown: the (person_id, value, bucket) of every target event in the window. */
function cohortRowsByValue(q: RetentionQuery, w: RetentionWindow, values: Record<string, unknown>): string {
  const value = breakdownValue(q.breakdown!.property, values, 'null', 'breakdown_key', ownerOf(q.breakdown!.type));
  return `SELECT DISTINCT person_id, ${value} AS value, ${bucketExpr(w.starts, values)} AS bucket FROM events WHERE timestamp >= {from} AND timestamp <= {to}${entityWhere(q.target, 'target', values)} AND {target_filters} AND ${hadActor(values)}`;
}

/** With a breakdown (event property, recurring): rows (value, persons), the persons in any cohort of each value. */
export function retentionValueSizesSql(q: RetentionQuery, targetFilter: FilterNode | null, w: RetentionWindow, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to) };
  const text = `SELECT value, uniq(person_id) AS persons FROM (${cohortRowsByValue(q, w, values)}) GROUP BY value`;
  return print(text, values, [{ name: 'value', type: 'String' }, { name: 'persons', type: 'Int' }], targetFilter, null, opts);
}

/**
 * With a breakdown: rows (value, later, persons), the persons of some cohort i of the value with a returning event in
 * period i + later, each person once per value and offset — the local engine's union over cohorts
 * (retentionByValue), not a sum of the cohorts' returns.
 */
export function retentionValueReturnsSql(q: RetentionQuery, targetFilter: FilterNode | null, returningFilter: FilterNode | null, w: RetentionWindow, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to) };
  const cohorts = cohortRowsByValue(q, w, values);
  const returns = returnRows(q, w, values);
  const text = `SELECT c.value AS value, r.bucket - c.bucket AS later, uniq(c.person_id) AS persons FROM (${cohorts}) AS c INNER JOIN (${returns}) AS r ON c.person_id = r.person_id WHERE r.bucket > c.bucket GROUP BY value, later`;
  return print(text, values, [{ name: 'value', type: 'String' }, { name: 'later', type: 'Int' }, { name: 'persons', type: 'Int' }], targetFilter, returningFilter, opts);
}

/**
 * Rows (person_id): the persons of cohort `cohort` (§4.5), from the same subquery as the cohort sizes. Each person's
 * appearances come from retentionActorReturnsSql.
 */
export function retentionCohortActorsSql(q: RetentionQuery, targetFilter: FilterNode | null, w: RetentionWindow, cohort: number, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to), cohort };
  const text = `SELECT person_id FROM (${cohortRows(q, targetFilter, w, values)}) WHERE bucket = {cohort}`;
  return print(text, values, [{ name: 'person_id', type: 'Person' }], targetFilter, null, opts);
}

/**
 * Rows (person_id, later): the persons of cohort `cohort` with a returning event `later` ≥ 1 periods after it, the
 * pairs retentionReturnsSql counts.
 */
export function retentionActorReturnsSql(q: RetentionQuery, targetFilter: FilterNode | null, returningFilter: FilterNode | null, w: RetentionWindow, cohort: number, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(w.from), to: new Date(w.to), cohort };
  const text = `SELECT c.person_id AS person_id, r.bucket - c.bucket AS later FROM (${cohortRows(q, targetFilter, w, values)}) AS c INNER JOIN (${returnRows(q, w, values)}) AS r ON c.person_id = r.person_id WHERE c.bucket = {cohort} AND r.bucket > c.bucket`;
  return print(text, values, [{ name: 'person_id', type: 'Person' }, { name: 'later', type: 'Int' }], targetFilter, returningFilter, opts);
}

function print(text: string, values: Record<string, unknown>, columns: { name: string; type: 'Int' | 'String' | 'Person' }[], target: FilterNode | null, returning: FilterNode | null, opts: TrendsSqlOptions): PrintedClickHouse {
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTrees: { target_filters: target, returning_filters: returning } });
}
