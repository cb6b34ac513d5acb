/**
 * The engine's own form of an analysis question, shared by both front doors: the legacy filter endpoints
 * (`/insights/trend/`, `/persons/trends/`, parsed in src/domain/analytics/legacy-filters.ts) and PostHog's
 * `/query/` kinds (TrendsQuery and friends, which this form follows field for field where it can).
 */
import type { FilterGroup } from './property-filters.js';
import type { Interval } from './time-zone.js';

export const MATHS = [
  'total', 'dau', 'weekly_active', 'monthly_active', 'unique_group', 'unique_session',
  'sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99',
  'avg_count_per_actor', 'min_count_per_actor', 'max_count_per_actor', 'median_count_per_actor',
  'p75_count_per_actor', 'p90_count_per_actor', 'p95_count_per_actor', 'p99_count_per_actor',
] as const;
export type MathKind = (typeof MATHS)[number];

/** Maths over a numeric property (`math_property` required). */
export const PROPERTY_MATHS: ReadonlySet<MathKind> = new Set(['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99']);
/** Quantile of each math that takes one. */
export const QUANTILES: Readonly<Partial<Record<MathKind, number>>> = {
  median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99,
  median_count_per_actor: 0.5, p75_count_per_actor: 0.75, p90_count_per_actor: 0.9, p95_count_per_actor: 0.95, p99_count_per_actor: 0.99,
};
export const isPerActorMath = (m: MathKind): boolean => m.endsWith('_count_per_actor');

/** The action an entity of type `actions` names: its id, and the event names of its steps. */
export interface ActionRef {
  id: number;
  events: string[];
}

/** One series: the events it counts and how. */
export interface SeriesNode {
  kind: 'events' | 'actions';
  /** Event name; null = all events (always null for an action: its steps are in `properties`). */
  event: string | null;
  action: ActionRef | null;
  name: string;
  customName: string | null;
  /** Sort key and position after sorting (formula letters follow the position). */
  order: number;
  index: number;
  math: MathKind;
  mathProperty: string | null;
  mathGroupTypeIndex: number | null;
  /** The entity's filters, AND'd with its action's filter tree for an action. */
  properties: FilterGroup | null;
  /** The entity as the caller sent it, normalised (echoed in `action` of each result series). */
  echo: Record<string, unknown>;
}

export type BreakdownType = 'event' | 'person' | 'cohort' | 'group';

export interface Breakdown {
  type: BreakdownType;
  /** Property key (event, person, group). */
  property: string | null;
  /** Cohort ids (cohort breakdowns); 0 = all users. */
  cohorts: number[];
  groupTypeIndex: number | null;
  limit: number;
}

export const NON_TIME_SERIES_DISPLAYS: ReadonlySet<string> = new Set(['ActionsTable', 'ActionsPie', 'ActionsBarValue', 'WorldMap', 'BoldNumber']);
export const CUMULATIVE_DISPLAY = 'ActionsLineGraphCumulative';

export interface DateParams {
  dateFrom: string | null;
  dateTo: string | null;
  explicitDate: boolean;
}

export interface TrendsQuery {
  kind: 'TrendsQuery';
  series: SeriesNode[];
  dates: DateParams;
  interval: Interval;
  properties: FilterGroup | null;
  filterTestAccounts: boolean;
  breakdown: Breakdown | null;
  display: string;
  compare: boolean;
  formula: string | null;
  smoothingIntervals: number;
}
