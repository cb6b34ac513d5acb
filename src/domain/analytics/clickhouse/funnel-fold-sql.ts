/**
 * A funnel's steps folded inside ClickHouse (issue 51): the rows funnelEventsSql gathers (person, ms, step bits,
 * breakdown value) grouped into one time-sorted array per person, each person's outcome worked out with ClickHouse's
 * own array functions, and only the sums per breakdown value sent back — what the steps answer shows, not events.
 *
 * The fold is the local engine's (src/domain/analytics/funnel.ts), written with arrays rather than loops:
 * - `nexts[b][i]`: the first row at or after row i whose mask has bit b (n + 1 when none), one reverse fill per bit,
 *   as the local engine's `nextRows` tables;
 * - every row matching step 0 starts an attempt; `arrayFold` over the steps extends it with the next row of each
 *   step after the previous step's row (ordered) or with the very next row (strict), while within the window from
 *   the start; one row fills at most one step, because each step looks strictly after the previous step's row;
 * - an attempt is dropped when an exclusion row lies strictly between the times of the steps it guards (the first
 *   exclusion row after the guarded step's time, found through `later`, the first row of a later time);
 * - the person's result is the longest attempt left; the conversion times are averaged, and their median taken,
 *   over every attempt of that length, as the local engine does;
 * - funnel trends: each attempt's entrance period, the longest attempt per period, summed per period (`sumMap`);
 * - time to convert: each person's seconds between the two steps, their range first, then counted per bin.
 *
 * Unordered funnels (a maximum matching of steps to events), step and all-events attribution and the persons of a
 * step are not folded here: their events are still gathered and folded by the local engine (funnels-clickhouse.ts).
 * No two events of a person at the same millisecond have a defined order on either engine; here they are in
 * (time, mask, value) order. Pure: SQL text and parameters out.
 */
