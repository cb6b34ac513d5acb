/**
 * A dashboard's date range override (PostHog keeps it as the dashboard's `filters: {date_from, date_to}`): when it
 * has a `date_from`, every tile computes over that range instead of its insight's own, and says so in the `filters`
 * and `query` it is served with. The insight itself is not changed.
 */
import type { DashboardFilters, Insight } from '../model.js';
import { DateParseError, parseDate } from './date-range.js';
import { invalidInput } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const WRAPPERS = new Set(['InsightVizNode', 'DataTableNode', 'DataVisualizationNode']);

/** The `filters` of a dashboard's create or PATCH body, checked: only the date range, dates the analyses can read. */
export function parseDashboardFilters(raw: unknown): DashboardFilters | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return {};
  if (!isObject(raw)) return invalidInput('filters', '"filters" must be an object {date_from, date_to}.');
  const out: DashboardFilters = {};
  for (const key of ['date_from', 'date_to'] as const) {
    const v = raw[key];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || v.length > 100) invalidInput('filters', `"filters.${key}" must be a date or a relative date such as -7d.`);
    // 'all' is read by the analyses against the project's first event, not by parseDate.
    if (!(key === 'date_from' && v === 'all')) {
      try {
        parseDate(v, Date.now(), 'UTC');
      } catch (err) {
        if (err instanceof DateParseError) invalidInput('filters', `"filters.${key}": ${err.message}`);
        throw err;
      }
    }
    out[key] = v;
  }
  if (out.date_to !== undefined && out.date_from === undefined) invalidInput('filters', '"filters.date_to" needs a "date_from".');
  return out;
}

/** The range a dashboard imposes on its tiles, or null when its tiles keep their own. */
export function dashboardDateRange(filters: DashboardFilters | undefined): { date_from: string; date_to: string | null } | null {
  if (!filters?.date_from) return null;
  return { date_from: filters.date_from, date_to: filters.date_to ?? null };
}

function queryWithRange(query: Json, range: { date_from: string; date_to: string | null }): Json {
  if (WRAPPERS.has(String(query.kind)) && isObject(query.source)) return { ...query, source: queryWithRange(query.source, range) };
  return { ...query, dateRange: { date_from: range.date_from, date_to: range.date_to } };
}

/** The insight as a tile of a dashboard with these filters shows and computes it. */
export function insightOnDashboard(insight: Insight, dashboardFilters: DashboardFilters | undefined): Insight {
  const range = dashboardDateRange(dashboardFilters);
  if (!range) return insight;
  const hasFilters = insight.filters && Object.keys(insight.filters).length > 0;
  // The insight's own `explicit_date` belonged to its own range.
  const { explicit_date: _own, ...own } = insight.filters ?? {};
  return {
    ...insight,
    filters: hasFilters ? { ...own, date_from: range.date_from, date_to: range.date_to } : insight.filters,
    query: insight.query ? queryWithRange(insight.query, range) : insight.query,
  };
}
