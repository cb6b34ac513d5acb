/**
 * Bayesian comparison of test variants with the control, on Gaussian posteriors of each variant's metric mean
 * (flat prior for means, Beta(1 + s, 1 + n − s) for conversions: see mean-metric.ts and funnel-metric.ts).
 *
 * Relative lift L = μ_test / μ_control − 1. With both means positive it is modelled on the log scale:
 * ln(1 + L) = ln μ_t − ln μ_c ~ N(m, v), m = E[ln μ_t] − E[ln μ_c], v = Var[ln μ_t] + Var[ln μ_c] (the posteriors are
 * independent); so chance_to_win = P(L > 0) = Φ(m / √v), and the credible interval of L is exp(m ± z √v) − 1, which is
 * never below −100 %. When a mean is not positive the log does not exist: the difference μ_t − μ_c ~ N(·, V_t + V_c)
 * gives chance_to_win, and the relative interval is the delta-method ratio (control mean positive) or absent.
 *
 * `significant` when chance_to_win ≥ 0.95 or ≤ 0.05 (a variant very likely better, or very likely worse). With flat
 * priors chance_to_win is close to one minus the one-sided p-value, so in an A/A test this rule fires about 10 % of
 * the time: it is a decision threshold, not a 5 % error rate.
 *
 * Deterministic: no sampling. The probability of being best among several variants is an integral computed by
 * Simpson's rule (see probabilityBest).
 */
import { normalCdf, normalPdf, normalQuantile } from './distributions.js';
import type { Interval, Posterior } from './types.js';
import { controlFirst } from './validate.js';

export interface BayesianOptions {
  /** Mass of the central credible interval; 0.95 unless given. */
  credible_level?: number;
  /** chance_to_win at or above this (or at or below 1 − this) is significant; 0.95 unless given. */
  threshold?: number;
}

export interface BayesianVariantResult {
  key: string;
  method: 'bayesian';
  /** P(μ_test > μ_control). */
  chance_to_win: number;
  /** Central credible interval of the relative lift μ_t / μ_c − 1, or null when the control mean is not positive. */
  credible_interval: Interval | null;
  /** Central credible interval of the difference μ_t − μ_c. */
  credible_interval_absolute: Interval;
  /** Posterior median of the relative lift (null as the interval). */
  expected_lift: number | null;
  /** P(this variant has the highest mean of all variants, control included). */
  probability_best: number;
  significant: boolean;
}

export interface BayesianComparison {
  method: 'bayesian';
  baseline: { key: string; probability_best: number };
  variant_results: BayesianVariantResult[];
}

/** Φ((x − a) / s) with the limits of a point mass when s = 0 (½ at the point itself). */
function gaussianCdf(x: number, a: number, s: number): number {
  if (s > 0) return normalCdf((x - a) / s);
  return x > a ? 1 : x < a ? 0 : 0.5;
}

interface Scale {
  mean: number;
  sd: number;
}

/** Each posterior on the log scale when all have one, else all on the raw scale (comparisons must share a scale). */
function commonScale(posteriors: readonly Posterior[]): Scale[] {
  const allLog = posteriors.every((p) => p.log !== null);
  return posteriors.map((p) => (allLog ? { mean: p.log!.mean, sd: Math.sqrt(p.log!.variance) } : { mean: p.mean, sd: Math.sqrt(p.variance) }));
}

/** Simpson panels over ±SIMPSON_HALF_WIDTH standard deviations of the integrating variable. */
const SIMPSON_PANELS = 1600;
const SIMPSON_HALF_WIDTH = 9;

/**
 * P(variant i has the largest mean) for independent Gaussian posteriors X_j ~ N(a_j, s_j²):
 * P_i = ∫ φ(z) Π_{j≠i} Φ((a_i + s_i z − a_j) / s_j) dz, by Simpson's rule with 1,600 panels over z ∈ [−9, 9] (the
 * mass outside is below 10⁻¹⁸). Two variants: the closed form Φ((a_i − a_j) / √(s_i² + s_j²)).
 */
export function probabilityBest(posteriors: readonly Posterior[]): number[] {
  const scales = commonScale(posteriors);
  if (scales.length === 2) {
    const [a, b] = scales as [Scale, Scale];
    const pa = gaussianCdf(a.mean, b.mean, Math.hypot(a.sd, b.sd));
    return [pa, 1 - pa];
  }
  return scales.map((own, i) => {
    const others = scales.filter((_, j) => j !== i);
    const beats = (x: number): number => others.reduce((prod, o) => prod * gaussianCdf(x, o.mean, o.sd), 1);
    if (!(own.sd > 0)) return beats(own.mean);
    const h = (2 * SIMPSON_HALF_WIDTH) / SIMPSON_PANELS;
    let sum = 0;
    for (let k = 0; k <= SIMPSON_PANELS; k++) {
      const z = -SIMPSON_HALF_WIDTH + k * h;
      const weight = k === 0 || k === SIMPSON_PANELS ? 1 : k % 2 === 1 ? 4 : 2;
      sum += weight * normalPdf(z) * beats(own.mean + own.sd * z);
    }
    return (sum * h) / 3;
  });
}

/** One test variant against the control. */
export function compareBayesianPair(control: Posterior, test: Posterior, options: BayesianOptions = {}): Omit<BayesianVariantResult, 'probability_best'> {
  const level = options.credible_level ?? 0.95;
  const threshold = options.threshold ?? 0.95;
  const z = normalQuantile(0.5 + level / 2);
  const diff = test.mean - control.mean;
  const diffSd = Math.sqrt(test.variance + control.variance);
  const absolute: Interval = [diff - z * diffSd, diff + z * diffSd];
  let chance: number;
  let relative: Interval | null = null;
  let median: number | null = null;
  if (control.log !== null && test.log !== null) {
    const m = test.log.mean - control.log.mean;
    const s = Math.sqrt(test.log.variance + control.log.variance);
    chance = gaussianCdf(0, -m, s);
    relative = [Math.expm1(m - z * s), Math.expm1(m + z * s)];
    median = Math.expm1(m);
  } else {
    chance = gaussianCdf(0, -diff, diffSd);
    if (control.mean > 0) {
      // Delta method for the ratio r = μ_t / μ_c: Var r ≈ V_t / μ_c² + μ_t² V_c / μ_c⁴.
      const ratio = test.mean / control.mean;
      const sd = Math.sqrt(test.variance / control.mean ** 2 + (ratio * ratio * control.variance) / control.mean ** 2);
      relative = [ratio - 1 - z * sd, ratio - 1 + z * sd];
      median = ratio - 1;
    }
  }
  return {
    key: test.key,
    method: 'bayesian',
    chance_to_win: chance,
    credible_interval: relative,
    credible_interval_absolute: absolute,
    expected_lift: median,
    significant: chance >= threshold || chance <= 1 - threshold,
  };
}

/** Every test variant against the control, and each variant's probability of being best. */
export function compareBayesian(posteriors: readonly Posterior[], options: BayesianOptions = {}): BayesianComparison {
  const [control, tests] = controlFirst(posteriors);
  const best = probabilityBest([control, ...tests]);
  return {
    method: 'bayesian',
    baseline: { key: control.key, probability_best: best[0]! },
    variant_results: tests.map((t, i) => ({ ...compareBayesianPair(control, t, options), probability_best: best[i + 1]! })),
  };
}
