/**
 * Sample-ratio mismatch: are the exposures split as the flag's variants were configured? Pearson's chi-squared
 * goodness-of-fit test: with N exposures in all and variant i configured at w_i percent, expected e_i = N w_i / Σw,
 * χ² = Σ (o_i − e_i)² / e_i on k − 1 degrees of freedom (k variants with w_i > 0), p = Q((k − 1)/2, χ²/2).
 * A mismatch is flagged below p = 0.001, the usual threshold for this check (it runs on every look at every
 * experiment, so a strict level keeps false alarms rare; a real assignment or logging bug drives p far below it).
 * A variant that was configured at 0 % but has exposures is a mismatch outright (p = 0).
 */
import { chiSquaredSurvival } from './distributions.js';
import { ExperimentInputError } from './types.js';
import { requireCount, requireFinite } from './validate.js';

/** A flag variant's configured share, as PostHog's multivariate flags state it (percentages adding up to 100). */
export interface SplitEntry {
  key: string;
  rollout_percentage: number;
}

export interface SrmResult {
  chi_squared: number;
  degrees_of_freedom: number;
  p_value: number;
  flagged: boolean;
  threshold: number;
  variants: { key: string; observed: number; expected: number }[];
}

export const SRM_THRESHOLD = 0.001;

export function sampleRatioMismatch(
  exposures: readonly { key: string; exposures: number }[],
  split: readonly SplitEntry[],
  threshold = SRM_THRESHOLD,
): SrmResult {
  const weights = new Map<string, number>();
  for (const s of split) {
    const w = requireFinite(s.rollout_percentage, `split "${s.key}": rollout_percentage`);
    if (w < 0) throw new ExperimentInputError(`split "${s.key}": rollout_percentage must not be negative`);
    weights.set(s.key, (weights.get(s.key) ?? 0) + w);
  }
  const observed = new Map<string, number>();
  for (const e of exposures) observed.set(e.key, (observed.get(e.key) ?? 0) + requireCount(e.exposures, `variant "${e.key}": exposures`));
  const keys = [...new Set([...weights.keys(), ...observed.keys()])];
  const totalWeight = [...weights.values()].reduce((a, b) => a + b, 0);
  if (!(totalWeight > 0)) throw new ExperimentInputError('the split needs a variant with a positive rollout_percentage');
  const total = [...observed.values()].reduce((a, b) => a + b, 0);
  let chi = 0;
  let impossible = false;
  let k = 0;
  const variants = keys.map((key) => {
    const o = observed.get(key) ?? 0;
    const e = (total * (weights.get(key) ?? 0)) / totalWeight;
    if (e > 0) {
      k++;
      chi += ((o - e) * (o - e)) / e;
    } else if (o > 0) impossible = true;
    return { key, observed: o, expected: e };
  });
  const df = Math.max(0, (total > 0 ? k : [...weights.values()].filter((w) => w > 0).length) - 1);
  let p: number;
  if (impossible) {
    chi = Infinity;
    p = 0;
  } else p = df > 0 && total > 0 ? chiSquaredSurvival(chi, df) : 1;
  return { chi_squared: chi, degrees_of_freedom: df, p_value: p, flagged: p < threshold, threshold, variants };
}
