/**
 * CUPED (A. Deng, Y. Xu, R. Kohavi, T. Walker, "Improving the sensitivity of online controlled experiments by
 * utilizing pre-experiment data", WSDM 2013): with a covariate X measured before exposure (so unaffected by the
 * variant), the metric Y is replaced by Y − θ(X − E[X]). Its mean is unbiased for every variant (E[X] is the same
 * in all of them under randomisation) and its variance is Var(Y) (1 − corr(X, Y)²) at the best θ = cov(X, Y) / var(X).
 *
 * θ is estimated once for all variants from the pooled within-variant sums (the common slope of an analysis of
 * covariance): θ = Σ_i S_xy,i / Σ_i S_xx,i with S_xy,i = Σxy − Σx Σy / n and S_xx,i = Σx² − (Σx)² / n per variant;
 * centring within each variant keeps the treatment effect on Y out of θ. E[X] is estimated by the mean of X over all
 * variants, x̄. Per variant:
 *   adjusted mean      ȳ_i − θ (x̄_i − x̄)
 *   adjusted variance  s²_y,i − 2θ s_xy,i + θ² s²_x,i   (per unit, n − 1 in the denominators)
 * θ is treated as known, as in Deng et al.; its estimation error is of a lower order than the variance.
 */
import type { CovariateSums, MeanVariantStats, VariantEstimate } from './types.js';
import { ExperimentInputError } from './types.js';
import { meanEstimate } from './mean-metric.js';

export interface CupedResult {
  theta: number;
  /** x̄: the covariate's mean over all variants. */
  covariate_mean: number;
  /** The adjusted estimates, in the order given. */
  estimates: VariantEstimate[];
  /** Per variant, 1 − adjusted variance / unadjusted variance (0 when the unadjusted variance is 0). */
  variance_reduction: { key: string; reduction: number }[];
}

interface Centred {
  n: number;
  sxx: number;
  sxy: number;
  meanX: number;
}

function centred(v: MeanVariantStats, x: CovariateSums): Centred {
  const n = v.number_of_samples;
  if (n === 0) return { n, sxx: 0, sxy: 0, meanX: 0 };
  return { n, sxx: Math.max(0, x.sum_squares - (x.sum * x.sum) / n), sxy: x.sum_product - (x.sum * v.sum) / n, meanX: x.sum / n };
}

/** Whether every variant brings covariate sums (CUPED applies only then). */
export function hasCovariates(variants: readonly MeanVariantStats[]): boolean {
  return variants.length > 0 && variants.every((v) => v.covariate !== undefined);
}

/** The pooled within-variant θ = Σ S_xy / Σ S_xx (0 when X does not vary). */
export function cupedTheta(variants: readonly MeanVariantStats[]): number {
  let sxx = 0;
  let sxy = 0;
  for (const v of variants) {
    if (v.covariate === undefined) throw new ExperimentInputError(`variant "${v.key}" has no covariate sums`);
    const c = centred(v, v.covariate);
    sxx += c.sxx;
    sxy += c.sxy;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

/** CUPED-adjusted estimates of every variant. */
export function cupedAdjust(variants: readonly MeanVariantStats[]): CupedResult {
  const theta = cupedTheta(variants);
  let xTotal = 0;
  let nTotal = 0;
  for (const v of variants) {
    xTotal += v.covariate!.sum;
    nTotal += v.number_of_samples;
  }
  const xBar = nTotal > 0 ? xTotal / nTotal : 0;
  const estimates: VariantEstimate[] = [];
  const reductions: { key: string; reduction: number }[] = [];
  for (const v of variants) {
    const plain = meanEstimate(v);
    const c = centred(v, v.covariate!);
    const adjustedMean = plain.mean - theta * (c.meanX - xBar);
    let adjustedVariance = plain.variance;
    if (c.n > 1) {
      const sx2 = c.sxx / (c.n - 1);
      const sxy = c.sxy / (c.n - 1);
      adjustedVariance = Math.max(0, plain.variance - 2 * theta * sxy + theta * theta * sx2);
    }
    estimates.push({ key: v.key, n: plain.n, mean: adjustedMean, variance: adjustedVariance });
    reductions.push({ key: v.key, reduction: plain.variance > 0 ? 1 - adjustedVariance / plain.variance : 0 });
  }
  return { theta, covariate_mean: xBar, estimates, variance_reduction: reductions };
}
