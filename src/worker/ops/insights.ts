/**
 * The analysis endpoints: `/insights/trend/` (trends, §1.4) and `/persons/trends/` (the actors of one point, §1.5),
 * served from the analytics engine (src/worker/analytics/). Every answer first waits until the events acknowledged
 * before the request are applied (the events list's read-your-writes barrier), and is cached until new events of
 * the project are applied (`refresh=true` recomputes).
 */
import { AnalyticsInputError, invalidInput } from '../../domain/analytics/errors.js';
import { DateParseError, bucketDay, bucketLabel, parseDate, resolveDateRange } from '../../domain/analytics/date-range.js';
import { FilterParams } from '../../domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../domain/analytics/legacy-filters.js';
import { andFilters, cohortLeaf, type FilterLeaf } from '../../domain/analytics/property-filters.js';
import { CUMULATIVE_DISPLAY, NON_TIME_SERIES_DISPLAYS, type SeriesNode, type TrendsQuery } from '../../domain/analytics/query.js';
import { addIntervals, localIso } from '../../domain/analytics/time-zone.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import { actionLookup } from '../analytics/action-lookup.js';
import { actorPage, type ActorPage } from '../analytics/actors.js';
import { queryContext } from '../analytics/query-context.js';
import { ResultCache } from '../analytics/result-cache.js';
import { firstEventIfAll, scanEverywhere } from '../analytics/scatter.js';
import { clickHouseTrendsGap } from '../../domain/analytics/clickhouse/trends-sql.js';
import { runTrendsActorsOnClickHouse, runTrendsOnClickHouse } from '../analytics/trends-clickhouse.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { runTrends, seriesRange, type SeriesResult, type TrendsRun } from '../analytics/trends.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';
import { lifecycleInsight, stickinessInsight } from './person-insights.js';

const caches = new WeakMap<WorkerRuntime, ResultCache>();
function cacheOf(rt: WorkerRuntime): ResultCache {
  let c = caches.get(rt);
  if (!c) caches.set(rt, (c = new ResultCache(rt.shared)));
  return c;
}

/** Analysis input errors become the documented 400 body. */
export async function answering(fn: () => Promise<Reply>): Promise<Reply> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AnalyticsInputError) throw Errors.validation(error.attr, error.code, error.message);
    if (error instanceof DateParseError) throw Errors.validation(error.attr, 'invalid_input', error.message);
    throw error;
  }
}

/** The request's parameters, entities of type `actions` resolved with the project's actions. */
export function paramsOf(item: TaskItem, rt: WorkerRuntime): FilterParams {
  return FilterParams.of(item.meta.query, item.body, actionLookup(rt, projectIdOf(item)));
}

/** The filter of an answer, as PostHog's `filter.to_dict()` echoes it. */
export function filterEcho(q: TrendsQuery, p: FilterParams): Record<string, unknown> {
  const out: Record<string, unknown> = {
    insight: p.string('insight') ?? 'TRENDS',
    events: q.series.filter((s) => s.kind === 'events').map((s) => s.echo),
    actions: q.series.filter((s) => s.kind === 'actions').map((s) => s.echo),
    interval: q.interval,
    display: q.display,
    date_from: q.dates.dateFrom ?? '-7d',
    date_to: q.dates.dateTo,
    properties: p.json('properties') ?? [],
    filter_test_accounts: q.filterTestAccounts,
  };
  if (q.breakdown) {
    out.breakdown = q.breakdown.type === 'cohort' ? q.breakdown.cohorts : q.breakdown.property;
    out.breakdown_type = q.breakdown.type;
    if (q.breakdown.groupTypeIndex !== null) out.breakdown_group_type_index = q.breakdown.groupTypeIndex;
  }
  if (q.compare) out.compare = true;
  if (q.formula) out.formula = q.formula;
  if (q.smoothingIntervals > 1) out.smoothing_intervals = q.smoothingIntervals;
  return out;
}

export function encodeParams(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');
}

