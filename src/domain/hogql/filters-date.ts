/** `{filters}`' date range as both engines read it: `filters.dateRange.date_from` / `date_to` as an instant. */
import { DateParseError, parseDate } from '../analytics/date-range.js';
import { hogqlError } from './errors.js';

/** The bound in ms, or null when absent (or `all`); a bound that is not a date is the query's error. */
export function filtersDateBound(filters: Record<string, unknown> | null | undefined, which: string, now: number, timeZone: string): number | null {
  const range = (filters?.dateRange ?? null) as Record<string, unknown> | null;
  const raw = range?.[which === 'from' ? 'date_from' : 'date_to'];
  if (raw === undefined || raw === null || raw === 'all') return null;
  if (typeof raw !== 'string') hogqlError(`filters.dateRange.date_${which} must be a date text.`);
  try {
    return parseDate(raw, now, timeZone).ms;
  } catch (error) {
    if (error instanceof DateParseError) hogqlError(`Invalid filters.dateRange.date_${which}: ${raw}`);
    throw error;
  }
}
