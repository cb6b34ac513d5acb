/**
 * The stored `filters` object: legacy normalisation and the derived fields of the management API.
 */
import { isRecord } from './values.js';

/**
 * Effective filters of a stored flag. Filters stored without `groups` (pre-2022 flags) act as one condition
 * with the top-level `properties` and the model's legacy `rollout_percentage` column (flags.md §1.1).
 */
export function effectiveFilters(
  filters: Record<string, unknown> | null | undefined,
  legacyRolloutPercentage: number | null = null,
): Record<string, unknown> {
  const f = isRecord(filters) ? filters : {};
  if ('groups' in f) return f;
  const properties = Array.isArray(f.properties) ? f.properties : [];
  return { ...f, groups: [{ properties, rollout_percentage: legacyRolloutPercentage }] };
}

/** Conditions array of (effective) filters; anything malformed reads as no conditions. */
export function conditionsOf(filters: Record<string, unknown>): unknown[] {
  return Array.isArray(filters.groups) ? filters.groups : [];
}

/**
 * `is_simple_flag`: exactly one condition, that condition has no properties, and no group aggregation.
 */
export function isSimpleFlag(filters: Record<string, unknown>): boolean {
  const f = effectiveFilters(filters);
  const groups = conditionsOf(f);
  if (groups.length !== 1) return false;
  const only = groups[0];
  const properties = isRecord(only) && Array.isArray(only.properties) ? only.properties : [];
  const aggregation = f.aggregation_group_type_index;
  return properties.length === 0 && (aggregation === null || aggregation === undefined);
}

/** `rollout_percentage` of the management API: the single condition's percentage for simple flags, else null. */
export function simpleRolloutPercentage(filters: Record<string, unknown>): number | null {
  if (!isSimpleFlag(filters)) return null;
  const only = conditionsOf(effectiveFilters(filters))[0];
  const pct = isRecord(only) ? only.rollout_percentage : null;
  return typeof pct === 'number' ? pct : null;
}
