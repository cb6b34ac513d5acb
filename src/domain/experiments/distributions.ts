/**
 * Distribution functions the experiment statistics need: the standard normal (CDF, density, quantile), Student's t
 * (CDF, quantile, for any real degrees of freedom, as Welch's test produces) and chi-squared (CDF and upper tail).
 */
import { lnGamma, regularizedBeta, regularizedGammaP, regularizedGammaQ } from './special-functions.js';

const SQRT_2PI = Math.sqrt(2 * Math.PI);

/** Standard normal density φ(x). */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / SQRT_2PI;
}

/**
 * Standard normal CDF Φ(x). Through the incomplete gamma function: erfc(z) = Q(½, z²) for z ≥ 0, so
 * Φ(x) = ½ Q(½, x²/2) for x < 0 and 1 − ½ Q(½, x²/2) for x ≥ 0; the lower tail keeps full relative precision.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const half = 0.5 * regularizedGammaQ(0.5, 0.5 * x * x);
  return x < 0 ? half : 1 - half;
}

/** Upper tail 1 − Φ(x), without the cancellation of subtracting from 1. */
export function normalSurvival(x: number): number {
  return normalCdf(-x);
}

// P. J. Acklam's rational approximations to the normal quantile (2003; relative error below 1.15·10⁻⁹): a central
// rational function in q = p − ½ for 0.02425 ≤ p ≤ 0.97575, and one in √(−2 ln p) for each tail.
const ACKLAM_A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const ACKLAM_B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const ACKLAM_C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const ACKLAM_D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const ACKLAM_LOW = 0.02425;

function polynomial(coefficients: readonly number[], x: number): number {
  let value = 0;
  for (const c of coefficients) value = value * x + c;
  return value;
}

function acklam(p: number): number {
  if (p < ACKLAM_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return polynomial(ACKLAM_C, q) / (polynomial(ACKLAM_D, q) * q + 1);
  }
  if (p > 1 - ACKLAM_LOW) {
    const q = Math.sqrt(-2 * Math.log1p(-p));
    return -polynomial(ACKLAM_C, q) / (polynomial(ACKLAM_D, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (polynomial(ACKLAM_A, r) * q) / (polynomial(ACKLAM_B, r) * r + 1);
}

/**
 * Standard normal quantile Φ⁻¹(p): Acklam's approximation, then one Halley step on Φ(x) − p, which brings it to
 * about machine precision (Acklam's own recommendation). The step works on the nearer tail so that p close to 1
 * loses nothing to 1 − p.
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  const x = acklam(p);
  const e = p < 0.5 ? normalCdf(x) - p : 1 - p - normalSurvival(x);
  // Halley: with f(x) = Φ(x) − p, f' = φ, f'' = −x φ: x ← x − u / (1 + x u / 2), u = f / f'.
  const u = e * SQRT_2PI * Math.exp(0.5 * x * x);
  // Far in the tails (|x| > ~37) the density underflows; Acklam's value stands there.
  return Number.isFinite(u) ? x - u / (1 + 0.5 * x * u) : x;
}

/** Degrees of freedom past which Student's t is taken as the normal (the CDFs differ by less than 10⁻⁸ there). */
const T_AS_NORMAL_FROM = 1e8;

/** Density of Student's t with ν degrees of freedom. */
export function studentTPdf(t: number, df: number): number {
  if (df >= T_AS_NORMAL_FROM) return normalPdf(t);
  const lnC = lnGamma((df + 1) / 2) - lnGamma(df / 2) - 0.5 * Math.log(df * Math.PI);
  return Math.exp(lnC - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * Upper tail P(T > t) of Student's t for t ≥ 0: ½ I_x(ν/2, ½) with x = ν / (ν + t²) (A&S 26.7.1, written with the
 * incomplete beta function).
 */
function studentTUpperTail(t: number, df: number): number {
  if (df >= T_AS_NORMAL_FROM) return normalSurvival(t);
  const x = df / (df + t * t);
  return 0.5 * regularizedBeta(x, df / 2, 0.5);
}

/** CDF of Student's t with ν > 0 (real) degrees of freedom. */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  return t < 0 ? studentTUpperTail(-t, df) : 1 - studentTUpperTail(t, df);
}

/** Two-sided tail P(|T| > |t|). */
export function studentTTwoSided(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  return Math.min(1, 2 * studentTUpperTail(Math.abs(t), df));
}

/**
 * Quantile of Student's t with ν > 0 degrees of freedom. Closed forms for ν = 1 (Cauchy: t = tan(π(p − ½))) and ν = 2
 * (t = r √(2 / (1 − r²)), r = 2p − 1); otherwise a Newton iteration on the upper tail, started from the
 * Cornish–Fisher expansion around the normal quantile (A&S 26.7.5) and kept inside a bracket that is bisected
 * whenever a Newton step would leave it, so that heavy tails (small ν) converge too.
 */
export function studentTQuantile(p: number, df: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1 || !(df > 0)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  if (df >= T_AS_NORMAL_FROM) return normalQuantile(p);
  // Work with the upper tail q of the positive quantile: q = 1 − p above the median, q = p below (sign flipped).
  const sign = p > 0.5 ? 1 : -1;
  const q = p > 0.5 ? 1 - p : p;
  if (df === 1) return sign * Math.tan(Math.PI * (0.5 - q));
  if (df === 2) {
    const r = 1 - 2 * q;
    return sign * r * Math.sqrt(2 / ((1 - r) * (1 + r)));
  }
  const z = -normalQuantile(q);
  const z2 = z * z;
  let t = z + (z * (z2 + 1)) / (4 * df) + (z * ((5 * z2 + 16) * z2 + 3)) / (96 * df * df);
  let lo = 0;
  let hi = Math.max(2 * t, 1);
  while (studentTUpperTail(hi, df) > q) {
    lo = hi;
    hi *= 2;
  }
  if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
  for (let i = 0; i < 200; i++) {
    const excess = studentTUpperTail(t, df) - q; // > 0: t is too small
    if (excess > 0) lo = t;
    else hi = t;
    let next = t + excess / studentTPdf(t, df);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (Math.abs(next - t) <= 1e-14 * Math.abs(next)) return sign * next;
    t = next;
  }
  return sign * t;
}

/** CDF of the chi-squared distribution with k degrees of freedom: P(k/2, x/2). */
export function chiSquaredCdf(x: number, k: number): number {
  return regularizedGammaP(k / 2, x / 2);
}

/** Upper tail 1 − CDF of the chi-squared distribution (the goodness-of-fit p-value): Q(k/2, x/2). */
export function chiSquaredSurvival(x: number, k: number): number {
  return regularizedGammaQ(k / 2, x / 2);
}
