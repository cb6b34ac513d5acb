/**
 * Paths (analytics.md §7) on ClickHouse, for `QUILL_ANALYTICS=clickhouse`: the same PathsQuery the local engine runs
 * (src/domain/analytics/paths.ts). Pure: SQL text and parameters out.
 *
 * ClickHouse does what the local engine's collect does for paths (src/worker/analytics/sequences.ts): it finds the
 * events in range that may become path items, resolves each to the person it counts for now and hands over its
 * name and the property its item is made of (a pageview's URL, a screen's name). Everything after that stays the
 * local engine's (src/worker/analytics/paths.ts): the raw item (rawItem), cleaning and groupings, exclusions,
 * sessions, start and end points, step limits and edges, so the two engines share one definition of a path.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { parseQuery } from '../../hogql/parser.js';
import type { PathsQuery } from '../paths.js';
import type { FilterNode } from '../property-filters.js';
import { hadActor } from './person-events.js';
import { breakdownValue, filterGap, type TrendsSqlOptions } from './trends-sql.js';

/**
 * Why a paths query cannot run on ClickHouse yet (null: it can); `filters` are every filter tree it applies (global,
 * test accounts).
 */
export function clickHousePathsGap(q: PathsQuery, filters: readonly (FilterNode | null)[]): string | null {
  // Actions as path items are their steps' filter trees, printed as the funnels' action steps are.
  for (const f of [...filters, ...q.includeActions.map((a) => a.filter)]) {
    const gap = f ? filterGap(f) : null;
    if (gap) return gap;
  }
  return null;
}

/**
 * Rows (person, time in epoch ms, action bits, event, item property) of the events in [from, to] passing `filter`
 * whose name paths may include (as includesEvent reads it; the fold checks again) or that match an included
 * action. The item
 * property is the text of `$current_url` for a pageview, of `$screen_name` for a screen ('' when missing, as
 * rawItem reads a missing one), else ''. `forFold`: the rows a fold inside ClickHouse reads (path-fold-sql.ts), persons as
 * UUIDs. In no particular order:
 * the local grouping (groupByPerson) puts each person's events in time order, as for funnels; sorting them here
 * made ClickHouse hold every row at once (past 1 GB at 10M events).
 */
export function pathEventsSql(q: PathsQuery, filter: FilterNode | null, from: number, to: number, opts: TrendsSqlOptions, forFold = false): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(from), to: new Date(to) };
  const named = [...q.includeTypes.filter((t) => t !== 'custom_event'), ...q.includeCustom];
  const included: string[] = [];
  if (named.length > 0) {
    values.named = named;
    included.push('event IN {named}');
  }
  // Custom events: every event whose name is not one of PostHog's own ($…).
  if (q.includeTypes.includes('custom_event')) included.push("NOT startsWith(event, '$')");
  // An action's events carry its bit (2^i, the local engine's matcher i); an event of several actions is the item
  // of the first (the fold reads the lowest bit), whatever its name.
  const trees: Record<string, FilterNode | null> = {};
  const actions = q.includeActions.map((a, i) => {
    trees[`a${i}`] = a.filter;
    return `{a${i}}`;
  });
  const mask = actions.length === 0 ? '0' : actions.map((a, i) => `multiIf(${a}, ${2 ** i}, 0)`).join(' + ');
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}', hadActor(values), `(${[...included, ...actions].join(' OR ')})`];
  const url = breakdownValue('$current_url', values, 'null', 'url_key');
  const screen = breakdownValue('$screen_name', values, 'null', 'screen_key');
  const item = `multiIf(event = '$pageview', ${url}, event = '$screen', ${screen}, '')`;
  const text = `SELECT person_id, timestamp, ${mask} AS mask, event, ${item} AS item FROM events WHERE ${where.join(' AND ')}`;
  return printClickHouse(parseQuery(text), [
    // Folded inside ClickHouse (path-fold-sql.ts), the person stays a UUID.
    { name: 'person_id', type: forFold ? 'Int' : 'Person' }, { name: 'timestamp', type: 'DateTime' }, { name: 'mask', type: 'Int' },
    { name: 'event', type: 'String' }, { name: 'item', type: 'String' },
  ], { ...opts, values, filters: null, filterTree: filter, filterTrees: trees });
}
