/**
 * Wall-clock arithmetic in a project's time zone (IANA name), on epoch milliseconds. Analyses bucket events by
 * local day, week or month (analytics.md §0.4-0.5), and a local day is not always 24 hours long: the instants of
 * bucket boundaries are computed here, with Intl, once per query, never per event.
 */

export interface LocalTime {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** 400 Gregorian years are exactly 146,097 days: shifting by them keeps every date's weekday and leap day. */
const FOUR_CENTURIES_MS = 146_097 * 86_400_000;

/**
 * `Date.UTC` for every year: `Date.UTC` itself reads the years 0 to 99 as 1900 to 1999, and date parameters reach
 * back to the year 1 (src/domain/analytics/date-range.ts).
 */
export function utc(year: number, monthIndex: number, day = 1, hour = 0, minute = 0, second = 0, ms = 0): number {
  if (year >= 0 && year < 100) return Date.UTC(year + 400, monthIndex, day, hour, minute, second, ms) - FOUR_CENTURIES_MS;
  return Date.UTC(year, monthIndex, day, hour, minute, second, ms);
}

function formatterOf(timeZone: string, withEra = false): Intl.DateTimeFormat {
  const key = withEra ? `${timeZone} era` : timeZone;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      ...(withEra ? { era: 'short' } : {}),
    });
    formatters.set(key, f);
  }
  return f;
}

/** Before this instant (0002-01-01Z) a local year can be 0 or less, which Intl writes as a year of the era BC. */
const ERA_MATTERS_BEFORE = -62104060800000;

/** Whether `name` is a time zone this runtime knows. */
export function isTimeZone(name: string): boolean {
  try {
    formatterOf(name);
    return true;
  } catch {
    return false;
  }
}

/** The local wall-clock time of an instant. */
export function toLocal(ms: number, timeZone: string): LocalTime {
  if (timeZone === 'UTC') {
    const d = new Date(ms);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), ms: d.getUTCMilliseconds() };
  }
  const early = ms < ERA_MATTERS_BEFORE;
  const parts = formatterOf(timeZone, early).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const year = early && parts.find((p) => p.type === 'era')?.value === 'BC' ? 1 - get('year') : get('year');
  return { year, month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second'), ms: ((ms % 1000) + 1000) % 1000 };
}

/** Offset of local time from UTC at an instant, in ms (positive east of Greenwich). */
export function offsetAt(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0;
  return wallAsUtc(toLocal(ms, timeZone)) - ms;
}

function wallAsUtc(l: LocalTime): number {
  return utc(l.year, l.month - 1, l.day, l.hour, l.minute, l.second, l.ms);
}

const DAY_MS = 86_400_000;

/**
 * The instant a local wall-clock time happens, disambiguated as JavaScript dates and Temporal's "compatible" mode
 * do: in a fall-back overlap the earlier occurrence, in a spring-forward gap (a time that does not exist) the time
 * shifted forward by the gap.
 */
export function fromLocal(l: Partial<LocalTime> & { year: number; month: number; day: number }, timeZone: string): number {
  const wall = utc(l.year, l.month - 1, l.day, l.hour ?? 0, l.minute ?? 0, l.second ?? 0, l.ms ?? 0);
  if (timeZone === 'UTC') return wall;
  // Offset changes are far rarer than daily: the offsets a day before and after cover both sides of any change.
  const before = wall - offsetAt(wall - DAY_MS, timeZone);
  const after = wall - offsetAt(wall + DAY_MS, timeZone);
  const fits = (t: number) => wallAsUtc(toLocal(t, timeZone)) === wall;
  if (fits(before) && fits(after)) return Math.min(before, after);
  if (fits(before)) return before;
  if (fits(after)) return after;
  return before;
}

export type Interval = 'hour' | 'day' | 'week' | 'month';

/**
 * The start of the interval holding an instant, in local time: hour, day (00:00), week (Sunday 00:00, ClickHouse's
 * toStartOfWeek mode 0) or month (the 1st, 00:00).
 */
export function truncate(ms: number, interval: Interval, timeZone: string): number {
  const l = toLocal(ms, timeZone);
  switch (interval) {
    case 'hour':
      // Arithmetic, not fromLocal: in a fall-back overlap the repeated hour must stay the instant's own hour.
      return ms - (l.minute * 60_000 + l.second * 1000 + l.ms);
    case 'day':
      return fromLocal({ year: l.year, month: l.month, day: l.day }, timeZone);
    case 'week': {
      const weekday = new Date(utc(l.year, l.month - 1, l.day)).getUTCDay();
      const d = new Date(utc(l.year, l.month - 1, l.day - weekday));
      return fromLocal({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }, timeZone);
    }
    case 'month':
      return fromLocal({ year: l.year, month: l.month, day: 1 }, timeZone);
  }
}

/** `count` intervals after an instant, in local calendar terms (a day after 00:00 is the next 00:00). */
export function addIntervals(ms: number, interval: Interval, count: number, timeZone: string): number {
  if (interval === 'hour') return ms + count * 3_600_000;
  const l = toLocal(ms, timeZone);
  if (interval === 'month') {
    // Day of month clamped to the target month's length (Jan 31 + 1 month = Feb 28/29).
    const target = new Date(utc(l.year, l.month - 1 + count, 1));
    const last = new Date(utc(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
    return fromLocal({ year: target.getUTCFullYear(), month: target.getUTCMonth() + 1, day: Math.min(l.day, last), hour: l.hour, minute: l.minute, second: l.second, ms: l.ms }, timeZone);
  }
  const days = interval === 'week' ? 7 * count : count;
  const d = new Date(utc(l.year, l.month - 1, l.day + days));
  return fromLocal({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: l.hour, minute: l.minute, second: l.second, ms: l.ms }, timeZone);
}

/** Local date-time text `YYYY-MM-DD HH:MM:SS` (hourly bucket labels) or `YYYY-MM-DD`. */
export function localText(ms: number, timeZone: string, withTime: boolean): string {
  const l = toLocal(ms, timeZone);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const date = `${p(l.year, 4)}-${p(l.month)}-${p(l.day)}`;
  return withTime ? `${date} ${p(l.hour)}:${p(l.minute)}:${p(l.second)}` : date;
}

/** ISO 8601 with the local offset, e.g. `2024-03-10T00:00:00-05:00` (PostHog's dates in a project's zone). */
export function localIso(ms: number, timeZone: string): string {
  const offset = Math.round(offsetAt(ms, timeZone) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${localText(ms, timeZone, true).replace(' ', 'T')}${sign}${p(Math.floor(abs / 60))}:${p(abs % 60)}`;
}
