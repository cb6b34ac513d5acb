/**
 * The trends page's state and PostHog's legacy trends filter (`events=[…]`, `interval`, `date_from`, `breakdown`,
 * `display`, `compare`, `properties`), both ways: the same object is sent to `/insights/trend/` and stored in a
 * saved insight's `filters`.
 */
import type { PropertyFilter } from '../components/property-filters';

export interface TrendSeries {
  id: string;
  math: string;
  math_property?: string;
}

/** The analyses that share the trends page: trends, lifecycle (one event, stacked bars) and stickiness. */
export type TrendsInsight = 'TRENDS' | 'LIFECYCLE' | 'STICKINESS';

export interface TrendsState {
  insight: TrendsInsight;
  series: TrendSeries[];
  interval: 'hour' | 'day' | 'week' | 'month';
  dateFrom: string;
  dateTo: string;
  breakdown: string;
  breakdownType: 'event' | 'person';
  display: 'ActionsLineGraph' | 'ActionsBar' | 'ActionsLineGraphCumulative' | 'ActionsStackedBar';
  compare: boolean;
  properties: PropertyFilter[];
}

export const MATHS: [string, string][] = [
  ['total', 'Total count'], ['dau', 'Unique users'], ['weekly_active', 'Weekly active users'], ['monthly_active', 'Monthly active users'],
  ['sum', 'Sum of property'], ['avg', 'Average of property'], ['min', 'Minimum of property'], ['max', 'Maximum of property'],
  ['median', 'Median of property'], ['p90', '90th percentile of property'],
];
export const PROPERTY_MATHS = new Set(['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99']);

/**
 * The aggregations a series of this kind offers, labelled by what its values count: stickiness counts persons by
 * the number of intervals they were active in, whatever the series' math says.
 */
export function mathOptions(kind: TrendsState['insight']): [string, string][] {
  if (kind === 'TRENDS') return MATHS;
  if (kind === 'STICKINESS') return [['total', 'Persons, by intervals active']];
  return [['total', 'Total count']];
}

/**
 * Where the form itself must say what is missing before anything is asked of the API: a series aggregating a
 * property (sum, average, …) with no property chosen. Index of each such series, and the message beside it.
 */
export function seriesProblems(state: Pick<TrendsState, 'series' | 'insight'>): Map<number, string> {
  const problems = new Map<number, string>();
  if (state.insight !== 'TRENDS') return problems;
  state.series.forEach((s, i) => {
    if (PROPERTY_MATHS.has(s.math) && !s.math_property?.trim()) {
      const label = MATHS.find(([m]) => m === s.math)?.[1] ?? s.math;
      problems.set(i, `Choose the numeric property for “${label}”.`);
    }
  });
  return problems;
}

export const DEFAULT_TRENDS: TrendsState = {
  insight: 'TRENDS', series: [{ id: '$pageview', math: 'total' }], interval: 'day', dateFrom: '-7d', dateTo: '', breakdown: '', breakdownType: 'event',
  display: 'ActionsLineGraph', compare: false, properties: [],
};

/** The legacy filter of a state (what `/insights/trend/` reads and a saved insight stores). */
export function trendsFilter(s: TrendsState): Record<string, unknown> {
  const f: Record<string, unknown> = {
    insight: s.insight,
    events: s.series.map((x, order) => ({
      id: x.id, type: 'events', order, math: x.math, ...(PROPERTY_MATHS.has(x.math) && x.math_property ? { math_property: x.math_property } : {}),
    })),
    interval: s.interval,
    date_from: s.dateFrom,
    display: s.display,
  };
  if (s.dateTo) f.date_to = s.dateTo;
  // Lifecycle and stickiness have no breakdown or comparison.
  if (s.breakdown && s.insight === 'TRENDS') {
    f.breakdown = s.breakdown;
    f.breakdown_type = s.breakdownType;
  }
  if (s.compare && s.insight === 'TRENDS') f.compare = true;
  if (s.properties.length) f.properties = s.properties;
  return f;
}

/** The state of a stored filter (unknown fields fall back to the defaults). */
export function trendsStateOf(f: Record<string, any>): TrendsState {
  const events = Array.isArray(f.events) ? f.events : [];
  const insight: TrendsInsight = f.insight === 'LIFECYCLE' || f.insight === 'STICKINESS' ? f.insight : 'TRENDS';
  return {
    insight,
    series: events.length ? events.map((e: any) => ({ id: String(e.id), math: e.math ?? 'total', math_property: e.math_property ?? undefined })) : DEFAULT_TRENDS.series,
    interval: ['hour', 'day', 'week', 'month'].includes(f.interval) ? f.interval : 'day',
    dateFrom: typeof f.date_from === 'string' ? f.date_from : '-7d',
    dateTo: typeof f.date_to === 'string' ? f.date_to : '',
    breakdown: typeof f.breakdown === 'string' ? f.breakdown : '',
    breakdownType: f.breakdown_type === 'person' ? 'person' : 'event',
    display: ['ActionsBar', 'ActionsLineGraphCumulative', 'ActionsStackedBar'].includes(f.display) ? f.display : insight === 'LIFECYCLE' ? 'ActionsStackedBar' : 'ActionsLineGraph',
    compare: f.compare === true || f.compare === 'true',
    properties: Array.isArray(f.properties) ? f.properties : [],
  };
}

/** One series of a `/insights/trend/` answer. */
export interface TrendResult {
  label: string;
  data: number[];
  labels: string[];
  days: string[];
  count?: number;
  aggregated_value?: number;
  breakdown_value?: unknown;
  compare_label?: string;
  persons_urls?: { url: string }[];
}

/**
 * A series' name as the page shows it: the answer's label already names a breakdown's group, as PostHog's does
 * (`$pageview - Chrome`, `$pageview - Paying customers` for a cohort), so only the group without a value gets a
 * word (`none`), and a compared period its name.
 */
export function seriesLabel(r: TrendResult): string {
  const empty = r.breakdown_value === null || r.breakdown_value === '';
  const label = empty && r.label.endsWith(' - ') ? `${r.label}none` : r.label;
  return r.compare_label ? `${label} · ${r.compare_label}` : label;
}
