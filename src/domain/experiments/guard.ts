/**
 * Minimum-sample guard: below it, results are computed but marked as not yet meaningful (and never significant).
 * Defaults: 100 exposures per variant (the per-variant floor of PostHog's earlier experiment statistics), and for
 * conversions at least 5 successes and 5 failures per variant (the usual n p̂ ≥ 5, n (1 − p̂) ≥ 5 condition for the
 * normal approximation of a proportion). "Computable" is the weaker condition the formulas need: two samples per
 * variant for a mean (a variance), one unit per variant for a proportion.
 */
import type { ProportionStats } from './types.js';

export interface GuardOptions {
  min_exposures?: number;
  min_successes?: number;
  min_failures?: number;
}

export interface GuardReason {
  key: string;
  reason: 'too_few_exposures' | 'too_few_samples' | 'too_few_successes' | 'too_few_failures';
  have: number;
  need: number;
}

export interface GuardResult {
  /** Enough data for the results to be read. */
  meaningful: boolean;
  /** Enough data for the formulas to give numbers at all. */
  computable: boolean;
  reasons: GuardReason[];
}

export const DEFAULT_MIN_EXPOSURES = 100;
export const DEFAULT_MIN_SUCCESSES = 5;

function result(reasons: GuardReason[], computable: boolean): GuardResult {
  return { meaningful: computable && reasons.length === 0, computable, reasons };
}

export function meanGuard(variants: readonly { key: string; exposures: number; number_of_samples: number }[], options: GuardOptions = {}): GuardResult {
  const minExposures = options.min_exposures ?? DEFAULT_MIN_EXPOSURES;
  const reasons: GuardReason[] = [];
  let computable = true;
  for (const v of variants) {
    if (v.exposures < minExposures) reasons.push({ key: v.key, reason: 'too_few_exposures', have: v.exposures, need: minExposures });
    if (v.number_of_samples < 2) {
      computable = false;
      reasons.push({ key: v.key, reason: 'too_few_samples', have: v.number_of_samples, need: 2 });
    }
  }
  return result(reasons, computable);
}

export function proportionGuard(variants: readonly (ProportionStats & { exposures: number })[], options: GuardOptions = {}): GuardResult {
  const minExposures = options.min_exposures ?? DEFAULT_MIN_EXPOSURES;
  const minSuccesses = options.min_successes ?? DEFAULT_MIN_SUCCESSES;
  const minFailures = options.min_failures ?? minSuccesses;
  const reasons: GuardReason[] = [];
  let computable = true;
  for (const v of variants) {
    if (v.exposures < minExposures) reasons.push({ key: v.key, reason: 'too_few_exposures', have: v.exposures, need: minExposures });
    if (v.n < 1) {
      computable = false;
      reasons.push({ key: v.key, reason: 'too_few_samples', have: v.n, need: 1 });
    }
    if (v.successes < minSuccesses) reasons.push({ key: v.key, reason: 'too_few_successes', have: v.successes, need: minSuccesses });
    if (v.n - v.successes < minFailures) reasons.push({ key: v.key, reason: 'too_few_failures', have: v.n - v.successes, need: minFailures });
  }
  return result(reasons, computable);
}
