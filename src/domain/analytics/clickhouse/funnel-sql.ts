/**
 * Funnels (analytics.md §2) on ClickHouse, for `QUILL_ANALYTICS=clickhouse`: the same FunnelsQuery the local engine
 * runs (src/domain/analytics/funnel-query.ts). Pure: SQL text and parameters out.
 *
 * ClickHouse does what the local engine's shuffle does (src/worker/analytics/sequences.ts): it finds the events of
 * every step and exclusion, resolves each to the person it counts for now (merges included), tags it with the bit
 * set of the steps and exclusions it matches and hands them over; the local grouping (groupByPerson) puts them per person in time order. The fold over a
 * person's events stays the local engine's own (src/domain/analytics/funnel.ts) rather than a second copy in SQL:
 * its rules (one event fills at most one step, unordered funnels' matching of steps to events, exclusions between
 * the steps they guard, the best attempts' conversion times) are subtle, and ClickHouse's windowFunnel does not
 * keep the first of them. One definition of a funnel, so the two engines cannot disagree on what one means.
 *
 * The SQL is HogQL printed by src/domain/hogql/clickhouse-printer.ts (team guard, parameters, property semantics),
 * each step's and exclusion's filters a named filter tree.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { parseQuery } from '../../hogql/parser.js';
import { funnelMatchers, type FunnelsQuery } from '../funnel-query.js';
import type { FilterNode } from '../property-filters.js';
import { hadActor } from './person-events.js';
import { breakdownValue, filterGap, ownerOf, propertyBreakdown, type TrendsSqlOptions } from './trends-sql.js';

/**
 * Why a funnel cannot run on ClickHouse yet (null: it can); `filters` are every filter tree the query applies
 * (global, steps, exclusions, test accounts). What is not built is answered by the local engine, not approximated.
 */
export function clickHouseFunnelGap(q: FunnelsQuery, filters: readonly (FilterNode | null)[]): string | null {
  // Actions (steps and exclusions) are filter trees of their steps in `filters` (funnelMatchers), checked below.
  if (q.breakdown && !propertyBreakdown(q.breakdown.type)) return `${q.breakdown.type} breakdowns of funnels are not computed on ClickHouse yet`;
  for (const f of filters) {
    const gap = f ? filterGap(f) : null;
    if (gap) return gap;
  }
  return null;
}

/**
 * What correlation (analytics.md §3) gathers beyond a funnel's own events: every event of the persons who may enter
 * (the other events are the candidates), with its name.
 */
export interface FunnelGather {
  everyEvent: boolean;
  names: boolean;
}

/**
 * Rows (person, time in epoch ms, mask, [breakdown value], [event name]) of the events in [from, to] passing
 * `filter` that match a matcher (every event for strict funnels, whose steps are "the next event", and with
 * `gather.everyEvent`) of the persons who may enter the funnel, in no particular order. The breakdown value is
 * the event property's text, '' when missing, as the local engine keys it. `forFold`: the rows a fold inside ClickHouse
 * reads (funnel-fold-sql.ts), persons as UUIDs.
 */
export function funnelEventsSql(
  q: FunnelsQuery, filter: FilterNode | null, from: number, to: number, opts: TrendsSqlOptions,
  gather: FunnelGather = { everyEvent: false, names: false }, forFold = false,
): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(from), to: new Date(to) };
  const trees: Record<string, FilterNode | null> = {};
  const matches = funnelMatchers(q).map((m, i) => {
    trees[`m${i}`] = m.filter;
    if (m.event === null) return `{m${i}}`;
    values[`e${i}`] = m.event;
    return `(event = {e${i}} AND {m${i}})`;
  });
  // Bit i is 2^i (at most 31 bits, as the local engine's Uint32 masks).
  const mask = matches.map((m, i) => `multiIf(${m}, ${2 ** i}, 0)`).join(' + ');
  // Events ingested without a person reach no step, as on the local engine.
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}', hadActor(values)];
  if (q.order !== 'strict' && !gather.everyEvent) where.push(`(${matches.join(' OR ')})`);
  // Ordered and strict funnels start at step 0: a person with no step-0 event in range reaches nothing, so their
  // events are not worth sending (for strict funnels, otherwise every event in range of everyone). Unordered ones
  // start at any step: with every event gathered, only the persons with one are worth it.
  const entry = q.order !== 'unordered' ? matches[0] : gather.everyEvent ? `(${matches.slice(0, q.steps.length).join(' OR ')})` : null;
  // Folded inside ClickHouse (funnel-fold-sql.ts), a person without an entry reaches nothing there anyway: the
  // second read of the events that keeps their rows from being sent costs more than grouping them (measured at 10M
  // events: strict 12.8 s without it, 16.3 s with it).
  if (entry !== null && !forFold) where.push(`person_id IN (SELECT person_id FROM events WHERE timestamp >= {from} AND timestamp <= {to} AND {filters} AND ${entry})`);
  const select = ['person_id', 'timestamp', `${mask} AS mask`];
  const columns: { name: string; type: 'Person' | 'DateTime' | 'Int' | 'String' }[] = [
    // Folded inside ClickHouse, the person stays a UUID (16 bytes to group by, rather than its 36 characters of text).
    { name: 'person_id', type: forFold ? 'Int' : 'Person' }, { name: 'timestamp', type: 'DateTime' }, { name: 'mask', type: 'Int' },
  ];
  if (q.breakdown) {
    select.push(`${breakdownValue(q.breakdown.property!, values, '', 'breakdown_key', ownerOf(q.breakdown.type))} AS breakdown`);
    columns.push({ name: 'breakdown', type: 'String' });
  }
  if (gather.names) {
    select.push('event');
    columns.push({ name: 'event', type: 'String' });
  }
  // No ORDER BY: the rows are regrouped per person and put in time order by the local engine's own grouping
  // (groupByPerson), and ClickHouse sorting them first held them all in memory: measured on 3M events (the funnel by
  // $browser, 2.1M rows), 512 MB-1 GB with the sort, under 128 MB without.
  const text = `SELECT ${select.join(', ')} FROM events WHERE ${where.join(' AND ')}`;
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter, filterTrees: trees });
}
