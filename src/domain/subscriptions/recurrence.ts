/**
 * When a subscription is delivered, pure. PostHog describes the schedule as an iCalendar rule (dateutil's `rrule`:
 * posthog/models/subscription.py) made of `frequency`, `interval`, `byweekday`, `bysetpos`, `count`, `start_date`
 * and `until_date`; this is that subset of RFC 5545 in UTC, as dateutil computes it for a UTC `start_date`:
 *
 * - each period (day, week from Monday, month or year; every `interval`-th from the one of `start_date`) yields the
 *   days of `byweekday` in it (or, without `byweekday`, the day of the period that `start_date` is on: its weekday,
 *   day of the month, or day of the year; a month without that day yields nothing, as the 31st in April);
 * - `bysetpos` keeps the n-th of a period's days (1 to 4, or -1 for the last): `monthly` on `friday` with
 *   `bysetpos: -1` is the last Friday of each month;
 * - every occurrence is at `start_date`'s time of day, none is before `start_date` or after `until_date`, and at most
 *   `count` occur in all.
 *
 * `next_delivery_date` is the first occurrence after now (PostHog adds 15 minutes because its scheduler may run
 * early; Quill's runs on time and does not).
 */
export const FREQUENCIES = ['daily', 'weekly', 'monthly', 'yearly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const SETPOS = [1, 2, 3, 4, -1] as const;

export interface Recurrence {
  frequency: Frequency;
  interval: number;
  byweekday: Weekday[] | null;
  bysetpos: number | null;
  count: number | null;
  start_date: string;
  until_date: string | null;
}

const DAY = 86_400_000;
/** Periods looked at before giving up on a rule that yields nothing more (a count reached is found far sooner). */
const MAX_PERIODS = 200_000;

/** Monday 0 … Sunday 6 (rrule's numbering). */
const weekdayOf = (ms: number): number => (new Date(ms).getUTCDay() + 6) % 7;
const dayStart = (ms: number): number => Math.floor(ms / DAY) * DAY;

/** The candidate days (UTC midnights) of period `k` of the rule. */
function periodDays(r: Recurrence, start: number, k: number): number[] {
  const s = new Date(start);
  const [y, m, d] = [s.getUTCFullYear(), s.getUTCMonth(), s.getUTCDate()];
  const step = k * r.interval;
  const wanted = r.byweekday ? new Set(r.byweekday.map((w) => WEEKDAYS.indexOf(w))) : null;
  const span = (from: number, to: number) => {
    const days: number[] = [];
    for (let t = from; t < to; t += DAY) if (wanted!.has(weekdayOf(t))) days.push(t);
    return days;
  };
  switch (r.frequency) {
    case 'daily': {
      const day = Date.UTC(y, m, d + step);
      return !wanted || wanted.has(weekdayOf(day)) ? [day] : [];
    }
    case 'weekly': {
      const monday = Date.UTC(y, m, d - weekdayOf(start) + 7 * step);
      return wanted ? span(monday, monday + 7 * DAY) : [monday + weekdayOf(start) * DAY];
    }
    case 'monthly': {
      const first = Date.UTC(y, m + step, 1);
      const next = Date.UTC(y, m + step + 1, 1);
      if (wanted) return span(first, next);
      const day = Date.UTC(y, m + step, d);
      return day < next ? [day] : [];
    }
    case 'yearly': {
      const first = Date.UTC(y + step, 0, 1);
      if (wanted) return span(first, Date.UTC(y + step + 1, 0, 1));
      const day = Date.UTC(y + step, m, d);
      return new Date(day).getUTCMonth() === m ? [day] : [];
    }
  }
}

function setPosition(days: number[], pos: number | null): number[] {
  if (pos === null || days.length === 0) return days;
  const day = days[pos > 0 ? pos - 1 : days.length + pos];
  return day === undefined ? [] : [day];
}

/** How many whole periods lie between `start` and `ms` (a lower bound, so that skipping them skips no occurrence). */
function periodsBefore(r: Recurrence, start: number, ms: number): number {
  if (ms <= start) return 0;
  const a = new Date(start);
  const b = new Date(ms);
  const elapsed = r.frequency === 'daily' ? Math.floor((ms - start) / DAY)
    : r.frequency === 'weekly' ? Math.floor((ms - start) / (7 * DAY))
      : r.frequency === 'monthly' ? (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth()
        : b.getUTCFullYear() - a.getUTCFullYear();
  return Math.max(0, Math.floor(elapsed / r.interval) - 1);
}

/** The first occurrence of the rule strictly after `afterMs` (epoch ms), or null when there is none. */
export function occurrenceAfter(r: Recurrence, afterMs: number): number | null {
  const start = Date.parse(r.start_date);
  const until = r.until_date === null ? Infinity : Date.parse(r.until_date);
  const timeOfDay = start - dayStart(start);
  // With a count, occurrences must be counted from the first; without, whole periods before `afterMs` are skipped.
  let seen = 0;
  for (let k = r.count === null ? periodsBefore(r, start, afterMs) : 0, n = 0; n < MAX_PERIODS; k++, n++) {
    const days = setPosition(periodDays(r, start, k), r.byweekday ? r.bysetpos : null);
    for (const day of days) {
      const at = day + timeOfDay;
      if (at < start) continue;
      if (at > until) return null;
      seen++;
      if (r.count !== null && seen > r.count) return null;
      if (at > afterMs) return at;
    }
  }
  return null;
}

/** PostHog's `summary`: "sent every 2 weeks on the last Friday". */
export function recurrenceSummary(r: Pick<Recurrence, 'frequency' | 'interval' | 'byweekday' | 'bysetpos'>): string {
  const unit = { daily: 'day', weekly: 'week', monthly: 'month', yearly: 'year' }[r.frequency];
  let summary = `sent every ${r.interval > 1 ? `${r.interval} ${unit}s` : unit}`;
  if (r.byweekday && r.byweekday.length > 0 && r.bysetpos !== null) {
    const position = ({ 1: 'first', 2: 'second', 3: 'third', 4: 'fourth', [-1]: 'last' } as Record<number, string>)[r.bysetpos];
    if (position === undefined) return 'sent on a schedule';
    const day = r.byweekday.length === 1 ? r.byweekday[0]!.charAt(0).toUpperCase() + r.byweekday[0]!.slice(1) : 'day';
    summary += ` on the ${position} ${day}`;
  }
  return summary;
}
