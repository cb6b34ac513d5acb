/**
 * Paths (analytics.md §7) folded inside ClickHouse (issue 51): the rows pathEventsSql gathers (person, ms, action bits,
 * event, item property) turned into path items, grouped into one time-sorted array per person, split into sessions and
 * limited with ClickHouse's own array functions, and only the edges (or the persons asked for) sent back. The fold
 * is the local engine's (src/domain/analytics/paths.ts and pathReducer in src/worker/analytics/paths.ts), written
 * with arrays:
 * - an event's item: the first included action it matches (its lowest bit), else its raw item (rawItem: a pageview's
 *   URL without one trailing slash, a screen's name, else the event's name); then the cleaning rules in order
 *   (`replaceRegexpAll`, which the local engine's cleaning follows), then the first grouping it matches; an excluded
 *   item is dropped;
 * - a person's items split into sessions where the gap is 30 minutes or more (`arraySplit`), repeats collapsed,
 *   anchored at the start and end points, cut to the step limit (the middle of a path with both points becomes '...');
 * - each session's consecutive pairs are edges `step_item` → `step+1_item`, counted with their summed milliseconds.
 * Every lambda reads only its own arguments (a captured array is copied per element: funnel-fold-sql.ts says why).
 * No two events of a person at the same millisecond have a defined order on either engine; here they are in (time,
 * item) order. Pure: SQL text and parameters out.
 */
