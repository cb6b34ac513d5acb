/**
 * Special functions under the experiment statistics: log-gamma, the regularized incomplete gamma and beta functions,
 * digamma and trigamma. Each is written here from its defining series, continued fraction or asymptotic expansion
 * (the methods are the classic ones described in Press et al., "Numerical Recipes", ch. 6, and Abramowitz & Stegun,
 * "Handbook of Mathematical Functions", ch. 6 and 26); the accuracy each reaches is pinned by the unit tests.
 */

/** Relative precision the series and continued fractions stop at. */
const EPS = 1e-15;
/** Stands in for 0 in a continued fraction's running quotients, so that none divides by zero. */
const TINY = 1e-300;
/** Terms before a series or continued fraction is taken as converged; convergence needs ~√max(a, b) terms. */
const MAX_TERMS = 100_000;

// Lanczos' approximation with g = 7 and 9 coefficients (C. Lanczos, SIAM J. Numer. Anal. B 1, 1964; the coefficient
// set is the widely published one for g = 7): Γ(z + 1) = √(2π) (z + g + ½)^(z + ½) e^−(z + g + ½) A_g(z), where
// A_g(z) = c0 + Σ c_k / (z + k). Relative error below 2·10⁻¹⁵ for positive arguments.
const LANCZOS_G = 7;
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LN_2PI = 0.5 * Math.log(2 * Math.PI);

/** ln Γ(x) for x > 0 (and for non-integer x < 0 through the reflection formula Γ(x)Γ(1−x) = π / sin(πx)). */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0]!;
  for (let k = 1; k < LANCZOS.length; k++) sum += LANCZOS[k]! / (z + k);
  const t = z + LANCZOS_G + 0.5;
  return HALF_LN_2PI + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b). */
export function lnBeta(a: number, b: number): number {
  return lnGamma(a) + lnGamma(b) - lnGamma(a + b);
}

/**
 * Value of the continued fraction b0 + a1/(b1 + a2/(b2 + a3/(b3 + …))) by the modified Lentz method (W. J. Lentz,
 * Applied Optics 15, 1976, with Thompson & Barnett's modification): the value is built as a product of ratios of
 * successive convergents, carried as two running quotients C_n = b_n + a_n / C_{n−1} and D_n = 1 / (b_n + a_n D_{n−1});
 * a quotient that would be 0 is replaced by a tiny number. Stops when a ratio C_n·D_n is 1 within EPS.
 */
function continuedFraction(b0: number, a: (n: number) => number, b: (n: number) => number): number {
  let f = b0 === 0 ? TINY : b0;
  let c = f;
  let d = 0;
  for (let n = 1; n <= MAX_TERMS; n++) {
    const an = a(n);
    const bn = b(n);
    d = bn + an * d;
    if (Math.abs(d) < TINY) d = TINY;
    d = 1 / d;
    c = bn + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    const ratio = c * d;
    f *= ratio;
    if (Math.abs(ratio - 1) < EPS) return f;
  }
  return f;
}

/** e^−x x^a / Γ(a), the factor in front of both forms of the incomplete gamma function. */
function gammaFront(a: number, x: number): number {
  return Math.exp(-x + a * Math.log(x) - lnGamma(a));
}

/**
 * Lower regularized incomplete gamma by its power series, good for x < a + 1:
 * P(a, x) = e^−x x^a / Γ(a) · Σ_{n≥0} x^n / (a (a+1) … (a+n)).
 */
function gammaSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  for (let n = 1; n <= MAX_TERMS; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) break;
  }
  return sum * gammaFront(a, x);
}

/**
 * Upper regularized incomplete gamma by Legendre's continued fraction, good for x ≥ a + 1:
 * Q(a, x) = e^−x x^a / Γ(a) · 1/(x+1−a − 1(1−a)/(x+3−a − 2(2−a)/(x+5−a − …))).
 */
