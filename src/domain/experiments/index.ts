/**
 * # Experiment statistics
 *
 * Pure functions (no I/O, no clock, no randomness) that turn per-variant sufficient statistics of one metric into
 * the results PostHog shows for an experiment: an A/B(/n) test on a multivariate flag whose control variant is named
 * `control`. Product reference: PostHog's experiment statistics documentation ("Bayesian statistics",
 * "Frequentist statistics" and "Experiments under the hood" in posthog.com/docs/experiments), whose field names
 * (`number_of_samples`, `sum`, `sum_squares`, `chance_to_win`, `credible_interval`, `p_value`,
 * `confidence_interval`, `significant`) the results keep.
 *
 * ## Inputs
 * - Mean metric, per variant: `{ key, exposures, number_of_samples, sum, sum_squares }` (Σy, Σy² over
 *   number_of_samples units), optionally `covariate: { sum, sum_squares, sum_product }` (Σx, Σx², Σxy) for CUPED.
 * - Funnel metric, per variant: `{ key, exposures, step_counts[] }`. Conversion = persons at the last step /
 *   persons exposed (PostHog's new engine: successes over exposed persons); `first_step` as an option.
 *
 * ## Formulas (each module's comment has the detail)
 * - Mean and variance: ȳ = Σy/n, s² = (Σy² − ȳΣy)/(n − 1).                                   mean-metric.ts
 * - Bayesian (default): flat prior, μ ~ N(ȳ, s²/n); conversions Beta(1 + s, 1 + n − s).       bayesian.ts
 *   Relative lift on the log scale: ln(1 + L) ~ N(E ln μ_t − E ln μ_c, Var ln μ_t + Var ln μ_c), with the delta
 *   method Var ln μ ≈ Var μ / μ² for means and the exact Beta moments ψ(α) − ψ(α+β), ψ'(α) − ψ'(α+β) for
 *   conversions. chance_to_win = Φ(m/√v); 95 % credible interval exp(m ± 1.96√v) − 1; significant when
 *   chance_to_win ≥ 0.95 or ≤ 0.05; probability of being best by Simpson quadrature (deterministic).
 * - Frequentist: Welch's t-test with Welch–Satterthwaite ν (Welch 1947); two-proportion z-test with    frequentist.ts
 *   pooled standard error; intervals of the absolute difference and of the relative one (delta method,
 *   Deng, Knoblich & Lu 2018); significant when p < 0.05.
 * - Distributions: Φ via the incomplete gamma function (erfc(z) = Q(½, z²)), Φ⁻¹ by Acklam's      distributions.ts
 *   approximation plus one Halley step, Student's t via the regularized incomplete beta function    special-functions.ts
 *   (continued fraction, modified Lentz), chi-squared via the regularized incomplete gamma function
 *   (series / continued fraction), ln Γ by Lanczos, digamma and trigamma by asymptotic series.
 * - Sample-ratio mismatch: Pearson's chi-squared goodness of fit against the flag's rollout               srm.ts
 *   percentages, k − 1 degrees of freedom, flagged when p < 0.001.
 * - Minimum-sample guard: 100 exposures per variant; conversions also ≥ 5 successes and ≥ 5 failures.   guard.ts
 * - Peeking note: whether the current look comes before the planned sample size.                      peeking.ts
 * - Sequential: always-valid confidence sequence of the difference, two-sided normal mixture            sequential.ts
 *   (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021): d ± se √(((n + r)/n) ln((n + r)/(r α²))),
 *   r = N_planned / y, y − ln(1 + y) = 2 ln(1/α); asymptotic validity with estimated variance
 *   (Waudby-Smith et al. 2024); the mSPRT interval of Johari et al. 2017.
 * - CUPED: θ = pooled within-variant cov(X, Y) / var(X); adjusted mean ȳ − θ(x̄_i − x̄),                 cuped.ts
 *   variance s²_y − 2θ s_xy + θ² s²_x (Deng, Xu, Kohavi & Walker 2013).
 *
 * ## References
 * - B. L. Welch, "The generalization of 'Student's' problem when several different population variances are
 *   involved", Biometrika 34 (1947).
 * - S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
 *   sequences", Annals of Statistics 49 (2021).
 * - H. Robbins, "Statistical methods related to the law of the iterated logarithm", Ann. Math. Statist. 41 (1970).
 * - I. Waudby-Smith, D. Arbour, R. Sinha, E. H. Kennedy, A. Ramdas, "Time-uniform central limit theory and
 *   asymptotic confidence sequences", Annals of Statistics (2024).
 * - R. Johari, P. Koomen, L. Pekelis, D. Walsh, "Peeking at A/B tests", KDD 2017.
 * - A. Deng, Y. Xu, R. Kohavi, T. Walker, "Improving the sensitivity of online controlled experiments by utilizing
 *   pre-experiment data" (CUPED), WSDM 2013.
 * - A. Deng, U. Knoblich, J. Lu, "Applying the delta method in metric analytics", KDD 2018.
 * - P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution function" (2003).
 * - W. H. Press et al., "Numerical Recipes", ch. 6 (incomplete gamma and beta functions, Lentz's method);
 *   M. Abramowitz, I. A. Stegun, "Handbook of Mathematical Functions", ch. 6 and 26.
 * - PostHog, experiment statistics documentation (Bayesian and frequentist methods; product reference).
 */
export { analyzeMetric, type AnalysisInput, type AnalysisResult, type MetricInput, type VariantSummary } from './analyze.js';
export { compareBayesian, compareBayesianPair, probabilityBest, type BayesianComparison, type BayesianOptions, type BayesianVariantResult } from './bayesian.js';
export { cupedAdjust, cupedTheta, hasCovariates, type CupedResult } from './cuped.js';
export {
  chiSquaredCdf,
  chiSquaredSurvival,
  normalCdf,
  normalPdf,
  normalQuantile,
  normalSurvival,
  studentTCdf,
  studentTPdf,
  studentTQuantile,
  studentTTwoSided,
} from './distributions.js';
export { twoProportionZTest, welchDegreesOfFreedom, welchTTest, type FrequentistOptions, type FrequentistVariantResult } from './frequentist.js';
export { betaPosterior, funnelProportion, proportionEstimate, validateFunnelVariants, type FunnelDenominator } from './funnel-metric.js';
export { meanGuard, proportionGuard, type GuardOptions, type GuardReason, type GuardResult } from './guard.js';
export { meanEstimate, meanPosterior, validateMeanVariants } from './mean-metric.js';
export { peekingNote, type PeekingNote } from './peeking.js';
export { confidenceSequenceMultiplier, mixtureShape, sequentialDifference, type SequentialOptions, type SequentialVariantResult } from './sequential.js';
export { digamma, lnBeta, lnGamma, regularizedBeta, regularizedGammaP, regularizedGammaQ, trigamma } from './special-functions.js';
export { sampleRatioMismatch, SRM_THRESHOLD, type SplitEntry, type SrmResult } from './srm.js';
export * from './types.js';