function personsUrl(team: number, filter: Record<string, unknown>): { filter: Record<string, unknown>; url: string } {
  return { filter, url: `api/projects/${team}/persons/trends/?${encodeParams(filter)}` };
}

function seriesJson(team: number, r: SeriesResult, q: TrendsQuery, echo: Record<string, unknown>, tz: string): Record<string, unknown> {
  const timeSeries = !NON_TIME_SERIES_DISPLAYS.has(q.display);
  const s = r.series;
  const point = (date_from: string, date_to?: string) => {
    const f: Record<string, unknown> = { ...echo, entity_id: entityId(s), entity_type: s.kind, entity_math: s.math, entity_order: s.order === -1 ? s.index : s.order, date_from };
    if (date_to !== undefined) f.date_to = date_to;
    if (r.breakdownValue !== undefined) {
      f.breakdown_value = r.breakdownValue;
      f.breakdown_type = q.breakdown!.type;
    }
    return personsUrl(team, f);
  };
  const out: Record<string, unknown> = { action: { ...s.echo }, label: r.label };
  if (timeSeries) {
    out.count = r.data.reduce((a, b) => a + b, 0);
    out.data = r.data;
    out.labels = r.sr.starts.map((b) => bucketLabel(b, q.interval, tz));
    out.days = r.sr.starts.map((b) => bucketDay(b, q.interval, tz));
    out.persons_urls = r.sr.starts.map((b) => point(localIso(b, tz)));
  } else {
    const value = r.data[0] ?? 0;
    out.aggregated_value = value;
    out.count = value;
    out.data = [];
    out.labels = [];
    out.days = [];
    out.persons = point(localIso(r.sr.range.from, tz), localIso(r.sr.range.to, tz));
  }
  out.filter = echo;
  if (r.breakdownValue !== undefined) out.breakdown_value = r.breakdownValue;
  if (r.compareLabel) {
    out.compare = true;
    out.compare_label = r.compareLabel;
  }
  if (q.formula && out.action) out.action = null;
  return out;
}

function trendsJson(team: number, run: TrendsRun, q: TrendsQuery, p: FilterParams, url: string): Record<string, unknown> {
  const echo = filterEcho(q, p);
  const result = run.results.map((r) => seriesJson(team, r, q, echo, run.ctx.timeZone));
  let next: string | null = null;
  if (run.more) {
    const offset = p.int('offset', 0, 0) + (q.breakdown?.limit ?? 25);
    next = `${url}?${encodeParams({ ...Object.fromEntries(p.entries()), offset })}`;
  }
  return { result, timezone: run.ctx.timeZone, next };
}

/** A cached answer of the project that is still fresh (no event of the project applied since). */
export function cachedEntry(rt: WorkerRuntime, team: number, key: string): { value: unknown; computedAt: string } | undefined {
  return cacheOf(rt).get(team, key);
}

/** Stores an answer computed from the data as of `version`; returns its `last_refresh`. */
export function storeCached(rt: WorkerRuntime, team: number, key: string, version: number, value: unknown): string {
  const computedAt = new Date().toISOString();
  // An answer ClickHouse gave before the export had caught up (QUILL_ANALYTICS=clickhouse) is not kept: it lacks
  // events the project's version already counts, so the next request asks again.
  const export_ = (value as { clickhouse_export?: { caught_up?: boolean } } | null)?.clickhouse_export;
  if (export_?.caught_up === false) return computedAt;
  cacheOf(rt).set(team, key, version, value, computedAt);
  return computedAt;
}

/** Runs an analysis through the cache: `refresh=true` recomputes; answers carry is_cached and last_refresh. */
export async function cached(rt: WorkerRuntime, team: number, key: string, refresh: boolean, compute: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const cache = cacheOf(rt);
  if (!refresh) {
    const hit = cache.get(team, key);
    if (hit) return { ...(hit.value as Record<string, unknown>), is_cached: true, last_refresh: hit.computedAt };
  }
  const version = rt.shared.projectVersion(team);
  const value = await compute();
  const computedAt = new Date().toISOString();
  // An answer from ClickHouse before the export caught up would stay stale with no new event to invalidate it.
  const partial = (value.clickhouse_export as { caught_up?: boolean } | undefined)?.caught_up === false;
  if (!partial) cache.set(team, key, version, value, computedAt);
  return { ...value, is_cached: false, last_refresh: computedAt };
}

