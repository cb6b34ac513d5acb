/**
 * Saved insights (`/api/projects/:id/insights/`), PostHog's resource: a name, a description, the `query` PostHog
 * stores today (`{kind: 'InsightVizNode', source: {kind: 'TrendsQuery' | …}}`) and/or the legacy `filters` the
 * console's pages produce (turned into the query form when no query is given). Retrieving one computes its `result`
 * through the query cache (`?refresh=` as for /query/); listing only shows cached results. `dashboards` lists the
 * dashboards that show it, and writing it moves the insight's tiles. Deletion is soft (`PATCH {"deleted": true}`),
 * as PostHog's is.
 */
import { all } from '../../stores/lmdb-env.js';
import type { Dashboard, Insight } from '../../domain/model.js';
import { filterToQuery } from '../../domain/analytics/filter-to-query.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { randomAlnum } from '../../domain/secrets.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import type { WorkerRuntime } from '../runtime.js';
import { paginateCounted, pageOf } from '../pagination.js';
import { json } from '../reply.js';
import { userRefById } from './accounts.js';
import { answering } from './insights.js';
import { answerQuery, runnableQuery } from './query.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

type Json = Record<string, unknown>;
export type ResultMode = 'cache_only' | 'blocking' | 'force';

/** `?refresh=` of a GET: PostHog's modes reduced to whether to compute. */
export function resultModeOf(item: TaskItem): ResultMode {
  const raw = item.meta.query.refresh;
  if (raw === undefined || raw === '' || raw === 'false' || raw === 'blocking' || raw === 'async' || raw === 'lazy_async') return 'blocking';
  if (raw === 'true' || raw === 'force_blocking' || raw === 'force_async') return 'force';
  if (raw === 'force_cache') return 'cache_only';
  return invalidInput('refresh', `Unknown refresh mode "${raw}".`);
}

/** The query an insight runs: its own, else the one its legacy filters stand for (none when neither is set). */
export function queryOfInsight(i: Insight): Json | null {
  if (i.query) return i.query;
  if (!i.filters || Object.keys(i.filters).length === 0) return null;
  try {
    return filterToQuery(i.filters);
  } catch {
    return null;
  }
}

/** Dashboards of the project, live ones only. */
export function dashboardsOf(meta: MetaStore, projectId: number): Dashboard[] {
  return all(meta.dashboards.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value))
    .filter((d) => !d.deleted);
}

/** The insight as PostHog serialises it; `result` computed (or only looked up) as `mode` says. */
export async function serializeInsight(rt: WorkerRuntime, item: TaskItem, i: Insight, mode: ResultMode, dashboards?: Dashboard[]): Promise<Json> {
  const query = queryOfInsight(i);
  let answer;
  if (query) {
    const ctx = { team: i.project_id, now: item.meta.now, url: item.meta.url };
    answer = await answerQuery(rt, runnableQuery(query), ctx, mode);
  }
  const value = answer?.value;
  const tiles = (dashboards ?? dashboardsOf(rt.meta, i.project_id))
    .flatMap((d) => d.tiles.filter((t) => t.insight_id === i.id).map((t) => ({ id: t.id, dashboard_id: d.id, deleted: false })));
  return {
    id: i.id, short_id: i.short_id, name: i.name, derived_name: null, description: i.description, filters: i.filters,
    query, created_at: i.created_at, created_by: userRefById(rt.meta, i.created_by), last_modified_at: i.last_modified_at,
    deleted: i.deleted, saved: true,
    dashboards: [...new Set(tiles.map((t) => t.dashboard_id))], dashboard_tiles: tiles,
    result: value ? (value.results ?? value.result ?? null) : null,
    columns: value?.columns ?? null, hasMore: value?.hasMore ?? null,
    is_cached: answer?.is_cached ?? false, last_refresh: answer?.last_refresh ?? null,
    timezone: rt.meta.projects.get(i.project_id)?.timezone ?? 'UTC',
  };
}

export function insightOf(meta: MetaStore, projectId: number, id: number): Insight {
  const insight = meta.insights.get([projectId, id]);
  if (!insight || insight.deleted) throw Errors.notFound();
  return insight;
}

function filtersOf(body: Json): Json | undefined {
  const filters = body.filters as Json | undefined;
  if (filters === undefined) return undefined;
  if (typeof filters.insight !== 'string' && filters.insight !== undefined) invalidInput('filters', 'filters.insight must be a string.');
  // Filters that cannot be read as a query are refused now rather than failing every later retrieval.
  if (Object.keys(filters).length > 0) runnableQuery(filterToQuery(filters), 'filters');
  return filters;
}