import type { PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { PATH_ELLIPSIS, SESSION_GAP_MS, type CleaningRule, type PathsQuery } from '../paths.js';
import { NO_PERSON } from './funnel-fold-sql.js';

/** What the fold needs of the query beyond its rows: the actions' item names and the cleaning rules applied. */
export interface PathFold {
  query: Pick<PathsQuery, 'exclude' | 'startPoint' | 'endPoint' | 'stepLimit' | 'groupings'>;
  actionNames: readonly string[];
  rules: readonly CleaningRule[];
}

/** A grouping (`*`: any run of characters, the rest literal, the whole item) as an RE2 pattern. */
export function groupingRegex(grouping: string): string {
  return `(?s)^${grouping.split('*').map((part) => part.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`)).join('.*')}$`;
}

/**
 * One row per person with a path item: the person (`c0`), its events as (time, item) in time order (`ev`) and their
 * times (`ts`); `params` gets the fold's parameters.
 */
function personItemsSql(gathered: PrintedClickHouse, fold: PathFold, params: Record<string, unknown>): string {
  const q = fold.query;
  const p = (name: string, value: string) => {
    params[name] = value;
    return `{${name}:String}`;
  };
  // The raw item, then the cleaning rules and the groupings.
  const action = fold.actionNames.length === 0 ? null
    : `multiIf(${fold.actionNames.map((n, i) => `bitTest(toUInt64(c2), ${i}), ${p(`path_action_${i}`, n)}`).join(', ')}, '')`;
  // The item property, '' when missing (as the gathered rows read it).
  // (No toString around the columns, already strings: measured at 10M events, toString of the Nullable item column
  // doubled the cost of making the items, 24.5 s against 9.4 s.)
  const prop = "ifNull(c4, '')";
  const pageview = `if(endsWith(${prop}, '/') AND length(${prop}) > 1, substring(${prop}, 1, length(${prop}) - 1), ${prop})`;
  let item = `multiIf(${action !== null ? `c2 != 0, ${action}, ` : ''}c3 = '$pageview', ${pageview}, c3 = '$screen', ${prop}, c3)`;
  fold.rules.forEach((r, i) => (item = `replaceRegexpAll(${item}, ${p(`path_rule_${i}`, r.regex)}, ${p(`path_alias_${i}`, r.alias)})`));
  const grouped = q.groupings.length === 0 ? 'raw_item'
    : `multiIf(${q.groupings.map((g, i) => `match(raw_item, ${p(`path_group_re_${i}`, groupingRegex(g))}), ${p(`path_group_${i}`, g)}`).join(', ')}, raw_item)`;
  const excluded = q.exclude.length === 0 ? 'false' : `path_item IN (${q.exclude.map((e, i) => p(`path_exclude_${i}`, e)).join(', ')})`;
  const rows = `SELECT c0, toFloat64(c1) AS t, ${item} AS raw_item, ${grouped} AS path_item FROM (${gathered.sql}) AS gathered WHERE c0 != toUUID(${p('path_no_person', NO_PERSON)})`;
  return `SELECT c0, arraySort(groupArray((t, path_item))) AS ev, arrayMap(x -> x.1, ev) AS ts FROM (${rows}) WHERE NOT ${excluded} GROUP BY c0`;
}

/**
 * One row per session path kept: the person (`c0`), its items (`items`) and their times (`times`), as sessionPaths
 * leaves them; `params` gets the fold's parameters.
 */
function sessionsSql(gathered: PrintedClickHouse, fold: PathFold, params: Record<string, unknown>): string {
  const q = fold.query;
  const p = (name: string, value: string) => {
    params[name] = value;
    return `{${name}:String}`;
  };
  const persons = personItemsSql(gathered, fold, params);
  // Sessions: split before an event 30 minutes or more after the one before it.
  const split = `SELECT c0, arrayJoin(arraySplit((x, before) -> x.1 - before >= ${SESSION_GAP_MS}, ev, arrayPushFront(arrayPopBack(ts), ts[1]))) AS session FROM (${persons})`;
  // Repeats collapsed: an item equal to the one before it is dropped.
  const collapsed = `SELECT c0, arrayFilter((x, before, i) -> i = 1 OR x.2 != before, session, arrayPushFront(arrayPopBack(arrayMap(x -> x.2, session)), ''), arrayEnumerate(session)) AS kept,
    arrayMap(x -> x.2, kept) AS all_items, arrayMap(x -> x.1, kept) AS all_times FROM (${split})`;
  // Anchored: from the first start point, to the first end point at or after it (1-based, inclusive; 0: none).
  const from = q.startPoint === null ? '1' : `indexOf(all_items, ${p('path_start', q.startPoint)})`;
  const to = q.endPoint === null ? 'length(all_items)' : `arrayFirstIndex((v, i) -> i >= path_from AND v = ${p('path_end', q.endPoint)}, all_items, arrayEnumerate(all_items))`;
  const anchored = `SELECT c0, ${from} AS path_from, ${to} AS path_to, arraySlice(all_items, path_from, path_to - path_from + 1) AS a_items,
    arraySlice(all_times, path_from, path_to - path_from + 1) AS a_times FROM (${collapsed}) WHERE path_from > 0 AND path_to > 0`;
  const L = q.stepLimit;
  const half = Math.floor(L / 2);
  const [items, times] = q.startPoint !== null && q.endPoint !== null
    ? [`arrayConcat(arraySlice(a_items, 1, ${half}), [${p('path_ellipsis', PATH_ELLIPSIS)}], arraySlice(a_items, -${half}))`,
      `arrayConcat(arraySlice(a_times, 1, ${half}), [a_times[${half + 1}]], arraySlice(a_times, -${half}))`]
    : q.endPoint !== null ? [`arraySlice(a_items, -${L})`, `arraySlice(a_times, -${L})`]
      : [`arraySlice(a_items, 1, ${L})`, `arraySlice(a_times, 1, ${L})`];
  return `SELECT c0, if(length(a_items) > ${L}, ${items}, a_items) AS items, if(length(a_items) > ${L}, ${times}, a_times) AS times FROM (${anchored})`;
}

/** Each session path's edges `(source, target, ms)`, sources and targets as `step_item`. */
const EDGES = `arrayMap((s, a, b, ta, tb) -> (concat(toString(s), '_', a), concat(toString(s + 1), '_', b), tb - ta),
  arrayEnumerate(arrayPopBack(items)), arrayPopBack(items), arrayPopFront(items), arrayPopBack(times), arrayPopFront(times))`;

/**
 * The edges `[source, target, value, summed ms]` within the weights, the heaviest first: `edgeLimit` of them and
 * every edge as heavy as the last (rankEdges orders ties by name and cuts them), or all without a limit.
 */
export function pathEdgesFoldSql(gathered: PrintedClickHouse, fold: PathFold, edgeLimit: number | null, minWeight: number | null, maxWeight: number | null): PrintedClickHouse {
  const params: Record<string, unknown> = { ...gathered.params };
  const having = [minWeight !== null ? `value >= ${minWeight}` : null, maxWeight !== null ? `value <= ${maxWeight}` : null].filter((x) => x !== null);
  const ranked = `${having.length > 0 ? ` HAVING ${having.join(' AND ')}` : ''} ORDER BY value DESC${edgeLimit !== null ? ` LIMIT ${edgeLimit} WITH TIES` : ''}`;
  if (fold.query.startPoint === null && fold.query.endPoint === null) {
    // Without start or end points each session's path is its first items: edges are read off the person's events
    // in one pass, grouped by (step, item, item) before their names are made.
    const edges = `SELECT edge.1 AS step, edge.2 AS a, edge.3 AS b, count() AS value, sum(edge.4) AS time FROM (${flatEdgesSql(gathered, fold, params)}) ARRAY JOIN edges AS edge GROUP BY step, a, b${ranked}`;
    return { sql: `SELECT concat(toString(step), '_', a) AS source, concat(toString(step + 1), '_', b) AS target, value, time FROM (${edges})`, params: params as Record<string, string> };
  }
  const sessions = sessionsSql(gathered, fold, params);
  const sql = `SELECT edge.1 AS source, edge.2 AS target, count() AS value, sum(edge.3) AS time FROM (${sessions}) ARRAY JOIN ${EDGES} AS edge
    GROUP BY source, target${ranked}`;
  return { sql, params: params as Record<string, string> };
}

/**
 * Per person, the edges of its sessions' paths when no start or end point anchors them, as `edges`: (step, source
 * item, target item, ms). A session starts at the first event and at each one 30 minutes or more after the one
 * before; an item equal to the one before it in its session is dropped; each kept item's place in its session
 * (its index less its session's start's, carried forward by `arrayFill`) numbers it, and an item past the step
 * limit ends no edge. Every array is aligned with the events, so this is linear in a person's events.
 */
function flatEdgesSql(gathered: PrintedClickHouse, fold: PathFold, params: Record<string, unknown>): string {
  const L = fold.query.stepLimit;
  const before = (a: string, first: string) => `arrayPushFront(arrayPopBack(${a}), ${first})`;
  const columns = [
    'arrayMap(x -> x.2, ev) AS all_items',
    `arrayMap((t, u, i) -> i = 1 OR t - u >= ${SESSION_GAP_MS}, ts, ${before('ts', 'ts[1]')}, arrayEnumerate(ts)) AS all_starts`,
    `arrayMap((s, a, b) -> s OR a != b, all_starts, all_items, ${before('all_items', "''")}) AS keep`,
    'arrayFilter((x, k) -> k, all_items, keep) AS items',
    'arrayFilter((x, k) -> k, ts, keep) AS times',
    'arrayFilter((x, k) -> k, all_starts, keep) AS starts',
    'arrayFill(x -> x > 0, arrayMap((s, j) -> if(s, j, 0), starts, arrayEnumerate(starts))) AS session_first',
    'arrayMap((i, f) -> i - f + 1, arrayEnumerate(starts), session_first) AS places',
    `arrayFilter(e -> e.1 >= 1 AND e.1 < ${L}, arrayMap((n, a, b, ta, tb) -> (n - 1, a, b, tb - ta), places, ${before('items', "''")}, items, ${before('times', 'times[1]')}, times)) AS edges`,
  ];
  return `SELECT c0, ${columns.join(', ')} FROM (${personItemsSql(gathered, fold, params)})`;
}

/**
 * The persons `/persons/path/` lists (uuids): those with a session path holding an edge from `start` and to `end`
 * (either may be null: any), or with `dropoff` one ending at that node.
 */
export function pathPersonsFoldSql(gathered: PrintedClickHouse, fold: PathFold, want: { start: string | null; end: string | null; dropoff: string | null }): PrintedClickHouse {
  const params: Record<string, unknown> = { ...gathered.params };
  const sessions = sessionsSql(gathered, fold, params);
  let where: string;
  if (want.dropoff) {
    params.path_dropoff = want.dropoff;
    where = `concat(toString(length(items)), '_', items[-1]) = {path_dropoff:String}`;
  } else {
    params.path_from_node = want.start ?? '';
    params.path_to_node = want.end ?? '';
    const source = want.start === null ? 'true' : 'e.1 = {path_from_node:String}';
    const target = want.end === null ? 'true' : 'e.2 = {path_to_node:String}';
    where = `arrayExists(e -> ${source} AND ${target}, ${EDGES})`;
  }
  return { sql: `SELECT DISTINCT toString(c0) FROM (${sessions}) WHERE ${where}`, params: params as Record<string, string> };
}
