/** One metric analysed end to end: the composition of validation, guard, CUPED, method, SRM, peeking and sequential. */
import t from 'tap';
import {
  analyzeMetric,
  betaPosterior,
  compareBayesianPair,
  ExperimentInputError,
  meanEstimate,
  twoProportionZTest,
  welchTTest,
  type BayesianVariantResult,
  type FrequentistVariantResult,
  type MeanVariantStats,
} from '../../src/domain/experiments/index.js';

const meanVariants: MeanVariantStats[] = [
  { key: 'control', exposures: 5000, number_of_samples: 5000, sum: 50_000, sum_squares: 545_000 },
  { key: 'test', exposures: 5400, number_of_samples: 5400, sum: 56_700, sum_squares: 646_000 },
];

t.test('mean metric, Bayesian by default, with the split and a plan', async (t) => {
  const input = {
    metric: { type: 'mean' as const, variants: meanVariants },
    split: [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ],
    planned_sample_size: 20_000,
  };
  const result = analyzeMetric(input);
  t.equal(result.method, 'bayesian');
  t.equal(result.metric_type, 'mean');
  t.equal(result.baseline.key, 'control');
  t.same(
    result.variants.map((v) => v.key),
    ['test'],
  );
  t.equal(result.baseline.mean, 10);
  t.equal(result.guard.meaningful, true);
  t.equal(result.srm!.flagged, true, '5,000 vs 5,400 at 50/50 is a sample-ratio mismatch');
  t.equal(result.peeking!.before_plan, true);
  t.equal(result.sequential!.length, 1);
  t.equal(result.cuped, null);
  const r = result.variant_results![0] as BayesianVariantResult;
  t.equal(r.method, 'bayesian');
  t.ok(r.chance_to_win > 0.99 && r.significant, `chance_to_win ${r.chance_to_win}`);
  t.ok(result.baseline_probability_best! < 0.01);
  t.same(analyzeMetric(input), result, 'deterministic: the same input gives the same output');
  // Sequential interval is wider than the fixed one at 52 % of the plan.
  const fixed = welchTTest(meanEstimate(meanVariants[0]!), meanEstimate(meanVariants[1]!));
  const seq = result.sequential![0]!;
  t.ok(seq.confidence_interval_absolute[1] - seq.confidence_interval_absolute[0] > fixed.confidence_interval_absolute[1] - fixed.confidence_interval_absolute[0]);
});

t.test('mean metric, frequentist', async (t) => {
  const result = analyzeMetric({ metric: { type: 'mean', variants: meanVariants }, method: 'frequentist' });
  const r = result.variant_results![0] as FrequentistVariantResult;
  t.same(r, welchTTest(meanEstimate(meanVariants[0]!), meanEstimate(meanVariants[1]!)));
  t.equal(result.srm, null);
  t.equal(result.peeking, null);
  t.equal(result.sequential, null);
  t.equal(result.baseline_probability_best, null);
});

t.test('funnel metric: conversions over exposures, or over the first step', async (t) => {
  const variants = [
    { key: 'control', exposures: 1000, step_counts: [800, 400, 100] },
    { key: 'test', exposures: 1000, step_counts: [820, 430, 130] },
  ];
  const bayes = analyzeMetric({ metric: { type: 'funnel', variants } });
  t.equal(bayes.baseline.mean, 0.1, 'control converts 100 of 1,000 exposed');
  t.equal(bayes.baseline.successes, 100);
  const expected = compareBayesianPair(betaPosterior({ key: 'control', n: 1000, successes: 100 }), betaPosterior({ key: 'test', n: 1000, successes: 130 }));
  t.equal((bayes.variant_results![0] as BayesianVariantResult).chance_to_win, expected.chance_to_win);
  const firstStep = analyzeMetric({ metric: { type: 'funnel', variants, denominator: 'first_step' }, method: 'frequentist' });
  t.equal(firstStep.baseline.mean, 100 / 800);
  t.same(firstStep.variant_results![0], twoProportionZTest({ key: 'control', n: 800, successes: 100 }, { key: 'test', n: 820, successes: 130 }));
  t.throws(
    () => analyzeMetric({ metric: { type: 'funnel', variants: [{ key: 'control', exposures: 10, step_counts: [5, 6] }, variants[1]!] } }),
    ExperimentInputError,
    'a later step cannot have more persons',
  );
  t.throws(
    () => analyzeMetric({ metric: { type: 'funnel', variants: [{ key: 'control', exposures: 10, step_counts: [50] }, variants[1]!] } }),
    ExperimentInputError,
    'more conversions than exposures',
  );
});

