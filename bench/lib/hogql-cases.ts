/**
 * The SQL questions the analytics benchmark times: each as a HogQLQuery sent to Quill's `/query/` and as the DuckDB
 * SQL that asks the same of the dataset's `events` table (bench/lib/duckdb-reference.ts), per UTC day over
 * [from, to] (whole days, inclusive). Both answer rows (day, value).
 */
export interface HogQLCase {
  name: string;
  hogql: string;
  sql: string;
}

export function hogqlCases(from: string, to: string): HogQLCase[] {
  const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const where = `event = '$pageview' AND timestamp >= '${from}' AND timestamp < '${end}'`;
  const duckWhere = `event = '$pageview' AND ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${end}'`;
  return [
    {
      name: 'HogQL: count of $pageview per day',
      hogql: `SELECT toStartOfDay(timestamp) AS day, count() FROM events WHERE ${where} GROUP BY day ORDER BY day`,
      sql: `SELECT date_trunc('day', ts) AS day, count(*) AS v FROM events WHERE ${duckWhere} GROUP BY day ORDER BY day`,
    },
    {
      name: 'HogQL: DAU of $pageview per day',
      hogql: `SELECT toStartOfDay(timestamp) AS day, uniq(person_id) FROM events WHERE ${where} GROUP BY day ORDER BY day`,
      sql: `SELECT date_trunc('day', ts) AS day, count(DISTINCT person) AS v FROM events WHERE ${duckWhere} GROUP BY day ORDER BY day`,
    },
  ];
}

/** HogQL rows (day as ISO text, value) → day (YYYY-MM-DD) → value. */
export function hogqlValues(results: [string, number][]): Map<string, number> {
  return new Map(results.map(([day, v]) => [new Date(Date.parse(day)).toISOString().slice(0, 10), v]));
}
