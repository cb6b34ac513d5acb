/** Sample-ratio mismatch, the minimum-sample guard and the peeking note. */
import t from 'tap';
import {
  ExperimentInputError,
  meanGuard,
  normalCdf,
  peekingNote,
  proportionGuard,
  sampleRatioMismatch,
} from '../../src/domain/experiments/index.js';
import { close } from '../helpers/approx.js';

const fiftyFifty = [
  { key: 'control', rollout_percentage: 50 },
  { key: 'test', rollout_percentage: 50 },
];

t.test('a skewed 50/50 split is flagged, an even one is not', async (t) => {
  const skewed = sampleRatioMismatch(
    [
      { key: 'control', exposures: 5000 },
      { key: 'test', exposures: 5400 },
    ],
    fiftyFifty,
  );
  // χ² = 2 · 200² / 5,200; with one degree of freedom p = 2(1 − Φ(√χ²)).
  const chi = (2 * 200 ** 2) / 5200;
  close(t, skewed.chi_squared, chi, 1e-12, 'χ²');
  t.equal(skewed.degrees_of_freedom, 1);
  close(t, skewed.p_value / (2 * (1 - normalCdf(Math.sqrt(chi)))), 1, 1e-10, 'p-value');
  t.ok(skewed.p_value < 0.001 && skewed.flagged, `flagged (p = ${skewed.p_value})`);
  t.same(skewed.variants, [
    { key: 'control', observed: 5000, expected: 5200 },
    { key: 'test', observed: 5400, expected: 5200 },
  ]);

  const even = sampleRatioMismatch(
    [
      { key: 'control', exposures: 5000 },
      { key: 'test', exposures: 5050 },
    ],
    fiftyFifty,
  );
  t.ok(even.p_value > 0.5 && !even.flagged, `not flagged (p = ${even.p_value})`);
});

t.test('uneven configured splits and several variants', async (t) => {
  const split = [
    { key: 'control', rollout_percentage: 20 },
    { key: 'a', rollout_percentage: 40 },
    { key: 'b', rollout_percentage: 40 },
  ];
  const fine = sampleRatioMismatch(
    [
      { key: 'control', exposures: 2010 },
      { key: 'a', exposures: 3980 },
      { key: 'b', exposures: 4010 },
    ],
    split,
  );
  t.equal(fine.degrees_of_freedom, 2);
  // Two degrees of freedom: p = e^(−χ²/2).
  close(t, fine.p_value, Math.exp(-fine.chi_squared / 2), 1e-14, 'p = e^(−χ²/2)');
  t.notOk(fine.flagged);
  const asIfEven = sampleRatioMismatch(
    [
      { key: 'control', exposures: 2010 },
      { key: 'a', exposures: 3980 },
      { key: 'b', exposures: 4010 },
    ],
    split.map((s) => ({ ...s, rollout_percentage: 100 / 3 })),
  );
  t.ok(asIfEven.flagged, 'the same counts against an even split are a mismatch');
  const stray = sampleRatioMismatch(
    [
      { key: 'control', exposures: 100 },
      { key: 'test', exposures: 100 },
      { key: 'ghost', exposures: 3 },
    ],
    fiftyFifty,
  );
  t.equal(stray.p_value, 0, 'exposures in a variant configured at 0 % are a mismatch outright');
  t.ok(stray.flagged);
  const none = sampleRatioMismatch([], fiftyFifty);
  t.equal(none.p_value, 1, 'no exposures yet: nothing to flag');
  t.notOk(none.flagged);
  t.throws(() => sampleRatioMismatch([{ key: 'control', exposures: -1 }], fiftyFifty), ExperimentInputError);
  t.throws(() => sampleRatioMismatch([], [{ key: 'control', rollout_percentage: 0 }]), ExperimentInputError);
});

t.test('minimum-sample guard', async (t) => {
  const enough = meanGuard([
    { key: 'control', exposures: 150, number_of_samples: 150 },
    { key: 'test', exposures: 100, number_of_samples: 100 },
  ]);
  t.same(enough, { meaningful: true, computable: true, reasons: [] });
  const few = meanGuard([
    { key: 'control', exposures: 150, number_of_samples: 150 },
    { key: 'test', exposures: 40, number_of_samples: 40 },
  ]);
  t.equal(few.meaningful, false);
  t.equal(few.computable, true);
  t.same(few.reasons, [{ key: 'test', reason: 'too_few_exposures', have: 40, need: 100 }]);
  const one = meanGuard([{ key: 'control', exposures: 1, number_of_samples: 1 }], { min_exposures: 1 });
  t.equal(one.computable, false, 'a single sample has no variance');
  const rare = proportionGuard([
    { key: 'control', n: 500, successes: 4, exposures: 500 },
    { key: 'test', n: 500, successes: 497, exposures: 500 },
  ]);
  t.equal(rare.meaningful, false);
  t.same(
    rare.reasons.map((r) => `${r.key}:${r.reason}`),
    ['control:too_few_successes', 'test:too_few_failures'],
  );
  const custom = proportionGuard([{ key: 'control', n: 50, successes: 10, exposures: 50 }], { min_exposures: 50, min_successes: 10 });
  t.equal(custom.meaningful, true, 'thresholds are options');
});

t.test('peeking note', async (t) => {
  const early = peekingNote(2500, 10_000);
  t.equal(early.before_plan, true);
  t.equal(early.fraction_of_plan, 0.25);
  t.match(early.note, /before the planned sample size: 2500 of 10000 \(25\.0 %\)/);
  const done = peekingNote(10_400, 10_000);
  t.equal(done.before_plan, false);
  t.match(done.note, /past the planned sample size/);
  t.throws(() => peekingNote(10, 0), ExperimentInputError);
});
