/**
 * What one alert check finds, pure, as PostHog's posthog/tasks/alerts/trends.py `check_trends_alert` finds it:
 *
 * - the insight is computed over the last 2 intervals of its own grouping (absolute value) or 3 (relative), up to
 *   now, so its last point is the interval under way and the one before it the last complete one;
 * - `absolute_value` compares the watched series' value of the last complete interval (of the interval under way
 *   with `check_ongoing_interval`, of the whole range for a non-time-series display) with the bounds;
 * - `relative_increase` / `relative_decrease` compare that value with the interval before it: their difference
 *   (absolute threshold) or the difference as a fraction of the earlier value (percentage threshold: 0.2 = 20 %);
 * - with a breakdown, every breakdown value is looked at and the first one out of bounds fires.
 *
 * A value below `lower` or above `upper` is a breach, described as PostHog describes it. Then `checkOutcome` says
 * which state that makes and whether someone is told: only on the way into Firing, and when a firing alert
 * resolves.
 */
import { isNonTimeSeries, type AlertSpec, type AlertState, type ThresholdBounds } from './alert-config.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One result of a trends answer, as far as a check reads it. */
export interface TrendSeries {
  label?: string;
  data?: number[];
  aggregated_value?: number;
}

export interface AlertEvaluation {
  /** The value compared with the bounds (null: a breakdown with no breach). */
  value: number | null;
  /** Why the alert fires; empty when it does not. */
  breaches: string[];
}

/** A check that cannot be made: its message is what the check records as its error. */
export class AlertCheckError extends Error {
  override readonly name = 'AlertCheckError';
}

const UNITS: Record<string, string> = { hour: 'h', day: 'd', week: 'w', month: 'm' };

function intervalOf(trends: Json): string {
  return typeof trends.interval === 'string' && trends.interval in UNITS ? trends.interval : 'day';
}

function hasBreakdown(trends: Json): boolean {
  const b = isObject(trends.breakdownFilter) ? trends.breakdownFilter : null;
  if (!b) return false;
  return (Boolean(b.breakdown) && Boolean(b.breakdown_type)) || (Array.isArray(b.breakdowns) && b.breakdowns.length > 0);
}

/**
 * The query a check runs: the insight's trend over the last 2 or 3 intervals up to now (the whole range for a
 * non-time-series display), without a comparison period, so that result `i` is series `i`.
 */
export function alertQuery(trends: Json, spec: AlertSpec): Json {
  const { compareFilter: _compare, ...rest } = trends;
  if (isNonTimeSeries(trends)) return rest;
  const last = spec.condition.type === 'absolute_value' ? 2 : 3;
  return { ...rest, dateRange: { date_from: `-${last}${UNITS[intervalOf(trends)]}`, date_to: null } };
}

/** The value `back` intervals before the last point (0: the interval under way), or the aggregated value. */
function valueAt(trends: Json, r: TrendSeries, back: number): number {
  if (isNonTimeSeries(trends)) return Number(r.aggregated_value ?? 0);
  const data = Array.isArray(r.data) ? r.data : [];
  return Number(data[data.length - 1 - back] ?? 0);
}

/** Python's `f"{x:.2%}"`. */
function percent(x: number): string {
  if (!Number.isFinite(x)) return `${x < 0 ? '-' : ''}inf%`;
  return `${(x * 100).toFixed(2)}%`;
}

const plain = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 1e9) / 1e9) : x > 0 ? 'inf' : '-inf');

function breachMessages(bounds: ThresholdBounds, value: number, spec: AlertSpec, interval: string | null, series: string, current = false): string[] {
  const isPct = spec.threshold.type === 'percentage';
  const fmt = isPct ? percent : plain;
  const verb = spec.condition.type === 'absolute_value' ? 'is' : spec.condition.type === 'relative_increase' ? 'increased' : 'decreased';
  const where = `The insight value (${series}) for ${current ? 'current' : 'previous'} ${interval ?? 'interval'} (${fmt(value)}) ${verb}`;
  if (typeof bounds.lower === 'number' && value < bounds.lower) return [`${where} less than lower threshold (${fmt(bounds.lower)})`];
  if (typeof bounds.upper === 'number' && value > bounds.upper) return [`${where} more than upper threshold (${fmt(bounds.upper)})`];
  return [];
}

/**
 * How far `to` moved away from `from` in the direction that matters (`to - from` for an increase, `from - to` for
 * a decrease), as a difference or (percentage) a fraction of `from`. PostHog's rules for a zero `from`: no change
 * when both are zero, else infinitely far.
 */
function change(from: number, to: number, percentage: boolean, direction: 1 | -1): number {
  const moved = direction * (to - from) + 0; // never -0
  if (!percentage) return moved;
  if (from === 0 && to === 0) return 0;
  if (from === 0) return Infinity;
  return moved / from;
}

/**
 * What a check finds in `results` (the answer to `alertQuery`) for an alert `spec` on the trend `trends`. Throws
 * AlertCheckError when the watched series is not in the answer.
 */
export function evaluateTrendsAlert(spec: AlertSpec, trends: Json, results: readonly TrendSeries[]): AlertEvaluation {
  const bounds = spec.threshold.bounds ?? {};
  if (bounds.lower == null && bounds.upper == null) return { value: 0, breaches: [] };
  const interval = isNonTimeSeries(trends) ? null : intervalOf(trends);
  if (results.length === 0) return { value: 0, breaches: breachMessages(bounds, 0, spec, interval, 'empty result') };
  const breakdown = hasBreakdown(trends);
  let watched: readonly TrendSeries[];
  if (breakdown) watched = results;
  else {
    const one = results[spec.config.series_index];
    if (!one) throw new AlertCheckError(`series_index ${spec.config.series_index} is out of range (the insight answered ${results.length} series)`);
    watched = [one];
  }
  const ongoing = spec.config.check_ongoing_interval === true;
  const pct = spec.threshold.type === 'percentage';
  let last: number | null = null;
  for (const r of watched) {
    const label = r.label ?? '';
    let value: number;
    let current = false;
    switch (spec.condition.type) {
      case 'absolute_value':
        current = ongoing || interval === null;
        value = valueAt(trends, r, current ? 0 : 1);
        break;
      case 'relative_increase':
        current = ongoing;
        value = current ? change(valueAt(trends, r, 1), valueAt(trends, r, 0), pct, 1) : change(valueAt(trends, r, 2), valueAt(trends, r, 1), pct, 1);
        break;
      default:
        // A decrease is never checked on the interval under way: it only grows until the interval ends.
        value = change(valueAt(trends, r, 2), valueAt(trends, r, 1), pct, -1);
    }
    last = value;
    const breaches = breachMessages(bounds, value, spec, interval, label, current);
    if (breaches.length > 0) return { value, breaches };
  }
  return { value: breakdown ? null : last, breaches: [] };
}

/** What a check makes of an alert, and who is told. */
export interface CheckOutcome {
  state: AlertState;
  notify: 'firing' | 'resolved' | null;
}

/**
 * The state after a check, from the state before it: Errored when it could not be made (nobody is told: the
 * error is on the check); Firing when a bound is breached (told only when it was not firing already, so a
 * firing alert does not repeat itself every interval); Not firing otherwise (told when it was firing: resolved).
 */
export function checkOutcome(before: AlertState, found: AlertEvaluation | { error: string }): CheckOutcome {
  if ('error' in found) return { state: 'Errored', notify: null };
  if (found.breaches.length > 0) return { state: 'Firing', notify: before === 'Firing' ? null : 'firing' };
  return { state: 'Not firing', notify: before === 'Firing' ? 'resolved' : null };
}
