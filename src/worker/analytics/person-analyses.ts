/**
 * The analyses of how often persons come back (analytics.md §4-§6): retention, lifecycle and stickiness. Each
 * reduces to person sets per period — one bitmap per period, merged over shards by OR, so a person whose distinct
 * ids live on several shards counts once — combined with the pure rules of src/domain/analytics/.
 */
import { bitmapOf, type Partial } from '../../domain/analytics/aggregates.js';
import { BucketIndex, bucketStarts, parseDate, resolveDateRange, type DateRange } from '../../domain/analytics/date-range.js';
import { lifecycleCounts, type LifecycleStatus } from '../../domain/analytics/lifecycle.js';
import { andFilters, type FilterNode } from '../../domain/analytics/property-filters.js';
import { rankRetentionValues, retentionMatrix, retentionByValue, retentionWindow, type RetentionQuery, type RetentionWindow } from '../../domain/analytics/retention.js';
import type { TrendsQuery } from '../../domain/analytics/query.js';
import { activeIntervals, stickinessHistogram, stickinessIntervals } from '../../domain/analytics/stickiness.js';
import { addIntervals } from '../../domain/analytics/time-zone.js';
import { EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import type { WorkerRuntime } from '../runtime.js';
import { PersonResolution } from './person-resolution.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll, scanEverywhere } from './scatter.js';
import type { BreakdownScan, SeriesScan } from './series-scan.js';
import { shiftedRange } from './trends.js';

/** The earliest representable instant: a bucket that holds every event. */
const ALL_TIME = -8.64e15;

type Sets = (Uint32Array | null)[];

/** Per-bucket person sets of the events of one entity (by breakdown value when a breakdown is given). */
async function personSets(rt: WorkerRuntime, ctx: QueryContext, event: string | null, filter: FilterNode | null, starts: number[], from: number, to: number, breakdown: BreakdownScan | null = null): Promise<Map<string, Sets>> {
  const scan: SeriesScan = { team: ctx.team, event, filter, from, to, bucketStarts: starts, bucketEnd: to, measure: { kind: 'persons' }, breakdown, persons: null };
  const partial = await scanEverywhere(rt, scan, ctx.scan);
  const out = new Map<string, Sets>();
  for (const [key, states] of partial) if (states.kind === 'persons') out.set(key, states.sets);
  return out;
}

/** Per person, the smallest value of a column over the entity's events in [from, to] (Infinity where none). */
async function personMins(rt: WorkerRuntime, ctx: QueryContext, event: string | null, filter: FilterNode | null, from: number, to: number, column: 'ts' | 'person_created_at'): Promise<Float64Array> {
  const scan: SeriesScan = { team: ctx.team, event, filter, from, to, bucketStarts: [ALL_TIME], bucketEnd: to, measure: { kind: 'person_min', column }, breakdown: null, persons: null };
  const partial: Partial = await scanEverywhere(rt, scan, ctx.scan);
  const states = partial.get('');
  return states && states.kind === 'person_min' ? states.values : new Float64Array(ctx.scan.maxPersonId + 1).fill(Infinity);
}

// ---------------------------------------------------------------------------------------------------- retention

export interface RetentionRun {
  ctx: QueryContext;
  window: RetentionWindow;
  /** Without a breakdown: one row per cohort. */
  target: Sets;
  returning: Sets;
  matrix: number[][];
  /** With a breakdown: the rows by value. */
  byValue: { value: string; counts: number[] }[] | null;
}

export async function runRetention(rt: WorkerRuntime, team: number, q: RetentionQuery, now: number): Promise<RetentionRun> {
  const ctx = queryContext(rt, team, now, [q.properties, q.target.properties, q.returning.properties]);
  const window = retentionWindow(q, ctx.timeZone, now);
  const test = q.filterTestAccounts ? ctx.testAccountFilters : null;
  const targetFilter = andFilters(q.properties, q.target.properties, test);
  const returningFilter = andFilters(q.properties, q.returning.properties, test);
  const sameEntity = q.target.event === q.returning.event && JSON.stringify(targetFilter) === JSON.stringify(returningFilter);
  const returningSets = async () => (await personSets(rt, ctx, q.returning.event, returningFilter, window.starts, window.from, window.to)).get('') ?? [];

  if (q.breakdown) {
    const column = (q.breakdown.type === 'person' ? PERSON_PROP : EVENT_PROP) + q.breakdown.property;
    const byValueSets = await personSets(rt, ctx, q.target.event, targetFilter, window.starts, window.from, window.to, { kind: 'column', column, only: null });
    const returning = await returningSets();
    const byValue = rankRetentionValues([...byValueSets].map(([value, sets]) => ({ value, counts: retentionByValue(sets, returning) })));
    return { ctx, window, target: [], returning, matrix: [], byValue };
  }

  let target: Sets;
  if (q.retentionType === 'retention_first_time') {
    // The period of each person's first target event over all time; persons first seen before the window are out.
    const firsts = await personMins(rt, ctx, q.target.event, targetFilter, ALL_TIME, window.to, 'ts');
    const index = new BucketIndex(window.starts, window.to);
    const members: number[][] = window.starts.map(() => []);
    for (let pid = 1; pid < firsts.length; pid++) {
      const t = firsts[pid]!;
      if (t < window.from || t > window.to) continue;
      const i = index.of(t);
      if (i >= 0) members[i]!.push(pid);
    }
    target = members.map((ids) => (ids.length === 0 ? null : bitmapOf(ids, ctx.scan.maxPersonId)));
  } else {
    target = (await personSets(rt, ctx, q.target.event, targetFilter, window.starts, window.from, window.to)).get('') ?? [];
  }
  const returning = sameEntity && q.retentionType === 'retention_recurring' ? target : await returningSets();
  const pad = (sets: Sets) => window.starts.map((_, i) => sets[i] ?? null);
  return { ctx, window, target: pad(target), returning: pad(returning), matrix: retentionMatrix(pad(target), pad(returning)), byValue: null };
}

// ---------------------------------------------------------------------------------------------------- lifecycle

export interface LifecycleRun {
  ctx: QueryContext;
  range: DateRange;
  starts: number[];
  /** Active persons per period, the period before the range first. */
  active: Sets;
  /** Persons created in each period of the range. */
  created: Sets;
  counts: Record<LifecycleStatus, number[]>;
}

/** A lifecycle's periods: the range's bucket starts, the start of the period before them, the last period's end. */
export function lifecycleWindow(q: TrendsQuery, timeZone: string, now: number, first: number | null): { range: DateRange; starts: number[]; before: number; end: number } {
  const range = resolveDateRange(q.dates, q.interval, timeZone, now, first);
  const starts = bucketStarts(range);
  const before = addIntervals(starts[0]!, q.interval, -1, timeZone);
  const end = addIntervals(starts[starts.length - 1]!, q.interval, 1, timeZone) - 1;
  return { range, starts, before, end };
}

/**
 * The period of the range (0 = its first) a lifecycle point's `target_date` falls in, -1 before the range; the
 * persons endpoint's reading, shared by both executors.
 */
export function lifecyclePeriodOf(starts: number[], range: DateRange, targetDate: string, now: number, timeZone: string): number {
  return new BucketIndex(starts, range.to + 86_400_000 * 31).of(parseDate(targetDate, now, timeZone, 'target_date').ms);
}

export async function runLifecycle(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number): Promise<LifecycleRun> {
  const series = q.series[0]!;
  const ctx = queryContext(rt, team, now, [q.properties, series.properties]);
  const first = await firstEventIfAll(rt, team, q.dates);
  const { range, starts, before, end } = lifecycleWindow(q, ctx.timeZone, now, first);
  const filter = andFilters(q.properties, series.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const withBefore = [before, ...starts];
  // One scan (analytics.md §5): who was active in each period (the period before the range first), and each
  // person's smallest created_at over those events. "new" is the period of the person's created_at. Every event
  // carries the created_at its person had then, so the smallest one is the person's — except after a merge, which
  // keeps the earlier created_at of the two: a person something was merged into is read from its row when the
  // events would make it new in the range.
  const scan: SeriesScan = {
    team: ctx.team, event: series.event, filter, from: before, to: end, bucketStarts: withBefore, bucketEnd: end,
    measure: { kind: 'persons_and_min', column: 'person_created_at' }, breakdown: null, persons: null,
  };
  const states = (await scanEverywhere(rt, scan, ctx.scan)).get('');
  const both = states?.kind === 'persons_and_min' ? states : null;
  const padded = withBefore.map((_, i) => both?.sets[i] ?? null);
  const createdMins = both?.values ?? new Float64Array(ctx.scan.maxPersonId + 1).fill(Infinity);
  const mergeTargets = PersonResolution.of(rt.persons, team, ctx.scan.maxPersonId).mergeTargets;
  const index = new BucketIndex(starts, end);
  const members: number[][] = starts.map(() => []);
  const place = (pid: number, created: number) => {
    const p = index.of(created);
    if (p >= 0) members[p]!.push(pid);
  };
  const readFromRow: number[] = [];
  for (let pid = 1; pid < createdMins.length; pid++) {
    const snapshot = createdMins[pid]!;
    if (snapshot === Infinity || snapshot < starts[0]!) continue;
    if (mergeTargets.has(pid)) readFromRow.push(pid);
    else place(pid, snapshot);
  }
  const rowCreatedAt = rt.personCreatedAt.of(team, readFromRow);
  readFromRow.forEach((pid, i) => place(pid, rowCreatedAt[i] ?? createdMins[pid]!));
  const created = members.map((ids) => (ids.length === 0 ? null : bitmapOf(ids, ctx.scan.maxPersonId)));
  return { ctx, range, starts, active: padded, created, counts: lifecycleCounts(padded, created) };
}

// --------------------------------------------------------------------------------------------------- stickiness

export interface StickinessSeries {
  index: number;
  range: DateRange;
  /** Active intervals per person id. */
  counts: Uint16Array;
  data: number[];
  compareLabel?: 'current' | 'previous';
}

/** The periods a stickiness query answers: its range, and with `compare` the one before it. */
export function stickinessPeriods(q: TrendsQuery, range: DateRange): { range: DateRange; label?: 'current' | 'previous' }[] {
  const periods: { range: DateRange; label?: 'current' | 'previous' }[] = [{ range, label: q.compare ? 'current' : undefined }];
  if (q.compare) periods.push({ range: shiftedRange(range, bucketStarts(range).length), label: 'previous' });
  return periods;
}

export async function runStickiness(rt: WorkerRuntime, team: number, q: TrendsQuery, now: number): Promise<{ ctx: QueryContext; series: StickinessSeries[] }> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.series.map((s) => s.properties)]);
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first);
  const out: StickinessSeries[] = [];
  for (const period of stickinessPeriods(q, range)) {
    const points = stickinessIntervals(period.range) - 1;
    for (const s of q.series) {
      const filter = andFilters(q.properties, s.properties, q.filterTestAccounts ? ctx.testAccountFilters : null);
      const starts = bucketStarts(period.range);
      const sets = (await personSets(rt, ctx, s.event, filter, starts, period.range.from, period.range.to)).get('') ?? [];
      const counts = activeIntervals(sets, ctx.scan.maxPersonId);
      out.push({ index: s.index, range: period.range, counts, data: stickinessHistogram(counts, points), compareLabel: period.label });
    }
  }
  return { ctx, series: out };
}