t.test('the guard: too little data is never significant', async (t) => {
  const small = [
    { key: 'control', exposures: 60, step_counts: [6] },
    { key: 'test', exposures: 60, step_counts: [30] },
  ];
  for (const method of ['bayesian', 'frequentist'] as const) {
    const result = analyzeMetric({ metric: { type: 'funnel', variants: small }, method, planned_sample_size: 1000 });
    t.equal(result.guard.meaningful, false);
    t.ok(result.variant_results !== null, `${method}: numbers are still given`);
    t.equal(result.variant_results![0]!.significant, false, `${method}: not significant below the guard`);
    t.equal(result.sequential![0]!.significant, false, 'nor the sequential interval');
  }
  const none = analyzeMetric({
    metric: {
      type: 'mean',
      variants: [
        { key: 'control', exposures: 1, number_of_samples: 1, sum: 3, sum_squares: 9 },
        { key: 'test', exposures: 0, number_of_samples: 0, sum: 0, sum_squares: 0 },
      ],
    },
  });
  t.equal(none.guard.computable, false);
  t.equal(none.variant_results, null, 'nothing to compute');
});

t.test('CUPED applies when every variant brings covariate sums', async (t) => {
  const withCovariates: MeanVariantStats[] = [
    { key: 'control', exposures: 4, number_of_samples: 4, sum: 20, sum_squares: 110, covariate: { sum: 10, sum_squares: 30, sum_product: 55 } },
    { key: 'test', exposures: 4, number_of_samples: 4, sum: 26, sum_squares: 180, covariate: { sum: 12, sum_squares: 40, sum_product: 82 } },
  ];
  const result = analyzeMetric({ metric: { type: 'mean', variants: withCovariates }, guard: { min_exposures: 1 } });
  t.ok(result.cuped !== null);
  t.ok(result.baseline.mean !== 5, 'the summary carries the adjusted mean');
  const partly = analyzeMetric({ metric: { type: 'mean', variants: [withCovariates[0]!, { ...withCovariates[1]!, covariate: undefined }] }, guard: { min_exposures: 1 } });
  t.equal(partly.cuped, null, 'not when a variant lacks them');
});

t.test('validation', async (t) => {
  const bad = (variants: MeanVariantStats[]): (() => unknown) => () => analyzeMetric({ metric: { type: 'mean', variants } });
  t.throws(bad([{ ...meanVariants[1]! }]), ExperimentInputError, 'no control');
  t.throws(bad([meanVariants[0]!]), ExperimentInputError, 'no test variant');
  t.throws(bad([meanVariants[0]!, meanVariants[0]!]), ExperimentInputError, 'duplicate key');
  t.throws(bad([meanVariants[0]!, { ...meanVariants[1]!, exposures: -3 }]), ExperimentInputError, 'negative count');
  t.throws(bad([meanVariants[0]!, { ...meanVariants[1]!, number_of_samples: 2.5 }]), ExperimentInputError, 'fractional count');
  t.throws(bad([meanVariants[0]!, { ...meanVariants[1]!, sum: Number.NaN }]), ExperimentInputError, 'NaN sum');
  t.throws(bad([meanVariants[0]!, { ...meanVariants[1]!, sum_squares: -1 }]), ExperimentInputError, 'negative sum of squares');
});
