/**
 * The distribution and special functions under the experiment statistics, against published values (normal and t
 * quantiles, chi-squared critical values as printed in standard statistical tables, e.g. Abramowitz & Stegun
 * ch. 26) and against identities that hold exactly.
 */
import t from 'tap';
import {
  chiSquaredCdf,
  chiSquaredSurvival,
  digamma,
  lnBeta,
  lnGamma,
  normalCdf,
  normalQuantile,
  regularizedBeta,
  regularizedGammaP,
  regularizedGammaQ,
  studentTCdf,
  studentTPdf,
  studentTQuantile,
  trigamma,
} from '../../src/domain/experiments/index.js';
import { close } from '../helpers/approx.js';

t.test('normal quantiles and CDF against published values', async (t) => {
  close(t, normalQuantile(0.975), 1.959964, 5e-7, 'Φ⁻¹(0.975)');
  close(t, normalQuantile(0.975), 1.959963984540054, 1e-13, 'Φ⁻¹(0.975), full precision');
  close(t, normalQuantile(0.025), -1.959963984540054, 1e-13, 'Φ⁻¹(0.025)');
  close(t, normalQuantile(0.95), 1.6448536269514722, 1e-13, 'Φ⁻¹(0.95)');
  close(t, normalQuantile(0.995), 2.5758293035489004, 1e-13, 'Φ⁻¹(0.995)');
  close(t, normalQuantile(0.9), 1.2815515655446004, 1e-13, 'Φ⁻¹(0.9)');
  close(t, normalQuantile(0.999), 3.090232306167813, 1e-12, 'Φ⁻¹(0.999)');
  close(t, normalQuantile(1e-10), -6.361340902404056, 1e-10, 'Φ⁻¹(10⁻¹⁰)');
  t.equal(normalQuantile(0.5), 0);
  t.equal(normalQuantile(0), -Infinity);
  t.equal(normalQuantile(1), Infinity);
  t.ok(Number.isNaN(normalQuantile(1.5)));
  close(t, normalCdf(0), 0.5, 1e-16, 'Φ(0)');
  close(t, normalCdf(1.96), 0.9750021048517795, 1e-15, 'Φ(1.96)');
  close(t, normalCdf(1), 0.8413447460685429, 1e-15, 'Φ(1)');
  close(t, normalCdf(-3) / 0.0013498980316300946, 1, 1e-13, 'Φ(−3), relative');
  close(t, normalCdf(-10) / 7.619853024160527e-24, 1, 1e-12, 'Φ(−10), relative');
  for (const p of [1e-12, 1e-6, 0.001, 0.02, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.97575, 0.99, 1 - 1e-6]) {
    const x = normalQuantile(p);
    close(t, normalCdf(x) / p, 1, 1e-12, `Φ(Φ⁻¹(${p})) = ${p}`);
  }
});

t.test("Student's t quantiles against published tables", async (t) => {
  // Two-sided 5 % critical values (the 0.975 quantile) as printed in t tables, to their three decimals.
  const table975: [number, number][] = [
    [1, 12.706],
    [2, 4.303],
    [3, 3.182],
    [4, 2.776],
    [5, 2.571],
    [10, 2.228],
    [15, 2.131],
    [20, 2.086],
    [30, 2.042],
    [60, 2.0],
    [120, 1.98],
  ];
  for (const [df, value] of table975) close(t, studentTQuantile(0.975, df), value, 5e-4, `t(0.975, ${df})`);
  const table95: [number, number][] = [
    [1, 6.314],
    [5, 2.015],
    [10, 1.812],
    [20, 1.725],
  ];
  for (const [df, value] of table95) close(t, studentTQuantile(0.95, df), value, 5e-4, `t(0.95, ${df})`);
  close(t, studentTQuantile(0.995, 10), 3.169, 5e-4, 't(0.995, 10)');
  close(t, studentTQuantile(0.995, 30), 2.75, 5e-4, 't(0.995, 30)');
  close(t, studentTQuantile(0.025, 10), -2.228, 5e-4, 't(0.025, 10)');
  // Large ν tends to the normal.
  close(t, studentTQuantile(0.975, 1e6), 1.959966, 1e-6, 't(0.975, 10⁶)');
  close(t, studentTQuantile(0.975, 1e12), 1.959963984540054, 1e-9, 't(0.975, 10¹²)');
});

