/**
 * `date_from` / `date_to` of the analysis endpoints (analytics.md §0.4), resolved to instants in the project's time
 * zone, and the interval buckets between them (§0.5).
 */
import { addIntervals, fromLocal, localText, toLocal, truncate, utc, type Interval } from './time-zone.js';

export const INTERVALS: readonly Interval[] = ['hour', 'day', 'week', 'month'];

/** A parsed date parameter: an instant, and whether it carries a time of day (then it is never widened to a day). */
interface ParsedDate {
  ms: number;
  explicitTime: boolean;
}

const RELATIVE = /^-?(\d+)?([hdwmqyM])(Start|End)?$/;
const DATE_ONLY = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * The instants a date parameter may name, relative or absolute: the years 1 to 9999 (UTC), Python's `datetime` range,
 * in which PostHog parses them. An absolute date cannot name a year past 9999 (four digits), and a relative one
 * that reaches outside (`-99999999999d`) is refused the same way rather than answered as an empty range.
 */
export const EARLIEST_DATE_MS = -62135596800000; // 0001-01-01T00:00:00.000Z
export const LATEST_DATE_MS = 253402300799999; // 9999-12-31T23:59:59.999Z

/** Whether an instant is one a date parameter may name. */
export function inDateRange(ms: number): boolean {
  return ms >= EARLIEST_DATE_MS && ms <= LATEST_DATE_MS;
}

/** A date parameter that is not a date, or names an instant outside the years 1 to 9999; `attr` names the parameter. */
export class DateParseError extends Error {
  constructor(message: string, readonly attr: string = 'date_from') {
    super(message);
  }
}

/**
 * Shorter than any period of each relative unit (a local day can be 23 hours, a month 28 days): `n` of them further
 * back than the earliest instant is out of range before any calendar arithmetic, which cannot then overflow.
 */
const SHORTEST_MS: Record<string, number> = {
  M: 60_000, h: 3_600_000, d: 82_800_000, w: 7 * 82_800_000, m: 28 * 82_800_000, q: 91 * 82_800_000, y: 365 * 82_800_000,
};

/** End of a local day or other period: the last millisecond before the next one begins. */
function endOf(startMs: number, unit: Interval, timeZone: string): number {
  return addIntervals(startMs, unit, 1, timeZone) - 1;
}

/**
 * Parses one date parameter relative to `now`: `-7d`, `-24h`, `mStart`, `-1mEnd`, `2024-01-05`, an ISO date-time
 * (with or without offset; without one it is local time). Throws DateParseError (naming `attr`) for anything else,
 * and for a date outside the years 1 to 9999, relative or absolute.
 */
export function parseDate(text: string, now: number, timeZone: string, attr = 'date_from'): ParsedDate {
  const invalid = () => new DateParseError(`Invalid date: ${text}`, attr);
  const rel = RELATIVE.exec(text.trim());
  if (rel && (rel[1] === undefined ? 0 : Number(rel[1])) * SHORTEST_MS[rel[2]!]! > now - EARLIEST_DATE_MS) throw invalid();
  let parsed: ParsedDate;
  try {
    parsed = parseAny(text, now, timeZone);
  } catch (error) {
    if (error instanceof DateParseError) throw invalid();
    throw error;
  }
  if (!inDateRange(parsed.ms)) throw invalid();
  return parsed;
}

