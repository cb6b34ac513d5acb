/**
 * What a property value means to the date operators of an analysis filter (`is_date_before`, `is_date_after`,
 * `is_date_exact`): one grammar, read the same by the local engine and by the SQL Quill prints for ClickHouse
 * (`propertyInstantSql` in src/domain/analytics/clickhouse/property-date-sql.ts), so that both answer alike.
 *
 * - A number, or a text that is one (JSON's number syntax): a Unix time, in seconds up to 1e11 and in
 *   milliseconds above (1e11 s is the year 5138; 1e11 ms is 1973).
 * - An ISO 8601 date (`2024-01-15`) or date-time (`2024-01-15T10:00`, `2024-01-15 10:00:00.123`, `T` or a space,
 *   up to nine digits of fraction, cut to milliseconds), years 1900 to 2299 (ClickHouse's DateTime64 range). With
 *   an offset (`Z`, `+05:30`, `+0530`, `-08`) it is that instant; without one, and a bare date at its midnight, it is
 *   the wall-clock time in the project's time zone (as PostHog reads a property with `toDateTime` in the team's
 *   zone), resolved as `fromLocal` does: the earlier instant of a repeated hour, a skipped hour shifted forward.
 * - Anything else is no date, and no date operator matches it.
 *
 * Date.parse, read before, also took forms ClickHouse reads otherwise or not at all (`Jan 15 2024`, `2024/01/15`,
 * `2024-02-30` as March 1st) and read a date-time without offset in the server's own zone.
 */
import { fromLocal, utc } from './time-zone.js';
import { parseDate, validDate } from './date-range.js';

/** JSON's number syntax (a number property's text as stored), and the same in a text property. */
export const PROPERTY_NUMBER_PATTERN = '^-?[0-9]+(\\.[0-9]+)?([eE][+-]?[0-9]+)?$';
/** An ISO date or date-time without offset: years 1900-2299, months, days, hours, minutes and seconds in range. */
export const PROPERTY_LOCAL_DATE_PATTERN =
  '^(19[0-9][0-9]|2[0-2][0-9][0-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([T ]([01][0-9]|2[0-3]):([0-5][0-9])(:([0-5][0-9])(\\.([0-9]{1,9}))?)?)?$';
/** The same date-time with an offset (a bare date takes none). */
export const PROPERTY_ZONED_DATE_PATTERN =
  '^(19[0-9][0-9]|2[0-2][0-9][0-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[T ]([01][0-9]|2[0-3]):([0-5][0-9])(:([0-5][0-9])(\\.([0-9]{1,9}))?)?(Z|[+-]([01][0-9]|2[0-3])(:?([0-5][0-9]))?)$';

const NUMBER = new RegExp(PROPERTY_NUMBER_PATTERN);
const LOCAL = new RegExp(PROPERTY_LOCAL_DATE_PATTERN);
const ZONED = new RegExp(PROPERTY_ZONED_DATE_PATTERN);

/** A Unix time in seconds (up to 1e11) or milliseconds, as epoch ms. */
export function unixTimeMs(n: number): number {
  return n > 1e11 ? n : n * 1000;
}

/** The instant (epoch ms) a property value names for the date operators, or NaN when it names none. */
export function propertyInstant(value: unknown, timeZone: string): number {
  if (typeof value === 'number') return Number.isFinite(value) ? unixTimeMs(value) : NaN;
  if (typeof value !== 'string') return NaN;
  if (NUMBER.test(value)) return unixTimeMs(Number(value));
  const local = LOCAL.exec(value);
  if (local) {
    const [year, month, day] = [Number(local[1]), Number(local[2]), Number(local[3])];
    if (!validDate(year, month, day)) return NaN;
    return fromLocal({ year, month, day, hour: Number(local[5] ?? 0), minute: Number(local[6] ?? 0), second: Number(local[8] ?? 0), ms: fractionMs(local[10]) }, timeZone);
  }
  const zoned = ZONED.exec(value);
  if (zoned) {
    const [year, month, day] = [Number(zoned[1]), Number(zoned[2]), Number(zoned[3])];
    if (!validDate(year, month, day)) return NaN;
    const wall = utc(year, month - 1, day, Number(zoned[4]), Number(zoned[5]), Number(zoned[7] ?? 0), fractionMs(zoned[9]));
    const zone = zoned[10]!;
    if (zone === 'Z') return wall;
    const offsetMinutes = Number(zoned[11]) * 60 + Number(zoned[13] ?? 0);
    return wall - (zone[0] === '-' ? -1 : 1) * offsetMinutes * 60_000;
  }
  return NaN;
}

/**
 * The instant a date filter's own value names: a date parameter as the analyses read one (`-7d`, `2024-01-15`, an
 * ISO date-time; in the project's time zone, relative to the query's now), else a Unix time or Date.parse's reading.
 */
export function filterDateBound(value: unknown, now: number, timeZone: string): number {
  if (typeof value === 'number') return unixTimeMs(value);
  if (typeof value !== 'string') return NaN;
  try {
    return parseDate(value, now, timeZone).ms;
  } catch {
    return Date.parse(value);
  }
}

/** Milliseconds of a fraction's digits, cut (not rounded) as ClickHouse's DateTime64(3) parsing cuts them. */
function fractionMs(digits: string | undefined): number {
  return digits === undefined ? 0 : Number(digits.slice(0, 3).padEnd(3, '0'));
}
