/**
 * Property operators (flags.md §3.3), server semantics of the Rust service. Filter values are parsed once in
 * {@link compileOperator}; {@link matchOperator} only reads the property value.
 */
import { compileDateFilter, dateFilterMs, propertyDateMs } from './dates.js';
import { compileRegex, PatternWorkError, type LinearRegex } from '../patterns/regex.js';
import { caretRange, compareVersions, inRange, parseVersion, tildeRange, wildcardRange } from './semver.js';
import type { CompiledOperator } from './types.js';
import { asciiLower, isBooleanLike, isTruthyValue, numberOf, textOf } from './values.js';

export const Op = {
  Exact: 0,
  IsNot: 1,
  IContains: 2,
  NotIContains: 3,
  StartsWith: 4,
  NotStartsWith: 5,
  EndsWith: 6,
  NotEndsWith: 7,
  IContainsMulti: 8,
  NotIContainsMulti: 9,
  Regex: 10,
  NotRegex: 11,
  Gt: 12,
  Gte: 13,
  Lt: 14,
  Lte: 15,
  Between: 16,
  NotBetween: 17,
  IsSet: 18,
  IsNotSet: 19,
  DateBefore: 20,
  DateAfter: 21,
  DateExact: 22,
  SemverEq: 23,
  SemverNeq: 24,
  SemverGt: 25,
  SemverGte: 26,
  SemverLt: 27,
  SemverLte: 28,
  SemverTilde: 29,
  SemverCaret: 30,
  SemverWildcard: 31,
  /** Unknown operator, or one that only makes sense for another property type: never matches. */
  Never: 32,
} as const;

/** Operator names accepted on person/group properties. */
export const PROPERTY_OPERATORS: ReadonlyMap<string, number> = new Map<string, number>([
  ['exact', Op.Exact],
  ['is_not', Op.IsNot],
  ['icontains', Op.IContains],
  ['not_icontains', Op.NotIContains],
  ['starts_with', Op.StartsWith],
  ['not_starts_with', Op.NotStartsWith],
  ['ends_with', Op.EndsWith],
  ['not_ends_with', Op.NotEndsWith],
  ['icontains_multi', Op.IContainsMulti],
  ['not_icontains_multi', Op.NotIContainsMulti],
  ['regex', Op.Regex],
  ['not_regex', Op.NotRegex],
  ['gt', Op.Gt],
  ['gte', Op.Gte],
  ['lt', Op.Lt],
  ['lte', Op.Lte],
  ['between', Op.Between],
  ['not_between', Op.NotBetween],
  ['is_set', Op.IsSet],
  ['is_not_set', Op.IsNotSet],
  ['is_date_before', Op.DateBefore],
  ['is_date_after', Op.DateAfter],
  ['is_date_exact', Op.DateExact],
  ['semver_eq', Op.SemverEq],
  ['semver_neq', Op.SemverNeq],
  ['semver_gt', Op.SemverGt],
  ['semver_gte', Op.SemverGte],
  ['semver_lt', Op.SemverLt],
  ['semver_lte', Op.SemverLte],
  ['semver_tilde', Op.SemverTilde],
  ['semver_caret', Op.SemverCaret],
  ['semver_wildcard', Op.SemverWildcard],
]);

/**
 * Result when the property is absent from the merged map (right column of the flags.md §3.3 table): the
 * negative operators match, everything else does not.
 */
const WHEN_MISSING: readonly boolean[] = (() => {
  const out = new Array<boolean>(Op.Never + 1).fill(false);
  for (const op of [Op.IsNot, Op.NotIContains, Op.NotStartsWith, Op.NotEndsWith, Op.NotIContainsMulti, Op.NotRegex])
    out[op] = true;
  out[Op.NotBetween] = true;
  out[Op.IsNotSet] = true;
  return out;
})();

const BLANK: CompiledOperator = {
  op: Op.Never,
  valueNull: false,
  text: '',
  asciiText: false,
  boolLike: false,
  truthy: false,
  textSet: null,
  texts: null,
  num: NaN,
  num2: NaN,
  regex: null,
  ci: null,
  date: null,
  semver: null,
};

const REGEX_SYNTAX = /[.*+?^${}()|[\]\\/]/g;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A case-insensitive RegExp for ASCII needles: about 4x faster than folding the haystack, and equivalent to
 * ASCII-only folding because in non-Unicode mode JS never folds a non-ASCII character onto an ASCII one.
 * Not a user pattern (every needle is escaped into a literal, with no quantifier), so backtracking is bounded by
 * the needles' total length at each position: the one RegExp outside src/domain/patterns/ that sees user text.
 */