function parseAny(text: string, now: number, timeZone: string): ParsedDate {
  const value = text.trim();
  const rel = RELATIVE.exec(value);
  if (rel) {
    const n = rel[1] === undefined ? 0 : Number(rel[1]);
    const unit = rel[2]!;
    const edge = rel[3];
    if (unit === 'h' || unit === 'M') {
      const step = unit === 'h' ? 3_600_000 : 60_000;
      let ms = now - n * step;
      if (edge === 'Start') ms = unit === 'h' ? truncate(ms, 'hour', timeZone) : ms - (ms % 60_000);
      if (edge === 'End') ms = (unit === 'h' ? truncate(ms, 'hour', timeZone) + 3_600_000 : ms - (ms % 60_000) + 60_000) - 1;
      return { ms, explicitTime: true };
    }
    let ms: number;
    let period: Interval;
    switch (unit) {
      case 'd':
        ms = addIntervals(now, 'day', -n, timeZone);
        period = 'day';
        break;
      case 'w':
        ms = addIntervals(now, 'week', -n, timeZone);
        period = 'week';
        break;
      case 'q':
        ms = addIntervals(now, 'week', -13 * n, timeZone);
        period = 'month';
        break;
      case 'y':
        ms = addIntervals(now, 'month', -12 * n, timeZone);
        period = 'month';
        break;
      default:
        ms = addIntervals(now, 'month', -n, timeZone);
        period = 'month';
    }
    if (edge === 'Start' || edge === 'End') {
      let start = unit === 'y' ? yearStart(ms, timeZone) : truncate(ms, period, timeZone);
      if (unit === 'q') start = quarterStart(ms, timeZone);
      const span: [Interval, number] = unit === 'y' ? ['month', 12] : unit === 'q' ? ['month', 3] : [period, 1];
      return { ms: edge === 'Start' ? start : addIntervals(start, span[0], span[1], timeZone) - 1, explicitTime: false };
    }
    return { ms, explicitTime: false };
  }
  const date = DATE_ONLY.exec(value);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    if (!validDate(y, m, d)) throw new DateParseError(`Invalid date: ${text}`);
    return { ms: fromLocal({ year: y, month: m, day: d }, timeZone), explicitTime: false };
  }
  const dt = DATE_TIME.exec(value);
  if (dt) {
    const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(dt[i]));
    const s = dt[6] === undefined ? 0 : Number(dt[6]);
    const frac = dt[7] === undefined ? 0 : Math.floor(Number(`0.${dt[7]}`) * 1000);
    if (!validDate(y!, mo!, d!) || h! > 23 || mi! > 59 || s > 59) throw new DateParseError(`Invalid date: ${text}`);
    const zone = dt[8];
    if (zone === undefined) return { ms: fromLocal({ year: y!, month: mo!, day: d!, hour: h!, minute: mi!, second: s, ms: frac }, timeZone), explicitTime: true };
    let offset = 0;
    if (zone !== 'Z') {
      const digits = zone.replace(':', '');
      offset = (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * 60_000 * (digits[0] === '-' ? -1 : 1);
    }
    return { ms: utc(y!, mo! - 1, d!, h!, mi!, s, frac) - offset, explicitTime: true };
  }
  throw new DateParseError(`Invalid date: ${text}`);
}

/** Whether year `y`, month `m` (1-12) and day `d` name a day of the calendar (no February 30th). */
export function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= new Date(utc(y, m, 0)).getUTCDate();
}

function yearStart(ms: number, timeZone: string): number {
  return fromLocal({ year: toLocal(ms, timeZone).year, month: 1, day: 1 }, timeZone);
}

function quarterStart(ms: number, timeZone: string): number {
  const l = toLocal(ms, timeZone);
  return fromLocal({ year: l.year, month: l.month - ((l.month - 1) % 3), day: 1 }, timeZone);
}

export interface DateRangeParams {
  dateFrom: string | null;
  dateTo: string | null;
  /** `explicit_date=true`: take both bounds exactly as given. */
  explicitDate: boolean;
}

export interface DateRange {
  /** Inclusive bounds of the events counted, epoch ms. */
  from: number;
  to: number;
  interval: Interval;
  timeZone: string;
}

/**
 * Resolves the range an analysis counts (§0.4): defaults (`-7d`, now), `all` (the project's first event, which the
 * caller passes; null when there is none), day widening unless hourly or explicit, rounding date_from down to its
 * interval for week/month intervals or ranges of two or more intervals.
 */
