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
import { funnelParams, funnelReducer, type FunnelPartial, type FunnelRun } from './funnels.js';
import { queryContext } from './query-context.js';
import type { PersonEvents } from './sequences.js';

export interface ClickHouseFunnelRun extends FunnelRun {
  caughtUp: boolean;
}

/**
 * Rows (person, ms, mask, [value]) as one PersonEvents per person, its events in time order (`pid` counts the
 * persons in order of first row: the uuid is not needed by the sums). The query orders its rows so, but the rows
 * are regrouped here rather than trusted to come contiguous through the printer's outer SELECT. Breakdown values
 * '' are "no value", as the local engine's -1.
 */
export function* personsOfRows(rows: readonly unknown[][], withValue: boolean): Generator<PersonEvents> {
  const values: string[] = [];
  const valueIds = new Map<string, number>();
  const byPerson = new Map<string, number[]>();
  for (let r = 0; r < rows.length; r++) {
    const person = String(rows[r]![0] ?? '');
    // Events of no person (none in Quill's export, but a row without one must not become a person).
    if (person === '' || person === NO_PERSON) continue;
    const list = byPerson.get(person);
    if (list) list.push(r);
    else byPerson.set(person, [r]);
  }
  let pid = 0;
  for (const list of byPerson.values()) {
    // Stable: rows at the same instant keep the order they came in.
    list.sort((a, b) => Number(rows[a]![1]) - Number(rows[b]![1]));
    const n = list.length;
    const ts = new Float64Array(n);
    const mask = new Uint32Array(n);
    const value = new Int32Array(n).fill(-1);
    for (let k = 0; k < n; k++) {
      const row = rows[list[k]!]!;
      ts[k] = Number(row[1]);
      mask[k] = Number(row[2]) >>> 0;
      const text = withValue ? String(row[3] ?? '') : '';
      if (text !== '') {
        let id = valueIds.get(text);
        if (id === undefined) valueIds.set(text, (id = values.push(text) - 1));
        value[k] = id;
      }
    }
    yield { pid: ++pid, n, ts, mask, value, values, name: new Int32Array(0), names: [] };
  }
}

const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** Events a funnel brings back from ClickHouse at most (about 150 bytes each once parsed). */
export const FUNNEL_ROWS_MAX = 2_000_000;

export async function runFunnelOnClickHouse(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number): Promise<ClickHouseFunnelRun> {
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
  const reducer = funnelReducer(funnelParams(q, range, periods, false));
  const partial: FunnelPartial = reducer.empty();
  for (const person of personsOfRows(rows, q.breakdown !== null)) reducer.add(partial, person);
  return { ctx, range, periods, partial, caughtUp };
}
