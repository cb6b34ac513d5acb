/**
 * Always-valid (sequential) intervals for the difference between a test variant and the control: a confidence
 * sequence, which covers the true difference at every sample size at once with probability ≥ 1 − α, so it may be
 * looked at after every batch and acted on whenever it excludes 0.
 *
 * The boundary is the two-sided normal-mixture boundary (H. Robbins, "Statistical methods related to the law of the
 * iterated logarithm", Ann. Math. Statist. 41, 1970; S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon,
 * "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49, 2021, the two-sided normal
 * mixture): for a sum S of n observations with variance σ² each (intrinsic time V = nσ²), mixing the exponential
 * supermartingales exp(λS − λ²V/2) over λ ~ N(0, 1/ρ) gives √(ρ/(V+ρ)) exp(S² / (2(V+ρ))), and Ville's inequality
 * bounds the chance that it ever reaches 1/α. So, with probability ≥ 1 − α, for all n:
 *   |S − nμ| < √((V + ρ) ln((V + ρ) / (ρ α²))).
 * For the difference of two means with standard error se at n units in all (n = n_t + n_c, fixed allocation, so
 * n·se² is constant and ρ is written r σ² in units of samples) this is the interval
 *   d ± se · √(((n + r) / n) · ln((n + r) / (r α²))),
 * with the variance estimated, which keeps the coverage asymptotically (I. Waudby-Smith, D. Arbour, R. Sinha,
 * E. H. Kennedy, A. Ramdas, "Time-uniform central limit theory and asymptotic confidence sequences", Ann. Statist.
 * 2024). It is the mixture SPRT's interval of R. Johari, P. Koomen, L. Pekelis, D. Walsh, "Peeking at A/B tests",
 * KDD 2017, with mixing variance τ² = se²·n/r.
 *
 * Tuning: r is chosen so that the interval is narrowest when the planned sample size N is reached. Minimising
 * (N + r) ln((N + r)/(r α²)) over r gives r = N / y with y − ln(1 + y) = 2 ln(1/α) (Howard et al. give the
 * approximation y ≈ 2 ln(1/α) + ln(1 + 2 ln(1/α))); y is solved here by Newton's method. Only the fraction of the
 * plan reached, f = n / N, enters the width: multiplier √((1 + 1/(f y)) (ln(1 + f y) − 2 ln α)).
 *
 * The always-valid p-value at one look is min(1, 1/M) with M = √(r/(n+r)) exp(z² n / (2(n + r))), z = d / se; the
 * caller keeps the running minimum over looks (pass it back as `previous_p_value`).
 */
import type { Interval, VariantEstimate } from './types.js';
import { ratioStandardError } from './frequentist.js';
import { requireProbability } from './validate.js';
import { ExperimentInputError } from './types.js';

export interface SequentialOptions {
  /** Units planned for the experiment (e.g. exposures over all variants). */
  planned_sample_size: number;
  /** Units so far, in the same unit as the plan; the two compared variants' n together unless given. */
  sample_size?: number;
  /** 0.05 unless given. */
  alpha?: number;
  /** The smallest always-valid p-value of earlier looks, to carry the running minimum. */
  previous_p_value?: number;
}

export interface SequentialVariantResult {
  key: string;
  method: 'sequential';
  /** Always-valid interval of the difference μ_t − μ_c. */
  confidence_interval_absolute: Interval;
  /** Always-valid interval of the relative difference (delta-method standard error; null if the control mean ≤ 0). */
  confidence_interval: Interval | null;
  /** Always-valid p-value, the running minimum when previous_p_value is given. */
  p_value: number;
  /** The interval excludes 0. */
  significant: boolean;
  /** Width of the interval in standard errors (1.96 for a fixed 95 % interval). */
  multiplier: number;
}

/** y solving y − ln(1 + y) = 2 ln(1/α): the planned sample size over the mixture parameter r. */
export function mixtureShape(alpha: number): number {
  requireProbability(alpha, 'alpha');
  const target = -2 * Math.log(alpha);
  let y = target + Math.log1p(target);
  for (let i = 0; i < 50; i++) {
    const step = (y - Math.log1p(y) - target) / (y / (1 + y));
    y -= step;
    if (Math.abs(step) < 1e-14 * y) break;
  }
  return y;
}

/** Width of the confidence sequence in standard errors at n units, for a plan of N units. */
export function confidenceSequenceMultiplier(sampleSize: number, plannedSampleSize: number, alpha = 0.05): number {
  if (!(plannedSampleSize > 0)) throw new ExperimentInputError('planned_sample_size must be positive');
  if (!(sampleSize > 0)) return Infinity;
  const fy = (sampleSize / plannedSampleSize) * mixtureShape(alpha);
  return Math.sqrt((1 + 1 / fy) * (Math.log1p(fy) - 2 * Math.log(alpha)));
}

/** The confidence sequence of the difference, evaluated at the current sample. */
export function sequentialDifference(control: VariantEstimate, test: VariantEstimate, options: SequentialOptions): SequentialVariantResult {
  const alpha = options.alpha ?? 0.05;
  const n = options.sample_size ?? control.n + test.n;
  const multiplier = confidenceSequenceMultiplier(n, options.planned_sample_size, alpha);
  const difference = test.mean - control.mean;
  const se = Math.sqrt((control.n > 0 ? control.variance / control.n : Infinity) + (test.n > 0 ? test.variance / test.n : Infinity));
  const half = multiplier * se;
  let relativeInterval: Interval | null = null;
  if (control.mean > 0) {
    const r = test.mean / control.mean - 1;
    const rse = ratioStandardError(test.mean, test.variance / test.n, control.mean, control.variance / control.n);
    relativeInterval = [r - multiplier * rse, r + multiplier * rse];
  }
  // 1/M with M = √(r/(n+r)) exp(z² n / (2(n+r))), written with f y = n / r.
  const fy = (n / options.planned_sample_size) * mixtureShape(alpha);
  let p = 1;
  if (se > 0 && Number.isFinite(se)) {
    const z = difference / se;
    p = Math.min(1, Math.sqrt(1 + fy) * Math.exp((-z * z * fy) / (2 * (1 + fy))));
  } else if (se === 0 && difference !== 0) p = 0;
  if (options.previous_p_value !== undefined) p = Math.min(p, options.previous_p_value);
  return {
    key: test.key,
    method: 'sequential',
    confidence_interval_absolute: [difference - half, difference + half],
    confidence_interval: relativeInterval,
    p_value: p,
    significant: difference - half > 0 || difference + half < 0,
    multiplier,
  };
}
