/**
 * Funnels answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the same FunnelsQuery, date range and entrance
 * periods as src/worker/analytics/funnels.ts. ClickHouse selects each person's step and exclusion events (one query
 * printed by src/domain/analytics/clickhouse/funnel-sql.ts, after the same bounded wait for the export as HogQL) and,
 * for every funnel funnelFoldGap allows, folds them per person itself (funnel-fold-sql.ts: the local engine's
 * definition written with arrays, held to it by test/chdb/funnel-fold.test.ts), so only sums or the persons
 * asked for come back. The rest is gathered: each person's events go through the local engine's own fold
 * (funnelReducer).
 */
import { bucketStarts, parseDate, resolveDateRange } from '../../domain/analytics/date-range.js';
import { foldedValueOf, funnelFoldGap, funnelFoldSql, funnelPersonsSql, funnelTimesSql, sharedStepRowSql, type FoldBreakdown, type FoldedValue, type FunnelPersonsOf } from '../../domain/analytics/clickhouse/funnel-fold-sql.js';
import { funnelEventsSql } from '../../domain/analytics/clickhouse/funnel-sql.js';
import type { PrintedClickHouse } from '../../domain/hogql/clickhouse-printer.js';
import type { TrendsSqlOptions } from '../../domain/analytics/clickhouse/trends-sql.js';
import { funnelShape, stepsOfDistinctEvents, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import { exportCaughtUp, selectOnClickHouse } from '../query/hogql-clickhouse.js';
import type { WorkerRuntime } from '../runtime.js';
import { ACTOR_ROWS_MAX, gatheredLocalId, localPersonIdOf } from './actors-clickhouse.js';
import { convertBins, type FunnelShape } from '../../domain/analytics/funnel.js';
import { emptyStats, funnelParams, funnelReducer, OTHER_VALUE, rankValues, timeToConvertOf, type FunnelParams, type FunnelPartial, type FunnelRun, type TimeToConvert } from './funnels.js';
import { clickHouseSqlOptions, queryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { foldGatheredRows } from './gathered-events.js';

export interface ClickHouseFunnelRun extends FunnelRun {
  caughtUp: boolean;
  gatheredParts: number;
  /** Bytes of ClickHouse's answers to the funnel's queries (the events gathered, or the sums folded there). */
  bytesReceived: number;
  /** Whether ClickHouse folded the funnel itself (sums came back) rather than sending its events. */
  foldedInClickHouse: boolean;
}

/** How the fold attributes the funnel's breakdown value (null: no breakdown). */
const foldBreakdown = (q: FunnelsQuery): FoldBreakdown | null => (q.breakdown ? { attribution: q.attribution, step: q.attributionStep } : null);

/** A funnel row's breakdown value (its fourth column): '' is "no value", as the local engine's -1. */
export const breakdownOfRow = (row: readonly unknown[]) => String(row[3] ?? '') || null;


/**
 * The persons `/persons/funnel/` lists, of one breakdown value or any: those whose best attempt reached exactly one of
 * `levels` steps; or in funnel trends, those who converted (or, with `dropOff`, dropped off) in the entrance period
 * starting at `periodStart` (the request's text, read in the project's zone).
 */
export type StepPersons = { value: string | null } & ({ levels: number[] } | { periodStart: string; dropOff: boolean });

/**
 * `persons`: keep the persons `/persons/funnel/` lists, as the local engine's person ids (localPersonIdOf), so that the
 * persons endpoint pages them exactly as it pages the local engine's. When the fold runs inside ClickHouse, only those
 * persons come back; gathered, every person's steps are kept.
 */
export async function runFunnelOnClickHouse(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, persons: StepPersons | null = null): Promise<ClickHouseFunnelRun> {
  const requested = Date.now();
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)], []);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, await firstEventIfAll(rt, team, q.dates));
  const periods = q.viz === 'trends' ? bucketStarts(range) : [];
  const opts: TrendsSqlOptions = clickHouseSqlOptions(rt, team, ctx.timeZone, now, ctx);
  const filter = andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const shape = funnelShape(q);
  const { folding, checkBytes } = await foldDecision(rt, q, shape, () => funnelEventsSql(q, filter, range.from, range.to, opts, undefined, true));
  const printed = funnelEventsSql(q, filter, range.from, range.to, opts, undefined, folding);
  const caughtUp = await exportCaughtUp(rt, requested);
  if (folding) {
    const base = { ctx, range, periods, partial: new Map(), caughtUp, gatheredParts: 0, foldedInClickHouse: true };
    const fold: Fold = { q, shape, breakdown: foldBreakdown(q), gathered: printed };
    if (persons !== null) {
      const of: FunnelPersonsOf = 'levels' in persons ? { levels: persons.levels } : {
        periods: { starts: periods, end: range.to, fromStep: q.fromStep, toStep: q.toStep }, dropOff: persons.dropOff,
        period: periods.indexOf(parseDate(persons.periodStart, now, ctx.timeZone, 'entrance_period_start').ms),
      };
      const { partial, bytesReceived } = await personsOnClickHouse(rt, team, fold, funnelParams(q, range, periods, true), of, persons.value);
      return { ...base, partial, bytesReceived: checkBytes + bytesReceived };
    }
    if (q.viz === 'time_to_convert') {
      const { times, bytesReceived } = await timesOnClickHouse(rt, fold);
      return { ...base, times, bytesReceived: checkBytes + bytesReceived };
    }
    if (q.viz === 'trends') {
      const { partial, bytesReceived } = await trendsOnClickHouse(rt, fold, range.to, periods);
      return { ...base, partial, bytesReceived: checkBytes + bytesReceived };
    }
    const { folded, bytesReceived } = await foldOnClickHouse(rt, fold);
    return { ...base, folded, bytesReceived: checkBytes + bytesReceived };
  }
  // Every gathered event comes back as a row folded here, part after part (a part's persons at a time).
  const reducer = funnelReducer(funnelParams(q, range, periods, persons !== null));
  const partial: FunnelPartial = reducer.empty();
  const { uuids, parts, bytesReceived } = await foldGatheredRows(rt, printed, q.breakdown ? { value: breakdownOfRow } : {}, (person) => reducer.add(partial, person));
  if (persons !== null) {
    // Only the persons the steps kept are looked up (a deleted one among them sends the question to the local engine).
    const localId = gatheredLocalId(rt, team, uuids);
    const toLocal = (pids: number[]) => pids.map(localId);
    for (const stats of partial.values()) {
      if (stats.persons) stats.persons = stats.persons.map(toLocal);
      if (stats.periodPersons) stats.periodPersons = stats.periodPersons.map((pp) => ({ from: toLocal(pp.from), to: toLocal(pp.to) }));
    }
  }
  return { ctx, range, periods, partial, caughtUp, gatheredParts: parts, bytesReceived: checkBytes + bytesReceived, foldedInClickHouse: false };
}

