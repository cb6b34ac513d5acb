/**
 * Mean metrics (revenue per user, events per user …): from per-variant sufficient statistics (n, Σy, Σy²) to the
 * estimate the frequentist tests use and to the posterior the Bayesian comparison uses.
 */
import type { MeanVariantStats, Posterior, VariantEstimate } from './types.js';
import { ExperimentInputError } from './types.js';
import { requireCount, requireFinite, requireVariantKeys } from './validate.js';

/** Checks counts and sums of every variant (covariate sums too, when present) and the variant keys. */
export function validateMeanVariants(variants: readonly MeanVariantStats[]): void {
  requireVariantKeys(variants);
  for (const v of variants) {
    requireCount(v.exposures, `variant "${v.key}": exposures`);
    requireCount(v.number_of_samples, `variant "${v.key}": number_of_samples`);
    requireFinite(v.sum, `variant "${v.key}": sum`);
    const squares = requireFinite(v.sum_squares, `variant "${v.key}": sum_squares`);
    if (squares < 0) throw new ExperimentInputError(`variant "${v.key}": sum_squares must not be negative`);
    if (v.covariate !== undefined) {
      requireFinite(v.covariate.sum, `variant "${v.key}": covariate.sum`);
      requireFinite(v.covariate.sum_product, `variant "${v.key}": covariate.sum_product`);
      const x2 = requireFinite(v.covariate.sum_squares, `variant "${v.key}": covariate.sum_squares`);
      if (x2 < 0) throw new ExperimentInputError(`variant "${v.key}": covariate.sum_squares must not be negative`);
    }
  }
}

/**
 * Sample mean ȳ = Σy / n and unbiased sample variance s² = (Σy² − ȳ Σy) / (n − 1) (0 below two units; rounding can
 * push the difference a hair below 0, which is clamped).
 */
export function meanEstimate(v: MeanVariantStats): VariantEstimate {
  const n = v.number_of_samples;
  const mean = n > 0 ? v.sum / n : 0;
  const variance = n > 1 ? Math.max(0, (v.sum_squares - mean * v.sum) / (n - 1)) : 0;
  return { key: v.key, n, mean, variance };
}

/**
 * Posterior of the mean under a flat (non-informative) prior and the Gaussian model with the variance taken at its
 * estimate: μ ~ N(ȳ, s²/n). For ȳ > 0 the log of the mean is described by the delta method,
 * ln μ ~ N(ln ȳ, (s²/n) / ȳ²) (first-order Taylor expansion of ln around ȳ).
 */
export function meanPosterior(e: VariantEstimate): Posterior {
  const variance = e.n > 0 ? e.variance / e.n : Infinity;
  return {
    key: e.key,
    mean: e.mean,
    variance,
    log: e.mean > 0 ? { mean: Math.log(e.mean), variance: variance / (e.mean * e.mean) } : null,
  };
}