/** Everything but the paging and cache controls, in a stable order. */
export function normalisedKey(kind: string, p: FilterParams, extra: unknown): string {
  const skip = new Set(['refresh', 'personal_api_key', 'cache_invalidation_key', 'format']);
  const entries = p.entries().filter(([k]) => !skip.has(k)).sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([kind, entries, extra]);
}

/** GET/POST /api/projects/:id/insights/trend/ (also lifecycle and stickiness once they exist). */
export const trend: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  const insight = (p.string('insight') ?? '').toUpperCase();
  const shownAs = p.string('shown_as') ?? '';
  if (insight === 'LIFECYCLE' || shownAs === 'Lifecycle') return lifecycleInsight(item, rt, team, p);
  if (insight === 'STICKINESS' || shownAs === 'Stickiness') return stickinessInsight(item, rt, team, p);
  const q = trendsQueryOf(p);
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const ctx = queryContext(rt, team, now, []);
  // Relative dates resolve differently as time passes: the day (or hour) of now is part of the key.
  const nowBucket = Math.floor(now / (q.interval === 'hour' ? 60_000 : 3_600_000));
  const key = normalisedKey('trend', p, [ctx.fingerprint, nowBucket]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => trendsAnswer(rt, team, p, now, item.meta.url));
  return json(200, body);
});

/** The trends answer (§1.4) to the parameters `p`, computed now (no cache). */
export async function trendsAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number, url: string): Promise<Record<string, unknown>> {
  const q = trendsQueryOf(p);
  const offset = p.int('offset', 0, 0);
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<TrendsRun>(rt,
    () => clickHouseTrendsGap(q, [q.properties, ...q.series.map((s) => s.properties), testAccounts()]),
    () => runTrendsOnClickHouse(rt, team, q, now, offset), () => runTrends(rt, team, q, now, offset));
  return { ...trendsJson(team, run, q, p, url), ...where };
}

/** The entity id answers and persons URLs carry: the event name (null: all events) or the action id. */
export function entityId(s: SeriesNode): string | number | null {
  return s.action !== null ? s.action.id : s.event;
}

/** The series a `/persons/trends/` request points at: by entity id, type, math and order. */
export function pickSeries(q: TrendsQuery, p: FilterParams): SeriesNode {
  const id = p.string('entity_id') ?? p.string('entityId');
  const type = p.string('entity_type') ?? p.string('type') ?? 'events';
  if (type !== 'events' && type !== 'actions') invalidInput('entity_type', 'entity_type is "events" or "actions".');
  const math = p.string('entity_math') ?? 'total';
  const order = p.has('entity_order') ? p.int('entity_order', 0) : null;
  const candidates = q.series.filter((s) => s.kind === type && String(entityId(s) ?? '') === (id ?? '') && s.math === math);
  const chosen = candidates.find((s) => order === null || s.order === order || s.index === order) ?? candidates[0];
  if (chosen) return chosen;
  if (id === null && (type === 'actions' || !p.has('entity_id'))) invalidInput('entity_id', 'entity_id is required.', 'required');
  const entity = { id, type, math, math_property: p.string('entity_math_property') ?? undefined };
  const single = trendsQueryOf(p.derive({ [type]: JSON.stringify([entity]) }));
  return single.series[0]!;
}

