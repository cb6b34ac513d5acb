/**
 * Which cohorts a retention grid shows. On a dashboard tile the space is a few rows: cohorts of no one (a date
 * range that starts before the first visitor, a quiet weekend) said nothing there and pushed the recent cohorts out
 * of view, so a tile leaves them out and says how many; the insight's own page shows every row.
 */
export interface CohortRow {
  values: { count: number }[];
}

export function visibleCohorts<T extends CohortRow>(rows: readonly T[], compact: boolean): { rows: T[]; hiddenEmpty: number } {
  if (!compact) return { rows: [...rows], hiddenEmpty: 0 };
  const shown = rows.filter((r) => (r.values[0]?.count ?? 0) > 0);
  return { rows: shown, hiddenEmpty: rows.length - shown.length };
}

/** A share as the grid prints it: whole percents, the number and its sign kept together on one line. */
export function shareText(count: number, size: number): string {
  return size > 0 ? `${Math.round((count / size) * 100)}\u00a0%` : '—';
}
