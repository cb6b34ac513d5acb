/**
 * One metric of one experiment, analysed: validation, the minimum-sample guard, CUPED when covariates are given,
 * the chosen method (Bayesian unless asked otherwise, as in PostHog), and, when their inputs are given, the
 * sample-ratio check, the peeking note and the sequential intervals. Pure: the same input gives the same output.
 */
import { compareBayesian, type BayesianOptions, type BayesianVariantResult } from './bayesian.js';
import { cupedAdjust, hasCovariates } from './cuped.js';
import { twoProportionZTest, welchTTest, type FrequentistVariantResult } from './frequentist.js';
import { betaPosterior, funnelProportion, proportionEstimate, validateFunnelVariants, type FunnelDenominator } from './funnel-metric.js';
import { meanGuard, proportionGuard, type GuardOptions, type GuardResult } from './guard.js';
import { meanEstimate, meanPosterior, validateMeanVariants } from './mean-metric.js';
import { peekingNote, type PeekingNote } from './peeking.js';
import { sequentialDifference, type SequentialVariantResult } from './sequential.js';
import { sampleRatioMismatch, type SplitEntry, type SrmResult } from './srm.js';
import type { FunnelVariantStats, MeanVariantStats, Posterior, ProportionStats, VariantEstimate } from './types.js';
import { controlFirst } from './validate.js';

export type MetricInput =
  | { type: 'mean'; variants: MeanVariantStats[] }
  | { type: 'funnel'; variants: FunnelVariantStats[]; denominator?: FunnelDenominator };

export interface AnalysisInput {
  metric: MetricInput;
  method?: 'bayesian' | 'frequentist';
  /** Level of the frequentist test and of the sequential intervals; 0.05 unless given. */
  alpha?: number;
  bayesian?: BayesianOptions;
  guard?: GuardOptions;
  /** The flag's configured split: enables the sample-ratio check. */
  split?: SplitEntry[];
  /** Exposures planned over all variants: enables the peeking note and the sequential intervals. */
  planned_sample_size?: number;
}

export interface VariantSummary {
  key: string;
  exposures: number;
  /** Units the metric is averaged over (the conversion's denominator for funnels). */
  number_of_samples: number;
  /** Mean per unit (conversion rate for funnels), CUPED-adjusted when CUPED applied. */
  mean: number;
  /** Variance per unit, likewise. */
  variance: number;
  /** Funnels: persons who completed the funnel. */
  successes?: number;
}

export interface AnalysisResult {
  metric_type: 'mean' | 'funnel';
  method: 'bayesian' | 'frequentist';
  baseline: VariantSummary;
  variants: VariantSummary[];
  /** Per test variant; null when the guard found the data not computable. `significant` is false unless meaningful. */
  variant_results: (BayesianVariantResult | FrequentistVariantResult)[] | null;
  /** Bayesian only: the control's probability of being best. */
  baseline_probability_best: number | null;
  guard: GuardResult;
  srm: SrmResult | null;
  peeking: PeekingNote | null;
  sequential: SequentialVariantResult[] | null;
  cuped: { theta: number; covariate_mean: number; variance_reduction: { key: string; reduction: number }[] } | null;
}

interface Prepared {
  summaries: VariantSummary[];
  estimates: VariantEstimate[];
  posteriors: () => Posterior[];
  proportions: ProportionStats[] | null;
  guard: GuardResult;
  cuped: AnalysisResult['cuped'];
}

function prepareMean(variants: MeanVariantStats[], guardOptions: GuardOptions | undefined): Prepared {
  validateMeanVariants(variants);
  const guard = meanGuard(variants, guardOptions);
  let estimates = variants.map(meanEstimate);
  let cuped: AnalysisResult['cuped'] = null;
  if (hasCovariates(variants)) {
    const adjusted = cupedAdjust(variants);
    estimates = adjusted.estimates;
    cuped = { theta: adjusted.theta, covariate_mean: adjusted.covariate_mean, variance_reduction: adjusted.variance_reduction };
  }
  const summaries = variants.map((v, i) => ({ key: v.key, exposures: v.exposures, number_of_samples: v.number_of_samples, mean: estimates[i]!.mean, variance: estimates[i]!.variance }));
  return { summaries, estimates, posteriors: () => estimates.map(meanPosterior), proportions: null, guard, cuped };
}

function prepareFunnel(variants: FunnelVariantStats[], denominator: FunnelDenominator, guardOptions: GuardOptions | undefined): Prepared {
  validateFunnelVariants(variants, denominator);
  const proportions = variants.map((v) => funnelProportion(v, denominator));
  const guard = proportionGuard(
    proportions.map((p, i) => ({ ...p, exposures: variants[i]!.exposures })),
    guardOptions,
  );
  const estimates = proportions.map(proportionEstimate);
  const summaries = variants.map((v, i) => ({
    key: v.key,
    exposures: v.exposures,
    number_of_samples: proportions[i]!.n,
    mean: estimates[i]!.mean,
    variance: estimates[i]!.variance,
    successes: proportions[i]!.successes,
  }));
  return { summaries, estimates, posteriors: () => proportions.map(betaPosterior), proportions, guard, cuped: null };
}

export function analyzeMetric(input: AnalysisInput): AnalysisResult {
  const method = input.method ?? 'bayesian';
  const alpha = input.alpha ?? 0.05;
  const prepared =
    input.metric.type === 'mean'
      ? prepareMean(input.metric.variants, input.guard)
      : prepareFunnel(input.metric.variants, input.metric.denominator ?? 'exposures', input.guard);
  const { guard } = prepared;
  const [baseline, others] = controlFirst(prepared.summaries);
  const byKey = <T extends { key: string }>(items: readonly T[], key: string): T => items.find((x) => x.key === key)!;
  const control = byKey(prepared.estimates, baseline.key);

  let variantResults: AnalysisResult['variant_results'] = null;
  let baselineBest: number | null = null;
  if (guard.computable) {
    if (method === 'bayesian') {
      const comparison = compareBayesian(prepared.posteriors(), input.bayesian);
      baselineBest = comparison.baseline.probability_best;
      variantResults = comparison.variant_results;
    } else {
      variantResults = others.map((o) =>
        prepared.proportions === null
          ? welchTTest(control, byKey(prepared.estimates, o.key), { alpha })
          : twoProportionZTest(byKey(prepared.proportions, baseline.key), byKey(prepared.proportions, o.key), { alpha }),
      );
    }
    if (!guard.meaningful) variantResults = variantResults.map((r) => ({ ...r, significant: false }));
  }

  const exposures = prepared.summaries.map((s) => ({ key: s.key, exposures: s.exposures }));
  const totalExposures = exposures.reduce((a, e) => a + e.exposures, 0);
  let sequential: SequentialVariantResult[] | null = null;
  let peeking: PeekingNote | null = null;
  if (input.planned_sample_size !== undefined) {
    peeking = peekingNote(totalExposures, input.planned_sample_size);
    if (guard.computable) {
      sequential = others.map((o) => {
        const r = sequentialDifference(control, byKey(prepared.estimates, o.key), { planned_sample_size: input.planned_sample_size!, sample_size: totalExposures, alpha });
        return guard.meaningful ? r : { ...r, significant: false };
      });
    }
  }
  return {
    metric_type: input.metric.type,
    method,
    baseline,
    variants: others,
    variant_results: variantResults,
    baseline_probability_best: baselineBest,
    guard,
    srm: input.split !== undefined ? sampleRatioMismatch(exposures, input.split) : null,
    peeking,
    sequential,
    cuped: prepared.cuped,
  };
}
