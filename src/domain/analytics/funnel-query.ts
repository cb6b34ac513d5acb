/**
 * The parameters of `/insights/funnel/` and `/persons/funnel/` (analytics.md §2.1, §2.5), validated into a
 * FunnelsQuery, and the shape the per-person computation needs (src/domain/analytics/funnel.ts).
 */
import { invalidInput } from './errors.js';
import type { FilterParams } from './filter-params.js';
import type { FunnelOrder, FunnelShape } from './funnel.js';
import { breakdownOf, entityTarget, intervalOf, seriesOf } from './legacy-filters.js';
import { leavesOf, parseFilters, type FilterGroup, type FilterNode } from './property-filters.js';
import type { Breakdown, DateParams, SeriesNode } from './query.js';
import type { Interval } from './time-zone.js';

export type FunnelViz = 'steps' | 'trends' | 'time_to_convert';
export type Attribution = 'first_touch' | 'last_touch' | 'all_events' | 'step';

export interface FunnelExclusion {
  event: string | null;
  /** The action an exclusion of type `actions` names (its tree is in `properties`). */
  actionId: number | null;
  name: string;
  properties: FilterGroup | null;
  from: number;
  to: number;
}

export interface FunnelsQuery {
  kind: 'FunnelsQuery';
  steps: SeriesNode[];
  windowMs: number;
  window: { interval: number; unit: string };
  order: FunnelOrder;
  viz: FunnelViz;
  exclusions: FunnelExclusion[];
  breakdown: Breakdown | null;
  attribution: Attribution;
  attributionStep: number | null;
  fromStep: number;
  toStep: number;
  binCount: number | null;
  interval: Interval;
  dates: DateParams;
  properties: FilterGroup | null;
  filterTestAccounts: boolean;
}

const UNIT_MS: Readonly<Record<string, number>> = {
  second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000,
};
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A step's filters as a multiset of leaf texts (step equality and "narrower than" compare them). */
function leafTexts(g: FilterGroup | null): string[] {
  return leavesOf(g).map((l) => JSON.stringify([l.type, l.key, l.operator, l.value, l.groupTypeIndex, l.negation])).sort();
}

interface StepLike {
  event: string | null;
  /** The action id of an action entity. */
  actionId: number | null;
  properties: FilterGroup | null;
}

/** A series as a step for `narrows`. */
const stepLike = (s: SeriesNode): StepLike => ({ event: s.event, actionId: s.action?.id ?? null, properties: s.properties });

/**
 * Whether step `a` equals or narrows step `b`: the same entity (event name, or action), and `b`'s filters are a
 * sub-multiset of `a`'s.
 */
export function narrows(a: StepLike, b: StepLike): boolean {
  if (a.event !== b.event || a.actionId !== b.actionId) return false;
  const mine = leafTexts(a.properties);
  for (const leaf of leafTexts(b.properties)) {
    const at = mine.indexOf(leaf);
    if (at < 0) return false;
    mine.splice(at, 1);
  }
  return true;
}

