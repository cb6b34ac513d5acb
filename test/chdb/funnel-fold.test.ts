// A funnel's steps folded inside ClickHouse (src/domain/analytics/clickhouse/funnel-fold-sql.ts) against the local
// engine's fold (personFunnel through funnelReducer, ranked and cut into "Other" as the answer is): generated persons'
// events, every shape the fold answers (ordered, strict, and unordered of distinct events; windows, exclusions,
// breakdowns by first and last touch, a breakdown limit), run by chdb over the same rows, must give the same persons per step and the same mean and
// median conversion times. The fold is the local engine's definition written with arrays: this is where the two
// are held to each other, case by case.
import t from 'tap';
import { chdbRows, foldRows, gatheredOf, HOUR, personUuid, personsOfRows, ROWS_FROM, type FoldRow } from '../helpers/fold-rows.js';
import { binCountSql, foldedValueOf, funnelFoldGap, funnelFoldSql, funnelPersonsSql, funnelTimesSql, sharedStepRowSql } from '../../src/domain/analytics/clickhouse/funnel-fold-sql.js';
import type { Attribution } from '../../src/domain/analytics/funnel-query.js';
import { binOf, convertBins, type FunnelShape } from '../../src/domain/analytics/funnel.js';
import { funnelReducer, rankedValueStats, rankValues, stepsSummary, timeToConvertOf, type FunnelParams, type StepsSummary } from '../../src/worker/analytics/funnels.js';
import { nearlyEqual } from '../helpers/insight-compare.js';
import { Random } from '../helpers/fuzz.js';

type Row = FoldRow;

interface Case {
  name: string;
  shape: FunnelShape;
  /** `step`: the step whose value step attribution takes (0-based). */
  breakdown: { attribution: Attribution; limit: number; step?: number } | null;
}

const VALUES = ['', 'Chrome', 'Safari', 'Firefox', "O'Neil \\ Edge"];

function onLocal(rows: Row[], c: Case): StepsSummary[] {
  return rankedValueStats(localPartial(rows, c), c.breakdown?.limit ?? Infinity).map(([v, s]) => stepsSummary(c.breakdown ? v : '', s));
}

/** The local engine's sums (with entrance periods and the steps a conversion goes from and to, for trends). */
function localPartial(rows: Row[], c: Case, fromStep = 0, toStep = 0, periods: FunnelParams['periods'] = null, persons = false) {
  const params: FunnelParams = {
    shape: c.shape, attribution: c.breakdown?.attribution ?? 'first_touch', attributionStep: c.breakdown?.step ?? null, breakdown: c.breakdown !== null,
    periods, persons, fromStep, toStep,
  };
  const reducer = funnelReducer(params);
  const out = reducer.empty();
  const values = [...VALUES];
  let pid = 0;
  for (const mine of personsOfRows(rows)) {
    reducer.add(out, {
      pid: ++pid, n: mine.length, ts: Float64Array.from(mine, (e) => e[1]), mask: Uint32Array.from(mine, (e) => e[2]),
      value: Int32Array.from(mine, (e) => (e[3] === '' ? -1 : values.indexOf(e[3]))), values, name: new Int32Array(mine.length).fill(-1), names: [],
    });
  }
  return out;
}

/** The fold run by chdb over `rows` as the gathered query's answer, ranked and cut as funnels-clickhouse.ts does. */
function onClickHouse(rows: Row[], c: Case): StepsSummary[] {
  const gathered = gatheredOf(rows);
  const run = (kept: string[] | null) => {
    return chdbRows(funnelFoldSql(gathered, c.shape, c.breakdown, kept)).map((row) => foldedValueOf(row, c.shape.steps));
  };
  const ranked = rankValues(run(null));
  const limit = c.breakdown?.limit ?? Infinity;
  if (ranked.length <= limit) return ranked;
  const kept = ranked.slice(0, limit);
  const other = run(kept.map((v) => v.value)).find((v) => !v.kept);
  return other ? [...kept, { ...other, value: 'Other' }] : kept;
}