function queryOf(body: Json): Json | null | undefined {
  if (body.query === undefined || body.query === null) return body.query as null | undefined;
  runnableQuery(body.query, 'query');
  return body.query as Json;
}

function dashboardIdsOf(meta: MetaStore, projectId: number, body: Json): number[] | undefined {
  const ids = body.dashboards;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id))) invalidInput('dashboards', 'A list of dashboard ids is required.');
  const live = new Set(dashboardsOf(meta, projectId).map((d) => d.id));
  const unknown = (ids as number[]).find((id) => !live.has(id));
  if (unknown !== undefined) invalidInput('dashboards', `Dashboard ${unknown} does not exist.`, 'does_not_exist');
  return [...new Set(ids as number[])];
}

/** Puts the insight on exactly these dashboards: a tile added where it is missing, removed where it is not wanted. */
function placeOnDashboards(meta: MetaStore, projectId: number, insightId: number, wanted: number[]): void {
  for (const d of dashboardsOf(meta, projectId)) {
    const has = d.tiles.some((t) => t.insight_id === insightId);
    const want = wanted.includes(d.id);
    if (has === want) continue;
    const tiles = want
      ? [...d.tiles, { id: meta.nextId('dashboard_tile'), insight_id: insightId, layouts: {}, color: null }]
      : d.tiles.filter((t) => t.insight_id !== insightId);
    meta.dashboards.put([projectId, d.id], { ...d, tiles });
  }
}

export const listInsights: OpHandler = (item, rt) => answering(async () => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const rows = all(rt.meta.insights.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value))
    .filter((i) => !i.deleted && (item.meta.query.short_id === undefined || i.short_id === item.meta.query.short_id))
    .sort((a, b) => b.last_modified_at.localeCompare(a.last_modified_at) || b.id - a.id);
  const page = pageOf(item.meta.query);
  const { count, next, previous, results } = paginateCounted(rows.slice(page.offset, page.offset + page.limit), rows.length, item.meta, page);
  const dashboards = dashboardsOf(rt.meta, projectId);
  const serialized = [];
  for (const i of results) serialized.push(await serializeInsight(rt, item, i, 'cache_only', dashboards));
  return json(200, { count, next, previous, results: serialized });
});

export const createInsight: OpHandler = (item, rt) => answering(async () => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const filters = filtersOf(body) ?? {};
  const query = queryOf(body) ?? null;
  const insight = await rt.meta.write(() => {
    const dashboards = dashboardIdsOf(rt.meta, projectId, body);
    const now = nowIso();
    const record: Insight = {
      id: rt.meta.nextId('insight'), short_id: randomAlnum(8), project_id: projectId, name: (body.name as string | null | undefined)?.trim() ?? '',
      description: (body.description as string | null | undefined) ?? '', filters, query, created_by: principalOf(item).userId || null,
      created_at: now, last_modified_at: now, deleted: false,
    };
    rt.meta.insights.put([projectId, record.id], record);
    if (dashboards) placeOnDashboards(rt.meta, projectId, record.id, dashboards);
    return record;
  });
  return json(201, await serializeInsight(rt, item, insight, 'cache_only'));
});

export const retrieveInsight: OpHandler = (item, rt) => answering(async () => {
  const mode = resultModeOf(item);
  rt.meta.env.resetReadTxn();
  return json(200, await serializeInsight(rt, item, insightOf(rt.meta, projectIdOf(item), intParam(item, 'id')), mode));
});

export const updateInsight: OpHandler = (item, rt) => answering(async () => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const filters = filtersOf(body);
  const query = queryOf(body);
  const insight = await rt.meta.write(() => {
    const next = { ...insightOf(rt.meta, projectId, id), last_modified_at: nowIso() };
    const dashboards = dashboardIdsOf(rt.meta, projectId, body);
    if (body.name !== undefined) next.name = (body.name as string | null)?.trim() ?? '';
    if (body.description !== undefined) next.description = (body.description as string | null) ?? '';
    if (filters !== undefined) next.filters = filters;
    if (query !== undefined) next.query = query;
    // New filters without a query replace what the insight runs; a stale query would otherwise win.
    else if (filters !== undefined) next.query = null;
    if (body.deleted !== undefined) next.deleted = body.deleted as boolean;
    rt.meta.insights.put([projectId, id], next);
    if (dashboards) placeOnDashboards(rt.meta, projectId, id, dashboards);
    if (next.deleted) placeOnDashboards(rt.meta, projectId, id, []);
    return next;
  });
  return json(200, await serializeInsight(rt, item, insight, 'cache_only'));
});

export const deleteInsight: OpHandler = (item, rt) => {
  insightOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of an insight is not allowed. Use PATCH with {"deleted": true} to delete it.');
};
