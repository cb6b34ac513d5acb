/**
 * How an insight alert reads in the console, as pure functions: its rule in words ("fires when the value is below 10
 * or above 100", "…rises by more than 20 %"), its state's tone, and the body a form's fields become (PostHog's
 * `threshold`, `condition`, `calculation_interval`).
 */

export type AlertState = 'Not firing' | 'Firing' | 'Errored' | 'Snoozed';
export type ConditionType = 'absolute_value' | 'relative_increase' | 'relative_decrease';
export type ThresholdType = 'absolute' | 'percentage';
export type CalculationInterval = 'hourly' | 'daily' | 'weekly' | 'monthly';

export interface AlertCheck {
  id: string;
  created_at: string;
  calculated_value: number | null;
  state: AlertState;
  error: unknown;
  targets_notified: unknown;
}

export interface Alert {
  id: string;
  name: string;
  state: AlertState;
  enabled: boolean;
  condition: { type: ConditionType };
  threshold: { configuration: { type: ThresholdType; bounds?: { lower?: number | null; upper?: number | null } | null } };
  calculation_interval: CalculationInterval;
  last_checked_at: string | null;
  next_check_at: string | null;
  snoozed_until: string | null;
  last_value: number | null;
  checks: AlertCheck[];
  webhook_url: string | null;
}

const number = (v: number, percent: boolean): string => (percent ? `${Math.round(v * 1000) / 10} %` : String(Math.round(v * 1000) / 1000));

/** The alert's rule in words. */
export function ruleText(a: Pick<Alert, 'condition' | 'threshold'>): string {
  const { lower = null, upper = null } = a.threshold.configuration.bounds ?? {};
  const percent = a.threshold.configuration.type === 'percentage';
  const what = a.condition.type === 'absolute_value' ? 'the value' : a.condition.type === 'relative_increase' ? 'the increase from the interval before' : 'the decrease from the interval before';
  const sides = [lower !== null ? `below ${number(lower, percent)}` : null, upper !== null ? `above ${number(upper, percent)}` : null].filter((s) => s !== null);
  return sides.length === 0 ? `No bounds: never fires (${what} is watched).` : `Fires when ${what} is ${sides.join(' or ')}.`;
}

/** The badge tone of a state. */
export function stateTone(state: AlertState): 'bad' | 'ok' | 'warn' | 'muted' {
  return state === 'Firing' ? 'bad' : state === 'Errored' ? 'warn' : state === 'Snoozed' ? 'muted' : 'ok';
}

export interface AlertForm {
  name: string;
  condition: ConditionType;
  thresholdType: ThresholdType;
  lower: string;
  upper: string;
  interval: CalculationInterval;
  webhookUrl: string;
  notifyMe: boolean;
}

export const EMPTY_FORM: AlertForm = { name: '', condition: 'absolute_value', thresholdType: 'absolute', lower: '', upper: '', interval: 'daily', webhookUrl: '', notifyMe: true };

/**
 * The API body of a new alert on `insightId`, or the reason the form cannot be sent. A percentage is typed as a
 * percent ("20") and sent as PostHog stores it (0.2).
 */
export function alertBody(f: AlertForm, insightId: number, userId: number | null): { body: Record<string, unknown> } | { problem: string } {
  const parse = (text: string): number | null | undefined => {
    if (text.trim() === '') return null;
    const v = Number(text);
    return Number.isFinite(v) ? v : undefined;
  };
  const lower = parse(f.lower);
  const upper = parse(f.upper);
  if (lower === undefined || upper === undefined) return { problem: 'Bounds must be numbers.' };
  if (lower === null && upper === null) return { problem: 'Give a lower bound, an upper bound, or both.' };
  if (lower !== null && upper !== null && lower > upper) return { problem: 'The lower bound is above the upper bound.' };
  const scale = f.thresholdType === 'percentage' ? 0.01 : 1;
  return {
    body: {
      insight: insightId,
      name: f.name.trim() || 'Alert',
      condition: { type: f.condition },
      threshold: { configuration: { type: f.thresholdType, bounds: { lower: lower === null ? null : lower * scale, upper: upper === null ? null : upper * scale } } },
      config: { type: 'TrendsAlertConfig', series_index: 0 },
      calculation_interval: f.interval,
      subscribed_users: f.notifyMe && userId !== null ? [userId] : [],
      webhook_url: f.webhookUrl.trim() || null,
    },
  };
}
