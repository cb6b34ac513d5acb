/**
 * Frequentist tests on worked examples. Expected values are computed here from the raw observations with the closed
 * forms, without the implementation's helpers: the t tail probability by quadrature of the t density in the angle
 * θ = atan(t / √ν), where P(|T| > t) = ∫_θ^{π/2} cos^{ν−1} / ∫_0^{π/2} cos^{ν−1}.
 */
import t from 'tap';
import {
  ExperimentInputError,
  meanEstimate,
  twoProportionZTest,
  welchDegreesOfFreedom,
  welchTTest,
  type VariantEstimate,
} from '../../src/domain/experiments/index.js';
import { close } from '../helpers/approx.js';

function simpson(f: (x: number) => number, a: number, b: number, panels = 20_000): number {
  const h = (b - a) / panels;
  let sum = 0;
  for (let k = 0; k <= panels; k++) sum += (k === 0 || k === panels ? 1 : k % 2 === 1 ? 4 : 2) * f(a + k * h);
  return (sum * h) / 3;
}

/** P(|T_ν| > |t|) by quadrature, independent of the incomplete beta function. */
function twoSidedTail(tValue: number, df: number): number {
  const theta = Math.atan(Math.abs(tValue) / Math.sqrt(df));
  const g = (x: number): number => Math.cos(x) ** (df - 1);
  return simpson(g, theta, Math.PI / 2) / simpson(g, 0, Math.PI / 2);
}

function sufficient(key: string, ys: number[]): VariantEstimate {
  return meanEstimate({ key, exposures: ys.length, number_of_samples: ys.length, sum: ys.reduce((a, y) => a + y, 0), sum_squares: ys.reduce((a, y) => a + y * y, 0) });
}

t.test("Welch's t-test on a worked example", async (t) => {
  // Two small samples with clearly different spreads (control: 12 units, test: 9 units).
  const control = [19.2, 21.5, 18.7, 22.9, 20.1, 19.8, 23.4, 17.6, 20.9, 21.7, 18.3, 20.5];
  const test = [24.8, 19.1, 27.3, 22.6, 29.4, 21.0, 25.7, 18.9, 26.2];
  const mean = (ys: number[]): number => ys.reduce((a, y) => a + y, 0) / ys.length;
  const variance = (ys: number[]): number => {
    const m = mean(ys);
    return ys.reduce((a, y) => a + (y - m) ** 2, 0) / (ys.length - 1);
  };
  const vc = variance(control) / control.length;
  const vt = variance(test) / test.length;
  const difference = mean(test) - mean(control);
  const se = Math.sqrt(vc + vt);
  const expectedT = difference / se;
  const expectedDf = (vc + vt) ** 2 / (vc ** 2 / (control.length - 1) + vt ** 2 / (test.length - 1));
  const expectedP = twoSidedTail(expectedT, expectedDf);

  const result = welchTTest(sufficient('control', control), sufficient('test', test));
  t.comment(`t = ${result.statistic}, ν = ${result.degrees_of_freedom}, p = ${result.p_value}`);
  close(t, result.difference, difference, 1e-12, 'difference of means');
  close(t, result.statistic, expectedT, 1e-10, 't statistic');
  close(t, result.degrees_of_freedom!, expectedDf, 1e-9, 'Welch–Satterthwaite degrees of freedom');
  t.ok(expectedDf < control.length + test.length - 2, 'fewer degrees of freedom than the pooled test');
  close(t, result.p_value, expectedP, 1e-9, 'two-sided p-value (quadrature)');
  t.ok(result.p_value < 0.05 && result.significant, 'significant at 5 %');
  // The interval's quantile q has a two-sided tail of exactly 5 % at ν.
  const [lo, hi] = result.confidence_interval_absolute;
  close(t, (lo + hi) / 2, difference, 1e-12, 'interval centred on the difference');
  const q = (hi - lo) / 2 / se;
  close(t, twoSidedTail(q, expectedDf), 0.05, 1e-9, 'interval half-width is the t(0.975, ν) quantile times se');
  // Relative difference and its delta-method interval.
  const mc = mean(control);
  const mt = mean(test);
  const rse = Math.sqrt(vt / mc ** 2 + (mt ** 2 * vc) / mc ** 4);
  close(t, result.relative_difference!, mt / mc - 1, 1e-12, 'relative difference');
  close(t, result.confidence_interval![0], mt / mc - 1 - q * rse, 1e-10, 'relative interval, lower');
  close(t, result.confidence_interval![1], mt / mc - 1 + q * rse, 1e-10, 'relative interval, upper');
  // Swapping the variants mirrors the result.
  const swapped = welchTTest(sufficient('control', test), sufficient('test', control));
  close(t, swapped.statistic, -expectedT, 1e-10, 'swapped t');
  close(t, swapped.p_value, result.p_value, 1e-14, 'swapped p');
});

