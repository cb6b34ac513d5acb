/**
 * Date parsing for `is_date_before/after/exact` (flags.md §3.4), following the Rust service:
 * - filter values: relative (`-7d`, `3m`...) or absolute (RFC 3339, `YYYY-MM-DD[ HH:MM[:SS[.f]]]`, epoch digits);
 * - property values: numbers and numeric strings are epoch SECONDS, other strings parse like filter values;
 * - naive date/times are read in the team time zone (UTC by default); explicit offsets are honoured.
 */
import type { DateFilter } from './types.js';

const RELATIVE = /^-?(\d+)([hdwmy])$/;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

// `YYYY-MM-DD`, optionally `[T ]HH:MM[:SS[.fraction]]`, optionally `Z`/`±HH[:]MM`/` UTC`.
const ISO_LIKE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/;

// dateparser-style bare epoch values: 10 digits (s), 13 (ms), 19 (ns), optional fraction on seconds.
const EPOCH_DIGITS = /^(\d{10})(?:\.(\d+))?$|^(\d{13})$|^(\d{19})$/;

// Only strings carrying an explicit zone reach Date.parse, so the process time zone never leaks in.
const EXPLICIT_ZONE = /(?:\bZ|\bUTC|\bGMT|[+-]\d{2}:?\d{2})\s*$/i;

export function parseRelative(text: string): DateFilter['relative'] {
  const m = RELATIVE.exec(text);
  if (!m) return null;
  const amount = Number(m[1]);
  // Rust rejects 10 000 and more to avoid overflow; we mirror the limit so both accept the same filters.
  if (amount >= 10_000) return null;
  return { amount, unit: m[2] as 'h' | 'd' | 'w' | 'm' | 'y' };
}

/** Resolves a relative date against `now` (instants; months and years step one at a time with day clamping). */
export function resolveRelative(rel: NonNullable<DateFilter['relative']>, nowMs: number): number {
  switch (rel.unit) {
    case 'h':
      return nowMs - rel.amount * HOUR_MS;
    case 'd':
      return nowMs - rel.amount * DAY_MS;
    case 'w':
      return nowMs - rel.amount * 7 * DAY_MS;
    case 'm':
      return subtractMonths(nowMs, rel.amount);
    case 'y':
      return subtractYears(nowMs, rel.amount);
  }
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month0: number): number {
  if (month0 !== 1) return MONTH_DAYS[month0]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/**
 * Rust steps back one calendar month at a time and clamps the day each step, so Mar 31 - 2m = Jan 28/29 (via
 * Feb), not Jan 31. The clamp is sticky: once the day shrank it never grows back.
 */
function subtractMonths(nowMs: number, months: number): number {
  const d = new Date(nowMs);
  let year = d.getUTCFullYear();
  let month = d.getUTCMonth();
  let day = d.getUTCDate();
  for (let i = 0; i < months; i++) {
    month--;
    if (month < 0) {
      month = 11;
      year--;
    }
    day = Math.min(day, daysInMonth(year, month));
  }
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

function subtractYears(nowMs: number, years: number): number {
  const d = new Date(nowMs);
  const month = d.getUTCMonth();
  let day = d.getUTCDate();
  let year = d.getUTCFullYear();
  for (let i = 0; i < years; i++) {
    year--;
    day = Math.min(day, daysInMonth(year, month));
  }
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** Offset (ms) of `timeZone` at the instant `utcMs`; 0 for UTC or an unknown zone. */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  let fmt = offsetFormatters.get(timeZone);
  if (!fmt) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      return 0;
    }
    offsetFormatters.set(timeZone, fmt);
  }
  const parts: Record<string, number> = {};
  for (const p of fmt.formatToParts(new Date(utcMs))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/** Wall-clock fields in `timeZone` -> instant. Two passes settle DST transitions the usual way. */
function naiveToUtc(wallMs: number, timeZone: string | null): number {
  if (!timeZone || timeZone === 'UTC' || timeZone === 'Etc/UTC') return wallMs;
  const first = wallMs - zoneOffsetMs(timeZone, wallMs);
  return wallMs - zoneOffsetMs(timeZone, first);
}

/** Absolute date text -> epoch ms, or NaN. */
export function parseAbsoluteDate(text: string, timeZone: string | null): number {
  const s = text.trim();
  const m = ISO_LIKE.exec(s);
  if (m) {
    const year = Number(m[1]);
    const month = Number(m[2]) - 1;
    const day = Number(m[3]);
    const hour = m[4] ? Number(m[4]) : 0;
    const minute = m[5] ? Number(m[5]) : 0;
    const second = m[6] ? Number(m[6]) : 0;
    const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
    if (month > 11 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) {
      return NaN;
    }
    const wall = Date.UTC(year, month, day, hour, minute, second, ms);
    const zone = m[8];
    if (!zone) return naiveToUtc(wall, timeZone);
    if (/^(?:z|utc|gmt)$/i.test(zone)) return wall;
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + (digits.length > 2 ? Number(digits.slice(2, 4)) : 0);
    return wall - sign * offsetMin * 60_000;
  }
  const e = EPOCH_DIGITS.exec(s);
  if (e) {
    if (e[1]) return Number(e[1]) * 1000 + (e[2] ? Math.floor(Number(`0.${e[2]}`) * 1000) : 0);
    if (e[3]) return Number(e[3]);
    return Math.floor(Number(e[4]) / 1e6);
  }
  if (EXPLICIT_ZONE.test(s)) {
    const parsed = Date.parse(s);
    return Number.isNaN(parsed) ? NaN : parsed;
  }
  return NaN;
}

/** Compiles an `is_date_*` filter value; null when it can never parse (the filter then never matches). */
export function compileDateFilter(value: unknown, timeZone: string | null): DateFilter | null {
  // Rust only accepts string filter values here.
  if (typeof value !== 'string') return null;
  const relative = parseRelative(value);
  if (relative) return { absoluteMs: NaN, relative };
  const absoluteMs = parseAbsoluteDate(value, timeZone);
  return Number.isNaN(absoluteMs) ? null : { absoluteMs, relative: null };
}

export function dateFilterMs(filter: DateFilter, nowMs: number): number {
  return filter.relative ? resolveRelative(filter.relative, nowMs) : filter.absoluteMs;
}

// `\d+(?:\.\d*)?`, not `\d+\.?\d*`: the latter splits a run of digits in n ways and backtracks in n² on a long
// digit run that ends in a non-digit (a 30,000-digit value took 0.8 s).
const NUMERIC_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A person/group property value -> epoch ms, or NaN (Rust `determine_parsed_date_for_property_matching`). */
export function propertyDateMs(value: unknown, nowMs: number, timeZone: string | null): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value * 1000 : NaN;
  if (typeof value !== 'string') return NaN;
  if (NUMERIC_TEXT.test(value)) return Number(value) * 1000;
  const relative = parseRelative(value);
  if (relative) return resolveRelative(relative, nowMs);
  if (timeZone !== null) return parseAbsoluteDate(value, timeZone);
  // The same person's dates are parsed by every date filter of every request: remember recent ones (UTC only;
  // a zone's offsets are not cached, so zoned values are always parsed).
  let ms = parsedDates.get(value);
  if (ms === undefined) {
    if (parsedDates.size >= MAX_PARSED_DATES) parsedDates.clear();
    ms = parseAbsoluteDate(value, null);
    parsedDates.set(value, ms);
  }
  return ms;
}

const parsedDates = new Map<string, number>();
const MAX_PARSED_DATES = 10_000;
