/**
 * Small constant tables for the per-person analyses on ClickHouse (retention, lifecycle): each person's row (the
 * periods it was active in, as an array) is crossed with the period numbers, or the (cohort, offset) pairs, it may
 * count for. The periods of an insight are few (its buckets), so the table is a UNION ALL of constant SELECTs, which
 * the HogQL printer prints like any subquery.
 */

/** The numbers from..to (inclusive) as a table of one column `k`. */
export function periodNumbers(from: number, to: number): string {
  const selects: string[] = [];
  for (let k = from; k <= to; k++) selects.push(`SELECT ${k} AS k`);
  return selects.join(' UNION ALL ');
}

/** The (i, k) pairs of a retention matrix of n periods, a table of columns `i` and `k`: cohort i, k ≥ 1 periods later. */
export function cohortOffsets(n: number): string {
  const selects: string[] = [];
  for (let i = 0; i < n; i++) for (let k = 1; i + k < n; k++) selects.push(`SELECT ${i} AS i, ${k} AS k`);
  return selects.join(' UNION ALL ');
}
