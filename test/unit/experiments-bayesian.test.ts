/**
 * The Bayesian comparison: the Gaussian model of the log lift computed by hand, conversions against the exact
 * probability that one Beta posterior exceeds another, and the probability of being best against a seeded Monte Carlo.
 */
import t from 'tap';
import {
  betaPosterior,
  compareBayesian,
  compareBayesianPair,
  lnBeta,
  meanEstimate,
  meanPosterior,
  normalCdf,
  probabilityBest,
  type Posterior,
} from '../../src/domain/experiments/index.js';
import { close } from '../helpers/approx.js';
import { gaussianSource, Random } from '../helpers/seeded-samples.js';

const Z975 = 1.959963984540054;

t.test('mean metric: chance to win and credible interval from the delta method on the log scale', async (t) => {
  const control = meanEstimate({ key: 'control', exposures: 1000, number_of_samples: 1000, sum: 10_000, sum_squares: 109_000 });
  const test = meanEstimate({ key: 'test', exposures: 1000, number_of_samples: 1000, sum: 10_400, sum_squares: 117_000 });
  // By hand: ȳ_c = 10, s²_c = (109000 − 10·10000)/999; ȳ_t = 10.4, s²_t = (117000 − 10.4·10400)/999.
  const vc = (109_000 - 100_000) / 999 / 1000;
  const vt = (117_000 - 10.4 * 10_400) / 999 / 1000;
  const m = Math.log(10.4 / 10);
  const s = Math.sqrt(vc / 100 + vt / 10.4 ** 2);
  const result = compareBayesianPair(meanPosterior(control), meanPosterior(test));
  close(t, result.chance_to_win, normalCdf(m / s), 1e-14, 'chance_to_win = Φ(m/s)');
  close(t, result.credible_interval![0], Math.exp(m - Z975 * s) - 1, 1e-13, 'credible interval, lower');
  close(t, result.credible_interval![1], Math.exp(m + Z975 * s) - 1, 1e-13, 'credible interval, upper');
  close(t, result.expected_lift!, 0.04, 1e-13, 'posterior median of the lift');
  close(t, result.credible_interval_absolute[1] - result.credible_interval_absolute[0], 2 * Z975 * Math.sqrt(vc + vt), 1e-12, 'absolute interval width');
  t.equal(result.significant, result.chance_to_win >= 0.95);
  t.comment(`chance_to_win ${result.chance_to_win.toFixed(4)}, interval [${result.credible_interval!.map((x) => x.toFixed(4)).join(', ')}]`);

  const reversed = compareBayesianPair({ ...meanPosterior(test), key: 'control' }, { ...meanPosterior(control), key: 'test' });
  close(t, reversed.chance_to_win, 1 - result.chance_to_win, 1e-14, 'swapping the variants gives 1 − chance_to_win');
  const tie = compareBayesianPair(meanPosterior(control), { ...meanPosterior(control), key: 'test' });
  t.equal(tie.chance_to_win, 0.5, 'identical variants: ½');
  t.equal(tie.significant, false);
});

t.test('significance threshold: ≥ 0.95 or ≤ 0.05', async (t) => {
  const base: Posterior = { key: 'control', mean: 1, variance: 0.01, log: { mean: 0, variance: 0.01 } };
  const at = (shift: number): ReturnType<typeof compareBayesianPair> =>
    compareBayesianPair(base, { key: 'test', mean: Math.exp(shift), variance: 0.01, log: { mean: shift, variance: 0.01 } });
  // chance = Φ(shift / √0.02): Φ⁻¹(0.95)·√0.02 = 0.2326.
  t.equal(at(0.24).significant, true, 'chance just above 0.95');
  t.equal(at(0.22).significant, false, 'chance just below 0.95');
  t.equal(at(-0.24).significant, true, 'chance just below 0.05 (very likely worse)');
  t.equal(compareBayesianPair(base, { ...base, key: 'test' }, { threshold: 0.5 }).significant, true, 'custom threshold');
});

t.test('means that are not positive: no log scale', async (t) => {
  const control: Posterior = { key: 'control', mean: -2, variance: 0.25, log: null };
  const test: Posterior = { key: 'test', mean: -1, variance: 0.25, log: null };
  const result = compareBayesianPair(control, test);
  close(t, result.chance_to_win, normalCdf(1 / Math.sqrt(0.5)), 1e-14, 'from the difference');
  t.equal(result.credible_interval, null, 'no relative interval over a negative control');
  const positiveControl = compareBayesianPair({ key: 'control', mean: 2, variance: 0.04, log: { mean: Math.log(2), variance: 0.01 } }, { key: 'test', mean: -0.5, variance: 0.04, log: null });
  t.ok(positiveControl.credible_interval !== null, 'delta-method ratio interval when only the test mean is not positive');
  close(t, positiveControl.expected_lift!, -1.25, 1e-14, 'ratio − 1');
});

