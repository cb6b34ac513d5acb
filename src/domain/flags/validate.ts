/**
 * API-side validation of a flag's `filters` on create/update (POST/PATCH /feature_flags/), following the checks
 * of PostHog's serializer (flags.md §1.2) with clear messages. Returns the first problem as a DRF-style field
 * error, or null when the filters are acceptable.
 */
import { compileDateFilter } from './dates.js';
import { PROPERTY_OPERATORS } from './operators.js';
import { regexProblem } from '../patterns/regex.js';
import { caretRange, parseVersion, tildeRange, wildcardRange } from './semver.js';
import type { GroupTypeMapping } from './types.js';
import { intOf, isRecord } from './values.js';

export interface FieldError {
  attr: string;
  code: string;
  detail: string;
}

export interface ValidateFiltersContext {
  existingCohortIds: ReadonlySet<number>;
  isStaticCohort?: (id: number) => boolean;
  groupTypes: GroupTypeMapping;
  /** When given, flag-dependency references (flag id or key) must resolve. */
  flagExists?: (ref: string) => boolean;
}

/** Longest list accepted in a property value (PostHog caps list filters; 1000 is its production limit). */
export const MAX_PROPERTY_VALUES = 1000;

const MAX_GROUP_TYPE_INDEX = 4;

function fail(detail: string, code = 'invalid_input'): FieldError {
  return { attr: 'filters', code, detail };
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? String(value) : text;
}

const STRING_OPERATORS = new Set([
  'regex',
  'not_regex',
  'icontains',
  'not_icontains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
]);
const NUMERIC_OPERATORS = new Set(['gt', 'gte', 'lt', 'lte']);
const DATE_OPERATORS = new Set(['is_date_before', 'is_date_after', 'is_date_exact']);
const SEMVER_COMPARISONS = new Set(['semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte']);

function aggregationOf(value: unknown, where: string): number | null | FieldError {
  if (value === null || value === undefined) return null;
  const n = intOf(value);
  if (n === null || n < 0 || n > MAX_GROUP_TYPE_INDEX) {
    return fail(`${where}: aggregation_group_type_index must be an integer from 0 to ${MAX_GROUP_TYPE_INDEX}, or null.`);
  }
  return n;
}

function isFieldError(x: unknown): x is FieldError {
  return isRecord(x) && typeof x.detail === 'string' && typeof x.code === 'string';
}

export function validateFlagFilters(filters: unknown, ctx: ValidateFiltersContext): FieldError | null {
  if (!isRecord(filters)) return fail('Filters must be an object.');

  const flagAggregation = aggregationOf(filters.aggregation_group_type_index, 'The flag');
  if (isFieldError(flagAggregation)) return flagAggregation;

  // Variants.
  const variantKeys = new Set<string>();
  const mv = filters.multivariate;
  if (mv !== null && mv !== undefined) {
    if (!isRecord(mv) || !Array.isArray(mv.variants)) {
      return fail('multivariate must be an object with a list of variants.');
    }
    let sum = 0;
    for (const v of mv.variants) {
      if (!isRecord(v) || typeof v.key !== 'string' || v.key === '') {
        return fail('Every variant needs a non-empty string key.');
      }
      if (variantKeys.has(v.key)) return fail(`Variant key "${v.key}" is used more than once.`);
      variantKeys.add(v.key);
      const pct = v.rollout_percentage;
      if (typeof pct !== 'number' || !Number.isFinite(pct) || pct < 0 || pct > 100) {
        return fail(`Variant "${v.key}" needs a rollout_percentage between 0 and 100.`);
      }
      sum += pct;
    }
    if (mv.variants.length > 0 && Math.abs(sum - 100) > 1e-9) {
      return fail('Invalid variant definitions: Variant rollout percentages must sum to 100.');
    }
  }

  // Release conditions.
  const groups = filters.groups;
  if (groups !== undefined && !Array.isArray(groups)) return fail('groups must be a list of condition sets.');
  for (const [i, condition] of (groups ?? []).entries()) {
    const where = `Condition set ${i + 1}`;
    if (!isRecord(condition)) return fail(`${where} must be an object.`);
    const rollout = condition.rollout_percentage;
    const rolloutOk =
      rollout === null ||
      rollout === undefined ||
      (typeof rollout === 'number' && Number.isFinite(rollout) && rollout >= 0 && rollout <= 100);
    if (!rolloutOk) return fail(`${where}: rollout_percentage must be a number between 0 and 100 or null.`);
    if (condition.variant !== null && condition.variant !== undefined && condition.variant !== '') {
      if (typeof condition.variant !== 'string' || !variantKeys.has(condition.variant)) {
        return fail('Filters are not valid (variant override does not exist)');
      }
    }
    let aggregation: number | null = flagAggregation;
    if (Object.hasOwn(condition, 'aggregation_group_type_index')) {
      const own = aggregationOf(condition.aggregation_group_type_index, where);
      if (isFieldError(own)) return own;
      aggregation = own;
    }
    const properties = condition.properties ?? [];
    if (!Array.isArray(properties)) return fail(`${where}: properties must be a list.`);
    for (const prop of properties) {
      const error = validateProperty(prop, aggregation, ctx);
      if (error) return error;
    }
  }

  // Payloads.
  const payloads = filters.payloads ?? {};
  if (!isRecord(payloads)) return fail('Payloads must be passed as a dictionary');
  for (const value of Object.values(payloads)) {
    if (typeof value === 'string') {
      try {
        JSON.parse(value);
      } catch {
        return fail('Payload value is not valid JSON');
      }
    }
  }
  const holdout = filters.holdout;
  const holdoutKey =
    isRecord(holdout) && holdout.id !== null && holdout.id !== undefined ? `holdout-${String(holdout.id)}` : null;
  const payloadKeys = Object.keys(payloads);
  if (variantKeys.size > 0) {
    if (!payloadKeys.every((k) => variantKeys.has(k) || k === holdoutKey)) {
      return fail('Payload keys must match a variant key for multivariate flags');
    }
  } else if (payloadKeys.some((k) => k !== 'true' && k !== holdoutKey)) {
    return fail("Payload keys must be 'true' for boolean flags");
  }

  if (holdout !== null && holdout !== undefined) {
    if (!isRecord(holdout) || intOf(holdout.id) === null) return fail('holdout must be an object with an integer id.');
    const pct = holdout.exclusion_percentage;
    if (typeof pct !== 'number' || !Number.isFinite(pct) || pct < 0 || pct > 100) {
      return fail('holdout.exclusion_percentage must be a number between 0 and 100.');
    }
  }
  return null;
}

