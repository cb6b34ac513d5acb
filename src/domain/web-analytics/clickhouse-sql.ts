/**
 * The session scan of the web analytics kinds as ClickHouse SQL (`QUILL_ANALYTICS=clickhouse`), for what it
 * computes so far: the overview, the tables by a session's property (entry and exit page, channel type, referring
 * domain, UTM parameters) and by one event property (browser, OS, page…), goals and conversion goals (a query
 * per goal), without session filters or path cleaning; and outbound clicks. Two small HogQL queries over `events`
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
import { EVENT_BREAKDOWNS } from './breakdowns.js';
import type { WebQuery } from './query.js';

export interface WebSqlOptions {
  team: number;
  database: string;
  timeZone: string;
  now: number;
}

/** Why ClickHouse does not answer a web analytics query yet (null: it does). */
export function clickHouseWebGap(q: WebQuery, filter: FilterNode | null): string | null {
  if (q.kind !== 'WebOverviewQuery' && q.kind !== 'WebStatsTableQuery' && q.kind !== 'WebExternalClicksTableQuery' && q.kind !== 'WebGoalsQuery') {
    return `${q.kind} is not computed on ClickHouse yet`;
  }
  if (q.kind === 'WebStatsTableQuery') {
    const b = q.breakdownBy!;
    if (b === 'ExitClick' || (EVENT_BREAKDOWNS.has(b) && !SIMPLE_EVENT_BREAKDOWNS[b])) return `the ${b} breakdown is not computed on ClickHouse yet`;
    if (b === 'Page' && (q.includeBounceRate || q.includeScrollDepth)) return 'the bounce rate and scroll depth of pages are not computed on ClickHouse yet';
  }
  if (q.sessionFilters.length > 0) return 'session property filters are not computed on ClickHouse yet';
  if (q.doPathCleaning) return 'path cleaning is not computed on ClickHouse yet';
  return filter === null ? null : filterGap(filter);
}

/** Why the goals (actions) of a WebGoalsQuery cannot be counted on ClickHouse (null: they can). */
export function goalsGap(goals: readonly FilterNode[]): string | null {
  for (const g of goals) {
    const gap = filterGap(g);
    if (gap) return gap;
  }
  return null;
}

const eventIs = (name: string): FilterNode => ({ type: 'event_name', key: 'event', operator: 'exact', value: name, groupTypeIndex: null, negation: false });

/** The events a session counts: pageviews and screens, or any goal's (an action's) events, passing the filters. */
export function countedTree(filter: FilterNode | null, goals: readonly FilterNode[]): FilterNode {
  const which: FilterNode = { and: false, children: [eventIs('$pageview'), eventIs('$screen'), ...goals] };
  return filter === null ? which : { and: true, children: [filter, which] };
}

/** Per session: a goal's events (`goal` passing the filters) inside the current and the previous period. */
export function goalCountsSql(current: { from: number; to: number }, previous: { from: number; to: number } | null, tree: FilterNode, opts: WebSqlOptions): PrintedClickHouse {
  const prev = previous ?? { from: 0, to: -1 };
  const values = { cf: new Date(current.from), ct: new Date(current.to), pf: new Date(prev.from), pt: new Date(prev.to), from: new Date(Math.min(current.from, previous?.from ?? Infinity)), to: new Date(Math.max(current.to, previous?.to ?? -Infinity)) };
  const query = `SELECT ${SESSION} AS sid, countIf(timestamp >= {cf} AND timestamp <= {ct}) AS cur, countIf(timestamp >= {pf} AND timestamp <= {pt}) AS prev ` +
    `FROM events WHERE timestamp >= {from} AND timestamp <= {to} AND {filters} AND ${SESSION} != '' GROUP BY sid`;
  const columns = [{ name: 'sid', type: 'String' as const }, { name: 'cur', type: 'Int' as const }, { name: 'prev', type: 'Int' as const }];
  return printClickHouse(parseQuery(query), columns, { ...opts, values, filters: null, filterTree: tree });
}

/** Event breakdowns by one property as it is (the local scan keys them by the value's JSON text): their property. */
export const SIMPLE_EVENT_BREAKDOWNS: Readonly<Record<string, string>> = {
  Page: '$pathname', ScreenName: '$screen_name', Browser: '$browser', OS: '$os', DeviceType: '$device_type', Country: '$geoip_country_code',
};