/**
 * P(p_B > p_A) for independent Beta(αA, βA), Beta(αB, βB) with integer αB, as a finite sum
 * (E. Miller, "Formulas for Bayesian A/B testing", 2015):
 * Σ_{i<αB} B(αA + i, βA + βB) / ((βB + i) B(1 + i, βB) B(αA, βA)).
 */
function exactBetaWin(aA: number, bA: number, aB: number, bB: number): number {
  let total = 0;
  for (let i = 0; i < aB; i++) total += Math.exp(lnBeta(aA + i, bB + bA) - Math.log(bB + i) - lnBeta(1 + i, bB) - lnBeta(aA, bA));
  return total;
}

t.test('conversions: the Gaussian log-lift model against the exact Beta probability', async (t) => {
  const cases: [number, number, number, number, number][] = [
    // control successes, n, test successes, n, tolerance
    [10, 100, 15, 100, 0.005],
    [100, 1000, 120, 1000, 0.001],
    [1000, 10_000, 1050, 10_000, 1e-4],
    [500, 10_000, 430, 9_000, 2e-4],
  ];
  for (const [sc, nc, st, nt, tolerance] of cases) {
    const exact = exactBetaWin(1 + sc, 1 + nc - sc, 1 + st, 1 + nt - st);
    const result = compareBayesianPair(betaPosterior({ key: 'control', n: nc, successes: sc }), betaPosterior({ key: 'test', n: nt, successes: st }));
    t.comment(`${sc}/${nc} vs ${st}/${nt}: exact ${exact.toFixed(6)}, model ${result.chance_to_win.toFixed(6)}`);
    close(t, result.chance_to_win, exact, tolerance, `chance_to_win at ${sc}/${nc} vs ${st}/${nt}`);
    const observed = st / nt / (sc / nc) - 1;
    t.ok(result.credible_interval![0] < observed && observed < result.credible_interval![1], 'the interval contains the observed lift');
  }
  const posterior = betaPosterior({ key: 'control', n: 10, successes: 3 });
  close(t, posterior.mean, 4 / 12, 1e-15, 'Beta(4, 8) mean');
  close(t, posterior.variance, (4 * 8) / (144 * 13), 1e-15, 'Beta(4, 8) variance');
});

t.test('probability of being best', async (t) => {
  const posteriors: Posterior[] = [
    { key: 'control', mean: 10, variance: 0.04, log: null },
    { key: 'a', mean: 10.2, variance: 0.05, log: null },
    { key: 'b', mean: 10.25, variance: 0.09, log: null },
    { key: 'c', mean: 9.9, variance: 0.01, log: null },
  ];
  const best = probabilityBest(posteriors);
  close(t, best.reduce((a, b) => a + b, 0), 1, 1e-9, 'the probabilities add up to 1');
  // A seeded Monte Carlo of the same four Gaussians.
  const gauss = gaussianSource(new Random(20_240_601));
  const draws = 200_000;
  const wins = [0, 0, 0, 0];
  for (let i = 0; i < draws; i++) {
    let winner = 0;
    let top = -Infinity;
    posteriors.forEach((p, j) => {
      const x = p.mean + Math.sqrt(p.variance) * gauss();
      if (x > top) {
        top = x;
        winner = j;
      }
    });
    wins[winner]!++;
  }
  best.forEach((p, j) => close(t, p, wins[j]! / draws, 0.005, `P(best) of ${posteriors[j]!.key} against Monte Carlo`));
  t.comment(`quadrature ${best.map((p) => p.toFixed(4)).join(' ')}; Monte Carlo ${wins.map((w) => (w / draws).toFixed(4)).join(' ')}`);

  const equal = probabilityBest([0, 1, 2].map((i) => ({ key: `v${i}`, mean: 5, variance: 1, log: null })));
  equal.forEach((p) => close(t, p, 1 / 3, 1e-9, 'three identical variants: ⅓ each'));
  const pair = compareBayesian([
    { key: 'control', mean: 1, variance: 0.01, log: { mean: 0, variance: 0.01 } },
    { key: 'test', mean: 1.1, variance: 0.01, log: { mean: Math.log(1.1), variance: 0.01 } },
  ]);
  close(t, pair.variant_results[0]!.probability_best, pair.variant_results[0]!.chance_to_win, 1e-15, 'two variants: P(best) = chance_to_win');
  close(t, pair.baseline.probability_best, 1 - pair.variant_results[0]!.chance_to_win, 1e-15, "and the control's is the rest");
  const points = probabilityBest([
    { key: 'control', mean: 1, variance: 0, log: null },
    { key: 'a', mean: 2, variance: 0, log: null },
    { key: 'b', mean: 0, variance: 1, log: null },
  ]);
  close(t, points[1]!, normalCdf(2), 1e-12, 'point masses: P(a best) = P(b < 2)');
  t.equal(points[0], 0, 'a point mass below another is never best');
});
