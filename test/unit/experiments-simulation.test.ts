/**
 * Error rates by simulation, with seeded samples (the same on every run). Each A/A experiment draws both arms from
 * one distribution, so every `significant` is a false positive. Bounds are 3 binomial standard deviations around the
 * expected rate over 1,000 experiments: √(0.05 · 0.95 / 1000) ≈ 0.0069 at 5 %, √(0.1 · 0.9 / 1000) ≈ 0.0095 at 10 %.
 */
import t from 'tap';
import {
  betaPosterior,
  compareBayesianPair,
  meanEstimate,
  meanPosterior,
  sequentialDifference,
  twoProportionZTest,
  welchTTest,
  type VariantEstimate,
} from '../../src/domain/experiments/index.js';
import { gaussianSource, Random, Sums } from '../helpers/seeded-samples.js';

const RUNS = 1000;
const binomialBound = (rate: number): number => 3 * Math.sqrt((rate * (1 - rate)) / RUNS);

function estimate(key: string, s: Sums): VariantEstimate {
  return meanEstimate({ key, exposures: s.n, number_of_samples: s.n, sum: s.sum, sum_squares: s.sumSquares });
}

t.test('A/A on normal data, 300 units per arm: false-positive rates', async (t) => {
  const gauss = gaussianSource(new Random(1_000_003));
  let welch = 0;
  let bayes = 0;
  for (let run = 0; run < RUNS; run++) {
    const control = new Sums();
    const test = new Sums();
    for (let i = 0; i < 300; i++) {
      control.add(10 + 3 * gauss());
      test.add(10 + 3 * gauss());
    }
    const c = estimate('control', control);
    const v = estimate('test', test);
    if (welchTTest(c, v).significant) welch++;
    if (compareBayesianPair(meanPosterior(c), meanPosterior(v)).significant) bayes++;
  }
  t.comment(`Welch at 5 %: ${welch / RUNS}; Bayesian (chance_to_win ≥ 0.95 or ≤ 0.05): ${bayes / RUNS}`);
  t.ok(Math.abs(welch / RUNS - 0.05) <= binomialBound(0.05), `Welch false-positive rate ${welch / RUNS} within 0.05 ± ${binomialBound(0.05).toFixed(4)}`);
  // The Bayesian rule fires on either tail at 5 %: about 10 % of A/A tests.
  t.ok(Math.abs(bayes / RUNS - 0.1) <= binomialBound(0.1), `Bayesian rate ${bayes / RUNS} within 0.10 ± ${binomialBound(0.1).toFixed(4)}`);
});

t.test('A/A on conversions (p = 0.2), 400 units per arm: false-positive rates', async (t) => {
  const random = new Random(2_000_003);
  let z = 0;
  let bayes = 0;
  for (let run = 0; run < RUNS; run++) {
    let sc = 0;
    let st = 0;
    for (let i = 0; i < 400; i++) {
      if (random.next() < 0.2) sc++;
      if (random.next() < 0.2) st++;
    }
    const control = { key: 'control', n: 400, successes: sc };
    const test = { key: 'test', n: 400, successes: st };
    if (twoProportionZTest(control, test).significant) z++;
    if (compareBayesianPair(betaPosterior(control), betaPosterior(test)).significant) bayes++;
  }
  t.comment(`two-proportion z at 5 %: ${z / RUNS}; Bayesian Beta model: ${bayes / RUNS}`);
  t.ok(Math.abs(z / RUNS - 0.05) <= binomialBound(0.05), `z-test false-positive rate ${z / RUNS} within 0.05 ± ${binomialBound(0.05).toFixed(4)}`);
  t.ok(Math.abs(bayes / RUNS - 0.1) <= binomialBound(0.1), `Bayesian rate ${bayes / RUNS} within 0.10 ± ${binomialBound(0.1).toFixed(4)}`);
});

/** Batches of 25 units per arm, looked at after each of 20 batches; the plan is the 1,000 units of the last look. */
function peekingRuns(seed: number, effect: number): { sequentialEver: number; fixedEver: number; sequentialFinalMiss: number } {
  const gauss = gaussianSource(new Random(seed));
  let sequentialEver = 0;
  let fixedEver = 0;
  let sequentialFinalMiss = 0;
  for (let run = 0; run < RUNS; run++) {
    const control = new Sums();
    const test = new Sums();
    let seq = false;
    let fixed = false;
    let last = null as ReturnType<typeof sequentialDifference> | null;
    let previous: number | undefined;
    for (let look = 0; look < 20; look++) {
      for (let i = 0; i < 25; i++) {
        control.add(10 + 3 * gauss());
        test.add(10 + effect + 3 * gauss());
      }
      const c = estimate('control', control);
      const v = estimate('test', test);
      last = sequentialDifference(c, v, { planned_sample_size: 1000, previous_p_value: previous });
      previous = last.p_value;
      const [lo, hi] = last.confidence_interval_absolute;
      if (lo > effect || hi < effect) seq = true;
      const [flo, fhi] = welchTTest(c, v).confidence_interval_absolute;
      if (flo > effect || fhi < effect) fixed = true;
    }
    if (seq) sequentialEver++;
    if (fixed) fixedEver++;
    if (effect !== 0 && !last!.significant) sequentialFinalMiss++;
  }
  return { sequentialEver: sequentialEver / RUNS, fixedEver: fixedEver / RUNS, sequentialFinalMiss: sequentialFinalMiss / RUNS };
}

t.test('continuous peeking: the confidence sequence keeps its coverage, fixed intervals do not', async (t) => {
  const aa = peekingRuns(3_000_017, 0);
  t.comment(`A/A, 20 looks: sequential interval ever excluded 0 in ${aa.sequentialEver} of runs, fixed 95 % interval in ${aa.fixedEver}`);
  t.ok(aa.sequentialEver <= 0.05 + binomialBound(0.05), `sequential: ${aa.sequentialEver} ≤ 0.05 + ${binomialBound(0.05).toFixed(4)}`);
  t.ok(aa.fixedEver > 0.12, `fixed intervals under peeking: ${aa.fixedEver}, well above 5 %`);
  t.ok(aa.fixedEver > aa.sequentialEver + 0.1, 'and clearly above the sequential interval');
  // With a real effect (0.3 standard deviations) the interval still covers the truth, and excludes 0 by the plan.
  const ab = peekingRuns(4_000_037, 0.9);
  t.comment(`A/B, effect 0.3 sd: sequential interval ever missed the effect in ${ab.sequentialEver}; not significant at the planned size in ${ab.sequentialFinalMiss}`);
  t.ok(ab.sequentialEver <= 0.05 + binomialBound(0.05), 'coverage of a non-zero effect');
  t.ok(ab.sequentialFinalMiss < 0.2, 'power at the planned size above 80 %');
});
