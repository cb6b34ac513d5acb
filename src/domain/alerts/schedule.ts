/**
 * When an alert is checked next and until when it is snoozed, pure (posthog/tasks/alerts/utils.py
 * `next_check_time`, posthog/api/alert.py's snooze):
 *
 * - hourly: an hour after the previous check was due, at the same minute (alerts created at different minutes stay
 *   spread over the hour); a node that was down for hours checks once, at the next such minute, not once per hour
 *   missed;
 * - daily: tomorrow around 1 am in the project's time zone; weekly: next Monday around 3 am; monthly: the first of
 *   next month around 4 am. Only the hour is set: the minute stays the one of the check, again to spread them.
 */
import type { CalculationInterval } from './alert-config.js';
import { fromLocal, toLocal } from '../analytics/time-zone.js';

const HOUR = 3_600_000;

/** The local calendar date `days` after `l`'s, as year, month, day. */
function dayAfter(l: { year: number; month: number; day: number }, days: number): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(l.year, l.month - 1, l.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The next check after one at `now`; `previousDue` is when the check that just ran was due (hourly keeps its minute). */
export function nextCheckAt(interval: CalculationInterval, now: number, timeZone: string, previousDue: number | null = null): number {
  const l = toLocal(now, timeZone);
  const at = (date: { year: number; month: number; day: number }, hour: number) => fromLocal({ ...date, hour, minute: l.minute, second: l.second }, timeZone);
  switch (interval) {
    case 'hourly': {
      const from = previousDue ?? now;
      const missed = Math.max(0, Math.floor((now - from) / HOUR));
      return from + (missed + 1) * HOUR;
    }
    case 'daily':
      return at(dayAfter(l, 1), 1);
    case 'weekly': {
      // PostHog's relativedelta(days=1, weekday=MO(1)): the first Monday after today.
      const weekday = new Date(Date.UTC(l.year, l.month - 1, l.day)).getUTCDay();
      return at(dayAfter(l, ((8 - weekday) % 7) || 7), 3);
    }
    case 'monthly':
      return at(l.month === 12 ? { year: l.year + 1, month: 1, day: 1 } : { year: l.year, month: l.month + 1, day: 1 }, 4);
  }
}

export class SnoozeError extends Error {
  override readonly name = 'SnoozeError';
}

const RELATIVE = /^\+?(\d{1,4})([hdw])$/;

/**
 * `snoozed_until` as PostHog takes it: a relative time (`2h`, `1d`, `+1w`: from now, rounded down to the hour for
 * hours and to the UTC day for days and weeks, as PostHog's relative_date_parse with always_truncate) or a
 * date-time. Throws SnoozeError for anything else, and for a time not in the future.
 */
export function snoozeUntil(text: string, now: number): number {
  const rel = RELATIVE.exec(text.trim());
  let ms: number;
  if (rel) {
    const n = Number(rel[1]);
    if (rel[2] === 'h') ms = Math.floor((now + n * HOUR) / HOUR) * HOUR;
    else {
      const day = 24 * HOUR;
      ms = Math.floor((now + n * (rel[2] === 'd' ? day : 7 * day)) / day) * day;
    }
  } else {
    ms = Date.parse(text);
    if (!/^\d{4}-\d{2}-\d{2}/.test(text.trim()) || Number.isNaN(ms)) throw new SnoozeError('Snooze until a date-time, or a relative time such as 2h, 1d or 1w.');
  }
  if (ms <= now) throw new SnoozeError('Snooze until a time in the future.');
  return ms;
}