/** Numbers compared to a relative 1e-9 (sums in another order), the rest exactly. */
function same(a: StepsSummary[], b: StepsSummary[]): string | null {
  if (a.length !== b.length) return `${a.length} values against ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i]!, b[i]!];
    if (x.value !== y.value) return `value ${i}: ${x.value} against ${y.value}`;
    if (x.reached.join() !== y.reached.join()) return `${x.value}: reached ${x.reached} against ${y.reached}`;
    for (const key of ['averages', 'medians'] as const) {
      for (let s = 0; s < x[key].length; s++) {
        const [u, v] = [x[key][s]!, y[key][s]!];
        if (u === null || v === null ? u !== v : !nearlyEqual(u, v)) return `${x.value}: ${key}[${s}] ${u} against ${v}`;
      }
    }
  }
  return null;
}

const shape = (steps: number, order: 'ordered' | 'strict' | 'unordered', windowH: number, exclusions: [from: number, to: number][] = []): FunnelShape => ({
  steps, order, windowMs: windowH * HOUR, exclusions: exclusions.map(([from, to], i) => ({ bit: steps + i, from, to })),
});

const CASES: Case[] = [
  { name: 'ordered, 2 steps, 14 days', shape: shape(2, 'ordered', 14 * 24), breakdown: null },
  { name: 'ordered, 3 steps, 14 days', shape: shape(3, 'ordered', 14 * 24), breakdown: null },
  { name: 'ordered, 4 steps, 5-hour window', shape: shape(4, 'ordered', 5), breakdown: null },
  { name: 'strict, 3 steps', shape: shape(3, 'strict', 14 * 24), breakdown: null },
  { name: 'strict, 2 steps, 1-hour window', shape: shape(2, 'strict', 1), breakdown: null },
  { name: 'ordered, exclusion between steps 0 and 1', shape: shape(3, 'ordered', 14 * 24, [[0, 1]]), breakdown: null },
  { name: 'ordered, exclusion over the funnel, 10-hour window', shape: shape(3, 'ordered', 10, [[0, 2]]), breakdown: null },
  { name: 'strict, two exclusions', shape: shape(3, 'strict', 14 * 24, [[0, 1], [1, 2]]), breakdown: null },
  { name: 'breakdown, first touch', shape: shape(3, 'ordered', 14 * 24), breakdown: { attribution: 'first_touch', limit: 25 } },
  { name: 'breakdown, last touch, exclusion', shape: shape(3, 'ordered', 24, [[1, 2]]), breakdown: { attribution: 'last_touch', limit: 25 } },
  { name: 'breakdown limit 2 ("Other")', shape: shape(3, 'ordered', 14 * 24), breakdown: { attribution: 'first_touch', limit: 2 } },
  { name: 'strict breakdown limit 1, last touch', shape: shape(2, 'strict', 14 * 24), breakdown: { attribution: 'last_touch', limit: 1 } },
  { name: 'unordered, 2 steps', shape: shape(2, 'unordered', 14 * 24), breakdown: null },
  { name: 'unordered, 3 steps, 14 days', shape: shape(3, 'unordered', 14 * 24), breakdown: null },
  { name: 'unordered, 4 steps, 5-hour window', shape: shape(4, 'unordered', 5), breakdown: null },
  { name: 'unordered, exclusion between steps 0 and 1', shape: shape(3, 'unordered', 14 * 24, [[0, 1]]), breakdown: null },
  { name: 'unordered, exclusions over the funnel and 1-2, 10-hour window', shape: shape(3, 'unordered', 10, [[0, 2], [1, 2]]), breakdown: null },
  { name: 'breakdown, all events, exclusion', shape: shape(3, 'ordered', 14 * 24, [[0, 2]]), breakdown: { attribution: 'all_events', limit: 25 } },
  { name: 'unordered breakdown limit 2, all events', shape: shape(3, 'unordered', 14 * 24), breakdown: { attribution: 'all_events', limit: 2 } },
  { name: 'breakdown, step 1', shape: shape(3, 'ordered', 14 * 24), breakdown: { attribution: 'step', limit: 25, step: 1 } },
  { name: 'breakdown, step 0, exclusion, 10-hour window', shape: shape(3, 'ordered', 10, [[0, 2]]), breakdown: { attribution: 'step', limit: 25, step: 0 } },
  { name: 'strict breakdown limit 2, step 1', shape: shape(3, 'strict', 14 * 24), breakdown: { attribution: 'step', limit: 2, step: 1 } },
  { name: 'unordered breakdown, step 2', shape: shape(3, 'unordered', 14 * 24), breakdown: { attribution: 'step', limit: 25, step: 2 } },
  { name: 'unordered breakdown limit 2, last touch', shape: shape(3, 'unordered', 14 * 24), breakdown: { attribution: 'last_touch', limit: 2 } },
];

/** The case's generated persons (unordered funnels are folded for steps of distinct events only). */
const rowsFor = (c: Case, seed: number, persons: number) =>
  foldRows(new Random(seed), persons, c.shape.steps + c.shape.exclusions.length, VALUES, c.shape.order === 'unordered' ? c.shape.steps : null);

t.test('every shape the fold answers: the same steps as the local engine, over generated persons', async (t) => {
  for (const [k, c] of CASES.entries()) {
    t.equal(funnelFoldGap(c.shape, c.breakdown !== null, c.breakdown?.attribution ?? 'first_touch', true, c.breakdown?.step ?? null), null, `${c.name}: folded in ClickHouse`);
    for (const seed of [11 + k, 1000 + k]) {
      const rows = rowsFor(c, seed, 120);
      const local = onLocal(rows, c);
      const entered = local.reduce((a, v) => a + v.reached.reduce((x, y) => x + y, 0), 0);
      const converted = local.reduce((a, v) => a + v.reached[c.shape.steps]!, 0);
      t.ok(entered > 20 && converted > 0, `${c.name}, seed ${seed}: persons enter (${entered}) and convert (${converted})`);
      t.equal(same(onClickHouse(rows, c), local), null, `${c.name}, seed ${seed}: ClickHouse's fold is the local engine's`);
    }
  }
});

t.test('hand-made persons: one event fills one step; ties; excluded attempts; nobody', async (t) => {
  const p = personUuid;
  const c = (s: FunnelShape): Case => ({ name: '', shape: s, breakdown: null });
  const cases: [string, Row[], Case][] = [
    ['an event matching both steps fills one', [[p(1), 0, 3, '']], c(shape(2, 'ordered', 24))],
    ['two such events fill both', [[p(1), 0, 3, ''], [p(1), 60_000, 3, '']], c(shape(2, 'ordered', 24))],
    ['another event at the same instant is a later step', [[p(1), 0, 1, ''], [p(1), 0, 2, '']], c(shape(2, 'ordered', 24))],
    ['strict: an event between breaks the attempt', [[p(1), 0, 1, ''], [p(1), 1, 0, ''], [p(1), 2, 2, '']], c(shape(2, 'strict', 24))],
    ['the only attempt excluded: the person is not counted', [[p(1), 0, 1, ''], [p(1), 5, 4, ''], [p(1), 9, 2, '']], c(shape(2, 'ordered', 24, [[0, 1]]))],
    ['an exclusion at the step\'s own instant does not exclude', [[p(1), 0, 1, ''], [p(1), 0, 4, ''], [p(1), 9, 2, '']], c(shape(2, 'ordered', 24, [[0, 1]]))],
    ['a later attempt survives an excluded one', [[p(1), 0, 1, ''], [p(1), 5, 4, ''], [p(1), 6, 1, ''], [p(1), 9, 2, '']], c(shape(2, 'ordered', 24, [[0, 1]]))],
    ['past the window', [[p(1), 0, 1, ''], [p(1), HOUR + 1, 2, '']], c(shape(2, 'ordered', 1))],
    ['no one enters', [[p(1), 0, 2, ''], [p(2), 0, 0, '']], c(shape(2, 'ordered', 1))],
    ['unordered: the steps in reverse order convert', [[p(1), 0, 4, ''], [p(1), 1, 2, ''], [p(1), 2, 1, '']], c(shape(3, 'unordered', 24))],
    ['unordered: a step twice is one step', [[p(1), 0, 1, ''], [p(1), 1, 1, '']], c(shape(2, 'unordered', 24))],
    ['unordered: an exclusion between the first two of the chain drops it', [[p(1), 0, 2, ''], [p(1), 5, 4, ''], [p(1), 9, 1, '']], c(shape(2, 'unordered', 24, [[0, 1]]))],
  ];
  for (const [name, rows, k] of cases) t.equal(same(onClickHouse(rows, k), onLocal(rows, k)), null, name);
  t.same(onClickHouse([[p(1), 0, 1, ''], [p(1), 0, 4, ''], [p(1), 9, 2, '']], c(shape(2, 'ordered', 24, [[0, 1]]))).map((v) => v.reached), [[0, 0, 1]], 'and it converts');
  t.same(onClickHouse([[p(1), 0, 4, ''], [p(1), 1, 2, ''], [p(1), 2, 1, '']], c(shape(3, 'unordered', 24))).map((v) => v.reached), [[0, 0, 0, 1]], 'unordered in reverse: all three steps');
  t.same(onClickHouse([[p(1), 0, 2, ''], [p(1), 5, 4, ''], [p(1), 9, 1, '']], c(shape(2, 'unordered', 24, [[0, 1]]))).map((v) => v.reached), [[0, 1, 0]], 'unordered, excluded: the later start alone');
});

/** Entrance periods: 12-hour ones, then two uneven ones; the end cuts the data's last hours off. */
const T0 = ROWS_FROM;
const PERIODS = { starts: [...Array.from({ length: 6 }, (_, i) => T0 + i * 12 * HOUR), T0 + 80 * HOUR, T0 + 83 * HOUR], end: T0 + 90 * HOUR };

t.test('funnel trends: persons entering and converting per entrance period, as the local engine counts them', async (t) => {
  for (const [k, c] of CASES.entries()) {
    const rows = rowsFor(c, 500 + k, 120);
    const [fromStep, toStep] = k % 2 === 0 ? [0, c.shape.steps - 1] : [Math.min(1, c.shape.steps - 2), c.shape.steps - 1];
    const local = rankedValueStats(localPartial(rows, c, fromStep, toStep, PERIODS), c.breakdown?.limit ?? Infinity)
      .map(([v, s]) => [v, s.reached, s.periodFrom, s.periodTo]);
    const sql = funnelFoldSql(gatheredOf(rows), c.shape, c.breakdown, null, { ...PERIODS, fromStep, toStep });
    const partial = new Map(chdbRows(sql).map((row) => {
      const v = foldedValueOf(row, c.shape.steps, PERIODS.starts.length);
      return [v.value, { reached: v.reached, averages: [], medians: [], toConvert: [], persons: null, periodFrom: v.periodFrom, periodTo: v.periodTo, periodPersons: null }];
    }));
    const folded = rankedValueStats(partial, c.breakdown?.limit ?? Infinity).map(([v, s]) => [v, s.reached, s.periodFrom, s.periodTo]);
    t.ok(local.some(([, , from]) => (from as number[]).some((n) => n > 0)), `${c.name}: persons enter in some period`);
    t.same(folded, local, `${c.name}, steps ${fromStep} to ${toStep}: the same per period`);
  }
});

t.test('time to convert: the same bins and mean as the local engine', async (t) => {
  for (const [k, c] of CASES.filter((c) => c.shape.steps >= 2).entries()) {
    const rows = rowsFor(c, 900 + k, 150);
    const [fromStep, toStep] = [0, c.shape.steps - 1];
    const binCount = k % 3 === 0 ? 7 : null;
    const times = [...localPartial(rows, c, fromStep, toStep, PERIODS).values()].flatMap((s) => s.toConvert);
    const bins = convertBins(binCount, times.length, Math.min(...times), Math.max(...times));
    if (bins === null) {
      t.fail(`${c.name}: no one converted in the generated data`);
      continue;
    }
    const counts = new Array<number>(bins.count + 1).fill(0);
    for (const x of times) counts[binOf(bins, x)]!++;
    const local = timeToConvertOf(bins, counts, times.reduce((a, b) => a + b, 0) / times.length);

    const answer = chdbRows(funnelTimesSql(gatheredOf(rows), c.shape, c.breakdown, fromStep, toStep, binCount));
    const [, , n, least, most, sum] = answer[0]!.map(Number) as number[];
    const chBins = convertBins(binCount, n!, least!, most!)!;
    const chCounts = new Array<number>(chBins.count + 1).fill(0);
    for (const [bin, m] of answer) chCounts[Number(bin)] = Number(m);
    t.same(timeToConvertOf(chBins, chCounts, sum! / n!), local, `${c.name}${binCount ? `, ${binCount} bins` : ''}: ${times.length} persons converted`);
  }
});

t.test('the persons of a step: the local engine\'s, by steps reached and breakdown value', async (t) => {
  for (const [k, c] of CASES.entries()) {
    const rows = rowsFor(c, 700 + k, 120);
    // The local engine numbers persons from 1 in the rows' order.
    const uuids = [...new Set(rows.map((r) => r[0]))];
    const levels = [...new Set(k % 2 === 0 ? [c.shape.steps - 1, c.shape.steps] : [1, c.shape.steps - 1])];
    const value = c.breakdown ? 'Safari' : null;
    // "uuid reached[ value]": the value only when one is asked for (otherwise the fold does not work it out).
    const wanted = [...localPartial(rows, c, 0, 0, null, true)].filter(([v]) => value === null || v === value).flatMap(([v, s]) =>
      levels.flatMap((reached) => s.persons![reached]!.map((pid) => `${uuids[pid - 1]} ${reached}${value === null ? '' : ` ${v}`}`)));
    const got = chdbRows(funnelPersonsSql(gatheredOf(rows), c.shape, c.breakdown, { levels }, value)).map(([u, b, v]) => `${u} ${b}${value === null ? '' : ` ${v}`}`);
    t.ok(wanted.length > 0, `${c.name}: some persons reached ${levels}`);
    t.same(got.sort(), wanted.sort(), `${c.name}: the persons who reached ${levels} steps${value ? ` with ${value}` : ''}`);
  }
});

t.test('the persons of a funnel trends period: those who converted, those who dropped off', async (t) => {
  for (const [k, c] of CASES.entries()) {
    const rows = rowsFor(c, 800 + k, 120);
    const uuids = [...new Set(rows.map((r) => r[0]))];
    const [fromStep, toStep] = [0, c.shape.steps - 1];
    const value = c.breakdown ? 'Chrome' : null;
    const local = [...localPartial(rows, c, fromStep, toStep, PERIODS, true)].filter(([v]) => value === null || v === value).map(([, s]) => s);
    // The busiest period, so that both lists have persons.
    const period = PERIODS.starts.map((_, i) => i).sort((a, b) => local.reduce((n, s) => n + s.periodPersons![b]!.from.length, 0) - local.reduce((n, s) => n + s.periodPersons![a]!.from.length, 0))[0]!;
    for (const dropOff of [false, true]) {
      const wanted = local.flatMap((s) => {
        const pp = s.periodPersons![period]!;
        const converted = new Set(pp.to);
        return (dropOff ? pp.from.filter((x) => !converted.has(x)) : pp.to).map((pid) => uuids[pid - 1]!);
      });
      const of = { periods: { ...PERIODS, fromStep, toStep }, period, dropOff };
      const got = chdbRows(funnelPersonsSql(gatheredOf(rows), c.shape, c.breakdown, of, value)).map(([u]) => String(u));
      t.same(got.sort(), wanted.sort(), `${c.name}, period ${period}${value ? `, ${value}` : ''}: ${wanted.length} persons ${dropOff ? 'dropped off' : 'converted'}`);
    }
  }
});

t.test('the count of bins: the cube root of the persons, on both engines, at every edge', async (t) => {
  const persons = [1, 2, 26, 27, 28, 63, 64, 65, 124, 125, 126, 9_999, 205_379, 205_380, 215_999, 216_000, 216_001, 10_000_000];
  for (const n of persons) t.equal(convertBins(null, n, 0, 100)!.count, Math.min(60, Math.max(3, Math.ceil(Math.cbrt(n)))), `${n} persons: the cube root rounded up, 3-60`);
  const sql = `SELECT n, toInt64(${binCountSql(null, 'n')}) FROM (SELECT arrayJoin([${persons.join(', ')}]::Array(UInt64)) AS n)`;
  t.same(chdbRows({ sql, params: {} }).map(([n, c]) => [Number(n), Number(c)]), persons.map((n) => [n, convertBins(null, n, 0, 100)!.count]), 'ClickHouse counts the same bins');
  t.same([0, 1, 7, 90, 91].map((b) => binCountSql(b, 'n')), ['1', '1', '7', '90', '90'], 'asked for: 1-90');
});

t.test('an event matching two steps is found (an unordered funnel then gathers)', async (t) => {
  const p = '00000000-0000-0000-0000-000000000001';
  const s = shape(3, 'unordered', 24, [[0, 2]]);
  t.same(chdbRows(sharedStepRowSql(gatheredOf([[p, 0, 1, ''], [p, 1, 2 | 8, ''], [p, 2, 4, '']]), s)), [], 'a step and an exclusion on one event: none');
  t.same(chdbRows(sharedStepRowSql(gatheredOf([[p, 0, 1, ''], [p, 1, 2 | 4, '']]), s)).map((r) => Number(r[0])), [1], 'steps 1 and 2 on one event: found');
});

t.test('what the fold leaves to the gathered path is named', async (t) => {
  const s = shape(3, 'ordered', 24);
  t.match(funnelFoldGap({ ...s, order: 'unordered' }, false, 'first_touch', false), /an unordered funnel with an event matching two of its steps/);
  t.equal(funnelFoldGap({ ...s, order: 'unordered' }, false, 'first_touch', true), null, 'unordered of distinct events is folded');
  t.equal(funnelFoldGap(s, true, 'last_touch', false), null, 'by last touch');
  t.equal(funnelFoldGap(s, true, 'step', true, 1), null, 'step attribution is folded');
  t.match(funnelFoldGap(s, true, 'step', true, null), /step attribution without a step/);
  t.equal(funnelFoldGap(s, true, 'all_events', true), null, 'all-events attribution is folded');
  t.match(funnelFoldGap({ ...s, exclusions: Array.from({ length: 29 }, (_, i) => ({ bit: 3 + i, from: 0, to: 1 })) }, false, 'first_touch', true), /more than 31/);
});
