/**
 * The legacy filter parameters of `/insights/trend/` and `/persons/trends/` (analytics.md §0-§1) turned into the
 * engine's TrendsQuery (src/domain/analytics/query.ts). Every refusal is an AnalyticsInputError naming the
 * parameter.
 */
import { invalidInput } from './errors.js';
import type { FilterParams } from './filter-params.js';
import { actionEvents, actionFilter } from './action-filter.js';
import { andFilters, parseFilters, type FilterGroup } from './property-filters.js';
import { MATHS, PROPERTY_MATHS, type ActionRef, type Breakdown, type BreakdownType, type MathKind, type SeriesNode, type TrendsQuery } from './query.js';
import type { Interval } from './time-zone.js';

const INTERVALS: ReadonlySet<string> = new Set(['hour', 'day', 'week', 'month']);
const DISPLAYS: ReadonlySet<string> = new Set([
  'ActionsLineGraph', 'ActionsLineGraphCumulative', 'ActionsTable', 'ActionsPie', 'ActionsBar', 'ActionsBarValue',
  'ActionsAreaGraph', 'ActionsStackedBar', 'WorldMap', 'BoldNumber',
]);
export const DEFAULT_BREAKDOWN_LIMIT = 25;
const FORMULA = /^[A-Za-z0-9\s+\-*/^().]*$/;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `interval`: hour/day/week/month (`minute` reads as hour, as PostHog did in 2023). */
export function intervalOf(p: FilterParams, fallback: Interval = 'day'): Interval {
  const v = p.string('interval');
  if (v === null) return fallback;
  if (v === 'minute') return 'hour';
  if (!INTERVALS.has(v)) invalidInput('interval', `Unknown interval "${v}": use hour, day, week or month.`);
  return v as Interval;
}

/**
 * The series of `events` and `actions` (§0.2): actions first, then events, stable-sorted by `order` (missing = -1),
 * then numbered. An action entity counts the events of any of its steps (src/domain/analytics/action-filter.ts).
 */
export function seriesOf(p: FilterParams): SeriesNode[] {
  const lists = (['actions', 'events'] as const).flatMap((type) => p.list(type).map((raw) => ({ raw, type })));
  const nodes = lists.map(({ raw, type }, position) => {
    if (!isObject(raw)) invalidInput(type, 'Every entity must be an object.');
    return { raw, type, position, order: typeof raw.order === 'number' ? raw.order : Number.isFinite(Number(raw.order)) && raw.order !== null && raw.order !== undefined && raw.order !== '' ? Number(raw.order) : -1 };
  });
  nodes.sort((a, b) => a.order - b.order || a.position - b.position);
  return nodes.map(({ raw, type, order }, index) => entityOf(p, raw, type, order, index));
}

/** What an entity counts: an event name (or all events), or an action's events; its filters and its name. */
export interface EntityTarget {
  kind: 'events' | 'actions';
  event: string | null;
  action: ActionRef | null;
  /** The entity's own filters AND'd with its action's tree. */
  properties: FilterGroup | null;
  /** The event name, the action's name, or "All events". */
  name: string;
  /** `id` as answers echo it: the event name or the action id. */
  id: string | number | null;
}

/** The target of an entity object of type `events` or `actions` (`attr` names the parameter in errors). */
export function entityTarget(p: FilterParams, raw: Record<string, unknown>, type: 'events' | 'actions', attr: string): EntityTarget {
  const properties = parseFilters(raw.properties ?? null, attr);
  if (type === 'actions') {
    const action = p.action(raw.id, attr);
    return {
      kind: 'actions', event: null, action: { id: action.id, events: actionEvents(action) },
      properties: andFilters(actionFilter(action), properties), name: action.name, id: action.id,
    };
  }
  const id = raw.id;
  if (id !== null && id !== undefined && typeof id !== 'string') invalidInput(attr, 'An event entity id must be an event name or null.');
  const event = typeof id === 'string' ? id : null;
  const name = typeof raw.name === 'string' && raw.name !== '' ? raw.name : event ?? 'All events';
  return { kind: 'events', event, action: null, properties, name, id: event };
}