function gammaFraction(a: number, x: number): number {
  const cf = continuedFraction(
    0,
    (n) => (n === 1 ? 1 : -(n - 1) * (n - 1 - a)),
    (n) => x + 2 * n - 1 - a,
  );
  return cf * gammaFront(a, x);
}

/** P(a, x) = γ(a, x) / Γ(a), the lower regularized incomplete gamma function (a > 0, x ≥ 0). */
export function regularizedGammaP(a: number, x: number): number {
  if (!(a > 0) || Number.isNaN(x)) return NaN;
  if (x <= 0) return 0;
  if (x === Infinity) return 1;
  return x < a + 1 ? gammaSeries(a, x) : 1 - gammaFraction(a, x);
}

/** Q(a, x) = 1 − P(a, x), computed directly so that small upper tails keep their relative precision. */
export function regularizedGammaQ(a: number, x: number): number {
  if (!(a > 0) || Number.isNaN(x)) return NaN;
  if (x <= 0) return 1;
  if (x === Infinity) return 0;
  return x < a + 1 ? 1 - gammaSeries(a, x) : gammaFraction(a, x);
}

/**
 * The continued fraction of the incomplete beta function (Abramowitz & Stegun 26.5.8):
 * I_x(a, b) = x^a (1−x)^b / (a B(a, b)) · 1/(1 + d1/(1 + d2/(1 + …))), with
 * d_{2m+1} = −(a+m)(a+b+m) x / ((a+2m)(a+2m+1)) and d_{2m} = m(b−m) x / ((a+2m−1)(a+2m)).
 * It converges fast for x < (a+1)/(a+b+2); above that the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) is used.
 */
function betaFraction(a: number, b: number, x: number): number {
  const d = (k: number): number => {
    const m = Math.floor(k / 2);
    return k % 2 === 1 ? (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1)) : (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
  };
  return continuedFraction(
    0,
    (n) => (n === 1 ? 1 : d(n - 1)),
    () => 1,
  );
}

/** I_x(a, b), the regularized incomplete beta function (a, b > 0, 0 ≤ x ≤ 1). */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (!(a > 0) || !(b > 0) || Number.isNaN(x)) return NaN;
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lnFront = a * Math.log(x) + b * Math.log1p(-x) - lnBeta(a, b);
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lnFront) * betaFraction(a, b, x)) / a;
  return 1 - (Math.exp(lnFront) * betaFraction(b, a, 1 - x)) / b;
}

/** Below this argument the recurrences ψ(x) = ψ(x+1) − 1/x and ψ'(x) = ψ'(x+1) + 1/x² move x up first. */
const ASYMPTOTIC_FROM = 10;

/**
 * ψ(x) = d/dx ln Γ(x) for x > 0: the recurrence lifts x to ≥ 10, then the asymptotic expansion
 * ψ(x) ≈ ln x − 1/(2x) − Σ B_2k / (2k x^2k) with the Bernoulli numbers B2 … B10 (A&S 6.3.18).
 */
export function digamma(x: number): number {
  if (!(x > 0)) return NaN;
  let shift = 0;
  while (x < ASYMPTOTIC_FROM) {
    shift -= 1 / x;
    x += 1;
  }
  const inv2 = 1 / (x * x);
  const series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))));
  return shift + Math.log(x) - 0.5 / x - series;
}

/**
 * ψ'(x), the trigamma function, for x > 0: the recurrence lifts x to ≥ 10, then
 * ψ'(x) ≈ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1) with B2 … B10 (A&S 6.4.12).
 */
export function trigamma(x: number): number {
  if (!(x > 0)) return NaN;
  let shift = 0;
  while (x < ASYMPTOTIC_FROM) {
    shift += 1 / (x * x);
    x += 1;
  }
  const inv = 1 / x;
  const inv2 = inv * inv;
  const series = inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 * (1 / 30 - (5 / 66) * inv2))));
  return shift + inv + 0.5 * inv2 + series;
}
