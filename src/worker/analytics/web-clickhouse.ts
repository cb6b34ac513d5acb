/**
 * The web analytics session scan answered by ClickHouse (src/domain/web-analytics/clickhouse-sql.ts): the rows of
 * its two queries become the session parts the local scan would fold, counted into the same aggregator. Persons come
 * as uuids: each gets a number of its own here (visitors are distinct persons, whatever their numbers).
 */
import { aggregatorFor, type AggregateSpec, type WebAggregator } from '../../domain/web-analytics/aggregate.js';
import { countedTree, ENTRY_KEYS, externalClicksSql, goalCountsSql, sessionBoundsSql, sessionCountsSql, sessionValuesSql, SIMPLE_EVENT_BREAKDOWNS, type WebSqlOptions } from '../../domain/web-analytics/clickhouse-sql.js';
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import { countValue, emptyPart, type SessionPart } from '../../domain/web-analytics/sessions.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';

export async function webSessionsOnClickHouse(
  rt: WorkerRuntime, range: { from: number; to: number }, counted: { from: number; to: number }, filter: FilterNode | null,
  goals: readonly FilterNode[], aggregate: AggregateSpec, opts: WebSqlOptions,
): Promise<{ aggregator: WebAggregator; caughtUp: boolean }> {
  const requested = Date.now();
  const caughtUp = await exportCaughtUp(rt, requested);
  const select = async (printed: { sql: string; params: Record<string, string> }) => (await selectOnClickHouse(rt, printed.sql, printed.params)).data;
  const parts = new Map<string, SessionPart>();
  const text = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
  for (const row of await select(sessionBoundsSql(range.from, range.to, opts))) {
    const [sid, start, stop, bounceEvents] = row;
    const e = row.slice(4, 4 + ENTRY_KEYS.length).map(text);
    const part = emptyPart(String(sid), aggregate.goals);
    part.start = Number(start);
    part.end = Number(stop);
    part.bounceEvents = Number(bounceEvents);
    // Entry and exit as the local scan keeps them (their rank and time only decide merges, which are done here).
    part.entryRank = 0;
    part.entry = {
      url: e[0]!, referringDomain: e[1]!, utmSource: e[2]!, utmMedium: e[3]!, utmCampaign: e[4]!, utmTerm: e[5]!, utmContent: e[6]!,
      gadSource: e[7]!, hasGclid: e[8] !== null, hasFbclid: e[9] !== null,
    };
    part.exitRank = 0;
    part.exitUrl = text(row[4 + ENTRY_KEYS.length]);
    parts.set(part.id, part);
  }
  const personNumbers = new Map<string, number>();
  for (const [sid, count, person] of await select(sessionCountsSql(counted.from, counted.to, countedTree(filter, goals), opts))) {
    const part = parts.get(String(sid));
    if (!part) continue;
    part.counted = Number(count);
    const uuid = String(person ?? '');
    let n = personNumbers.get(uuid);
    if (n === undefined) personNumbers.set(uuid, (n = personNumbers.size + 1));
    part.person = n;
  }
  // An event breakdown: each session's counted events per value, keyed as the local scan keys them.
  const property = aggregate.query.kind === 'WebStatsTableQuery' ? SIMPLE_EVENT_BREAKDOWNS[String(aggregate.query.breakdownBy)] : undefined;
  if (property !== undefined) {
    for (const [sid, value, n] of await select(sessionValuesSql(counted.from, counted.to, property, countedTree(filter, goals), opts))) {
      const part = parts.get(String(sid));
      if (part) countValue(part, JSON.stringify(String(value)), Number(n), false);
    }
  }
  // Each goal's events per session and period (a conversion goal is goal 0).
  for (let g = 0; g < goals.length; g++) {
    const tree: FilterNode = filter === null ? goals[g]! : { and: true, children: [filter, goals[g]!] };
    for (const [sid, cur, prev] of await select(goalCountsSql(aggregate.periods.current, aggregate.periods.previous, tree, opts))) {
      const part = parts.get(String(sid));
      if (!part) continue;
      part.goals[2 * g] = Number(cur);
      part.goals[2 * g + 1] = Number(prev);
    }
  }
  const aggregator = aggregatorFor(aggregate);
  for (const part of parts.values()) aggregator.addPart(part);
  return { aggregator, caughtUp };
}

/** Outbound clicks answered by ClickHouse: [url, visitors, clicks] rows. */
export async function externalClicksOnClickHouse(
  rt: WorkerRuntime, period: { from: number; to: number }, strip: boolean, filter: FilterNode | null, opts: WebSqlOptions,
): Promise<{ rows: [string, number, number][]; caughtUp: boolean }> {
  const requested = Date.now();
  const caughtUp = await exportCaughtUp(rt, requested);
  const printed = externalClicksSql(period.from, period.to, strip, filter, opts);
  const rows = (await selectOnClickHouse(rt, printed.sql, printed.params)).data.map((r) => [String(r[0]), Number(r[1]), Number(r[2])] as [string, number, number]);
  return { rows, caughtUp };
}