function validateProperty(raw: unknown, aggregation: number | null, ctx: ValidateFiltersContext): FieldError | null {
  if (!isRecord(raw)) return fail('Every property filter must be an object.');
  const type = raw.type ?? null;
  const key = raw.key;
  const operator = raw.operator ?? null;
  const value = raw.value;

  if (aggregation === null) {
    if (type !== null && type !== 'person' && type !== 'cohort' && type !== 'flag' && type !== 'person_metadata') {
      return fail('Filters are not valid (can only use person, cohort, and flag properties)');
    }
  } else if (type !== null && !(type === 'group' && intOf(raw.group_type_index) === aggregation)) {
    return fail('Filters are not valid (can only use group properties)');
  }
  if (type === 'group' && aggregation === null) {
    return fail('Filters are not valid (can only use person, cohort, and flag properties)');
  }

  if (typeof key !== 'string' && !(type === 'cohort' && (key === undefined || key === null))) {
    return fail('Every property filter needs a string key.');
  }
  if (Array.isArray(value) && value.length > MAX_PROPERTY_VALUES) {
    const detail = `Property group expressions of type ${String(key)} cannot contain more than ${MAX_PROPERTY_VALUES} values.`;
    return fail(detail);
  }

  if (type === 'cohort') {
    if (operator !== null && operator !== 'in' && operator !== 'not_in' && operator !== 'exact') {
      return fail(`Cohort filters only support the "in" and "not_in" operators, not "${show(operator)}".`);
    }
    const id = intOf(value);
    if (id === null || !ctx.existingCohortIds.has(id)) {
      return fail(`Cohort with id ${show(value)} does not exist`, 'cohort_does_not_exist');
    }
    return null;
  }

  if (type === 'flag') {
    if (operator !== 'flag_evaluates_to') return fail("Flag properties must use the 'flag_evaluates_to' operator");
    if (typeof value !== 'boolean' && typeof value !== 'string') {
      return fail('A flag dependency must expect true, false or a variant key.');
    }
    if (ctx.flagExists && !ctx.flagExists(String(key))) {
      return fail(`Flag dependency references non-existent flag with ID ${String(key)}`);
    }
    return null;
  }

  if (operator !== null && (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator))) {
    return fail(`Unknown operator "${show(operator)}" on property "${String(key)}".`);
  }
  const op = (operator as string | null) ?? 'exact';
  if (op === 'is_set' || op === 'is_not_set') return null;
  if (value === null || value === undefined) {
    return fail(`Property "${String(key)}" needs a value for operator ${op}.`, 'invalid_value');
  }

  if (STRING_OPERATORS.has(op) || NUMERIC_OPERATORS.has(op)) {
    // PostHog requires a string here; numbers are accepted too since the server compares them the same way.
    if (typeof value !== 'string' && typeof value !== 'number') {
      return fail(`Invalid value for operator ${op}: ${show(value)}`, 'invalid_value');
    }
    if (op === 'regex' || op === 'not_regex') {
      const problem = regexProblem(String(value), 'rust');
      if (problem !== null) return fail(problem, 'invalid_value');
    }
    return null;
  }
  if (DATE_OPERATORS.has(op)) {
    if (compileDateFilter(value, null) === null) return fail(`Invalid date value: ${show(value)}`, 'invalid_date');
    return null;
  }
  const badVersion =
    (SEMVER_COMPARISONS.has(op) && parseVersion(value) === null) ||
    (op === 'semver_tilde' && tildeRange(value) === null) ||
    (op === 'semver_caret' && caretRange(value) === null);
  if (badVersion) return fail(`Invalid semantic version for operator ${op}: ${show(value)}`, 'invalid_value');
  if (op === 'semver_wildcard' && wildcardRange(value) === null) {
    return fail(`Invalid version pattern for operator ${op}: ${show(value)}`, 'invalid_value');
  }
  if (op === 'between' || op === 'not_between') {
    const numeric = (v: unknown) =>
      (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));
    const ok = Array.isArray(value) && value.length === 2 && value.every(numeric);
    if (!ok) return fail(`Operator ${op} needs a [min, max] pair of numbers.`, 'invalid_value');
  }
  if (op === 'icontains_multi' || op === 'not_icontains_multi') {
    const items = Array.isArray(value) ? value : [value];
    if (!items.every((v) => typeof v === 'string' || typeof v === 'number')) {
      return fail(`Operator ${op} needs a list of strings.`, 'invalid_value');
    }
  }
  return null;
}