function entityOf(p: FilterParams, raw: Record<string, unknown>, type: 'events' | 'actions', order: number, index: number): SeriesNode {
  if (raw.type !== undefined && raw.type !== type) invalidInput(type, `Entities in "${type}" must have type "${type}".`);
  const math = (raw.math ?? 'total') as string;
  if (math === 'hogql') invalidInput(type, 'math "hogql" is not supported.');
  if (!(MATHS as readonly string[]).includes(math)) invalidInput(type, `Unknown math "${math}".`);
  const mathProperty = typeof raw.math_property === 'string' && raw.math_property !== '' ? raw.math_property : null;
  if (PROPERTY_MATHS.has(math as MathKind) && mathProperty === null) invalidInput(type, `math "${math}" needs a math_property.`);
  if (mathProperty === '$session_duration') invalidInput(type, 'math_property "$session_duration" is not supported yet.');
  let mathGroupTypeIndex: number | null = null;
  if (math === 'unique_group') {
    const g = Number(raw.math_group_type_index);
    if (raw.math_group_type_index === undefined || raw.math_group_type_index === null || !Number.isInteger(g) || g < 0 || g > 4) {
      invalidInput(type, 'math "unique_group" needs a math_group_type_index from 0 to 4.');
    }
    mathGroupTypeIndex = g;
  }
  const target = entityTarget(p, raw, type, type);
  const customName = typeof raw.custom_name === 'string' && raw.custom_name !== '' ? raw.custom_name : null;
  const echo: Record<string, unknown> = {
    id: target.id, type, order: order === -1 ? null : order, name: target.name, custom_name: customName,
    math, math_property: mathProperty, math_group_type_index: mathGroupTypeIndex,
    properties: Array.isArray(raw.properties) || isObject(raw.properties) ? raw.properties : [],
  };
  return {
    kind: target.kind, event: target.event, action: target.action, name: target.name, customName, order, index,
    math: math as MathKind, mathProperty, mathGroupTypeIndex, properties: target.properties, echo,
  };
}

/** `breakdown` + `breakdown_type` (+ `breakdown_group_type_index`, `breakdown_limit`), §1.3. */
export function breakdownOf(p: FilterParams): Breakdown | null {
  if (!p.has('breakdown')) return null;
  const type = (p.string('breakdown_type') ?? 'event') as BreakdownType | string;
  const limit = p.int('breakdown_limit', DEFAULT_BREAKDOWN_LIMIT, 1, 10_000);
  if (p.has('breakdown_histogram_bin_count')) invalidInput('breakdown_histogram_bin_count', 'Histogram breakdowns are not supported yet.');
  if (type === 'cohort') {
    const v = p.json('breakdown');
    const list = Array.isArray(v) ? v : [v];
    const cohorts = list.map((c) => (c === 'all' ? 0 : Number(c)));
    if (cohorts.some((c) => !Number.isInteger(c) || c < 0)) invalidInput('breakdown', 'A cohort breakdown takes a list of cohort ids (0 = all users).');
    return { type: 'cohort', property: null, cohorts, groupTypeIndex: null, limit };
  }
  if (type !== 'event' && type !== 'person' && type !== 'group') {
    invalidInput('breakdown_type', `Breakdowns of type "${type}" are not supported (use event, person, cohort or group).`);
  }
  const v = p.json('breakdown');
  const property = Array.isArray(v) ? (v.length === 1 ? v[0] : invalidInput('breakdown', 'Breakdown by several properties is not supported.')) : v;
  if (typeof property !== 'string' || property === '') invalidInput('breakdown', 'The breakdown must be a property name.');
  let groupTypeIndex: number | null = null;
  if (type === 'group') groupTypeIndex = p.int('breakdown_group_type_index', -1, 0, 4);
  if (type === 'group' && groupTypeIndex === -1) invalidInput('breakdown_group_type_index', 'A group breakdown needs breakdown_group_type_index.');
  return { type: type as BreakdownType, property, cohorts: [], groupTypeIndex, limit };
}

export function trendsQueryOf(p: FilterParams): TrendsQuery {
  const display = p.string('display') ?? 'ActionsLineGraph';
  if (!DISPLAYS.has(display)) invalidInput('display', `Unknown display "${display}".`);
  const formula = p.string('formula');
  if (formula !== null && !FORMULA.test(formula)) invalidInput('formula', 'A formula may only use letters, digits, spaces and + - * / ^ ( ).');
  return {
    kind: 'TrendsQuery',
    series: seriesOf(p),
    dates: { dateFrom: p.string('date_from'), dateTo: p.string('date_to'), explicitDate: p.bool('explicit_date') },
    interval: intervalOf(p),
    properties: parseFilters(p.json('properties') ?? null),
    filterTestAccounts: p.bool('filter_test_accounts'),
    breakdown: breakdownOf(p),
    display,
    compare: p.bool('compare'),
    formula: formula === null || formula.trim() === '' ? null : formula.trim(),
    smoothingIntervals: p.int('smoothing_intervals', 1, 1, 1000),
  };
}
