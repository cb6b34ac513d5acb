/**
 * PostHog's insight alerts (posthog/schema.py `AlertCondition`, `InsightThreshold`, `TrendsAlertConfig`; the
 * checks of posthog/tasks/alerts/utils.py `validate_alert_config`), pure: what an alert is made of and which
 * combinations are refused. How a check computes its value is ./evaluate.ts; when it runs, ./schedule.ts.
 */

export const ALERT_CONDITIONS = ['absolute_value', 'relative_increase', 'relative_decrease'] as const;
export type AlertConditionType = (typeof ALERT_CONDITIONS)[number];
export const THRESHOLD_TYPES = ['absolute', 'percentage'] as const;
export type ThresholdType = (typeof THRESHOLD_TYPES)[number];
export const CALCULATION_INTERVALS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type CalculationInterval = (typeof CALCULATION_INTERVALS)[number];

/** PostHog's AlertState values, as its API writes them. */
export type AlertState = 'Not firing' | 'Firing' | 'Errored' | 'Snoozed';

export interface ThresholdBounds {
  lower?: number | null;
  upper?: number | null;
}

/** `threshold.configuration`: absolute numbers, or fractions (0.2 = 20 %) for relative conditions. */
export interface InsightThreshold {
  type: ThresholdType;
  bounds?: ThresholdBounds | null;
}

export interface AlertCondition {
  type: AlertConditionType;
}

/** Which series of the trend is watched, and whether the interval still under way counts. */
export interface TrendsAlertConfig {
  type: 'TrendsAlertConfig';
  series_index: number;
  check_ongoing_interval?: boolean;
}

/** What a check needs of an alert. */
export interface AlertSpec {
  condition: AlertCondition;
  threshold: InsightThreshold;
  config: TrendsAlertConfig;
}

export interface ConfigProblem {
  attr: string;
  detail: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

const WRAPPERS = new Set(['InsightVizNode', 'DataTableNode', 'DataVisualizationNode']);

/** The TrendsQuery an insight's query stands for (through PostHog's wrapper nodes), or null when it is another kind. */
export function trendsSource(query: unknown): Json | null {
  const inner = isObject(query) && WRAPPERS.has(String(query.kind)) ? query.source : query;
  return isObject(inner) && inner.kind === 'TrendsQuery' ? inner : null;
}

/** PostHog's displays that draw one aggregated number per series instead of a time series. */
export const NON_TIME_SERIES_DISPLAYS: ReadonlySet<string> = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap']);

export function isNonTimeSeries(trends: Json): boolean {
  const filter = isObject(trends.trendsFilter) ? trends.trendsFilter : {};
  return NON_TIME_SERIES_DISPLAYS.has(String(filter.display ?? ''));
}

/** How many results a trend answers without breakdown: one per formula, else one per series. */
export function resultCount(trends: Json): number {
  const filter = isObject(trends.trendsFilter) ? trends.trendsFilter : {};
  if (Array.isArray(filter.formulaNodes) && filter.formulaNodes.length > 0) return filter.formulaNodes.length;
  if (Array.isArray(filter.formulas) && filter.formulas.length > 0) return filter.formulas.length;
  if (typeof filter.formula === 'string' && filter.formula.trim() !== '') return 1;
  return Array.isArray(trends.series) ? trends.series.length : 0;
}

/**
 * Null when an alert with `spec` can watch an insight running `query` (its stored query), else the first problem,
 * worded as PostHog's `validate_alert_config` words it.
 */
export function alertConfigProblem(query: unknown, spec: AlertSpec): ConfigProblem | null {
  const trends = trendsSource(query);
  if (trends === null) {
    const kind = isObject(query) && WRAPPERS.has(String(query.kind)) && isObject(query.source) ? query.source.kind : isObject(query) ? query.kind : undefined;
    return { attr: 'insight', detail: `Alert's insight query kind '${String(kind ?? null)}' is not supported (only TrendsQuery)` };
  }
  const { condition, config, threshold } = spec;
  const relative = condition.type === 'relative_increase' || condition.type === 'relative_decrease';
  if (relative && isNonTimeSeries(trends)) {
    return { attr: 'condition', detail: `Relative alert condition '${condition.type}' is not compatible with non time series trends` };
  }
  const count = resultCount(trends);
  if (config.series_index >= count) return { attr: 'config', detail: `series_index ${config.series_index} is out of range (query has ${count} series)` };
  if (condition.type === 'absolute_value' && threshold.type !== 'absolute') {
    return { attr: 'threshold', detail: 'Absolute value alerts require an absolute threshold, but a percentage threshold was configured' };
  }
  const bounds = threshold.bounds ?? {};
  if (config.check_ongoing_interval && (condition.type === 'absolute_value' || condition.type === 'relative_increase') && (bounds.upper === undefined || bounds.upper === null)) {
    return { attr: 'config', detail: `check_ongoing_interval is only supported for alert condition ${condition.type} when upper threshold is specified` };
  }
  if (typeof bounds.lower === 'number' && typeof bounds.upper === 'number' && bounds.lower > bounds.upper) {
    return { attr: 'threshold', detail: 'The lower bound must not be above the upper bound.' };
  }
  return null;
}
