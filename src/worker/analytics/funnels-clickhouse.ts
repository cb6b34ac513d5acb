/**
 * Funnels answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same FunnelsQuery, date range and entrance
 * periods as src/worker/analytics/funnels.ts. ClickHouse gathers each person's step and exclusion events (one query
 * printed by src/domain/analytics/clickhouse/funnel-sql.ts, after the same bounded wait for the export as HogQL);
 * each person's events then go through the local engine's own fold (funnelReducer), so both engines share one
 * definition of what a person reached.
 */
import { bucketStarts, resolveDateRange } from '../../domain/analytics/date-range.js';
import { funnelEventsSql } from '../../domain/analytics/clickhouse/funnel-sql.js';
import type { TrendsSqlOptions } from '../../domain/analytics/clickhouse/trends-sql.js';
import type { FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { localPersonIdOf } from './actors-clickhouse.js';
import { funnelParams, funnelReducer, type FunnelPartial, type FunnelRun } from './funnels.js';
import { queryContext } from './query-context.js';
import { forEachPerson, groupByPerson, type Events } from './sequences.js';

export interface ClickHouseFunnelRun extends FunnelRun {
  caughtUp: boolean;
}

/** How a row of ClickHouse's answer carries an event's value and name (absent: the events carry none). */
export interface RowColumns {
  /** The value's text (breakdown value, path item), null for none. */
  value?: (row: readonly unknown[]) => string | null;
  name?: (row: readonly unknown[]) => string;
}

/** Collected events, and the uuid of each person by the number given to it (`uuids[pid - 1]`). */
export type RowEvents = Events & { uuids: string[] };

/**
 * Rows (person, ms, mask, ...) as collected events, as the local engine's collect leaves them, so that the same
 * regrouping per person (groupByPerson: time order, ties in the order the rows came) and the same sliced walk
 * (forEachPerson) fold them. Persons are numbered in the order of their uuids (the sums need no uuid; what reads
 * persons looks them up in `uuids`); rows of no person are dropped. Values and names are interned as the local
 * engine's tables are.
 */
export function eventsOfRows(rows: readonly unknown[][], columns: RowColumns = {}): RowEvents {
  const n = rows.length;
  const events: RowEvents = {
    n: 0, pid: new Uint32Array(n), ts: new Float64Array(n), mask: new Uint32Array(n), value: new Int32Array(n), values: [], name: new Int32Array(n).fill(-1), names: [], uuids: [],
  };
  const pids = new Map<string, number>();
  const valueIds = new Map<string, number>();
  const nameIds = new Map<string, number>();
  for (const row of rows) {
    const person = String(row[0] ?? '');
    // Events of no person (none in Quill's export, but a row without one must not become a person).
    if (person === '' || person === NO_PERSON) continue;
    let pid = pids.get(person);
    if (pid === undefined) pids.set(person, (pid = events.uuids.push(person)));
    const k = events.n++;
    events.pid[k] = pid;
    events.ts[k] = Number(row[1]);
    events.mask[k] = Number(row[2]) >>> 0;
    const value = columns.value?.(row) ?? null;
    events.value[k] = value === null ? -1 : interned(valueIds, events.values, value);
    if (columns.name) events.name[k] = interned(nameIds, events.names, columns.name(row));
  }
  numberByUuid(events);
  return events;
}

/**
 * Renumbers the persons in the order of their uuids. ClickHouse sends the rows in no set order, and the fold's sums
 * over persons (conversion times, floating point) must add up in the same order for the same events every time.
 */
function numberByUuid(events: RowEvents): void {
  const byUuid = events.uuids.map((uuid, i) => ({ uuid, pid: i + 1 })).sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  const renumbered = new Uint32Array(byUuid.length + 1);
  byUuid.forEach((p, i) => (renumbered[p.pid] = i + 1));
  for (let k = 0; k < events.n; k++) events.pid[k] = renumbered[events.pid[k]!]!;
  events.uuids = byUuid.map((p) => p.uuid);
}

function interned(ids: Map<string, number>, list: string[], text: string): number {
  let id = ids.get(text);
  if (id === undefined) ids.set(text, (id = list.push(text) - 1));
  return id;
}

const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** A funnel row's breakdown value (its fourth column): '' is "no value", as the local engine's -1. */
export const breakdownOfRow = (row: readonly unknown[]) => String(row[3] ?? '') || null;

/** Events a funnel brings back from ClickHouse at most (about 150 bytes each once parsed). */
export const FUNNEL_ROWS_MAX = 2_000_000;

/**
 * `persons`: keep each step's persons (/persons/funnel/), as the local engine's person ids (localPersonIdOf), so that
 * the persons endpoint pages them exactly as it pages the local engine's.
 */
export async function runFunnelOnClickHouse(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, persons = false): Promise<ClickHouseFunnelRun> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)], []);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, null);
  const periods = q.viz === 'trends' ? bucketStarts(range) : [];
  const opts: TrendsSqlOptions = { team, database: rt.config.clickhouseDatabase, timeZone: ctx.timeZone, now };
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const printed = funnelEventsSql(q, filter, range.from, range.to, opts);
  const caughtUp = await exportCaughtUp(rt, requested);
  // Every gathered event comes back as a row folded here: beyond a bound the local engine answers instead (it
  // holds the same events as columns, far smaller than rows of JSON).
  const rows = (await selectOnClickHouse(rt, printed.sql, printed.params, FUNNEL_ROWS_MAX)).data;
  const reducer = funnelReducer(funnelParams(q, range, periods, persons));
  const partial: FunnelPartial = reducer.empty();
  const events = eventsOfRows(rows, q.breakdown ? { value: breakdownOfRow } : {});
  await forEachPerson(groupByPerson(events), () => true, (person) => reducer.add(partial, person));
  if (persons) {
    // Only the persons the steps kept are looked up (a deleted one among them sends the question to the local engine).
    const localId = localPersonIdOf(rt, team);
    const toLocal = (pids: number[]) => pids.map((pid) => localId(events.uuids[pid - 1]!));
    for (const stats of partial.values()) {
      if (stats.persons) stats.persons = stats.persons.map(toLocal);
      if (stats.periodPersons) stats.periodPersons = stats.periodPersons.map((pp) => ({ from: toLocal(pp.from), to: toLocal(pp.to) }));
    }
  }
  return { ctx, range, periods, partial, caughtUp };
}
