/**
 * The SQL editor's pure parts: what completion knows of HogQL's tables, where an error points, how a result becomes
 * a chart, the query history, and the saved form (PostHog's `DataVisualizationNode` around a `HogQLQuery`, so a SQL
 * insight saves, reopens and goes on dashboards like any other).
 */

/** HogQL's tables as Quill answers them (src/domain/hogql), with the columns a user reaches for. */
export const HOGQL_TABLES: Record<string, string[]> = {
  events: ['uuid', 'event', 'timestamp', 'distinct_id', 'properties', 'person_id', 'person', 'elements_chain', 'created_at', '$session_id'],
  persons: ['id', 'created_at', 'properties', 'is_identified'],
  person_distinct_ids: ['distinct_id', 'person_id'],
  groups: ['index', 'key', 'created_at', 'properties'],
};

type Namespace = { [name: string]: Namespace } | readonly string[];

/**
 * The schema CodeMirror's SQL completion reads: the tables and their columns, the project's event property names
 * after `properties.` and its person property names after `person.properties.`.
 */
export function completionSchema(eventProperties: readonly string[], personProperties: readonly string[]): Record<string, Namespace> {
  return { ...HOGQL_TABLES, properties: [...eventProperties], person: { properties: [...personProperties] } };
}

/** HogQL's functions as completions (the editor inserts a chosen one as `name()`, the cursor inside). */
export function functionCompletions(names: readonly string[]): { label: string; type: 'function' }[] {
  return names.map((label) => ({ label, type: 'function' as const }));
}

/** The character offset an error message names ("… at position 17."), or null. */
export function errorPosition(message: string): number | null {
  const m = /at position (\d+)/.exec(message);
  return m ? Number(m[1]) : null;
}

export type SqlDisplay = 'ActionsTable' | 'ActionsLineGraph' | 'ActionsBar' | 'BoldNumber';
export const SQL_DISPLAYS: [SqlDisplay, string][] = [['ActionsTable', 'Table'], ['ActionsLineGraph', 'Line'], ['ActionsBar', 'Bar'], ['BoldNumber', 'Number']];

export interface SqlResult {
  columns: string[];
  results: unknown[][];
}

/**
 * A result as a chart: the first column is the x axis, every other column whose values are all numbers (or null) a
 * series. Null when nothing can be drawn (no numeric column besides the first).
 */
export function chartOf(r: SqlResult): { labels: string[]; series: { label: string; data: (number | null)[] }[] } | null {
  if (r.columns.length < 2) return null;
  const numeric = r.columns.map((_, c) => r.results.every((row) => row[c] === null || typeof row[c] === 'number'));
  const series = r.columns.flatMap((label, c) => (c > 0 && numeric[c] ? [{ label, data: r.results.map((row) => row[c] as number | null) }] : []));
  if (series.length === 0) return null;
  return { labels: r.results.map((row) => cellText(row[0])), series };
}

/** A big number: the first numeric cell of the first row, with its column. */
export function boldNumberOf(r: SqlResult): { label: string; value: number } | null {
  const row = r.results[0];
  if (!row) return null;
  const c = row.findIndex((v) => typeof v === 'number');
  return c < 0 ? null : { label: r.columns[c] ?? '', value: row[c] as number };
}

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The newest query first, each query once, at most `max`. */
export function pushHistory(history: readonly string[], query: string, max = 20): string[] {
  const q = query.trim();
  if (q === '') return [...history];
  return [q, ...history.filter((h) => h !== q)].slice(0, max);
}

/** What a SQL insight saves as `query`. */
export function visualizationQuery(query: string, display: SqlDisplay): Record<string, unknown> {
  return { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query }, display };
}

/** The SQL and display of a saved insight's query, when it is a SQL insight. */
export function sqlOfQuery(query: unknown): { query: string; display: SqlDisplay } | null {
  const q = query as { kind?: string; source?: { kind?: string; query?: unknown }; display?: unknown; query?: unknown } | null;
  if (!q) return null;
  if (q.kind === 'DataVisualizationNode' && q.source?.kind === 'HogQLQuery' && typeof q.source.query === 'string') {
    const display = SQL_DISPLAYS.some(([d]) => d === q.display) ? (q.display as SqlDisplay) : 'ActionsTable';
    return { query: q.source.query, display };
  }
  if (q.kind === 'HogQLQuery' && typeof q.query === 'string') return { query: q.query, display: 'ActionsTable' };
  return null;
}