import type { PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import type { Attribution } from '../funnel-query.js';
import type { FunnelShape } from '../funnel.js';

/** The person uuid of events ingested without one (the export's placeholder): never a person. */
const NO_PERSON = '00000000-0000-0000-0000-000000000000';

/** Which funnels this fold answers (null: it does), else what it leaves to the gathering path. */
export function funnelFoldGap(shape: FunnelShape, viz: string, breakdown: boolean, attribution: Attribution, persons: boolean): string | null {
  if (persons) return 'the persons of a step are listed from gathered events';
  if (shape.order === 'unordered') return 'unordered funnels are folded from gathered events';
  if (breakdown && attribution !== 'first_touch' && attribution !== 'last_touch') return `${attribution} attribution is folded from gathered events`;
  if (shape.steps + shape.exclusions.length > 31) return 'more than 31 steps and exclusions';
  return null;
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
  gathered: PrintedClickHouse, shape: FunnelShape, breakdown: { attribution: Attribution } | null, kept: readonly string[] | null = null,
  periods: FoldPeriods | null = null,
): PrintedClickHouse {
  const S = shape.steps;
  const params = { ...gathered.params, fold_no_person: NO_PERSON, ...(kept ? { fold_kept: hexList(kept) } : {}) };
  const extra: string[] = [];
  if (periods) {
    // The entrance period of each attempt left (-1 outside the periods: as BucketIndex.of), then per period the
    // longest attempt that entered in it.
    const starts = `[${periods.starts.map((t) => t.toFixed(0)).join(',')}]::Array(Float64)`;
    const periodOf = (t: string) => periods.starts.length === 0 ? '-1'
      : `if(${t} < ${periods.starts[0]!.toFixed(0)} OR ${t} > ${periods.end.toFixed(0)}, -1, toInt64(arrayCount(x -> x <= ${t}, ${starts})) - 1)`;
    extra.push(
      `arrayMap(c -> ${periodOf('ts[c[1]]')}, kept_attempts) AS attempt_periods`,
      'arrayFilter(p -> p >= 0, arrayDistinct(attempt_periods)) AS entered_periods',
      'arrayMap(p -> arrayMax(arrayMap((c, q) -> if(q = p, length(c), 0), kept_attempts, attempt_periods)), entered_periods) AS period_best',
    );
  }
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
 * Time to convert: each person's seconds from step `fromStep` to `toStep` (the sum of its average step times), of
 * the persons whose best attempt reached `toStep`. Without `bins`: one row `[persons, least, most, sum]`; with
 * them, one row per bin `[bin, persons]` (bin = min(count, floor((seconds - from) / width))).
 */
export function funnelTimesSql(
  gathered: PrintedClickHouse, shape: FunnelShape, fromStep: number, toStep: number, bins: { from: number; width: number; count: number } | null = null,
): PrintedClickHouse {
  const params = { ...gathered.params, fold_no_person: NO_PERSON };
  const seconds = `arraySum(arraySlice(averages, ${fromStep + 1}, ${toStep - fromStep}))`;
  const perPerson = personFoldSql(gathered, shape, null, [`${seconds} AS seconds`]);
  const sql = bins
    ? `SELECT least(${bins.count}, toInt64(floor((seconds - ${bins.from}) / ${bins.width}))) AS bin, count() FROM (${perPerson}) WHERE best > ${toStep} GROUP BY bin`
    : `SELECT count(), min(seconds), max(seconds), sum(seconds) FROM (${perPerson}) WHERE best > ${toStep}`;
  return { sql, params };
}

/**
 * The per-person fold: one row per person with its events (`ev`, `ts`, `mask`), its attempts left after the
 * exclusions (`kept_attempts`), the steps of the best (`best`), their mean and median seconds per step (`averages`,
 * `medians`), its breakdown value (`value`) and `extra` columns over those.
 */
function personFoldSql(gathered: PrintedClickHouse, shape: FunnelShape, breakdown: { attribution: Attribution } | null, extra: readonly string[]): string {
  const S = shape.steps;
  const bits = S + shape.exclusions.length;
  const W = shape.windowMs;
  const stepBits = 2 ** S - 1;
  // The next row of step s after the attempt's last row: ordered, the first such row; strict, the very next row.
  const next = shape.order === 'strict' ? 'toUInt32(r + s)' : 'nexts[s + 1][chain[-1] + 1]';
  const fits = shape.order === 'strict'
    ? `r + s <= n AND bitTest(mask[r + s], s) AND ts[r + s] <= ts[r] + ${W}`
    : `${next} <= n AND ts[${next}] <= ts[r] + ${W}`;
  const extend = `(chain, s) -> if(length(chain) = s AND ${fits}, arrayPushBack(chain, toUInt32(${next})), chain)`;
  // An exclusion row strictly after the guarded step's time and before the closing step's (or the window's end).
  const excluded = shape.exclusions.map(({ bit, from, to }) => {
    const x = `nexts[${bit + 1}][later[c[${from + 1}]]]`;
    const until = `if(length(c) > ${to}, ts[c[${to + 1}]], ts[c[${from + 1}]] + ${W})`;
    return `(length(c) > ${from} AND ${x} <= n AND ts[${x}] < ${until})`;
  });
  const value = !breakdown ? `''` : breakdown.attribution === 'last_touch'
    ? `arrayLast(x -> bitAnd(x.2, ${stepBits}) != 0 AND x.3 != '', ev).3`
    : `arrayFirst(x -> bitAnd(x.2, ${stepBits}) != 0 AND x.3 != '', ev).3`;
  const person = [
    `arraySort(groupArray((toFloat64(c1), toUInt32(c2), ${breakdown ? 'toString(c3)' : `''`}))) AS ev`,
    'arrayMap(x -> x.1, ev) AS ts',
    'arrayMap(x -> x.2, ev) AS mask',
    'toUInt32(length(ev)) AS n',
    `arrayMap(b -> arrayPushBack(arrayReverseFill(x -> x <= n, arrayMap(i -> toUInt32(if(bitTest(mask[i], b), i, n + 1)), range(1, n + 1))), toUInt32(n + 1)), range(0, ${bits})) AS nexts`,
    // later[i]: the first row of a later time than row i's (rows are in time order).
    ...(excluded.length > 0 ? [
      `arrayPushBack(arrayPopFront(arrayPushBack(arrayReverseFill(x -> x <= n, arrayMap(i -> toUInt32(if(i = 1 OR ts[i] != ts[i - 1], i, n + 1)), range(1, n + 1))), toUInt32(n + 1))), toUInt32(n + 1)) AS later`,
    ] : []),
    `arrayMap(r -> arrayFold(${extend}, range(1, ${S}), [toUInt32(r)]), arrayFilter(i -> bitTest(mask[i], 0), range(1, n + 1))) AS attempts`,
    `${excluded.length > 0 ? `arrayFilter(c -> NOT (${excluded.join(' OR ')}), attempts)` : 'attempts'} AS kept_attempts`,
    'arrayMax(arrayMap(c -> length(c), kept_attempts)) AS best',
    'arrayFilter(c -> length(c) = best, kept_attempts) AS bests',
    // Per step s ≥ 1 the best attempts' seconds from step s - 1 (empty past the steps reached).
    `arrayMap(s -> if(s < best, arrayMap(c -> (ts[c[s + 1]] - ts[c[s]]) / 1000, bests), []), range(1, ${S})) AS times`,
    'arrayMap(l -> arrayAvg(l), times) AS averages',
    `arrayMap(l -> arrayReduce('quantileExactInclusive(0.5)', l), times) AS medians`,
    `${value} AS value`,
    ...extra,
  ];
  return `SELECT ${person.join(', ')} FROM (${gathered.sql}) AS gathered WHERE c0 != '' AND c0 != {fold_no_person:String} GROUP BY c0`;
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
function hexList(values: readonly string[]): string {
  return values.map((v) => Buffer.from(v, 'utf8').toString('hex')).join(',');
}