/** Per session and value of an event property: its counted events with that value (`counted`: countedTree). */
export function sessionValuesSql(from: number, to: number, property: string, counted: FilterNode, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const value = `toString(properties.\`${property.replace(/[`\\]/g, '')}\`)`;
  const query = `SELECT ${SESSION} AS sid, ${value} AS v, count() AS n FROM events WHERE timestamp >= {from} AND timestamp <= {to} AND {filters} ` +
    `AND ${SESSION} != '' AND ${value} IS NOT NULL GROUP BY sid, v`;
  const columns = [{ name: 'sid', type: 'String' as const }, { name: 'v', type: 'String' as const }, { name: 'n', type: 'Int' as const }];
  return printClickHouse(parseQuery(query), columns, { ...opts, values, filters: null, filterTree: counted });
}

/** The session's entry attribution, in this order (the worker reads them back by position). */
export const ENTRY_KEYS = ['$current_url', '$referring_domain', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gad_source', 'gclid', 'fbclid'] as const;

const SESSION = "toString(properties.`$session_id`)";

/**
 * Per session over [from, to]: id, first and last event (epoch ms), pageviews, screens and autocaptures (up to 2),
 * the entry attribution (of the first pageview or screen, else of the first event) and the exit URL (of the last
 * pageview or screen, else of the last event): missing texts come as ''.
 */
export function sessionBoundsSql(from: number, to: number, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const page = "(event = '$pageview' OR event = '$screen')";
  const text = (key: string) => `coalesce(toString(properties.\`${key}\`), '')`;
  const entry = ENTRY_KEYS.map((k, i) => `argMin(${text(k)}, tuple(if(${page}, 0, 1), timestamp)) AS e${i}`);
  const query = `SELECT ${SESSION} AS sid, min(timestamp) AS start, max(timestamp) AS stop, ` +
    "least(2, countIf(event = '$pageview' OR event = '$screen' OR event = '$autocapture')) AS bounce_events, " +
    `${entry.join(', ')}, argMax(${text('$current_url')}, tuple(if(${page}, 1, 0), timestamp)) AS exit_url ` +
    `FROM events WHERE timestamp >= {from} AND timestamp <= {to} AND ${SESSION} != '' GROUP BY sid`;
  const columns = [
    { name: 'sid', type: 'String' as const }, { name: 'start', type: 'DateTime' as const }, { name: 'stop', type: 'DateTime' as const },
    { name: 'bounce_events', type: 'Int' as const }, ...ENTRY_KEYS.map((_, i) => ({ name: `e${i}`, type: 'String' as const })),
    { name: 'exit_url', type: 'String' as const },
  ];
  return printClickHouse(parseQuery(query), columns, { ...opts, values, filters: null, filterTree: null });
}

/** Per session: its counted events in [from, to] (`counted`: countedTree), and the person of the earliest. */
export function sessionCountsSql(from: number, to: number, counted: FilterNode, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const text = `SELECT ${SESSION} AS sid, count() AS counted, argMin(person_id, timestamp) AS person FROM events ` +
    `WHERE timestamp >= {from} AND timestamp <= {to} AND {filters} AND ${SESSION} != '' GROUP BY sid`;
  const columns = [{ name: 'sid', type: 'String' as const }, { name: 'counted', type: 'Int' as const }, { name: 'person', type: 'Person' as const }];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: counted });
}

/** Outbound clicks in [from, to] passing `filter`: per link (without query and fragment with `strip`) its persons and clicks. */
export function externalClicksSql(from: number, to: number, strip: boolean, filter: FilterNode | null, opts: WebSqlOptions): PrintedClickHouse {
  const values = { from: new Date(from), to: new Date(to) };
  const raw = "coalesce(toString(properties.`$external_click_url`), '')";
  const link = strip ? `replaceRegexpOne(${raw}, '[?#].*$', '')` : raw;
  const query = `SELECT ${link} AS link, uniq(person_id) AS visitors, count() AS clicks FROM events WHERE timestamp >= {from} AND timestamp <= {to} ` +
    "AND event = '$autocapture' AND toString(properties.`$event_type`) = 'click' AND {filters} " +
    `AND ${link} != '' GROUP BY link`;
  const columns = [{ name: 'link', type: 'String' as const }, { name: 'visitors', type: 'Int' as const }, { name: 'clicks', type: 'Int' as const }];
  return printClickHouse(parseQuery(query), columns, { ...opts, values, filters: null, filterTree: filter });
}