t.test("Welch's test from summary statistics: a textbook-style case with very unequal variances", async (t) => {
  // n₁ = 16, x̄₁ = 3.75625, s₁ = 2.01659; n₂ = 10, x̄₂ = 18.97, s₂ = 8.06488.
  const a: VariantEstimate = { key: 'control', n: 16, mean: 3.75625, variance: 2.01659 ** 2 };
  const b: VariantEstimate = { key: 'test', n: 10, mean: 18.97, variance: 8.06488 ** 2 };
  const se = Math.sqrt(a.variance / a.n + b.variance / b.n);
  close(t, se, 2.59969, 5e-6, 'standard error');
  const result = welchTTest(a, b, { alpha: 0.01 });
  close(t, result.statistic, 5.85214, 5e-5, 't');
  close(t, welchDegreesOfFreedom(a, b), 9.708, 5e-4, 'ν');
  close(t, (result.confidence_interval_absolute[1] - result.confidence_interval_absolute[0]) / 2 / se, 3.1906, 5e-4, 't(0.995, 9.708)');
  close(t, result.p_value, twoSidedTail(result.statistic, result.degrees_of_freedom!), 1e-10, 'p-value (quadrature)');
});

t.test('degenerate and invalid inputs', async (t) => {
  const same: VariantEstimate = { key: 'control', n: 10, mean: 3, variance: 0 };
  const r = welchTTest(same, { ...same, key: 'test' });
  t.equal(r.p_value, 1, 'identical constant samples: p = 1');
  t.same(r.confidence_interval_absolute, [0, 0]);
  t.equal(r.significant, false);
  const shifted = welchTTest(same, { key: 'test', n: 10, mean: 4, variance: 0 });
  t.equal(shifted.p_value, 0, 'different constant samples: p = 0');
  t.equal(shifted.significant, true);
  t.throws(() => welchTTest({ ...same, n: 1 }, same), ExperimentInputError, 'one sample has no variance');
  const zeroControl = welchTTest({ key: 'control', n: 10, mean: 0, variance: 1 }, { key: 'test', n: 10, mean: 1, variance: 1 });
  t.equal(zeroControl.confidence_interval, null, 'no relative interval when the control mean is 0');
  t.equal(zeroControl.relative_difference, null);
});

t.test('two-proportion z-test on a worked example', async (t) => {
  // 200 of 1,000 converted in control, 250 of 1,000 in test.
  const pooled = 450 / 2000;
  const z = (0.25 - 0.2) / Math.sqrt(pooled * (1 - pooled) * (2 / 1000));
  close(t, z, 2.677398, 5e-6, 'z by hand');
  const result = twoProportionZTest({ key: 'control', n: 1000, successes: 200 }, { key: 'test', n: 1000, successes: 250 });
  close(t, result.statistic, z, 1e-12, 'z statistic');
  // 2(1 − Φ(z)) by quadrature of the normal density over [z, z + 20].
  const tail = simpson((x) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI), z, z + 20);
  close(t, result.p_value, 2 * tail, 1e-12, 'two-sided p-value (quadrature)');
  t.ok(result.significant);
  const se = Math.sqrt((0.2 * 0.8) / 1000 + (0.25 * 0.75) / 1000);
  close(t, result.confidence_interval_absolute[0], 0.05 - 1.959963984540054 * se, 1e-12, 'Wald interval, lower');
  close(t, result.confidence_interval_absolute[1], 0.05 + 1.959963984540054 * se, 1e-12, 'Wald interval, upper');
  close(t, result.relative_difference!, 0.25, 1e-12, 'relative difference');
  const rse = Math.sqrt((0.25 * 0.75) / 1000 / 0.04 + (0.0625 * 0.2 * 0.8) / 1000 / 0.2 ** 4);
  close(t, result.confidence_interval![1] - 0.25, 1.959963984540054 * rse, 1e-12, 'relative interval half-width');
  const none = twoProportionZTest({ key: 'control', n: 50, successes: 0 }, { key: 'test', n: 60, successes: 0 });
  t.equal(none.p_value, 1, 'no conversions anywhere: p = 1');
  t.equal(none.confidence_interval, null, 'no relative interval over a zero rate');
});
