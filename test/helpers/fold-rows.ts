/**
 * Rows as funnelEventsSql gathers them for a fold inside ClickHouse (person uuid, ms, step and exclusion bits, a
 * label: the breakdown value or the event's name), generated per person, and chdb running a fold over them: what the
 * chdb unit tests of the folds (test/chdb/) hold the SQL to the local engine with.
 */
import { queryBind } from 'chdb';
import type { Random } from './fuzz.js';

export type FoldRow = [person: string, ms: number, mask: number, label: string];

export const HOUR = 3_600_000;
/** The first instant of the generated events: they span the 97 hours from here. */
export const ROWS_FROM = Date.UTC(2026, 10, 2);

export const personUuid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

/**
 * Persons with 1-14 events over four days, each event matching a few of the bits (steps, then exclusions) or none
 * (strict funnels see every event), labelled from `labels`; with `oneStep` (the steps of an unordered funnel of
 * distinct events), at most one of the first `oneStep` bits. Rows are in the order the SQL sorts a person's events:
 * time, mask, label.
 */
export function foldRows(r: Random, persons: number, bits: number, labels: readonly string[], oneStep: number | null = null): FoldRow[] {
  const rows: FoldRow[] = [];
  for (let p = 0; p < persons; p++) {
    const person = personUuid(p + 1);
    const n = r.int(1, 14);
    const events: FoldRow[] = [];
    for (let k = 0; k < n; k++) {
      let mask = 0;
      for (let b = oneStep ?? 0; b < bits; b++) if (r.chance(b === 0 ? 0.45 : 0.3)) mask |= 1 << b;
      if (oneStep !== null && r.chance(0.75)) mask |= 1 << r.int(0, oneStep - 1);
      // Some events at the same instant as the previous one: ties are ordered the same way on both sides.
      const ms = k > 0 && r.chance(0.1) ? events[k - 1]![1] : ROWS_FROM + r.int(0, 96) * HOUR + r.int(0, 59) * 60_000;
      events.push([person, ms, mask, r.pick(labels)]);
    }
    events.sort((a, b) => a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0));
    rows.push(...events);
  }
  return rows;
}

/** Each person's rows in turn (rows of one person are adjacent). */
export function* personsOfRows(rows: readonly FoldRow[]): Generator<FoldRow[]> {
  for (let i = 0; i < rows.length;) {
    let j = i;
    while (j < rows.length && rows[j]![0] === rows[i]![0]) j++;
    yield rows.slice(i, j);
    i = j;
  }
}

const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Rows as the gathered query's answer. */
export const gatheredOf = (rows: readonly FoldRow[]) => ({
  sql: `SELECT * FROM values('c0 UUID, c1 Int64, c2 UInt32, c3 String', ${rows.map((e) => `(${literal(e[0])}, ${e[1]}, ${e[2]}, ${literal(e[3])})`).join(', ')})`,
  params: {},
});

/** chdb's answer to a query, as rows. */
export const chdbRows = ({ sql, params }: { sql: string; params: Record<string, string> }) =>
  (JSON.parse(queryBind(sql, params, 'JSONCompact')) as { data: unknown[][] }).data;