/** A breakdown value as a filter (the actors of one breakdown series). */
function breakdownFilter(q: TrendsQuery, value: unknown): FilterLeaf | null {
  const b = q.breakdown;
  if (!b || value === undefined || value === null) return null;
  if (b.type === 'cohort') {
    if (value === 'all' || Number(value) === 0) return null;
    return cohortLeaf(Number(value));
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const type = b.type === 'group' ? 'group' : b.type;
  if (text === '') return { type, key: b.property!, operator: 'is_not_set', value: null, groupTypeIndex: b.groupTypeIndex, negation: false };
  return { type, key: b.property!, operator: 'exact', value: text, groupTypeIndex: b.groupTypeIndex, negation: false };
}

/** GET /api/projects/:id/persons/trends/: the persons behind one point (§1.5). */
export async function personsTrendsAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number, endpoint: string): Promise<Record<string, unknown>> {
  const q = trendsQueryOf(p);
  const series = pickSeries(q, p);
  if (series.math === 'unique_group') invalidInput('entity_math', 'Group actors are not supported yet.');
  const limit = p.int('limit', 100, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  await rt.ingest.appliedEverywhere();
  const bdValue = p.json('breakdown_value');
  const bd = breakdownFilter(q, bdValue === undefined ? undefined : bdValue);
  const filter = andFilters(q.properties, series.properties, bd);
  const ctx = queryContext(rt, team, now, [filter]);
  const finalFilter = andFilters(filter, q.filterTestAccounts ? ctx.testAccountFilters : null);
  // The point's window: its bucket (cumulative and non-time-series displays keep the whole range).
  const dateFrom = p.string('date_from');
  let from: number;
  let to: number;
  if (q.display === CUMULATIVE_DISPLAY || NON_TIME_SERIES_DISPLAYS.has(q.display) || dateFrom === null || dateFrom === 'all') {
    // date_from=all starts at the project's first event, as the insight's own range does.
    const first = await firstEventIfAll(rt, team, q.dates);
    const sr = seriesRange(resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first), series.math, false);
    from = sr.range.from;
    to = sr.range.to;
  } else {
    from = parseDate(dateFrom, now, ctx.timeZone).ms;
    to = addIntervals(from, q.interval, 1, ctx.timeZone) - 1;
  }
  // Where the insight runs on ClickHouse, so do its points' persons (the series alone: the others do not matter).
  const { run, where } = await runOnChosenExecutor<{ values: Map<number, number | null> }>(rt,
    () => clickHouseTrendsGap({ ...q, series: [series] }, [finalFilter]),
    () => runTrendsActorsOnClickHouse(rt, team, series, finalFilter, { from, to }, ctx, now),
    async () => {
      const partial = await scanEverywhere(rt, {
        team, event: series.event, filter: finalFilter, from, to, bucketStarts: [from], bucketEnd: to,
        measure: { kind: 'actor_counts' }, breakdown: null, persons: null,
      }, ctx.scan);
      const states = partial.get('');
      return { values: new Map<number, number | null>(states && states.kind === 'actor_counts' ? states.maps[0]! : []) };
    });
  const page = actorPage(rt, team, run.values, { offset, limit, search: p.string('search') });
  return { ...pagedActors(endpoint, p, page, offset, limit), ...where };
}

/** The legacy actors body of one page: the people, and `next` / `initial` as the same request at other offsets. */
export function pagedActors(endpoint: string, p: FilterParams, page: ActorPage, offset: number, limit: number): Record<string, unknown> {
  const url = `${endpoint}?`;
  const base = Object.fromEntries(p.entries().filter(([k]) => k !== 'offset'));
  return {
    results: [{ people: page.people, count: page.people.length }],
    next: page.raw > offset + limit ? `${url}${encodeParams({ ...base, offset: offset + limit })}` : null,
    initial: `${url}${encodeParams({ ...base, offset: 0 })}`,
    missing_persons: page.missing,
    is_cached: false,
    last_refresh: new Date().toISOString(),
  };
}

export const personsTrends: OpHandler = (item, rt) => answering(async () =>
  json(200, await personsTrendsAnswer(rt, projectIdOf(item), paramsOf(item, rt), item.meta.now, item.meta.url)));
