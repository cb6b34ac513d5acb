/**
 * Values and types of the HogQL engine. Every expression has a static type, decided once when the query is bound
 * (as ClickHouse does), so a row's value needs no tag: a `DateTime` is epoch milliseconds, a `Date` the epoch
 * milliseconds of its UTC midnight (a day number × 86,400,000), a `Person` the internal person id (shown as the
 * person's uuid), a `JSON` value a property as it was sent (string, number, boolean, object, array; null when
 * absent). Conversions between them happen where the type says so: comparisons, functions, the answer's rows.
 */
import { fromLocal, localText, offsetAt, toLocal } from '../analytics/time-zone.js';
import { propertyNumber, propertyText } from '../analytics/property-filters.js';
import { DateParseError, parseDate } from '../analytics/date-range.js';

export type Type = 'String' | 'Int' | 'Float' | 'Bool' | 'DateTime' | 'Date' | 'Person' | 'JSON' | 'Null' | 'Array' | 'Interval' | 'Any';

export type Value = null | number | string | boolean | readonly Value[] | { readonly [k: string]: unknown } | IntervalValue;

export interface IntervalValue {
  readonly interval: IntervalUnit;
  readonly n: number;
}

export type IntervalUnit = 'Second' | 'Minute' | 'Hour' | 'Day' | 'Week' | 'Month' | 'Quarter' | 'Year';

export const DAY_MS = 86_400_000;

export const isNumeric = (t: Type): boolean => t === 'Int' || t === 'Float';
export const isTemporal = (t: Type): boolean => t === 'DateTime' || t === 'Date';

/** Whether a JSON value is a plain object (a nested property). */
export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Truth of a condition's value: null stays null (SQL's unknown), which a filter treats as false. */
export function truth(v: Value): boolean | null {
  if (v === null) return null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0 && !Number.isNaN(v);
  if (typeof v === 'string') return v === 'true' ? true : v === 'false' ? false : propertyNumber(v) !== null ? Number(v) !== 0 : null;
  return null;
}

/** Text of a value for string functions and comparisons with text (JSON values as PostHog reads them). */
export function textOf(v: Value, type: Type, ctx: ValueContext): string | null {
  if (v === null) return null;
  switch (type) {
    case 'DateTime':
      return localText(v as number, ctx.timeZone, true);
    case 'Date':
      return dateText(v as number);
    case 'Person':
      return ctx.personUuid(v as number);
    case 'Bool':
      return v ? 'true' : 'false';
    case 'Float':
    case 'Int':
      return numberText(v as number);
    default:
      if (typeof v === 'string') return v;
      if (typeof v === 'number') return numberText(v);
      return propertyText(v);
  }
}

export function numberText(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  return String(n);
}

/** A number out of a value (`toFloatOrNull`): numbers, numeric text, booleans as 0/1. */
export function numberOf(v: Value, type: Type): number | null {
  if (v === null) return null;
  if (typeof v === 'number') return type === 'Date' ? v / DAY_MS : type === 'DateTime' ? v / 1000 : v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return propertyNumber(v);
  return null;
}

export function dateText(dayMs: number): string {
  return new Date(dayMs).toISOString().slice(0, 10);
}

/** A person's current row, as queries read it (`persons` table, `JOIN persons`). */
export interface PersonInfo {
  uuid: string;
  properties: Readonly<Record<string, unknown>>;
  createdAt: number;
  isIdentified: boolean;
}

/** A group's current row. */
export interface GroupInfo {
  properties: Readonly<Record<string, unknown>>;
  createdAt: number;
}

/**
 * What evaluating values needs besides the values: the project's time zone, the query's now, and the current
 * persons and groups (read through caches by the worker that evaluates).
 */
export interface ValueContext {
  timeZone: string;
  now: number;
  /** The uuid of a person id (null for one that no longer exists). */
  personUuid(id: number): string | null;
  /** The person id of a uuid (null for none). */
  personOfUuid(uuid: string): number | null;
  person(id: number): PersonInfo | null;
  group(typeIndex: number, key: string): GroupInfo | null;
}

