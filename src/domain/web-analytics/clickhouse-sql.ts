/**
 * The session scan of the web analytics kinds as ClickHouse SQL (`QUILL_ANALYTICS=clickhouse`), for what it
 * computes so far: the overview without a conversion goal or session filters. Two small HogQL queries over `events`
 * printed by src/domain/hogql/clickhouse-printer.ts (team guard, parameters, Quill's filter semantics, persons as
 * now): each session's first and last event and bounce events over the scanned range, and its counted pageviews
 * and screens inside the periods passing the filters with the person of the first. The worker turns the rows into
 * the same session parts the local scan folds (src/worker/analytics/web-clickhouse.ts), so the sessions are
 * finished and counted by the same code (src/domain/web-analytics/aggregate.ts).
 */
import { filterGap } from '../analytics/clickhouse/trends-sql.js';
import type { FilterNode } from '../analytics/property-filters.js';
import { printClickHouse, type PrintedClickHouse } from '../hogql/clickhouse-printer.js';
import { parseQuery } from '../hogql/parser.js';
import type { WebQuery } from './query.js';

export interface WebSqlOptions {
  team: number;
  database: string;
  timeZone: string;
  now: number;
}

/** Why ClickHouse does not answer a web analytics query yet (null: it does). */
export function clickHouseWebGap(q: WebQuery, filter: FilterNode | null): string | null {
  if (q.kind !== 'WebOverviewQuery') return `${q.kind} is not computed on ClickHouse yet`;
  if (q.conversionGoal !== null) return 'conversion goals are not computed on ClickHouse yet';
  if (q.sessionFilters.length > 0) return 'session property filters are not computed on ClickHouse yet';
  return filter === null ? null : filterGap(filter);
}

const SESSION = "toString(properties.`$session_id`)";

/** Per session over [from, to]: id, first and last event (epoch ms), pageviews, screens and autocaptures (up to 2). */
export function sessionBoundsSql(from: number, to: number, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const text = `SELECT ${SESSION} AS sid, min(timestamp) AS start, max(timestamp) AS stop, ` +
    "least(2, countIf(event = '$pageview' OR event = '$screen' OR event = '$autocapture')) AS bounce_events " +
    `FROM events WHERE timestamp >= {from} AND timestamp <= {to} AND ${SESSION} != '' GROUP BY sid`;
  const columns = [
    { name: 'sid', type: 'String' as const }, { name: 'start', type: 'DateTime' as const }, { name: 'stop', type: 'DateTime' as const },
    { name: 'bounce_events', type: 'Int' as const },
  ];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: null });
}

/** Per session: its pageviews and screens in [from, to] passing `filter`, and the person of the earliest. */
export function sessionCountsSql(from: number, to: number, filter: FilterNode | null, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const text = `SELECT ${SESSION} AS sid, count() AS counted, argMin(person_id, timestamp) AS person FROM events ` +
    `WHERE timestamp >= {from} AND timestamp <= {to} AND (event = '$pageview' OR event = '$screen') AND {filters} AND ${SESSION} != '' GROUP BY sid`;
  const columns = [{ name: 'sid', type: 'String' as const }, { name: 'counted', type: 'Int' as const }, { name: 'person', type: 'Person' as const }];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter });
}