function asciiSearch(needles: readonly string[], prefix: string, suffix: string): RegExp | null {
  if (needles.some((n) => NON_ASCII.test(n))) return null;
  const body = needles.map((n) => n.replace(REGEX_SYNTAX, '\\$&')).join('|');
  return new RegExp(`${prefix}(?:${body})${suffix}`, 'i');
}

export function operatorCode(operator: unknown): number {
  if (operator === undefined || operator === null) return Op.Exact;
  if (typeof operator !== 'string') return Op.Never;
  return PROPERTY_OPERATORS.get(operator) ?? Op.Never;
}

export function compileOperator(operator: unknown, value: unknown, timeZone: string | null): CompiledOperator {
  const op = operatorCode(operator);
  // Rust deserialises a null filter value as "no value": every value-needing operator then fails, even the
  // negative ones, before the property is looked at.
  const valueNull = value === null || value === undefined;
  if (valueNull || op === Op.IsSet || op === Op.IsNotSet || op === Op.Never) return { ...BLANK, op, valueNull };

  switch (op) {
    case Op.Exact:
    case Op.IsNot: {
      if (isBooleanLike(value)) return { ...BLANK, op, boolLike: true, truthy: isTruthyValue(value) };
      if (Array.isArray(value)) {
        return { ...BLANK, op, textSet: new Set(value.map((item) => textOf(item).toLowerCase())) };
      }
      const text = textOf(value).toLowerCase();
      return { ...BLANK, op, text, asciiText: !NON_ASCII.test(text) };
    }
    case Op.IContains:
    case Op.NotIContains:
    case Op.StartsWith:
    case Op.NotStartsWith:
    case Op.EndsWith:
    case Op.NotEndsWith: {
      const text = asciiLower(textOf(value));
      const starts = op === Op.StartsWith || op === Op.NotStartsWith;
      const ends = op === Op.EndsWith || op === Op.NotEndsWith;
      return { ...BLANK, op, text, ci: asciiSearch([text], starts ? '^' : '', ends ? '$' : '') };
    }
    case Op.IContainsMulti:
    case Op.NotIContainsMulti: {
      const items = Array.isArray(value) ? value : [value];
      const texts = items.map((item) => asciiLower(textOf(item)));
      return { ...BLANK, op, texts, ci: texts.length > 0 ? asciiSearch(texts, '', '') : null };
    }
    case Op.Regex:
    case Op.NotRegex:
      return { ...BLANK, op, regex: compileRegex(textOf(value), 'rust') };
    case Op.Gt:
    case Op.Gte:
    case Op.Lt:
    case Op.Lte:
      return { ...BLANK, op, num: numberOf(value) };
    case Op.Between:
    case Op.NotBetween: {
      const pair = Array.isArray(value) && value.length === 2;
      return { ...BLANK, op, num: pair ? numberOf(value[0]) : NaN, num2: pair ? numberOf(value[1]) : NaN };
    }
    case Op.DateBefore:
    case Op.DateAfter:
    case Op.DateExact:
      return { ...BLANK, op, date: compileDateFilter(value, timeZone) };
    case Op.SemverEq:
    case Op.SemverNeq:
    case Op.SemverGt:
    case Op.SemverGte:
    case Op.SemverLt:
    case Op.SemverLte: {
      const v = parseVersion(value);
      return { ...BLANK, op, semver: v ? { lower: v, upper: null } : null };
    }
    case Op.SemverTilde:
      return { ...BLANK, op, semver: tildeRange(value) };
    case Op.SemverCaret:
      return { ...BLANK, op, semver: caretRange(value) };
    case Op.SemverWildcard:
      return { ...BLANK, op, semver: wildcardRange(value) };
    default:
      return { ...BLANK, op: Op.Never };
  }
}

/**
 * Tests one property value. `present` is false when the key is absent from the merged map; a present value
 * may be null (string-like operators then see the text "null").
 */