export function resolveDateRange(p: DateRangeParams, interval: Interval, timeZone: string, now: number, firstEvent: number | null): DateRange {
  let from: ParsedDate;
  if (p.dateFrom === 'all') from = { ms: firstEvent ?? now, explicitTime: false };
  else from = parseDate(p.dateFrom ?? '-7d', now, timeZone, 'date_from');
  let to: ParsedDate;
  if (p.dateTo === null) to = { ms: interval === 'hour' ? now + 60_000 : now, explicitTime: true };
  else to = parseDate(p.dateTo, now, timeZone, 'date_to');
  const hourRelative = p.dateFrom !== null && /^-?\d*h/.test(p.dateFrom.trim());
  const widen = interval !== 'hour' && !p.explicitDate && !hourRelative;
  let fromMs = from.ms;
  let toMs = to.ms;
  if (widen && !from.explicitTime) fromMs = truncate(fromMs, 'day', timeZone);
  if (widen && !to.explicitTime && p.dateTo !== null) toMs = endOf(truncate(toMs, 'day', timeZone), 'day', timeZone);
  if (widen && p.dateTo === null) toMs = endOf(truncate(now, 'day', timeZone), 'day', timeZone);
  const spansTwo = addIntervals(truncate(fromMs, interval, timeZone), interval, 2, timeZone) <= toMs + 1;
  if (interval === 'week' || interval === 'month' || spansTwo) fromMs = truncate(fromMs, interval, timeZone);
  return { from: fromMs, to: toMs, interval, timeZone };
}

/** The start of every bucket from date_from's to date_to's, zero-filled (§0.5). */
export function bucketStarts(range: DateRange): number[] {
  const out: number[] = [];
  const last = truncate(range.to, range.interval, range.timeZone);
  for (let b = truncate(range.from, range.interval, range.timeZone); b <= last; b = addIntervals(b, range.interval, 1, range.timeZone)) {
    out.push(b);
    if (out.length > 100_000) throw new DateParseError('The date range has too many intervals.');
  }
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `days[i]`: `YYYY-MM-DD`, or `YYYY-MM-DD HH:MM:SS` for hourly buckets. */
export function bucketDay(start: number, interval: Interval, timeZone: string): string {
  return localText(start, timeZone, interval === 'hour');
}

/** `labels[i]`: `5-Jan-2023`, hourly `5-Jan-2023 13:00`. */
export function bucketLabel(start: number, interval: Interval, timeZone: string): string {
  const l = toLocal(start, timeZone);
  const date = `${l.day}-${MONTHS[l.month - 1]}-${l.year}`;
  return interval === 'hour' ? `${date} ${String(l.hour).padStart(2, '0')}:${String(l.minute).padStart(2, '0')}` : date;
}

/**
 * Finds an instant's bucket among sorted bucket starts (the last bucket ends at `end`, inclusive). Evenly spaced
 * buckets (UTC days, any hours) are found by arithmetic; others (months, local days across a daylight-saving
 * change) by binary search, trying the previous answer first since events of one block are mostly close in time.
 */
export class BucketIndex {
  private last = 0;
  /** The common width of every bucket, or 0 when they differ. */
  readonly step: number;

  constructor(readonly starts: readonly number[], readonly end: number) {
    let step = starts.length > 1 ? starts[1]! - starts[0]! : 0;
    for (let i = 2; i < starts.length && step !== 0; i++) if (starts[i]! - starts[i - 1]! !== step) step = 0;
    this.step = step;
  }

  /** The bucket of `t`, or -1 when it is outside [starts[0], end]. */
  of(t: number): number {
    const s = this.starts;
    const n = s.length;
    if (n === 0 || t < s[0]! || t > this.end) return -1;
    if (this.step !== 0) return Math.min(n - 1, Math.floor((t - s[0]!) / this.step));
    let k = this.last;
    if (t >= s[k]! && (k + 1 === n || t < s[k + 1]!)) return k;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= t) lo = mid;
      else hi = mid - 1;
    }
    k = lo;
    this.last = k;
    return k;
  }
}
