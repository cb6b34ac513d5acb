/**
 * Version parsing and ranges for the `semver_*` operators (flags.md §3.5).
 *
 * Parsing: trim, strip a leading `v`/`V`, drop `-prerelease`/`+build`, split on `.`, pad missing minor/patch
 * with 0, strip leading zeros (`3.08` = 3.8.0, as the Rust service canonicalises mobile versions). Each present
 * component must be all digits; more than three components is invalid (Rust's `semver` crate rejects them).
 */
import type { SemverRange } from './types.js';
import { textOf } from './values.js';

export type Version = readonly [number, number, number];

const DIGITS = /^\d+$/;

function core(text: string): string {
  let s = text.trim();
  if (s.length > 0 && (s[0] === 'v' || s[0] === 'V')) s = s.slice(1);
  const cut = s.search(/[-+]/);
  return cut === -1 ? s : s.slice(0, cut);
}

export function parseVersion(value: unknown): Version | null {
  const base = core(textOf(value));
  if (base.length === 0) return null;
  const parts = base.split('.');
  if (parts.length > 3) return null;
  const out: number[] = [0, 0, 0];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!DIGITS.test(part)) return null;
    out[i] = Number(part);
  }
  return out as unknown as Version;
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    if (a[i]! !== b[i]!) return a[i]! < b[i]! ? -1 : 1;
  }
  return 0;
}

export function inRange(v: Version, range: SemverRange): boolean {
  return compareVersions(v, range.lower) >= 0 && (range.upper === null || compareVersions(v, range.upper) < 0);
}

/** `~X.Y.Z` := `>=X.Y.Z <X.(Y+1).0`. */
export function tildeRange(value: unknown): SemverRange | null {
  const v = parseVersion(value);
  if (!v) return null;
  return { lower: v, upper: [v[0], v[1] + 1, 0] };
}

/** `^X.Y.Z` := `<(X+1).0.0` if X>0, else `<0.(Y+1).0` if Y>0, else `<0.0.(Z+1)`. */
export function caretRange(value: unknown): SemverRange | null {
  const v = parseVersion(value);
  if (!v) return null;
  return { lower: v, upper: caretUpper(v[0], v[1], v[2]) };
}

function caretUpper(major: number, minor: number, patch: number): [number, number, number] {
  if (major > 0) return [major + 1, 0, 0];
  if (minor > 0) return [0, minor + 1, 0];
  return [0, 0, patch + 1];
}

/**
 * `1.*` = [1.0.0, 2.0.0), `1.2.*` = [1.2.0, 1.3.0), `1.*.*` = [1.0.0, 2.0.0), `*` = everything (`x`/`X` work
 * as wildcards too). A value without a wildcard is a caret requirement, as Rust's `VersionReq` reads it.
 */
export function wildcardRange(value: unknown): SemverRange | null {
  const base = core(textOf(value));
  if (base.length === 0) return null;
  const parts = base.split('.');
  if (parts.length > 3) return null;
  const nums: number[] = [];
  let wildcard = false;
  for (const part of parts) {
    if (part === '*' || part === 'x' || part === 'X') {
      wildcard = true;
    } else if (!wildcard && DIGITS.test(part)) {
      nums.push(Number(part));
    } else {
      return null;
    }
  }
  if (wildcard) {
    if (nums.length === 0) return { lower: [0, 0, 0], upper: null };
    if (nums.length === 1) return { lower: [nums[0]!, 0, 0], upper: [nums[0]! + 1, 0, 0] };
    return { lower: [nums[0]!, nums[1]!, 0], upper: [nums[0]!, nums[1]! + 1, 0] };
  }
  // Partial caret requirements (`^1`, `^0.2`) bound on the first component given.
  const [major, minor, patch] = [nums[0]!, nums[1] ?? 0, nums[2] ?? 0];
  if (nums.length === 1) return { lower: [major, 0, 0], upper: [major + 1, 0, 0] };
  if (nums.length === 2) return { lower: [major, minor, 0], upper: major > 0 ? [major + 1, 0, 0] : [0, minor + 1, 0] };
  return { lower: [major, minor, patch], upper: caretUpper(major, minor, patch) };
}
