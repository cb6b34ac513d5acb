/**
 * Retention (analytics.md §4): its parameters, its date window, and the cohort matrix computed from per-period
 * person sets. With target sets T_i (persons whose target event happened in period i; in first-time mode, whose
 * first target event ever did) and returning sets R_j, cohort i at offset k counts |T_i| for k = 0 and
 * |T_i ∩ R_(i+k)| after: a person can sit in several cohorts (recurring) and counts once per cohort and offset.
 */
import { intersect, popcount, unionOf } from './aggregates.js';
import { invalidInput } from './errors.js';
import type { FilterParams } from './filter-params.js';
import { parseDate } from './date-range.js';
import { entityTarget } from './legacy-filters.js';
import { parseFilters, type FilterGroup } from './property-filters.js';
import { addIntervals, truncate, type Interval } from './time-zone.js';

export type Period = 'Hour' | 'Day' | 'Week' | 'Month';
const PERIODS: ReadonlySet<string> = new Set(['Hour', 'Day', 'Week', 'Month']);

export interface EntityRef {
  /** Event name; null = any event (and for an action, whose tree is in `properties`). */
  event: string | null;
  name: string;
  properties: FilterGroup | null;
}

export interface RetentionQuery {
  kind: 'RetentionQuery';
  target: EntityRef;
  returning: EntityRef;
  retentionType: 'retention_recurring' | 'retention_first_time';
  period: Period;
  totalIntervals: number;
  dateTo: string | null;
  properties: FilterGroup | null;
  filterTestAccounts: boolean;
  breakdown: { type: 'event' | 'person'; property: string } | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function entityOf(p: FilterParams, raw: unknown, attr: string, fallback: EntityRef): EntityRef {
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (!isObject(raw)) return invalidInput(attr, 'An entity must be an object like {"id": "$pageview", "type": "events"}.');
  if (raw.type !== undefined && raw.type !== 'events' && raw.type !== 'actions') invalidInput(attr, 'The entity type must be "events" or "actions".');
  const { event, name, properties } = entityTarget(p, raw, raw.type === 'actions' ? 'actions' : 'events', attr);
  return { event, name, properties };
}

export function retentionQueryOf(p: FilterParams): RetentionQuery {
  // The legacy form: the first of `actions` and `events` (actions first, as entities are ordered).
  const legacyList = [...p.list('actions').map((e) => (isObject(e) ? { type: 'actions', ...e } : e)), ...p.list('events')];
  const legacy = legacyList.length > 0 ? legacyList[0] : undefined;
  const target = entityOf(p, p.json('target_entity') ?? legacy, 'target_entity', { event: '$pageview', name: '$pageview', properties: null });
  const returning = entityOf(p, p.json('returning_entity'), 'returning_entity', target);
  const retentionType = p.string('retention_type') ?? 'retention_recurring';
  if (retentionType !== 'retention_recurring' && retentionType !== 'retention_first_time') {
    invalidInput('retention_type', `Unknown retention_type "${retentionType}": use retention_recurring or retention_first_time.`);
  }
  const period = p.string('period') ?? 'Day';
  if (!PERIODS.has(period)) invalidInput('period', `Unknown period "${period}": use Hour, Day, Week or Month.`);
  let breakdown: RetentionQuery['breakdown'] = null;
  const breakdowns = p.json('breakdowns');
  if (Array.isArray(breakdowns) && breakdowns.length > 0) {
    if (breakdowns.length > 1) invalidInput('breakdowns', 'Retention breaks down by one property.');
    const b = breakdowns[0];
    const type = (isObject(b) ? b.type : undefined) ?? p.string('breakdown_type') ?? 'event';
    if (!isObject(b) || typeof b.property !== 'string' || b.property === '') invalidInput('breakdowns', 'A breakdown is {"property": "...", "type": "event" | "person"}.');
    if (type !== 'event' && type !== 'person') invalidInput('breakdown_type', 'Retention breaks down by event or person properties.');
    if (retentionType === 'retention_first_time') invalidInput('breakdowns', 'First-time retention with a breakdown is not supported yet.');
    breakdown = { type, property: b.property as string };
  }
  return {
    kind: 'RetentionQuery', target, returning, retentionType, period: period as Period,
    totalIntervals: p.int('total_intervals', 11, 1, 365), dateTo: p.string('date_to'),
    properties: parseFilters(p.json('properties') ?? null), filterTestAccounts: p.bool('filter_test_accounts'), breakdown,
  };
}

export interface RetentionWindow {
  interval: Interval;
  /** Start of each cohort period (calendar periods: the first one holds the window's start). */
  starts: number[];
  /** Events counted: [from, to] (inclusive). */
  from: number;
  to: number;
}

/**
 * §4.2: end = date_to + 1 period (at 00:00 unless hourly); start = end - total_intervals periods (back to Sunday
 * for weeks, 00:00 otherwise); cohort i is the period that starts i periods after the one holding `start`.
 */
export function retentionWindow(q: RetentionQuery, timeZone: string, now: number): RetentionWindow {
  const interval = q.period.toLowerCase() as Interval;
  const dateTo = q.dateTo === null ? now : parseDate(q.dateTo, now, timeZone, 'date_to').ms;
  let end = addIntervals(dateTo, interval, 1, timeZone);
  if (interval !== 'hour') end = truncate(end, 'day', timeZone);
  let start = addIntervals(end, interval, -q.totalIntervals, timeZone);
  if (interval === 'week') start = truncate(start, 'week', timeZone);
  else if (interval !== 'hour') start = truncate(start, 'day', timeZone);
  else start = truncate(start, 'hour', timeZone);
  const first = truncate(start, interval, timeZone);
  const starts = Array.from({ length: q.totalIntervals }, (_, i) => addIntervals(first, interval, i, timeZone));
  return { interval, starts, from: start, to: end - 1 };
}

/** counts[i][k]: cohort i, offset k (k < total - i). */
export function retentionMatrix(target: readonly (Uint32Array | null)[], returning: readonly (Uint32Array | null)[]): number[][] {
  const n = target.length;
  return target.map((t, i) => Array.from({ length: n - i }, (_, k) => (k === 0 ? popcount(t) : popcount(intersect(t, returning[i + k] ?? null)))));
}

/** With a breakdown: one row per value, offset k counting persons of any cohort i of the value back k periods later. */
export function retentionByValue(target: readonly (Uint32Array | null)[], returning: readonly (Uint32Array | null)[]): number[] {
  const n = target.length;
  return Array.from({ length: n }, (_, k) => {
    if (k === 0) return popcount(unionOf(target));
    const hits: (Uint32Array | null)[] = [];
    for (let i = 0; i + k < n; i++) hits.push(intersect(target[i] ?? null, returning[i + k] ?? null));
    return popcount(unionOf(hits));
  });
}

/** A breakdown's rows in the answer's order: most persons first, then by value. */
export function rankRetentionValues<T extends { value: string; counts: number[] }>(rows: T[]): T[] {
  return rows.sort((a, b) => b.counts[0]! - a.counts[0]! || (a.value < b.value ? -1 : 1));
}
