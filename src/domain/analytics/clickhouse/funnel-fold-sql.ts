/**
 * A funnel's steps folded inside ClickHouse (issue 51): the rows funnelEventsSql gathers (person, ms, step bits,
 * breakdown value) grouped into one time-sorted array per person, each person's outcome worked out with ClickHouse's
 * own array functions, and only the sums per breakdown value sent back — what the steps answer shows, not events.
 *
 * The fold is the local engine's (src/domain/analytics/funnel.ts), written with arrays rather than loops:
 * - every row matching step 0 starts an attempt; each later step is the first row of that step after the previous
 *   step's row (ordered) or the very next row (strict), counted while within the window from the start, so one row
 *   fills at most one step of an attempt. The step times of every attempt are computed for all attempts at once by
 *   reverse fills over the person's rows (personFoldSql says how), linear in the person's events;
 * - an attempt is dropped when an exclusion row lies strictly between the times of the steps it guards (the first
 *   exclusion row of a time later than the guarded step's);
 * - the person's result is the longest attempt left; the conversion times are averaged, and their median taken,
 *   over every attempt of that length, as the local engine does;
 * - funnel trends: each attempt's entrance period, the longest attempt per period, summed per period (`sumMap`);
 * - time to convert: each person's seconds between the two steps, their range first, then counted per bin;
 * - unordered funnels whose steps are distinct events (no event matches two steps): every row matching a step starts
 *   an attempt, which takes each other step's first row after it within the window; the attempt's times sorted are
 *   its chain, and from there it is folded as an ordered one.
 *
 * - the persons of a step or of a funnel trends period (`/persons/funnel/`): the uuids of the persons asked for;
 * - breakdowns by all-events attribution (a person's rows of each value folded apart: grouped by person and value)
 *   and by step attribution (the values at that step of the best attempts; the person counts under each).
 *
 * An unordered funnel in which some event matches two steps (sharedStepRowSql finds one) is not folded here: the
 * local engine shares such events out between the steps by a maximum matching, so its events are still gathered
 * and folded by the local engine (funnels-clickhouse.ts).
 * No two events of a person at the same millisecond have a defined order on either engine; here they are in
 * (time, mask, value) order. Pure: SQL text and parameters out.
 */