/**
 * Whether the fold of funnel `q` runs inside ClickHouse (funnelFoldGap), and the bytes it took to decide: an unordered
 * funnel whose steps share an event name is folded there when no event of the range matches two steps, which one
 * query over `stepRows` (the funnel's rows for a fold) asks.
 */
export async function foldDecision(rt: WorkerRuntime, q: FunnelsQuery, shape: FunnelShape, stepRows: () => PrintedClickHouse): Promise<{ folding: boolean; checkBytes: number }> {
  const gap = (distinctSteps: boolean) => funnelFoldGap(shape, q.breakdown !== null, q.attribution, distinctSteps, q.attributionStep);
  if (gap(stepsOfDistinctEvents(q)) === null) return { folding: true, checkBytes: 0 };
  if (gap(true) !== null) return { folding: false, checkBytes: 0 };
  const check = sharedStepRowSql(stepRows(), shape);
  const found = await selectOnClickHouse(rt, check.sql, check.params);
  return { folding: found.data.length === 0, checkBytes: found.bytes };
}

/** What a fold inside ClickHouse starts from: the query, its shape and breakdown, and its rows' query. */
interface Fold {
  q: FunnelsQuery;
  shape: FunnelShape;
  breakdown: FoldBreakdown | null;
  gathered: PrintedClickHouse;
}

/**
 * The steps of the funnel summed per breakdown value inside ClickHouse (funnel-fold-sql.ts), ranked as the local
 * engine ranks them; past the breakdown limit, a second query sums the values left out into "Other".
 */
