/**
 * Lifecycle (analytics.md §5.2) from per-period active-person sets A_-1 … A_(P-1) and, per period, the persons
 * created in it (C_p, by the person's created_at): for each period p of the range,
 *   new = A_p ∩ C_p,  returning = (A_p ∩ A_(p-1)) − C_p,  resurrecting = A_p − A_(p-1) − C_p,
 *   dormant = A_(p-1) − A_p (reported as a negative count).
 * A person created before the range whose first active period in it follows an inactive one is resurrecting even if
 * it was never active before (PostHog's quirk, kept).
 */
import { intersect, popcount, without } from './aggregates.js';

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number];

/** The persons of one status in period p (active sets are indexed with the look-back period at 0). */
export function lifecycleSet(status: LifecycleStatus, active: readonly (Uint32Array | null)[], created: readonly (Uint32Array | null)[], p: number): Uint32Array | null {
  const now = active[p + 1] ?? null;
  const before = active[p] ?? null;
  const born = created[p] ?? null;
  switch (status) {
    case 'new':
      return intersect(now, born);
    case 'returning':
      return without(intersect(now, before), born);
    case 'resurrecting':
      return without(without(now, before), born);
    case 'dormant':
      return without(before, now);
  }
}

/** The four series' values over the P periods of the range (dormant negative). */
export function lifecycleCounts(active: readonly (Uint32Array | null)[], created: readonly (Uint32Array | null)[]): Record<LifecycleStatus, number[]> {
  const periods = active.length - 1;
  const out = {} as Record<LifecycleStatus, number[]>;
  for (const status of LIFECYCLE_STATUSES) {
    out[status] = Array.from({ length: periods }, (_, p) => {
      const n = popcount(lifecycleSet(status, active, created, p));
      return status === 'dormant' ? -n : n;
    });
  }
  return out;
}
