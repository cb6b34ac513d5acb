/**
 * The trends questions the analytics benchmark times, each as Quill's `/insights/trend/` parameters and the DuckDB
 * SQL that answers the same question over the dataset's `events` table (bench/lib/duckdb-reference.ts), both
 * per UTC day over [from, to] (whole days, inclusive).
 */
export interface TrendsCase {
  name: string;
  params: Record<string, unknown>;
  /** SQL giving rows (day, v) or, for breakdowns, (day, b, v). */
  sql: string;
  breakdown?: boolean;
}

export function trendsCases(from: string, to: string): TrendsCase[] {
  const range = `ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${to}' + INTERVAL 1 DAY`;
  const day = "date_trunc('day', ts)";
  return [
    { name: 'count per day of $pageview', params: { events: [{ id: '$pageview' }] },
      sql: `SELECT ${day} AS day, count(*) AS v FROM events WHERE event = '$pageview' AND ${range} GROUP BY 1` },
    { name: 'DAU per day of $pageview', params: { events: [{ id: '$pageview', math: 'dau' }] },
      sql: `SELECT ${day} AS day, count(DISTINCT person) AS v FROM events WHERE event = '$pageview' AND ${range} GROUP BY 1` },
    { name: 'count per day by $browser', params: { events: [{ id: '$pageview' }], breakdown: '$browser' }, breakdown: true,
      sql: `SELECT ${day} AS day, browser AS b, count(*) AS v FROM events WHERE event = '$pageview' AND ${range} GROUP BY 1, 2` },
    { name: 'count per day, $current_url icontains /docs', params: { events: [{ id: '$pageview' }], properties: [{ key: '$current_url', value: '/docs', operator: 'icontains' }] },
      sql: `SELECT ${day} AS day, count(*) AS v FROM events WHERE event = '$pageview' AND url ILIKE '%/docs%' AND ${range} GROUP BY 1` },
    { name: 'weekly active per day', params: { events: [{ id: '$pageview', math: 'weekly_active' }] },
      sql: `WITH active AS (SELECT DISTINCT ${day} AS d, person FROM events WHERE event = '$pageview' AND ts >= TIMESTAMP '${from}' - INTERVAL 6 DAY AND ts < TIMESTAMP '${to}' + INTERVAL 1 DAY),
              spine AS (SELECT unnest(generate_series(TIMESTAMP '${from}', TIMESTAMP '${to}', INTERVAL 1 DAY)) AS day)
         SELECT day, count(DISTINCT person) AS v FROM spine JOIN active ON d > day - INTERVAL 7 DAY AND d <= day GROUP BY 1` },
    { name: 'sum of price per day', params: { events: [{ id: 'purchase', math: 'sum', math_property: 'price' }] },
      sql: `SELECT ${day} AS day, sum(price) AS v FROM events WHERE event = 'purchase' AND ${range} GROUP BY 1` },
  ];
}

/** Quill's series → `day|breakdown` → value, for comparison with DuckDB's rows. */
export function quillValues(result: { days: string[]; data: number[]; breakdown_value?: unknown }[], breakdown: boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of result) s.days.forEach((d, i) => {
    if (s.data[i] !== 0) out.set(breakdown ? `${d}|${String(s.breakdown_value)}` : d, s.data[i]!);
  });
  return out;
}

export function duckValues(rows: Record<string, unknown>[], breakdown: boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    const d = new Date(r.day as number).toISOString().slice(0, 10);
    const v = Number(r.v);
    if (v !== 0) out.set(breakdown ? `${d}|${String(r.b)}` : d, v);
  }
  return out;
}

/** Differences between two value maps (relative tolerance 1e-9 for sums of floats). */
export function differences(quill: Map<string, number>, duck: Map<string, number>): string[] {
  const out: string[] = [];
  for (const key of new Set([...quill.keys(), ...duck.keys()])) {
    const a = quill.get(key) ?? 0;
    const b = duck.get(key) ?? 0;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))) out.push(`${key}: quill ${a}, duckdb ${b}`);
  }
  return out.sort();
}