async function foldOnClickHouse(rt: WorkerRuntime, { q, shape, breakdown, gathered }: Fold): Promise<{ folded: FoldedValue[]; bytesReceived: number }> {
  const first = funnelFoldSql(gathered, shape, breakdown);
  const answer = await selectOnClickHouse(rt, first.sql, first.params);
  let bytesReceived = answer.bytes;
  const ranked = rankValues(answer.data.map((row) => foldedValueOf(row, shape.steps)));
  const limit = q.breakdown?.limit ?? Infinity;
  if (ranked.length <= limit) return { folded: ranked, bytesReceived };
  // The values past the limit are summed again as one ("Other"): its median is over all of their persons.
  const kept = ranked.slice(0, limit);
  const second = funnelFoldSql(gathered, shape, breakdown, kept.map((v) => v.value));
  const split = await selectOnClickHouse(rt, second.sql, second.params);
  bytesReceived += split.bytes;
  const other = split.data.map((row) => foldedValueOf(row, shape.steps)).find((v) => !v.kept);
  return { folded: other ? [...kept, { ...other, value: OTHER_VALUE }] : kept, bytesReceived };
}

/**
 * Funnel trends summed per breakdown value and entrance period inside ClickHouse, as the local engine's sums
 * (conversion-time lists left empty: trends do not show them); the breakdown limit's "Other" is a plain sum here.
 */
async function trendsOnClickHouse(
  rt: WorkerRuntime, { q, shape, breakdown, gathered }: Fold, end: number, starts: number[],
): Promise<{ partial: FunnelPartial; bytesReceived: number }> {
  const printed = funnelFoldSql(gathered, shape, breakdown, null, { starts, end, fromStep: q.fromStep, toStep: q.toStep });
  const answer = await selectOnClickHouse(rt, printed.sql, printed.params);
  const partial: FunnelPartial = new Map();
  for (const row of answer.data) {
    const v = foldedValueOf(row, shape.steps, starts.length);
    partial.set(v.value, {
      reached: v.reached, averages: v.averages.map(() => []), medians: v.medians.map(() => []), toConvert: [], persons: null,
      periodFrom: v.periodFrom, periodTo: v.periodTo, periodPersons: null,
    });
  }
  return { partial, bytesReceived: answer.bytes };
}

/**
 * The persons of a step (or of a funnel trends period) folded inside ClickHouse: their uuids come back (only those
 * asked for), as local person ids in each breakdown value's list of the steps they reached (or of the period: its
 * drop-offs as entered, its conversions as converted); the counts are of those persons only.
 */
async function personsOnClickHouse(
  rt: WorkerRuntime, team: number, { shape, breakdown, gathered }: Fold, params: FunnelParams, of: FunnelPersonsOf, value: string | null,
): Promise<{ partial: FunnelPartial; bytesReceived: number }> {
  const partial: FunnelPartial = new Map();
  // An entrance period that is not one of the range's: no one entered in it (as the local engine finds).
  if (!('levels' in of) && of.period < 0) return { partial, bytesReceived: 0 };
  const printed = funnelPersonsSql(gathered, shape, breakdown, of, value);
  const answer = await selectOnClickHouse(rt, printed.sql, printed.params, ACTOR_ROWS_MAX);
  const localId = localPersonIdOf(rt, team);
  for (const [uuid, best, rowValue] of answer.data) {
    const key = String(rowValue ?? '');
    let stats = partial.get(key);
    if (!stats) partial.set(key, (stats = emptyStats(params)));
    stats.reached[Number(best)]!++;
    const id = localId(String(uuid));
    if ('levels' in of) stats.persons![Number(best)]!.push(id);
    else if (of.dropOff) stats.periodPersons![of.period]!.from.push(id);
    else stats.periodPersons![of.period]!.to.push(id);
  }
  return { partial, bytesReceived: answer.bytes };
}

/** Time to convert inside ClickHouse: the persons per bin of their range of times, in one query. */
async function timesOnClickHouse(rt: WorkerRuntime, { q, shape, breakdown, gathered }: Fold): Promise<{ times: TimeToConvert; bytesReceived: number }> {
  const printed = funnelTimesSql(gathered, shape, breakdown, q.fromStep, q.toStep, q.binCount);
  const answer = await selectOnClickHouse(rt, printed.sql, printed.params);
  const [, , count, least, most, sum] = (answer.data[0] ?? [0, 0, 0, 0, 0, 0]).map(Number) as number[];
  const bins = convertBins(q.binCount, count!, least!, most!);
  if (bins === null) return { times: { bins: [], average_conversion_time: null }, bytesReceived: answer.bytes };
  const counts = new Array<number>(bins.count + 1).fill(0);
  for (const [bin, n] of answer.data) counts[Number(bin)] = Number(n);
  return { times: timeToConvertOf(bins, counts, sum! / count!), bytesReceived: answer.bytes };
}
