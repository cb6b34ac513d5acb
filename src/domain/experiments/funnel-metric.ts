/**
 * Funnel (conversion) metrics. A variant's conversion is a proportion: successes = persons reaching the funnel's last
 * step; the denominator is, by default, the persons exposed to the variant ('exposures'), as PostHog's new experiment
 * engine counts it (successes over exposed persons), so that a variant that loses people before the funnel's first
 * step is not flattered. 'first_step' divides by the persons who reached the first step instead (the classic funnel
 * conversion; it needs at least two steps).
 */
import { digamma, trigamma } from './special-functions.js';
import type { FunnelVariantStats, Posterior, ProportionStats, VariantEstimate } from './types.js';
import { ExperimentInputError } from './types.js';
import { requireCount, requireVariantKeys } from './validate.js';

export type FunnelDenominator = 'exposures' | 'first_step';

/** Checks the keys, the counts, that step counts never grow along the funnel, and successes ≤ the denominator. */
export function validateFunnelVariants(variants: readonly FunnelVariantStats[], denominator: FunnelDenominator = 'exposures'): void {
  requireVariantKeys(variants);
  for (const v of variants) {
    requireCount(v.exposures, `variant "${v.key}": exposures`);
    if (!Array.isArray(v.step_counts) || v.step_counts.length === 0) throw new ExperimentInputError(`variant "${v.key}": step_counts must list at least one step`);
    if (denominator === 'first_step' && v.step_counts.length < 2) throw new ExperimentInputError(`variant "${v.key}": a conversion over the first step needs at least two steps`);
    v.step_counts.forEach((c, i) => {
      requireCount(c, `variant "${v.key}": step_counts[${i}]`);
      if (i > 0 && c > v.step_counts[i - 1]!) throw new ExperimentInputError(`variant "${v.key}": step ${i + 1} has more persons than step ${i}`);
    });
    const { n, successes } = funnelProportion(v, denominator);
    if (successes > n) throw new ExperimentInputError(`variant "${v.key}": ${successes} conversions out of ${n} ${denominator === 'exposures' ? 'exposures' : 'persons at the first step'}`);
  }
}

/** The variant's conversion as successes of n (see the module comment for the denominator). */
export function funnelProportion(v: FunnelVariantStats, denominator: FunnelDenominator = 'exposures'): ProportionStats {
  const successes = v.step_counts[v.step_counts.length - 1] ?? 0;
  return { key: v.key, n: denominator === 'exposures' ? v.exposures : (v.step_counts[0] ?? 0), successes };
}

/** A proportion as a mean of 0/1 values: mean p̂ = s/n, variance per unit p̂(1 − p̂) (the Bernoulli variance). */
export function proportionEstimate(p: ProportionStats): VariantEstimate {
  const rate = p.n > 0 ? p.successes / p.n : 0;
  return { key: p.key, n: p.n, mean: rate, variance: rate * (1 - rate) };
}

/**
 * Posterior of the conversion rate with a uniform prior: Beta(α, β), α = 1 + s, β = 1 + n − s. Its mean α/(α+β) and
 * variance αβ / ((α+β)²(α+β+1)); and, exactly rather than by the delta method, the mean and variance of ln p under
 * the Beta: E[ln p] = ψ(α) − ψ(α+β), Var[ln p] = ψ'(α) − ψ'(α+β) (digamma and trigamma; standard results for the
 * Beta distribution), which the Gaussian model of the log lift then uses. Its chance_to_win is within 0.003 of the
 * exact P(p_t > p_c) of the two Beta posteriors at 10/100 vs 15/100, 5·10⁻⁴ at 100/1,000 vs 120/1,000 and 4·10⁻⁵ at
 * 1,000/10,000 vs 1,050/10,000 (pinned in test/unit/experiments-bayesian.test.ts).
 */
export function betaPosterior(p: ProportionStats): Posterior {
  const alpha = 1 + p.successes;
  const beta = 1 + p.n - p.successes;
  const total = alpha + beta;
  return {
    key: p.key,
    mean: alpha / total,
    variance: (alpha * beta) / (total * total * (total + 1)),
    log: { mean: digamma(alpha) - digamma(total), variance: trigamma(alpha) - trigamma(total) },
  };
}