import type { PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import type { Attribution } from '../funnel-query.js';
import { AUTO_BINS, MAX_BINS, type FunnelShape } from '../funnel.js';

/** The person uuid of events ingested without one (the export's placeholder): never a person. */
export const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/**
 * Which funnels this fold answers (null: it does), else what it leaves to the gathering path. `distinctSteps`: no
 * event matches two steps (each step is an event of its own name, or sharedStepRowSql found no such event).
 */
export function funnelFoldGap(shape: FunnelShape, breakdown: boolean, attribution: Attribution, distinctSteps: boolean, attributionStep: number | null = null): string | null {
  if (shape.order === 'unordered' && !distinctSteps) return 'an unordered funnel with an event matching two of its steps is folded from gathered events';
  if (breakdown && attribution === 'step' && (attributionStep === null || attributionStep < 0 || attributionStep >= shape.steps)) return 'step attribution without a step of the funnel is folded from gathered events';
  if (shape.steps + shape.exclusions.length > 31) return 'more than 31 steps and exclusions';
  return null;
}

/** How a breakdown value is attributed to a person: first or last touch, all events, or the value at step `step` (0-based). */
export interface FoldBreakdown {
  attribution: Attribution;
  step?: number | null;
}

/**
 * Whether some event of the funnel's rows matches two of its steps (one row: `[1]`; none: no rows). An unordered
 * funnel of steps that share an event name (actions, all events, a page view of one URL then of another) is folded
 * inside ClickHouse only when none does: then no two steps can take one event, and no matching is needed.
 */
export function sharedStepRowSql(gathered: PrintedClickHouse, shape: FunnelShape): PrintedClickHouse {
  return { sql: `SELECT 1 FROM (${gathered.sql}) AS gathered WHERE bitCount(bitAnd(c2, ${2 ** shape.steps - 1})) > 1 LIMIT 1`, params: gathered.params };
}

/** Funnel trends: the entrance periods' starts and the range's end (ms), and the steps a conversion goes from and to. */
export interface FoldPeriods {
  starts: readonly number[];
  end: number;
  fromStep: number;
  toStep: number;
}

/**
 * One row per breakdown value: `[value, kept, persons reaching exactly 1..steps steps, then per step s ≥ 1: the mean
 * of the persons' average seconds from step s - 1, their median, and how many persons reached step s]`. With
 * `kept`, the values outside it are summed in one row whose `kept` is 0 (the breakdown's "Other"); without, every
 * row's `kept` is 1. With `periods` (funnel trends), two more columns: per entrance period (index from 0), the
 * persons whose best attempt entered in it reached `fromStep` + 1 and `toStep` + 1 steps, as ([periods], [counts]).
 */
export function funnelFoldSql(
  gathered: PrintedClickHouse, shape: FunnelShape, breakdown: FoldBreakdown | null, kept: readonly string[] | null = null,
  periods: FoldPeriods | null = null,
): PrintedClickHouse {
  const S = shape.steps;
  const params = { ...gathered.params, fold_no_person: NO_PERSON, ...(kept ? { fold_kept: hexList(kept) } : {}) };
  const extra = periods ? periodColumns(periods) : [];
  const perPerson = personFoldSql(gathered, shape, breakdown, extra);
  const sums: string[] = [];
  for (let k = 1; k <= S; k++) sums.push(`countIf(best = ${k})`);
  for (let s = 1; s < S; s++) sums.push(`avgIf(averages[${s}], best > ${s})`, `quantileExactInclusiveIf(0.5)(medians[${s}], best > ${s})`, `countIf(best > ${s})`);
  if (periods) {
    for (const step of [periods.fromStep, periods.toStep]) sums.push(`sumMap(entered_periods, arrayMap(l -> toUInt64(l >= ${step + 1}), period_best))`);
  }
  const isKept = `has(arrayMap(x -> unhex(x), splitByChar(',', {fold_kept:String})), value)`;
  const [keptFlag, key] = kept ? [isKept, `if(${isKept}, value, '')`] : ['1', 'value'];
  const sql = `SELECT ${key} AS fold_value, ${keptFlag} AS fold_kept, ${sums.join(', ')} FROM (${perPerson}) WHERE best > 0 GROUP BY fold_value, fold_kept`;
  return { sql, params };
}

/**
 * Time to convert in one pass of the fold: each person's seconds from step `fromStep` to `toStep` (the sum of its
 * average step times), of the persons whose best attempt reached `toStep`, counted per bin. The bins are
 * convertBins's (src/domain/analytics/funnel.ts), worked out over the persons' range by window functions: one row
 * per bin `[bin, persons, all persons, least, most, sum of seconds]` (no rows: no one converted).
 */
export function funnelTimesSql(
  gathered: PrintedClickHouse, shape: FunnelShape, breakdown: FoldBreakdown | null, fromStep: number, toStep: number, binCount: number | null,
): PrintedClickHouse {
  const params = { ...gathered.params, fold_no_person: NO_PERSON };
  const seconds = `arraySum(arraySlice(averages, ${fromStep + 1}, ${toStep - fromStep}))`;
  // All-events attribution counts a person's time once per value (its rows of each value are a funnel of their own).
  const perPerson = personFoldSql(gathered, shape, partitioned(breakdown), [`${seconds} AS seconds`]);
  const ranged = `SELECT seconds, min(seconds) OVER () AS lo, max(seconds) OVER () AS hi, count() OVER () AS n, sum(seconds) OVER () AS total FROM (${perPerson}) WHERE best > ${toStep}`;
  const count = binCountSql(binCount, 'n');
  const width = `if(ceil((hi - lo) / bin_count) = 0, 60, ceil((hi - lo) / bin_count))`;
  const binned = `SELECT *, toInt64(${count}) AS bin_count, ${width} AS width, least(bin_count, toInt64(floor((seconds - floor(lo)) / width))) AS bin FROM (${ranged})`;
  return { sql: `SELECT bin, count(), any(n), any(lo), any(hi), any(total) FROM (${binned}) GROUP BY bin`, params };
}

/**
 * Funnel trends: each attempt's entrance period (-1 outside the periods: as BucketIndex.of), the periods some
 * attempt entered in, and per such period the longest attempt that entered in it (`period_best`).
 */
function periodColumns(periods: FoldPeriods): string[] {
  const starts = `[${periods.starts.map((t) => t.toFixed(0)).join(',')}]::Array(Float64)`;
  const periodOf = (t: string) => periods.starts.length === 0 ? '-1'
    : `if(${t} < ${periods.starts[0]!.toFixed(0)} OR ${t} > ${periods.end.toFixed(0)}, -1, toInt64(arrayCount(x -> x <= ${t}, ${starts})) - 1)`;
  return [
    `arrayMap(t -> ${periodOf('t')}, start_ts) AS attempt_periods`,
    'arrayFilter(p -> p >= 0, arrayDistinct(arrayFilter((p, l) -> l > 0, attempt_periods, attempt_steps))) AS entered_periods',
    'arrayMap(p -> arrayMax(arrayMap((q, l) -> if(q = p, l, 0), attempt_periods, attempt_steps)), entered_periods) AS period_best',
  ];
}

/**
 * Which persons `/persons/funnel/` lists: those whose best attempt reached exactly one of `levels` steps; or, in
 * funnel trends, those whose longest attempt entering in period `period` reached `toStep` + 1 steps, or with
 * `dropOff` reached `fromStep` + 1 steps but not `toStep` + 1.
 */
export type FunnelPersonsOf = { levels: readonly number[] } | { periods: FoldPeriods; period: number; dropOff: boolean };

/**
 * The persons of a step (or of a funnel trends period): one row `[person uuid, steps its best attempt reached, its
 * breakdown value]` per person `of` names and, with `value`, whose breakdown value is that one.
 */
export function funnelPersonsSql(
  gathered: PrintedClickHouse, shape: FunnelShape, breakdown: FoldBreakdown | null, of: FunnelPersonsOf, value: string | null,
): PrintedClickHouse {
  const params: Record<string, string> = { ...gathered.params, fold_no_person: NO_PERSON };
  const extra = ['toString(c0) AS person_uuid'];
  let where: string[];
  if ('levels' in of) {
    const wanted = of.levels.filter((k) => Number.isInteger(k) && k >= 1 && k <= shape.steps);
    where = [wanted.length === 0 ? 'false' : `best IN (${wanted.join(', ')})`];
  } else {
    const { fromStep, toStep } = of.periods;
    extra.push(...periodColumns(of.periods), `arrayMax(arrayMap((q, l) -> if(q = ${of.period}, l, 0), attempt_periods, attempt_steps)) AS period_reached`);
    // A start that is none of the periods' (-1) names no period: attempts outside the periods are -1 too.
    where = [of.period < 0 ? 'false' : of.dropOff ? `period_reached >= ${fromStep + 1} AND period_reached < ${toStep + 1}` : `period_reached >= ${toStep + 1}`];
  }
  const perPerson = personFoldSql(gathered, shape, value !== null ? breakdown : partitioned(breakdown), extra);
  if (value !== null) {
    params.fold_value = value;
    where.push('value = {fold_value:String}');
  }
  return { sql: `SELECT person_uuid, best, value FROM (${perPerson}) WHERE ${where.join(' AND ')}`, params };
}

/**
 * A breakdown under which one person may count under several values (all-events attribution: its rows of each value;
 * step attribution: each value its best attempts have at the step), else null: the others only label a person.
 */
function partitioned(breakdown: FoldBreakdown | null): FoldBreakdown | null {
  return breakdown?.attribution === 'all_events' || breakdown?.attribution === 'step' ? breakdown : null;
}

/** convertBins's count of bins for `persons` (an expression), in integers as it works it out. */
export function binCountSql(binCount: number | null, persons: string): string {
  return binCount !== null ? String(Math.min(MAX_BINS, Math.max(1, binCount)))
    : `if(${persons} > ${AUTO_BINS.most ** 3}, ${AUTO_BINS.most}, greatest(${AUTO_BINS.least}, arrayFirst(k -> k * k * k >= ${persons}, range(1, ${AUTO_BINS.most + 1}))))`;
}

/** "No such row" for times carried along a person's rows: later than any event. */
const NONE = '1e300';

/**
 * The per-person fold: one row per person with its events (`ev`, `ts`, `mask`), per attempt (one per row matching
 * step 0) its start time (`start_ts`), the time of its last step (`final_ts`) and the steps it reached, 0 when an
 * exclusion drops it (`attempt_steps`), the steps of the best (`best`), their mean and median seconds per step
 * (`averages`, `medians`), its breakdown value (`value`) and `extra` columns over those. With `names` and no
 * breakdown, each event's third member (`ev`'s `.3`) is its name (the gathered rows' fourth column) rather than ''.
 *
 * Every array is aligned with the person's rows (or, filtered, with its attempts) and every lambda reads only its
 * own arguments: a lambda that indexes another array (`ts[c[1]]`) has ClickHouse copy that array for each element,
 * which made the fold quadratic in a person's events (measured at 10M events: 7 s of an 11.7 s funnel). So an
 * attempt's step times are carried rather than looked up: `onChain(V, s)[r]` is V at the row of step s of the
 * attempt started at row r, built from the last step back by reverse fills ("V at the first row of step k at or
 * after i"); a value missing at a row is filled from the next row, which is right because every carried value
 * only grows along the rows (times, positions of later steps).
 */
export function personFoldSql(gathered: PrintedClickHouse, shape: FunnelShape, breakdown: FoldBreakdown | null, extra: readonly string[], names = false): string {
  const S = shape.steps;
  const W = shape.windowMs;
  const stepBits = 2 ** S - 1;
  const columns: string[] = [];
  const column = (name: string, expr: string) => {
    columns.push(`${expr} AS ${name}`);
    return name;
  };
  const fill = (expr: string) => `arrayReverseFill(x -> x < ${NONE}, ${expr})`;
  const shift = (expr: string) => `arrayPushBack(arrayPopFront(${expr}), ${NONE})`;
  const onBit = (bit: number, expr: string) => `arrayMap((m, v) -> if(bitTest(m, ${bit}), v, ${NONE}), mask, ${expr})`;
  /** Row r's value of `name` shifted by `by` rows (`fillValue` past the end). */
  const ahead = (name: string, by: number, fillValue: string) => (by === 0 ? name : `arrayResize(arraySlice(${name}, ${by + 1}), n, ${fillValue})`);
  /** Ordered funnels: `v` at the row of step s of the attempt started at each row. */
  const onChain = (v: string, s: number, tag: string): string => {
    if (s === 0) return v;
    let a = column(`${tag}_${s}_${s}`, fill(onBit(s, v)));
    for (let k = s - 1; k >= 1; k--) a = column(`${tag}_${s}_${k}`, fill(onBit(k, shift(a))));
    return column(`${tag}_${s}`, shift(a));
  };

  // All-events attribution: the value is part of the partition (the local engine folds each value's rows of a person
  // apart), so the rows are grouped by person and value.
  const byValue = breakdown?.attribution === 'all_events';
  const atStep = breakdown?.attribution === 'step' ? breakdown.step ?? null : null;
  const value = !breakdown || atStep !== null ? `''` : byValue ? 'toString(c3)' : breakdown.attribution === 'last_touch'
    ? `arrayLast(x -> bitAnd(x.2, ${stepBits}) != 0 AND x.3 != '', ev).3`
    : `arrayFirst(x -> bitAnd(x.2, ${stepBits}) != 0 AND x.3 != '', ev).3`;
  column('ev', `arraySort(groupArray((toFloat64(c1), toUInt32(c2), ${breakdown || names ? 'toString(c3)' : `''`})))`);
  column('ts', 'arrayMap(x -> x.1, ev)');
  column('mask', 'arrayMap(x -> x.2, ev)');
  column('n', 'length(ev)');

  // Unordered (steps of distinct events): per row, per step other than the row's own, `v` at the step's first row
  // after it within the window (NONE: none), with `own` at the row itself, sorted: the attempt's chain. Rows never
  // match two steps, so no two steps take one row. `v` grows along the rows, so sorting by it sorts by time.
  const nextTs: string[] = [];
  const unorderedChain = (tag: string, own: string, v: string): string => {
    if (nextTs.length === 0) for (let s = 0; s < S; s++) nextTs.push(column(`next_ts_${s}`, shift(fill(onBit(s, 'ts')))));
    const values = v === 'ts' ? [] : Array.from({ length: S }, (_, s) => column(`${tag}_next_${s}`, shift(fill(onBit(s, v)))));
    const value = (s: number) => (v === 'ts' ? `u${s}` : `a${s}`);
    const members = nextTs.map((_, s) => `if(bitTest(m, ${s}) OR u${s} > t + ${W}, ${NONE}, ${value(s)})`);
    const args = ['o', 't', 'm', ...nextTs.map((_, s) => `u${s}`), ...values.map((_, s) => `a${s}`)];
    return column(`${tag}_chain`, `arrayMap((${args.join(', ')}) -> arraySort([o, ${members.join(', ')}]), ${[own, 'ts', 'mask', ...nextTs, ...values].join(', ')})`);
  };
  // Per row as an attempt's start: the time of each later step (NONE: not reached in any window).
  const stepTimes: string[] = ['ts'];
  const chain = shape.order === 'unordered' ? unorderedChain('step_ts', 'ts', 'ts') : null;
  for (let s = 1; s < S; s++) {
    stepTimes.push(chain !== null ? column(`step_ts_${s}`, `arrayMap(c -> c[${s + 1}], ${chain})`)
      : shape.order === 'strict'
        // Strict: step s is the s-th row after the start, when every row between matched its step.
        ? column(`step_ts_${s}`, `arrayMap((p, m, t) -> if(p < ${NONE} AND bitTest(m, ${s}), t, ${NONE}), ${stepTimes[s - 1]}, ${ahead('mask', s, '0')}, ${ahead('ts', s, NONE)})`)
        : onChain('ts', s, 'step_ts'));
  }
  // Per exclusion: the time of its first row later than the guarded step's time (NONE: none).
  const exclusionTimes = shape.exclusions.map(({ bit, from }, e) => {
    const first = column(`exclusion_${e}_first`, fill(`arrayMap((m, t) -> if(bitTest(m, ${bit}), t, ${NONE}), mask, ts)`));
    // At each row, from the first row of a later time on (the last row of each time carries the next row's value).
    const later = column(`exclusion_${e}_later`, fill(`arrayMap((t, u, v) -> if(t != u, v, ${NONE}), ts, ${shift('ts')}, ${shift(first)})`));
    if (shape.order === 'unordered') return column(`exclusion_${e}_at`, `arrayMap(c -> c[${from + 1}], ${unorderedChain(`exclusion_${e}`, later, later)})`);
    return shape.order === 'strict' ? column(`exclusion_${e}_at`, ahead(later, from, NONE)) : onChain(later, from, `exclusion_${e}_at`);
  });

  // Per attempt (rows matching step 0), the steps reached within the window (times only grow along the steps, so
  // the steps within it are a prefix), 0 when an exclusion row lies strictly between the steps it guards.
  const started = (name: string) => shape.order === 'unordered'
    ? `arrayFilter((x, m) -> bitAnd(m, ${stepBits}) != 0, ${name}, mask)`
    : `arrayFilter((x, m) -> bitTest(m, 0), ${name}, mask)`;
  const args = [...stepTimes.map((_, s) => `t${s}`), ...shape.exclusions.map((_, e) => `x${e}`)];
  const arrays = [...stepTimes.map(started), ...exclusionTimes.map(started)];
  const reached = `toUInt32(1${stepTimes.slice(1).map((_, i) => ` + (t${i + 1} <= t0 + ${W})`).join('')})`;
  const dropped = shape.exclusions.map(({ from, to }, e) => `(${reached} > ${from} AND x${e} < if(${reached} > ${to}, t${to}, t${from} + ${W}))`);
  column('start_ts', started('ts'));
  const stepsExpr = dropped.length === 0 ? reached : `if(${dropped.join(' OR ')}, toUInt32(0), ${reached})`;
  column('attempt_steps', `arrayMap((${args.join(', ')}) -> ${stepsExpr}, ${arrays.join(', ')})`);
  column('best', 'arrayMax(attempt_steps)');
  // Per attempt, the time of its last step (read by correlation: the first best attempt's, when it converted).
  column('final_ts', started(stepTimes[S - 1]!));
  // Per step s ≥ 1 the best attempts' seconds from step s - 1 (empty past the steps reached).
  const seconds = (s: number) => `if(${s} < best, arrayFilter((d, l) -> l = best, arrayMap((a, b) -> (b - a) / 1000, ${started(stepTimes[s - 1]!)}, ${started(stepTimes[s]!)}), attempt_steps), [])`;
  const times = Array.from({ length: S - 1 }, (_, i) => column(`times_${i + 1}`, seconds(i + 1)));
  column('averages', `[${times.map((t) => `arrayAvg(${t})`).join(', ')}]::Array(Float64)`);
  column('medians', `[${times.map((t) => `arrayReduce('quantileExactInclusive(0.5)', ${t})`).join(', ')}]::Array(Float64)`);
  if (atStep === null) {
    column('value', value);
    return `SELECT ${[...columns, ...extra].join(', ')} FROM (${gathered.sql}) AS gathered WHERE c0 != toUUID({fold_no_person:String}) GROUP BY c0${byValue ? ', c3' : ''}`;
  }
  // Step attribution: the values of the rows at step `atStep` of the best attempts (the person counts under each;
  // under '' when no best attempt reached it). The row of that step is carried as the step times are (its index
  // grows along the rows too); the rows' values are then picked without indexing: the best attempts' rows, marked,
  // are sorted in among the person's rows, and a row right after a mark of its own index is picked.
  column('idx', 'arrayMap(i -> toFloat64(i), arrayEnumerate(ev))');
  const stepRow = atStep === 0 ? 'idx'
    : shape.order === 'strict' ? column('step_row', ahead('idx', atStep, NONE))
      : shape.order === 'unordered' ? column('step_row', `arrayMap(c -> c[${atStep + 1}], ${unorderedChain('step_row', 'idx', 'idx')})`)
        : onChain('idx', atStep, 'step_row');
  column('best_rows', `if(best > ${atStep}, arrayFilter((r, l) -> l = best, ${started(stepRow)}, attempt_steps), [])`);
  column('marked', `arraySort(arrayConcat(arrayMap((i, x) -> (i, 1, x.3), idx, ev), arrayMap(r -> (r, 0, ''), best_rows)))`);
  column('step_values', `arrayDistinct(arrayMap(c -> c.3, arrayFilter((c, p) -> c.2 = 1 AND p.2 = 0 AND p.1 = c.1, marked, arrayPushFront(arrayPopBack(marked), (0., 0, '')))))`);
  const inner = `SELECT ${[...columns, ...extra].join(', ')} FROM (${gathered.sql}) AS gathered WHERE c0 != toUUID({fold_no_person:String}) GROUP BY c0`;
  return `SELECT *, arrayJoin(if(empty(step_values), [''], step_values)) AS value FROM (${inner})`;
}

/** What one row of funnelFoldSql says of a breakdown value. */
export interface FoldedValue {
  value: string;
  kept: boolean;
  /** reached[k]: persons whose best attempt reached exactly k steps (k ≥ 1; reached[0] is 0). */
  reached: number[];
  /** Per step s ≥ 1 (index s - 1): the mean and median of the persons' average seconds, null when no one reached it. */
  averages: (number | null)[];
  medians: (number | null)[];
  /** Funnel trends: per entrance period, persons reaching fromStep + 1 and toStep + 1 steps (empty without periods). */
  periodFrom: number[];
  periodTo: number[];
}

export function foldedValueOf(row: readonly unknown[], steps: number, periods = 0): FoldedValue {
  const reached = [0];
  for (let k = 1; k <= steps; k++) reached.push(Number(row[1 + k]));
  const averages: (number | null)[] = [];
  const medians: (number | null)[] = [];
  for (let s = 1; s < steps; s++) {
    const at = 2 + steps + (s - 1) * 3;
    const reachedStep = Number(row[at + 2]);
    averages.push(reachedStep > 0 ? Number(row[at]) : null);
    medians.push(reachedStep > 0 ? Number(row[at + 1]) : null);
  }
  const perPeriod = (column: unknown): number[] => {
    const out = new Array<number>(periods).fill(0);
    const [keys, counts] = (column ?? [[], []]) as [unknown[], unknown[]];
    keys.forEach((k, i) => (out[Number(k)] = Number(counts[i])));
    return out;
  };
  const at = 2 + steps + (steps - 1) * 3;
  return {
    value: String(row[0] ?? ''), kept: Number(row[1]) === 1, reached, averages, medians,
    periodFrom: periods > 0 ? perPeriod(row[at]) : [], periodTo: periods > 0 ? perPeriod(row[at + 1]) : [],
  };
}

/**
 * The values as one String parameter: their UTF-8 bytes in hex, comma-separated (split and unhex'ed in the query).
 * Hex has nothing the client's or the server's unescaping of a parameter would touch, and no commas.
 */
export function hexList(values: readonly string[]): string {
  const utf8 = new TextEncoder();
  return values.map((v) => Array.from(utf8.encode(v), (b) => b.toString(16).padStart(2, '0')).join('')).join(',');
}
