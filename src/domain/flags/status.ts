/**
 * A flag's life-cycle status, PostHog's rule (posthog/models/feature_flag/flag_status.py): `inactive` when it has
 * not been evaluated for 30 days (or never, and it is older than that), `stale` when it is fully rolled out — an
 * active flag whose evaluations cannot vary, a release condition at 100 % without properties (with a variant at
 * 100 % or a variant override for a multivariate flag) — and older than 30 days; `inactive` wins over `stale`
 * (usage says more than configuration). Both are what PostHog's flag list shows under `?active=STALE`.
 */
export type FlagStatus = 'active' | 'inactive' | 'stale' | 'deleted';

export interface StatusInput {
  deleted: boolean;
  active: boolean;
  filters: Record<string, unknown>;
  created_at: string;
}

export const STALE_AFTER_MS = 30 * 86_400_000;

const asArray = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') as Record<string, unknown>[] : []);

/** 100 % (a missing rollout is 100 % when evaluated, so it counts too) and no property. */
function conditionFullyRolledOut(group: Record<string, unknown>): boolean {
  const rollout = group.rollout_percentage;
  return (rollout === 100 || rollout === null || rollout === undefined) && (!Array.isArray(group.properties) || group.properties.length === 0);
}

/** The value every evaluation gives, when the flag's evaluations cannot vary; null otherwise. */
export function fullyRolledOutValue(flag: StatusInput): string | true | null {
  if (!flag.active) return null;
  const filters = flag.filters ?? {};
  const groups = asArray(filters.groups);
  const multivariate = filters.multivariate as { variants?: unknown } | null | undefined;
  if (multivariate && typeof multivariate === 'object') {
    const full = asArray(multivariate.variants).find((v) => v.rollout_percentage === 100);
    let override: string | null = null;
    let someFull = false;
    for (const g of groups) {
      if (!conditionFullyRolledOut(g)) continue;
      someFull = true;
      if (override === null && typeof g.variant === 'string') override = g.variant;
    }
    if (someFull && (override !== null || full)) return override ?? String(full!.key);
    return null;
  }
  if (Object.keys(filters).length === 0) return true;
  return groups.some(conditionFullyRolledOut) ? true : null;
}

export function flagStatus(flag: StatusInput, lastCalledMs: number | null, nowMs: number): { status: FlagStatus; reason: string } {
  if (flag.deleted) return { status: 'deleted', reason: 'Flag has been deleted' };
  const old = Date.parse(flag.created_at) < nowMs - STALE_AFTER_MS;
  let inactive: string | null = null;
  if (lastCalledMs === null) {
    if (old) inactive = 'Flag has never been evaluated and is over 30 days old';
  } else if (lastCalledMs < nowMs - STALE_AFTER_MS) {
    inactive = `Flag has not been evaluated in ${Math.floor((nowMs - lastCalledMs) / 86_400_000)} days`;
  }
  if (inactive !== null) return { status: 'inactive', reason: inactive };
  const value = old ? fullyRolledOutValue(flag) : null;
  if (value !== null) {
    return { status: 'stale', reason: value === true ? 'This boolean flag will always evaluate to "true"' : `This flag will always use the variant "${value}"` };
  }
  return { status: 'active', reason: 'Flag is active and being evaluated' };
}