t.test("Student's t CDF: closed forms for ν = 1, 2, symmetry, and quantile round trips for real ν", async (t) => {
  for (const x of [-30, -2.5, -0.3, 0, 0.7, 4, 50]) {
    close(t, studentTCdf(x, 1), 0.5 + Math.atan(x) / Math.PI, 1e-14, `Cauchy CDF at ${x}`);
    close(t, studentTCdf(x, 2), 0.5 + x / (2 * Math.sqrt(2 + x * x)), 1e-14, `t₂ CDF at ${x}`);
    close(t, studentTCdf(x, 7.3) + studentTCdf(-x, 7.3), 1, 1e-14, `symmetry at ${x}`);
  }
  for (const df of [1, 1.5, 2, 2.7, 3, 9.708, 24.99, 100.5, 5000]) {
    for (const p of [1e-6, 0.001, 0.025, 0.2, 0.6, 0.975, 0.999]) {
      const q = studentTQuantile(p, df);
      close(t, studentTCdf(q, df) / p, 1, 1e-10, `T_${df}(t_${df}(${p}))`);
    }
  }
  // Extreme tails: the quantile still inverts the CDF to relative precision.
  for (const df of [3, 9.5, 40]) {
    for (const p of [1e-300, 1e-100, 1e-20]) close(t, studentTCdf(studentTQuantile(p, df), df) / p, 1, 1e-11, `T_${df}(t_${df}(${p}))`);
  }
  close(t, normalCdf(normalQuantile(1e-300)) / 1e-300, 1, 1e-12, 'Φ(Φ⁻¹(10⁻³⁰⁰))');
  // The density integrates to the CDF: Simpson over [0, 2] for ν = 5.
  const df = 5;
  const steps = 2000;
  let sum = 0;
  for (let k = 0; k <= steps; k++) sum += (k === 0 || k === steps ? 1 : k % 2 === 1 ? 4 : 2) * studentTPdf((2 * k) / steps, df);
  close(t, ((2 / steps) * sum) / 3, studentTCdf(2, df) - 0.5, 1e-12, '∫₀² f₅ = T₅(2) − ½');
});

t.test('chi-squared CDF against critical values, and the closed form for 2 degrees of freedom', async (t) => {
  const critical: [number, number, number][] = [
    // [x, k, CDF]
    [3.841459, 1, 0.95],
    [6.634897, 1, 0.99],
    [10.827566, 1, 0.999],
    [5.991465, 2, 0.95],
    [7.814728, 3, 0.95],
    [11.070498, 5, 0.95],
    [1.145476, 5, 0.05],
    [23.209251, 10, 0.99],
    [124.342113, 100, 0.95],
  ];
  for (const [x, k, p] of critical) close(t, chiSquaredCdf(x, k), p, 1e-6, `χ²_${k} CDF at ${x}`);
  for (const x of [0.01, 0.5, 3, 20, 80]) close(t, chiSquaredCdf(x, 2), -Math.expm1(-x / 2), 1e-15, `χ²₂ CDF at ${x}`);
  close(t, chiSquaredSurvival(80, 2) / Math.exp(-40), 1, 1e-12, 'χ²₂ upper tail at 80, relative');
  t.equal(chiSquaredCdf(0, 3), 0);
  t.equal(chiSquaredSurvival(0, 3), 1);
});

t.test('incomplete gamma identities', async (t) => {
  for (const x of [0.1, 1, 2.5, 7, 30]) {
    close(t, regularizedGammaP(1, x), -Math.expm1(-x), 1e-15, `P(1, ${x}) = 1 − e^−x`);
    for (const a of [0.3, 1.5, 4, 12]) {
      close(t, regularizedGammaP(a, x) + regularizedGammaQ(a, x), 1, 1e-14, `P + Q = 1 at (${a}, ${x})`);
      // P(a + 1, x) = P(a, x) − x^a e^−x / Γ(a + 1).
      const step = Math.exp(a * Math.log(x) - x - lnGamma(a + 1));
      close(t, regularizedGammaP(a + 1, x), regularizedGammaP(a, x) - step, 1e-13, `recurrence at (${a}, ${x})`);
    }
    // Integer a: Q(n, x) is the Poisson probability of fewer than n events with mean x.
    for (const n of [1, 3, 8]) {
      let poisson = 0;
      let term = Math.exp(-x);
      for (let k = 0; k < n; k++) {
        poisson += term;
        term *= x / (k + 1);
      }
      close(t, regularizedGammaQ(n, x), poisson, 1e-14, `Q(${n}, ${x}) = Poisson(< ${n}; ${x})`);
    }
  }
  // P(½, x²) = erf(x): erf(1) and erf(0.5) as tabulated.
  close(t, regularizedGammaP(0.5, 1), 0.8427007929497149, 1e-15, 'erf(1)');
  close(t, regularizedGammaP(0.5, 0.25), 0.5204998778130465, 1e-15, 'erf(0.5)');
});