export function funnelsQueryOf(p: FilterParams): FunnelsQuery {
  const steps = seriesOf(p);
  let windowMs: number;
  let window: { interval: number; unit: string };
  if (p.has('funnel_window_interval') || p.has('funnel_window_interval_unit')) {
    const interval = p.int('funnel_window_interval', 14, 1, 100_000);
    const unit = p.string('funnel_window_interval_unit') ?? 'day';
    if (UNIT_MS[unit] === undefined) invalidInput('funnel_window_interval_unit', `Unknown unit "${unit}": use second, minute, hour, day, week or month.`);
    window = { interval, unit };
    windowMs = interval * UNIT_MS[unit]!;
  } else {
    const days = p.int('funnel_window_days', 14, 1, 100_000);
    window = { interval: days, unit: 'day' };
    windowMs = days * UNIT_MS.day!;
  }
  const order = (p.string('funnel_order_type') ?? 'ordered') as FunnelOrder;
  if (!['ordered', 'strict', 'unordered'].includes(order)) invalidInput('funnel_order_type', `Unknown funnel_order_type "${order}": use ordered, strict or unordered.`);
  let viz = (p.string('funnel_viz_type') ?? 'steps') as FunnelViz;
  if (!p.has('funnel_viz_type') && p.string('display') === 'ActionsLineGraph' && (p.string('insight') ?? '').toUpperCase() === 'FUNNELS') viz = 'trends';
  if (!['steps', 'trends', 'time_to_convert'].includes(viz)) invalidInput('funnel_viz_type', `Unknown funnel_viz_type "${viz}": use steps, trends or time_to_convert.`);
  if (steps.length > 30) invalidInput('events', 'A funnel has at most 30 steps.');
  const n = steps.length;
  const exclusions = p.list('exclusions').map((raw) => {
    if (!isObject(raw)) return invalidInput('exclusions', 'Every exclusion must be an entity object.');
    const type = raw.type === 'actions' ? 'actions' : 'events';
    if (raw.type !== undefined && raw.type !== 'events' && raw.type !== 'actions') invalidInput('exclusions', 'An exclusion\'s type is "events" or "actions".');
    const from = Number(raw.funnel_from_step);
    const to = Number(raw.funnel_to_step);
    if (!Number.isInteger(from) || !Number.isInteger(to)) invalidInput('exclusions', 'Exclusion steps must be integers.');
    if (!(from < to) || from >= n - 1 || to > n - 1 || from < 0) invalidInput('exclusions', 'Exclusion steps cannot contain an event that\'s part of funnel steps.');
    if (order === 'unordered' && (from !== 0 || to !== n - 1)) invalidInput('exclusions', 'Partial Exclusions not allowed in unordered funnels');
    const target = entityTarget(p, raw, type, 'exclusions');
    const ex: FunnelExclusion = { event: target.event, actionId: target.action?.id ?? null, name: target.name, properties: target.properties, from, to };
    for (let s = from; s <= to; s++) {
      if (narrows(stepLike(steps[s]!), ex)) invalidInput('exclusions', 'Exclusion steps cannot contain an event that\'s part of funnel steps.');
    }
    return ex;
  });
  const breakdown = breakdownOf(p) ?? breakdownsListOf(p);
  if (breakdown && breakdown.type !== 'event' && breakdown.type !== 'person') {
    invalidInput('breakdown_type', `Funnel breakdowns by ${breakdown.type} are not supported yet: use event or person properties.`);
  }
  const attribution = (p.string('breakdown_attribution_type') ?? 'first_touch') as Attribution;
  if (!['first_touch', 'last_touch', 'all_events', 'step'].includes(attribution)) invalidInput('breakdown_attribution_type', `Unknown breakdown_attribution_type "${attribution}".`);
  const attributionStep = attribution === 'step' ? p.int('breakdown_attribution_value', -1, 0, Math.max(0, n - 1)) : null;
  if (attribution === 'step' && attributionStep === -1) invalidInput('breakdown_attribution_value', 'Step attribution needs breakdown_attribution_value.', 'required');
  const fromStep = p.int('funnel_from_step', 0, 0, Math.max(0, n - 1));
  const toStep = p.int('funnel_to_step', Math.max(0, n - 1), 0, Math.max(0, n - 1));
  if (viz === 'time_to_convert' && n > 1 && !(toStep > fromStep)) invalidInput('funnel_to_step', 'funnel_to_step must be after funnel_from_step.');
  const bins = p.has('bin_count') ? p.int('bin_count', 0, 1, 90) : null;
  return {
    kind: 'FunnelsQuery', steps, windowMs, window, order, viz, exclusions, breakdown, attribution, attributionStep,
    fromStep, toStep, binCount: bins, interval: intervalOf(p), dates: { dateFrom: p.string('date_from'), dateTo: p.string('date_to'), explicitDate: p.bool('explicit_date') },
    properties: parseFilters(p.json('properties') ?? null), filterTestAccounts: p.bool('filter_test_accounts'),
  };
}

/** `breakdowns=[{property, type}]` (one property supported) as a breakdown. */
function breakdownsListOf(p: FilterParams): Breakdown | null {
  const list = p.json('breakdowns');
  if (!Array.isArray(list) || list.length === 0) return null;
  if (list.length > 1) invalidInput('breakdowns', 'Funnels break down by one property.');
  const b = list[0];
  if (!isObject(b) || typeof b.property !== 'string') invalidInput('breakdowns', 'A breakdown is {"property": "...", "type": "event" | "person"}.');
  const type = b.type ?? p.string('breakdown_type') ?? 'event';
  if (type !== 'event' && type !== 'person') invalidInput('breakdowns', 'Funnels break down by event or person properties here.');
  return { type, property: b.property as string, cohorts: [], groupTypeIndex: null, limit: p.int('breakdown_limit', 25, 1, 10_000) };
}

/** One matcher (a step or an exclusion, in the local engine's bit order): its event name (null: any) and filters. */
export interface FunnelMatcher {
  event: string | null;
  filter: FilterNode | null;
}

/** The matchers of a funnel: steps 0..n-1 at bits 0..n-1, then the exclusions (funnelShape's bits). */
export function funnelMatchers(q: FunnelsQuery): FunnelMatcher[] {
  return [...q.steps.map((s) => ({ event: s.event, filter: s.properties })), ...q.exclusions.map((e) => ({ event: e.event, filter: e.properties }))];
}

/**
 * Whether no event can match two of the steps: each step is an event of a name no other step has (not an action,
 * not all events). Unordered funnels of such steps need no matching of steps to events (funnel-fold-sql.ts).
 */
export function stepsOfDistinctEvents(q: FunnelsQuery): boolean {
  const names = q.steps.map((s) => (s.kind === 'events' && s.action === null ? s.event : null));
  return names.every((name) => name !== null) && new Set(names).size === names.length;
}

/** Bits of an event's mask: steps 0..n-1, then exclusions. */
export function funnelShape(q: FunnelsQuery): FunnelShape {
  const n = q.steps.length;
  return {
    steps: n,
    order: q.order,
    windowMs: q.windowMs,
    exclusions: q.exclusions.map((e, i) => ({ bit: n + i, from: e.from, to: e.to })),
  };
}
