/**
 * PostHog's scheduled flag changes (posthog/models/scheduled_change.py, posthog/api/scheduled_change.py), pure:
 * which payloads are valid, what PATCH a payload makes of a flag, and when a recurring change runs next.
 *
 * Operations (`payload: {operation, value}`): `update_status` (value: true/false, the flag's `active`),
 * `add_release_condition` (value: `{groups, payloads?, multivariate?}`: the groups are appended to the flag's
 * release conditions, payloads merged, multivariate replaced when given) and `update_variants` (value:
 * `{variants, payloads?}`). Only `update_status` may recur (`daily`, `weekly`, `monthly`, `yearly`), as in PostHog;
 * PostHog's `cron_expression` is not supported.
 */
export const OPERATIONS = ['update_status', 'add_release_condition', 'update_variants'] as const;
export const INTERVALS = ['daily', 'weekly', 'monthly', 'yearly'] as const;
export type RecurrenceInterval = (typeof INTERVALS)[number];

export interface PayloadError {
  attr: string;
  detail: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Null when `payload` is one PostHog accepts. */
export function payloadError(payload: unknown): PayloadError | null {
  if (!isObject(payload) || typeof payload.operation !== 'string' || !('value' in payload)) {
    return { attr: 'payload', detail: "The payload must have an 'operation' and a 'value'." };
  }
  const { operation, value } = payload;
  switch (operation) {
    case 'update_status':
      return typeof value === 'boolean' ? null : { attr: 'payload', detail: 'update_status takes true or false.' };
    case 'add_release_condition':
      return isObject(value) && Array.isArray(value.groups) ? null : { attr: 'payload', detail: 'add_release_condition takes {groups, payloads?, multivariate?}.' };
    case 'update_variants':
      return isObject(value) && Array.isArray(value.variants) ? null : { attr: 'payload', detail: 'update_variants takes {variants, payloads?}.' };
    default:
      return { attr: 'payload', detail: `Unknown operation '${operation}': one of ${OPERATIONS.join(', ')}.` };
  }
}

/** The PATCH body that applies `payload` to a flag whose filters are `filters` (the payload is valid). */
export function patchFor(payload: { operation: string; value: unknown }, filters: Record<string, unknown>): Record<string, unknown> {
  const value = payload.value as Record<string, unknown>;
  switch (payload.operation) {
    case 'update_status':
      return { active: payload.value as boolean };
    case 'add_release_condition': {
      const groups = Array.isArray(filters.groups) ? filters.groups : [];
      const next: Record<string, unknown> = { ...filters, groups: [...groups, ...(value.groups as unknown[])] };
      if (isObject(value.payloads)) next.payloads = { ...(isObject(filters.payloads) ? filters.payloads : {}), ...value.payloads };
      if (value.multivariate !== undefined) next.multivariate = value.multivariate;
      return { filters: next };
    }
    default: {
      const multivariate = isObject(filters.multivariate) ? filters.multivariate : {};
      const next: Record<string, unknown> = { ...filters, multivariate: { ...multivariate, variants: value.variants } };
      if (isObject(value.payloads)) next.payloads = value.payloads;
      return { filters: next };
    }
  }
}

/** The next run of a recurring change after the one due at `fromMs` that is after `nowMs` (UTC calendar). */
export function nextOccurrence(fromMs: number, interval: RecurrenceInterval, nowMs: number): number {
  const d = new Date(fromMs);
  const day = d.getUTCDate();
  for (let step = 1; ; step++) {
    const n = new Date(fromMs);
    if (interval === 'daily') n.setUTCDate(day + step);
    else if (interval === 'weekly') n.setUTCDate(day + 7 * step);
    else {
      // Month ends clamp (31 January → 28/29 February), as calendars do.
      const months = interval === 'monthly' ? step : 12 * step;
      n.setUTCDate(1);
      n.setUTCMonth(d.getUTCMonth() + months);
      const last = new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() + 1, 0)).getUTCDate();
      n.setUTCDate(Math.min(day, last));
    }
    if (n.getTime() > nowMs) return n.getTime();
  }
}
