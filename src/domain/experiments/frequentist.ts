/**
 * Frequentist comparison of a test variant with the control, two-sided, at level α (0.05 unless given).
 *
 * Means: Welch's t-test (B. L. Welch, "The generalization of 'Student's' problem when several different population
 * variances are involved", Biometrika 34, 1947). Difference d = ȳ_t − ȳ_c, standard error
 * se = √(s_t²/n_t + s_c²/n_c), t = d / se, and the Welch–Satterthwaite degrees of freedom
 * ν = se⁴ / ((s_t²/n_t)² / (n_t − 1) + (s_c²/n_c)² / (n_c − 1)); p = P(|T_ν| > |t|); interval d ± t_{1−α/2, ν} se.
 *
 * Proportions: the two-proportion z-test. z = (p̂_t − p̂_c) / √(p̂(1 − p̂)(1/n_t + 1/n_c)) with the pooled rate
 * p̂ = (s_t + s_c) / (n_t + n_c) (the null hypothesis says the rates are equal); p = 2(1 − Φ(|z|)); the interval uses
 * the unpooled (Wald) standard error √(p̂_t(1 − p̂_t)/n_t + p̂_c(1 − p̂_c)/n_c) and z_{1−α/2}.
 *
 * Relative difference r = ȳ_t / ȳ_c − 1, with the delta-method standard error
 * √(V_t / ȳ_c² + ȳ_t² V_c / ȳ_c⁴), V = s²/n (A. Deng, U. Knoblich, J. Lu, "Applying the Delta Method in Metric
 * Analytics", KDD 2018), and the same quantile as the absolute interval; absent when the control mean is not positive.
 *
 * Each test variant is compared with the control on its own: no correction for several variants.
 */
import { normalQuantile, normalSurvival, studentTQuantile, studentTTwoSided } from './distributions.js';
import type { Interval, ProportionStats, VariantEstimate } from './types.js';
import { ExperimentInputError } from './types.js';

export interface FrequentistVariantResult {
  key: string;
  method: 'frequentist';
  test: 'welch_t' | 'two_proportion_z';
  /** Two-sided p-value of "no difference". */
  p_value: number;
  /** Interval of the relative difference μ_t / μ_c − 1 (null when the control mean is not positive). */
  confidence_interval: Interval | null;
  /** Interval of the difference μ_t − μ_c. */
  confidence_interval_absolute: Interval;
  difference: number;
  relative_difference: number | null;
  /** t or z. */
  statistic: number;
  /** Welch–Satterthwaite ν (null for the z-test). */
  degrees_of_freedom: number | null;
  significant: boolean;
}

export interface FrequentistOptions {
  alpha?: number;
}

/** Standard error of r = a/b − 1 by the delta method, given Var(a) = va and Var(b) = vb (independent). */
export function ratioStandardError(a: number, va: number, b: number, vb: number): number {
  return Math.sqrt(va / (b * b) + (a * a * vb) / b ** 4);
}

/** Degrees of freedom of Welch's test: ν = (v_t + v_c)² / (v_t² / (n_t − 1) + v_c² / (n_c − 1)), v = s²/n. */
export function welchDegreesOfFreedom(control: VariantEstimate, test: VariantEstimate): number {
  const vc = control.variance / control.n;
  const vt = test.variance / test.n;
  const denominator = (vt * vt) / (test.n - 1) + (vc * vc) / (control.n - 1);
  // Both variances 0: the formula is 0/0; any ν gives the same (degenerate) answer, report the pooled one.
  return denominator > 0 ? (vt + vc) ** 2 / denominator : control.n + test.n - 2;
}

function relative(control: VariantEstimate, test: VariantEstimate, quantile: number): [number | null, Interval | null] {
  if (!(control.mean > 0)) return [null, null];
  const r = test.mean / control.mean - 1;
  const se = ratioStandardError(test.mean, test.variance / test.n, control.mean, control.variance / control.n);
  return [r, [r - quantile * se, r + quantile * se]];
}

/** Welch's two-sided t-test of the difference in means (needs at least two units per variant). */
export function welchTTest(control: VariantEstimate, test: VariantEstimate, options: FrequentistOptions = {}): FrequentistVariantResult {
  const alpha = options.alpha ?? 0.05;
  for (const v of [control, test]) if (v.n < 2) throw new ExperimentInputError(`variant "${v.key}": Welch's test needs at least 2 samples, got ${v.n}`);
  const difference = test.mean - control.mean;
  const se = Math.sqrt(test.variance / test.n + control.variance / control.n);
  const df = welchDegreesOfFreedom(control, test);
  const statistic = se > 0 ? difference / se : difference === 0 ? 0 : Math.sign(difference) * Infinity;
  const p = se > 0 ? studentTTwoSided(statistic, df) : difference === 0 ? 1 : 0;
  const q = studentTQuantile(1 - alpha / 2, df);
  const [relativeDifference, relativeInterval] = relative(control, test, q);
  return resultOf(test.key, 'welch_t', { p, q, se, difference, relativeDifference, relativeInterval, statistic, df, alpha });
}

/** A test variant's answer, the same fields for both tests. */
function resultOf(
  key: string,
  test: FrequentistVariantResult['test'],
  r: { p: number; q: number; se: number; difference: number; relativeDifference: number | null; relativeInterval: Interval | null; statistic: number; df: number | null; alpha: number },
): FrequentistVariantResult {
  return {
    key,
    method: 'frequentist',
    test,
    p_value: r.p,
    confidence_interval: r.relativeInterval,
    confidence_interval_absolute: [r.difference - r.q * r.se, r.difference + r.q * r.se],
    difference: r.difference,
    relative_difference: r.relativeDifference,
    statistic: r.statistic,
    degrees_of_freedom: r.df,
    significant: r.p < r.alpha,
  };
}

/** Two-sided two-proportion z-test (needs at least one unit per variant). */
export function twoProportionZTest(control: ProportionStats, test: ProportionStats, options: FrequentistOptions = {}): FrequentistVariantResult {
  const alpha = options.alpha ?? 0.05;
  for (const v of [control, test]) if (v.n < 1) throw new ExperimentInputError(`variant "${v.key}": a proportion needs at least one unit`);
  const pc = control.successes / control.n;
  const pt = test.successes / test.n;
  const difference = pt - pc;
  const pooled = (control.successes + test.successes) / (control.n + test.n);
  const se0 = Math.sqrt(pooled * (1 - pooled) * (1 / control.n + 1 / test.n));
  // Pooled rate 0 or 1: both variants converted nobody (or everybody), the rates are equal.
  const statistic = se0 > 0 ? difference / se0 : 0;
  const p = se0 > 0 ? Math.min(1, 2 * normalSurvival(Math.abs(statistic))) : 1;
  const q = normalQuantile(1 - alpha / 2);
  const vc = (pc * (1 - pc)) / control.n;
  const vt = (pt * (1 - pt)) / test.n;
  const se = Math.sqrt(vc + vt);
  let relativeDifference: number | null = null;
  let relativeInterval: Interval | null = null;
  if (pc > 0) {
    relativeDifference = pt / pc - 1;
    const rse = ratioStandardError(pt, vt, pc, vc);
    relativeInterval = [relativeDifference - q * rse, relativeDifference + q * rse];
  }
  return resultOf(test.key, 'two_proportion_z', { p, q, se, difference, relativeDifference, relativeInterval, statistic, df: null, alpha });
}
