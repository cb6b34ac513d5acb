/**
 * Dashboards (`/api/projects/:id/dashboards/`), PostHog's resource: a name, a description, `pinned`, and tiles that
 * each show a saved insight with its result. Insights join a dashboard by `PATCH insights/:id {"dashboards": [...]}`
 * (as in PostHog); the dashboard's own PATCH moves tiles (`layouts`, `color`) or removes them (`deleted: true`).
 * Retrieving a dashboard computes every tile's result through the query cache (`?refresh=` as for insights), over
 * the dashboard's date range override (`filters: {date_from, date_to}`) when it has one; each tile and the dashboard
 * say when their results were computed (`last_refresh`, the oldest tile's for the dashboard).
 * Deletion is soft, as PostHog's is; `DELETE` answers 405.
 */
import type { Dashboard, DashboardTile } from '../../domain/model.js';
import { insightOnDashboard, parseDashboardFilters } from '../../domain/analytics/dashboard-filters.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import type { WorkerRuntime } from '../runtime.js';
import { paginate } from '../pagination.js';
import { json } from '../reply.js';
import { userRefById } from './accounts.js';
import { answering } from './insights.js';
import { dashboardsOf, resultModeOf, serializeInsight, type ResultMode } from './saved-insights.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function summary(meta: MetaStore, d: Dashboard): Json {
  return {
    id: d.id, name: d.name, description: d.description, pinned: d.pinned, created_at: d.created_at,
    created_by: userRefById(meta, d.created_by), deleted: d.deleted, is_shared: false, tags: [], filters: d.filters ?? {},
  };
}

async function detail(rt: WorkerRuntime, item: TaskItem, d: Dashboard, mode: ResultMode): Promise<Json> {
  const dashboards = dashboardsOf(rt.meta, d.project_id);
  const tiles = [];
  for (const t of d.tiles) {
    const insight = rt.meta.insights.get([d.project_id, t.insight_id]);
    if (!insight || insight.deleted) continue;
    const shown = await serializeInsight(rt, item, insightOnDashboard(insight, d.filters), mode, dashboards);
    tiles.push({ id: t.id, layouts: t.layouts, color: t.color, text: null, deleted: false, last_refresh: shown.last_refresh, insight: shown });
  }
  const refreshed = tiles.map((t) => t.last_refresh).filter((r): r is string => typeof r === 'string').sort();
  return { ...summary(rt.meta, d), tiles, last_refresh: refreshed[0] ?? null };
}

function dashboardOf(meta: MetaStore, projectId: number, id: number): Dashboard {
  const d = meta.dashboards.get([projectId, id]);
  if (!d || d.deleted) throw Errors.notFound();
  return d;
}

function text(body: Json, key: string, max: number): string | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (v === null) return '';
  if (typeof v !== 'string' || v.length > max) invalidInput(key, `"${key}" must be a string of at most ${max} characters.`);
  return key === 'name' ? v.trim() : v;
}

function flag(body: Json, key: string): boolean | undefined {
  const v = body[key];
  if (v !== undefined && typeof v !== 'boolean') invalidInput(key, `"${key}" must be true or false.`);
  return v as boolean | undefined;
}

/** Tile edits of a PATCH: `[{id, layouts?, color?, deleted?}]` against the dashboard's own tiles. */
function editTiles(tiles: DashboardTile[], raw: unknown): DashboardTile[] {
  if (raw === undefined) return tiles;
  if (!Array.isArray(raw)) return invalidInput('tiles', '"tiles" must be a list.');
  const next = new Map(tiles.map((t) => [t.id, t]));
  for (const edit of raw) {
    if (!isObject(edit) || !Number.isSafeInteger(edit.id)) invalidInput('tiles', 'Every tile needs its "id".');
    const tile = next.get(edit.id as number);
    if (!tile) invalidInput('tiles', `Tile ${String(edit.id)} is not on this dashboard.`, 'does_not_exist');
    if (edit.deleted === true) {
      next.delete(tile.id);
      continue;
    }
    if (edit.layouts !== undefined && !isObject(edit.layouts)) invalidInput('tiles', '"layouts" must be an object.');
    if (edit.color !== undefined && edit.color !== null && typeof edit.color !== 'string') invalidInput('tiles', '"color" must be a string.');
    next.set(tile.id, { ...tile, layouts: (edit.layouts as Json | undefined) ?? tile.layouts, color: edit.color === undefined ? tile.color : (edit.color as string | null) });
  }
  return tiles.filter((t) => next.has(t.id)).map((t) => next.get(t.id)!);
}

export const listDashboards: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const rows = dashboardsOf(rt.meta, projectId).sort((a, b) => Number(b.pinned) - Number(a.pinned) || a.name.localeCompare(b.name) || a.id - b.id);
  const { count, next, previous, results } = paginate(rows, item.meta);
  return json(200, { count, next, previous, results: results.map((d) => summary(rt.meta, d)) });
};

export const createDashboard: OpHandler = (item, rt) => answering(async () => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const name = text(body, 'name', 400) ?? '';
  const description = text(body, 'description', 4000) ?? '';
  const pinned = flag(body, 'pinned') ?? false;
  const filters = parseDashboardFilters(body.filters) ?? {};
  const dashboard = await rt.meta.write(() => {
    const d: Dashboard = {
      id: rt.meta.nextId('dashboard'), project_id: projectId, name, description, pinned, created_at: nowIso(),
      created_by: principalOf(item).userId || null, deleted: false, tiles: [], filters,
    };
    rt.meta.dashboards.put([projectId, d.id], d);
    return d;
  });
  return json(201, await detail(rt, item, dashboard, 'cache_only'));
});

export const retrieveDashboard: OpHandler = (item, rt) => answering(async () => {
  const mode = resultModeOf(item);
  rt.meta.env.resetReadTxn();
  return json(200, await detail(rt, item, dashboardOf(rt.meta, projectIdOf(item), intParam(item, 'id')), mode));
});

export const updateDashboard: OpHandler = (item, rt) => answering(async () => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const name = text(body, 'name', 400);
  const description = text(body, 'description', 4000);
  const pinned = flag(body, 'pinned');
  const deleted = flag(body, 'deleted');
  const filters = parseDashboardFilters(body.filters);
  const dashboard = await rt.meta.write(() => {
    const d = dashboardOf(rt.meta, projectId, id);
    const next: Dashboard = {
      ...d, name: name ?? d.name, description: description ?? d.description, pinned: pinned ?? d.pinned,
      deleted: deleted ?? d.deleted, tiles: editTiles(d.tiles, body.tiles), filters: filters ?? d.filters ?? {},
    };
    rt.meta.dashboards.put([projectId, id], next);
    return next;
  });
  return json(200, await detail(rt, item, dashboard, 'cache_only'));
});

export const deleteDashboard: OpHandler = (item, rt) => {
  dashboardOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of a dashboard is not allowed. Use PATCH with {"deleted": true} to delete it.');
};
