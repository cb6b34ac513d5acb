/** Shapes shared by the experiment statistics modules. Field names follow PostHog's experiment query results. */

/** The variant every other variant is compared with. */
export const CONTROL_KEY = 'control';

/** Thrown for input the statistics cannot describe (negative counts, no control, more successes than units …). */
export class ExperimentInputError extends RangeError {
  override name = 'ExperimentInputError';
}

/**
 * Sums of a pre-exposure covariate X (e.g. the same metric in the weeks before exposure) over the same units as the
 * metric Y, for CUPED: Σx, Σx² and Σxy.
 */
export interface CovariateSums {
  sum: number;
  sum_squares: number;
  sum_product: number;
}

/**
 * A mean metric's sufficient statistics for one variant. `number_of_samples` units carry a value each (PostHog: every
 * exposed person, 0 for a person without the event), `sum` and `sum_squares` are Σy and Σy² over them; `exposures`
 * counts the units assigned to the variant (sample-ratio check and minimum-sample guard).
 */
export interface MeanVariantStats {
  key: string;
  exposures: number;
  number_of_samples: number;
  sum: number;
  sum_squares: number;
  /** When every variant has it, the analysis applies CUPED. */
  covariate?: CovariateSums;
}

/** A funnel metric for one variant: persons exposed, and persons reaching each step of the funnel in order. */
export interface FunnelVariantStats {
  key: string;
  exposures: number;
  step_counts: number[];
}

/** A variant reduced to what the frequentist tests use: units, mean per unit and variance per unit (s², n − 1). */
export interface VariantEstimate {
  key: string;
  n: number;
  mean: number;
  variance: number;
}

/** A proportion: `successes` of `n` units. */
export interface ProportionStats {
  key: string;
  n: number;
  successes: number;
}

/**
 * The (approximately Gaussian) posterior of a variant's metric mean: its mean and variance, and where the mean is
 * positive, the mean and variance of its logarithm, which the relative lift is built from.
 */
export interface Posterior {
  key: string;
  mean: number;
  variance: number;
  log: { mean: number; variance: number } | null;
}

export type Interval = [number, number];