export function matchOperator(
  o: CompiledOperator,
  present: boolean,
  value: unknown,
  nowMs: number,
  timeZone: string | null,
): boolean {
  const op = o.op;
  if (op === Op.IsSet) return present;
  if (op === Op.IsNotSet) return !present;
  if (o.valueNull || op === Op.Never) return false;
  if (!present) return WHEN_MISSING[op]!;

  switch (op) {
    case Op.Exact:
      return exactMatch(o, value);
    case Op.IsNot:
      return !exactMatch(o, value);
    case Op.IContains:
    case Op.IContainsMulti:
    case Op.StartsWith:
    case Op.EndsWith:
      return textTest(o, value);
    case Op.NotIContains:
    case Op.NotIContainsMulti:
    case Op.NotStartsWith:
    case Op.NotEndsWith:
      return !textTest(o, value);
    case Op.Regex:
      return o.regex !== null && regexTest(o.regex, textOf(value)) === true;
    case Op.NotRegex:
      return o.regex !== null && regexTest(o.regex, textOf(value)) === false;
    case Op.Gt:
      return numberOf(value) > o.num;
    case Op.Gte:
      return numberOf(value) >= o.num;
    case Op.Lt:
      return numberOf(value) < o.num;
    case Op.Lte:
      return numberOf(value) <= o.num;
    case Op.Between:
    case Op.NotBetween: {
      const n = numberOf(value);
      // Non-numeric on either side is "no match" for both, like the other numeric operators.
      if (Number.isNaN(n) || Number.isNaN(o.num) || Number.isNaN(o.num2)) return false;
      const inside = n >= o.num && n <= o.num2;
      return op === Op.Between ? inside : !inside;
    }
    case Op.DateBefore:
    case Op.DateAfter:
    case Op.DateExact: {
      if (o.date === null) return false;
      const actual = propertyDateMs(value, nowMs, timeZone);
      if (Number.isNaN(actual)) return false;
      const target = dateFilterMs(o.date, nowMs);
      if (op === Op.DateBefore) return actual < target;
      if (op === Op.DateAfter) return actual > target;
      return actual === target;
    }
    default:
      return matchSemver(o, value);
  }
}

function exactMatch(o: CompiledOperator, value: unknown): boolean {
  if (o.boolLike) return isTruthyValue(value) === o.truthy;
  // Lowercasing never changes the length of a string whose lowercase form is ASCII (the only non-ASCII
  // characters that lowercase into ASCII, like the Kelvin sign, map one to one), so skip the allocation.
  if (o.asciiText && typeof value === 'string' && value.length !== o.text.length) return false;
  const text = (typeof value === 'string' ? value : textOf(value)).toLowerCase();
  return o.textSet !== null ? o.textSet.has(text) : text === o.text;
}

/** The positive form of the substring/prefix/suffix operators, with ASCII-only case folding. */
function textTest(o: CompiledOperator, value: unknown): boolean {
  const text = typeof value === 'string' ? value : textOf(value);
  if (o.ci !== null) return o.ci.test(text);
  const haystack = asciiLower(text);
  switch (o.op) {
    case Op.IContains:
    case Op.NotIContains:
      return haystack.includes(o.text);
    case Op.StartsWith:
    case Op.NotStartsWith:
      return haystack.startsWith(o.text);
    case Op.EndsWith:
    case Op.NotEndsWith:
      return haystack.endsWith(o.text);
    default:
      for (const needle of o.texts!) if (haystack.includes(needle)) return true;
      return false;
  }
}

/**
 * A match past the pattern module's work bound counts as no match for both operators, as PostHog's engine treats a
 * pattern past its backtrack limit: a flag answer never waits on one value.
 */
function regexTest(re: LinearRegex, text: string): boolean | null {
  try {
    return re.test(text);
  } catch (error) {
    if (error instanceof PatternWorkError) return null;
    throw error;
  }
}

function matchSemver(o: CompiledOperator, value: unknown): boolean {
  const range = o.semver;
  if (range === null) return false;
  const v = parseVersion(value);
  if (v === null) return false;
  switch (o.op) {
    case Op.SemverEq:
      return compareVersions(v, range.lower) === 0;
    case Op.SemverNeq:
      return compareVersions(v, range.lower) !== 0;
    case Op.SemverGt:
      return compareVersions(v, range.lower) > 0;
    case Op.SemverGte:
      return compareVersions(v, range.lower) >= 0;
    case Op.SemverLt:
      return compareVersions(v, range.lower) < 0;
    case Op.SemverLte:
      return compareVersions(v, range.lower) <= 0;
    default:
      return inRange(v, range);
  }
}