/** A text as an instant in the project's zone (ClickHouse parses DateTime text in the column's zone). */
export function parseDateTimeText(text: string, timeZone: string, now: number): number | null {
  const t = text.trim();
  // ClickHouse's own form, `2024-01-05 10:00:00`, and ISO 8601.
  try {
    return parseDate(t.replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T'), now, timeZone).ms;
  } catch (error) {
    if (!(error instanceof DateParseError)) throw error;
    return null;
  }
}

/** An instant of a value of type `type` (DateTime comparisons and functions); null when it has none. */
export function dateTimeOf(v: Value, type: Type, ctx: ValueContext): number | null {
  if (v === null) return null;
  switch (type) {
    case 'DateTime':
      return v as number;
    case 'Date':
      return dayStartIn(v as number, ctx.timeZone);
    case 'Int':
    case 'Float':
      return (v as number) * 1000;
    default:
      if (typeof v === 'number') return v > 1e11 ? v : v * 1000;
      if (typeof v === 'string') return parseDateTimeText(v, ctx.timeZone, ctx.now);
      return null;
  }
}

/** A calendar date (UTC-midnight ms) of a value of type `type`, in the project's zone. */
export function dateOf(v: Value, type: Type, ctx: ValueContext): number | null {
  if (v === null) return null;
  if (type === 'Date') return v as number;
  if (type === 'Int' || type === 'Float') return Math.floor(v as number) * DAY_MS;
  if (type !== 'DateTime' && typeof v === 'string') {
    const m = /^\s*(\d{4})-(\d{2})-(\d{2})\s*$/.exec(v);
    if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  }
  const t = dateTimeOf(v, type, ctx);
  return t === null ? null : localDay(t, ctx.timeZone);
}

/** The local calendar date of an instant, as UTC-midnight ms. */
export function localDay(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return Math.floor(ms / DAY_MS) * DAY_MS;
  const l = toLocal(ms, timeZone);
  return Date.UTC(l.year, l.month - 1, l.day);
}

/** The instant a local calendar date begins. */
export function dayStartIn(dayMs: number, timeZone: string): number {
  if (timeZone === 'UTC') return dayMs;
  const d = new Date(dayMs);
  return fromLocal({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }, timeZone);
}

/**
 * An instant as PostHog's API shows a DateTime: ISO 8601 in the project's zone, microseconds when there is a
 * fraction, `Z` for a zero offset (as Django REST framework writes datetimes).
 */
export function dateTimeText(ms: number, timeZone: string): string {
  const offset = Math.round(offsetAt(ms, timeZone) / 60_000);
  const frac = ((ms % 1000) + 1000) % 1000;
  const base = localText(ms, timeZone, true).replace(' ', 'T') + (frac ? `.${String(frac).padStart(3, '0')}000` : '');
  if (offset === 0) return `${base}Z`;
  const abs = Math.abs(offset);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${base}${offset < 0 ? '-' : '+'}${p(Math.floor(abs / 60))}:${p(abs % 60)}`;
}

/** A value as the answer's rows carry it. */
export function outputValue(v: Value, type: Type, ctx: ValueContext): unknown {
  if (v === null) return null;
  switch (type) {
    case 'DateTime':
      return dateTimeText(v as number, ctx.timeZone);
    case 'Date':
      return dateText(v as number);
    case 'Person':
      return ctx.personUuid(v as number);
    case 'Interval':
      return (v as IntervalValue).n;
    case 'Float':
    case 'Int':
      return Number.isFinite(v) ? v : null;
    case 'Array':
      return (v as Value[]).map((x) => outputValue(x, 'Any', ctx));
    default:
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      if (typeof v === 'object') {
        if (isInterval(v)) return v.n;
        // A JSON object or array property is returned as its JSON text, as PostHog returns `properties`.
        return type === 'Any' && Array.isArray(v) ? (v as Value[]).map((x) => outputValue(x, 'Any', ctx)) : JSON.stringify(v);
      }
      return v;
  }
}

export function isInterval(v: unknown): v is IntervalValue {
  return isObject(v) && typeof (v as { interval?: unknown }).interval === 'string' && typeof (v as { n?: unknown }).n === 'number' && Object.keys(v).length === 2;
}

/** ClickHouse's name of a type (the answer's `types`). */
export function typeName(t: Type, timeZone: string): string {
  switch (t) {
    case 'String':
      return 'String';
    case 'Int':
      return 'Int64';
    case 'Float':
      return 'Float64';
    case 'Bool':
      return 'Bool';
    case 'DateTime':
      return `DateTime64(6, '${timeZone}')`;
    case 'Date':
      return 'Date';
    case 'Person':
      return 'UUID';
    case 'JSON':
      return 'Nullable(String)';
    case 'Null':
      return 'Nullable(Nothing)';
    case 'Array':
      return 'Array(String)';
    case 'Interval':
      return 'IntervalDay';
    default:
      return 'String';
  }
}

/**
 * A key text that tells any two distinct values apart (GROUP BY, DISTINCT, IN sets, uniq): 1 and "1" differ,
 * as do true and "true".
 */
export function keyText(v: Value): string {
  if (v === null) return 'z';
  switch (typeof v) {
    case 'number':
      return Object.is(v, -0) ? 'n0' : `n${v}`;
    case 'string':
      return `s${v}`;
    case 'boolean':
      return v ? 'bt' : 'bf';
    default:
      return `j${JSON.stringify(v)}`;
  }
}

const rank = (v: Value): number => (typeof v === 'boolean' ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3);

/** Order of two non-null values (numbers before text before objects, as a total order for sorting). */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a === b) return 0;
    // NaN last among numbers.
    return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'boolean') return Number(a) - Number(b as boolean);
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const x = a[i] as Value;
      const y = b[i] as Value;
      if (x === null || y === null) {
        if (x !== y) return x === null ? 1 : -1;
        continue;
      }
      const c = compareValues(x, y);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  const ta = JSON.stringify(a);
  const tb = JSON.stringify(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

/**
 * Comparison of two JSON-ish values as HogQL compares untyped property values: numbers numerically, a number and a
 * numeric text as numbers, booleans with their text, anything else by text. Null when either side is null.
 */
export function compareLoose(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : a === b ? 0 : null;
  if (typeof a === 'number' || typeof b === 'number') {
    const x = typeof a === 'number' ? a : propertyNumber(propertyText(a));
    const y = typeof b === 'number' ? b : propertyNumber(propertyText(b));
    if (x !== null && y !== null) return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = typeof a === 'string' ? a : propertyText(a);
  const y = typeof b === 'string' ? b : propertyText(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
