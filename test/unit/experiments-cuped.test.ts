/**
 * CUPED: the adjustment against its definition on a small data set, then by simulation on correlated data
 * (X ~ N(5, 2²) before exposure, Y = 10 + 1.2 (X − 5) + ε, ε ~ N(0, 1.6²), so θ = 1.2 and corr(X, Y)² = 0.692):
 * the variance falls by about corr², and the adjusted difference stays unbiased.
 */
import t from 'tap';
import { cupedAdjust, cupedTheta, welchTTest, type MeanVariantStats, type VariantEstimate } from '../../src/domain/experiments/index.js';
import { close } from '../helpers/approx.js';
import { gaussianSource, Random } from '../helpers/seeded-samples.js';

function stats(key: string, xs: number[], ys: number[]): MeanVariantStats {
  const sum = (f: (i: number) => number): number => ys.reduce((a, _, i) => a + f(i), 0);
  return {
    key,
    exposures: ys.length,
    number_of_samples: ys.length,
    sum: sum((i) => ys[i]!),
    sum_squares: sum((i) => ys[i]! ** 2),
    covariate: { sum: sum((i) => xs[i]!), sum_squares: sum((i) => xs[i]! ** 2), sum_product: sum((i) => xs[i]! * ys[i]!) },
  };
}

const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
const sampleVariance = (v: number[]): number => {
  const m = mean(v);
  return v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1);
};

t.test('the adjustment on a small data set, against its definition', async (t) => {
  const control = { x: [3, 5, 4, 8, 6, 2], y: [7, 11, 8, 15, 12, 6] };
  const test = { x: [4, 7, 5, 3, 9], y: [10, 14, 10, 9, 18] };
  // θ from the pooled within-variant centred cross products.
  const centredSums = (xs: number[], ys: number[]): [number, number] => {
    const mx = mean(xs);
    const my = mean(ys);
    return [xs.reduce((a, x, i) => a + (x - mx) * (ys[i]! - my), 0), xs.reduce((a, x) => a + (x - mx) ** 2, 0)];
  };
  const [cxy, cxx] = centredSums(control.x, control.y);
  const [txy, txx] = centredSums(test.x, test.y);
  const theta = (cxy + txy) / (cxx + txx);
  const variants = [stats('control', control.x, control.y), stats('test', test.x, test.y)];
  close(t, cupedTheta(variants), theta, 1e-12, 'θ');
  const xBar = mean([...control.x, ...test.x]);
  const result = cupedAdjust(variants);
  close(t, result.covariate_mean, xBar, 1e-12, 'x̄ over all variants');
  for (const [i, arm] of [control, test].entries()) {
    const adjusted = arm.y.map((y, j) => y - theta * (arm.x[j]! - xBar));
    close(t, result.estimates[i]!.mean, mean(adjusted), 1e-12, `adjusted mean of ${result.estimates[i]!.key}`);
    close(t, result.estimates[i]!.variance, sampleVariance(adjusted), 1e-10, `adjusted variance of ${result.estimates[i]!.key}`);
    t.equal(result.estimates[i]!.n, arm.y.length);
  }
  const flat = cupedAdjust([
    { key: 'control', exposures: 3, number_of_samples: 3, sum: 6, sum_squares: 14, covariate: { sum: 3, sum_squares: 3, sum_product: 6 } },
    { key: 'test', exposures: 3, number_of_samples: 3, sum: 9, sum_squares: 29, covariate: { sum: 3, sum_squares: 3, sum_product: 9 } },
  ]);
  t.equal(flat.theta, 0, 'a constant covariate leaves the metric as it is');
  t.same(
    flat.estimates.map((e) => e.mean),
    [2, 3],
  );
});

t.test('simulation: variance reduction and an unbiased difference', async (t) => {
  const gauss = gaussianSource(new Random(5_000_011));
  const runs = 500;
  const n = 400;
  const effect = 0.5;
  const plain: number[] = [];
  const adjusted: number[] = [];
  const adjustedSe: number[] = [];
  const reductions: number[] = [];
  const thetas: number[] = [];
  const draw = (key: string, shift: number): MeanVariantStats => {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < n; i++) {
      const x = 5 + 2 * gauss();
      xs.push(x);
      ys.push(10 + shift + 1.2 * (x - 5) + 1.6 * gauss());
    }
    return stats(key, xs, ys);
  };
  for (let run = 0; run < runs; run++) {
    const variants = [draw('control', 0), draw('test', effect)];
    const plainMean = (v: MeanVariantStats): number => v.sum / v.number_of_samples;
    plain.push(plainMean(variants[1]!) - plainMean(variants[0]!));
    const cuped = cupedAdjust(variants);
    const [c, v] = cuped.estimates as [VariantEstimate, VariantEstimate];
    adjusted.push(v.mean - c.mean);
    adjustedSe.push(Math.sqrt(c.variance / c.n + v.variance / v.n));
    reductions.push(...cuped.variance_reduction.map((r) => r.reduction));
    thetas.push(cuped.theta);
  }
  const varianceRatio = sampleVariance(adjusted) / sampleVariance(plain);
  const meanAdjusted = mean(adjusted);
  const seOfMean = Math.sqrt(sampleVariance(adjusted) / runs);
  t.comment(
    `θ ${mean(thetas).toFixed(4)}; reported variance reduction ${mean(reductions).toFixed(4)} (theory 0.6923); ` +
      `variance of the difference across runs: CUPED / plain = ${varianceRatio.toFixed(4)} (theory 0.3077); ` +
      `mean adjusted difference ${meanAdjusted.toFixed(4)} (true 0.5), plain ${mean(plain).toFixed(4)}`,
  );
  close(t, mean(thetas), 1.2, 0.01, 'θ estimates the slope');
  close(t, mean(reductions), 1 - 0.3077, 0.02, 'reported per-variant variance reduction ≈ corr²');
  t.ok(varianceRatio > 0.25 && varianceRatio < 0.37, `variance of the difference cut to ${varianceRatio.toFixed(3)} of the plain one`);
  t.ok(Math.abs(meanAdjusted - effect) < 4 * seOfMean, `unbiased: mean adjusted difference ${meanAdjusted.toFixed(4)} within 4 standard errors of 0.5`);
  close(t, mean(adjustedSe) / Math.sqrt(sampleVariance(adjusted)), 1, 0.1, 'the reported standard error matches the spread across runs');
});

t.test('A/A with CUPED keeps the false-positive rate of the t-test', async (t) => {
  const gauss = gaussianSource(new Random(6_000_001));
  const runs = 1000;
  let positives = 0;
  for (let run = 0; run < runs; run++) {
    const arms = ['control', 'test'].map((key) => {
      const xs: number[] = [];
      const ys: number[] = [];
      for (let i = 0; i < 200; i++) {
        const x = 5 + 2 * gauss();
        xs.push(x);
        ys.push(10 + 1.2 * (x - 5) + 1.6 * gauss());
      }
      return stats(key, xs, ys);
    });
    const [c, v] = cupedAdjust(arms).estimates as [VariantEstimate, VariantEstimate];
    if (welchTTest(c, v).significant) positives++;
  }
  t.comment(`Welch on CUPED-adjusted A/A data, 5 %: ${positives / runs}`);
  t.ok(Math.abs(positives / runs - 0.05) <= 3 * Math.sqrt((0.05 * 0.95) / runs), `false-positive rate ${positives / runs}`);
});