t.test('incomplete beta identities', async (t) => {
  for (const x of [0.01, 0.2, 0.5, 0.77, 0.99]) {
    for (const a of [0.5, 1, 2.5, 30]) {
      close(t, regularizedBeta(x, a, 1), x ** a, 1e-14, `I_${x}(${a}, 1) = x^a`);
      close(t, regularizedBeta(x, 1, a), 1 - (1 - x) ** a, 1e-14, `I_${x}(1, ${a}) = 1 − (1 − x)^b`);
      for (const b of [0.5, 3, 41.5]) {
        close(t, regularizedBeta(x, a, b) + regularizedBeta(1 - x, b, a), 1, 1e-13, `I_x(a, b) + I_{1−x}(b, a) = 1 at (${x}, ${a}, ${b})`);
        // I_x(a + 1, b) = I_x(a, b) − x^a (1 − x)^b / (a B(a, b)).
        const step = Math.exp(a * Math.log(x) + b * Math.log1p(-x) - Math.log(a) - lnBeta(a, b));
        close(t, regularizedBeta(x, a + 1, b), regularizedBeta(x, a, b) - step, 1e-13, `recurrence at (${x}, ${a}, ${b})`);
      }
    }
  }
  // At a = 400, ln B carries the rounding of ln Γ(800) ≈ 4,520 (about 10⁻¹³), hence the looser tolerance.
  for (const a of [0.5, 2, 17.25, 400]) close(t, regularizedBeta(0.5, a, a), 0.5, 1e-12, `I_½(${a}, ${a}) = ½`);
  // Integer parameters: I_p(k, n − k + 1) = P(Binomial(n, p) ≥ k).
  const n = 20;
  const p = 0.3;
  for (const k of [1, 5, 6, 12, 20]) {
    let tail = 0;
    for (let j = k; j <= n; j++) tail += Math.exp(lnGamma(n + 1) - lnGamma(j + 1) - lnGamma(n - j + 1) + j * Math.log(p) + (n - j) * Math.log1p(-p));
    close(t, regularizedBeta(p, k, n - k + 1), tail, 1e-13, `I_0.3(${k}, ${n - k + 1}) = P(Bin(20, 0.3) ≥ ${k})`);
  }
});

t.test('log-gamma, digamma, trigamma', async (t) => {
  let factorial = 1;
  for (let n = 1; n <= 20; n++) {
    close(t, lnGamma(n), Math.log(factorial), 1e-13 * Math.max(1, Math.log(factorial)), `ln Γ(${n}) = ln ${n - 1}!`);
    factorial *= n;
  }
  close(t, lnGamma(0.5), 0.5 * Math.log(Math.PI), 1e-15, 'ln Γ(½) = ln √π');
  close(t, Math.exp(lnGamma(0.1)), 9.513507698668732, 1e-12, 'Γ(0.1)');
  close(t, lnGamma(100), 359.1342053695754, 1e-12, 'ln 99!');
  const eulerGamma = 0.5772156649015329;
  close(t, digamma(1), -eulerGamma, 1e-13, 'ψ(1) = −γ');
  close(t, digamma(0.5), -eulerGamma - 2 * Math.LN2, 1e-13, 'ψ(½) = −γ − 2 ln 2');
  close(t, trigamma(1), Math.PI ** 2 / 6, 1e-13, "ψ'(1) = π²/6");
  close(t, trigamma(0.5), Math.PI ** 2 / 2, 1e-13, "ψ'(½) = π²/2");
  for (const x of [0.3, 2.2, 9.9, 150]) {
    close(t, digamma(x + 1), digamma(x) + 1 / x, 1e-12, `ψ(${x} + 1) = ψ(${x}) + 1/${x}`);
    close(t, trigamma(x + 1), trigamma(x) - 1 / (x * x), 1e-12, `ψ'(${x} + 1) = ψ'(${x}) − 1/${x}²`);
  }
});
