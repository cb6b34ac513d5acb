/**
 * The `after` / `before` bounds of GET /events/ (ingestion-and-api.md §5.4, analytics.md §0.4), in UTC:
 * - absolute: `YYYY-MM-DD` (midnight) or an ISO-8601 date-time (`T` or a space between date and time; no offset
 *   means UTC; a space where the `+` of an offset was is read as `+`, because an unencoded `+` in a query string
 *   arrives as a space);
 * - relative: `-<n><unit>` with unit h (hours), d (days), w (weeks), m (months), q (quarters = 13 weeks) or
 *   y (years), optionally suffixed `Start`/`End` (`-1mStart`, `mStart`, `yEnd`). As in newer PostHog, hour offsets
 *   are truncated to the start of the hour and the other units to the start of the day; `Start`/`End` move to the
 *   first / last millisecond of that day, month or year.
 * A bound outside the years 1 to 9999, relative or absolute, is not a date (as for the analyses:
 * src/domain/analytics/date-range.ts `inDateRange`). Pure: `now` is a parameter.
 */
import { inDateRange } from '../../../domain/analytics/date-range.js';
import { utc } from '../../../domain/analytics/time-zone.js';

const RELATIVE = /^-?(\d{1,6})?([hdwmqy])(Start|End)?$/;
const ABSOLUTE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+\- ]\d{2}(?::?\d{2})?)?)?$/;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Epoch ms of a bound, or null when the text is not a date this endpoint understands. */
export function parseEventDate(raw: string, now: number): number | null {
  const text = raw.trim();
  const rel = RELATIVE.exec(text);
  const ms = rel ? relative(Number(rel[1] ?? 0), rel[2]!, rel[3] ?? null, now) : absoluteOf(text);
  // Beyond the years 1 to 9999 (e.g. -999999d, or NaN past JavaScript's own range: -999999y) is not a date either.
  return ms !== null && inDateRange(ms) ? ms : null;
}

function absoluteOf(text: string): number | null {
  const abs = ABSOLUTE.exec(text);
  return abs ? absolute(abs) : null;
}

function relative(n: number, unit: string, position: string | null, now: number): number {
  const d = new Date(now);
  switch (unit) {
    case 'h':
      d.setTime(Math.floor((now - n * HOUR) / HOUR) * HOUR);
      return position === 'End' ? d.getTime() + HOUR - 1 : d.getTime();
    case 'd':
      d.setUTCDate(d.getUTCDate() - n);
      break;
    case 'w':
      d.setUTCDate(d.getUTCDate() - 7 * n);
      break;
    case 'q':
      d.setUTCDate(d.getUTCDate() - 91 * n);
      break;
    case 'm':
      addMonths(d, -n);
      break;
    case 'y':
      addMonths(d, -12 * n);
      break;
  }
  const day = utc(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (position === null) return day;
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  if (position === 'Start') {
    if (unit === 'm') return utc(year, month, 1);
    if (unit === 'y') return utc(year, 0, 1);
    return day;
  }
  if (unit === 'm') return utc(year, month + 1, 1) - 1;
  if (unit === 'y') return utc(year + 1, 0, 1) - 1;
  return day + DAY - 1;
}

/** Calendar months, clamping the day (Mar 31 − 1 month = Feb 28/29), like dateutil's relativedelta. */
function addMonths(d: Date, months: number): void {
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(utc(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
}

function absolute(m: RegExpExecArray): number | null {
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  // Feb 30 would roll over into March; a date that does not exist is an error, not another day.
  if (d.getUTCDate() !== day) return null;
  d.setUTCHours(hour, minute, second, ms);
  return d.getTime() - offsetMs(m[8]);
}

function offsetMs(zone: string | undefined): number {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  return sign * (hours * HOUR + minutes * 60_000);
}
