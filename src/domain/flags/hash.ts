import { sha1Prefix60 } from '../sha1.js';

/**
 * PostHog's LONG_SCALE is 0xFFFFFFFFFFFFFFF (2^60 - 1). As a double it rounds to 2^60, and every reference
 * implementation (Rust `as f64`, JS number literal) divides by that rounded value, so we do too.
 */
export const LONG_SCALE = 0xfffffffffffffff;

/** Salt appended (without separator) for variant selection: `<key>.<id>variant`. */
export const VARIANT_SALT = 'variant';

/** Prefix for the experiment holdout hash: `holdout-<id>` (flag key deliberately not included). */
export const HOLDOUT_PREFIX = 'holdout-';

/**
 * Bucketing hash in [0, 1]: first 15 hex digits of sha1(prefix + identifier + salt) / LONG_SCALE (flags.md §2.1).
 * An empty identifier short-circuits to 0 without hashing, as PostHog does.
 */
export function bucketHash(prefix: string, identifier: string, salt = ''): number {
  if (identifier.length === 0) return 0;
  return sha1Prefix60(prefix, identifier, salt) / LONG_SCALE;
}
