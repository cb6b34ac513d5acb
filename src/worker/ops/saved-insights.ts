/**
 * Saved insights (`/api/projects/:id/insights/`), PostHog's resource reduced to what the console uses: a name, a
 * description and the legacy `filters` the insight pages produce; the dashboard page shows every saved insight of
 * the project. Deletion is soft (`PATCH {"deleted": true}`), as PostHog's is.
 */
import { all } from '../../stores/lmdb-env.js';
import type { Insight } from '../../domain/model.js';
import { randomAlnum } from '../../domain/secrets.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginateCounted, pageOf } from '../pagination.js';
import { json } from '../reply.js';
import { userRefById } from './accounts.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

function serialize(meta: MetaStore, i: Insight): object {
  return {
    id: i.id, short_id: i.short_id, name: i.name, derived_name: null, description: i.description, filters: i.filters,
    query: null, created_at: i.created_at, created_by: userRefById(meta, i.created_by), last_modified_at: i.last_modified_at,
    deleted: i.deleted, saved: true, result: null,
  };
}

function insightOf(meta: MetaStore, projectId: number, id: number): Insight {
  const insight = meta.insights.get([projectId, id]);
  if (!insight || insight.deleted) throw Errors.notFound();
  return insight;
}

function filtersOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const filters = body.filters as Record<string, unknown> | undefined;
  if (filters !== undefined && (typeof filters.insight !== 'string' && filters.insight !== undefined)) {
    throw Errors.validation('filters', 'invalid_input', 'filters.insight must be a string.');
  }
  return filters;
}

export const listInsights: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const rows = all(rt.meta.insights.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value))
    .filter((i) => !i.deleted && (item.meta.query.short_id === undefined || i.short_id === item.meta.query.short_id))
    .sort((a, b) => b.last_modified_at.localeCompare(a.last_modified_at) || b.id - a.id);
  const page = pageOf(item.meta.query);
  const { count, next, previous, results } = paginateCounted(rows.slice(page.offset, page.offset + page.limit), rows.length, item.meta, page);
  return json(200, { count, next, previous, results: results.map((i) => serialize(rt.meta, i)) });
};

export const createInsight: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const filters = filtersOf(body) ?? {};
  const insight = await rt.meta.write(() => {
    const now = nowIso();
    const record: Insight = {
      id: rt.meta.nextId('insight'), short_id: randomAlnum(8), project_id: projectId, name: (body.name as string | null | undefined)?.trim() ?? '',
      description: (body.description as string | null | undefined) ?? '', filters, created_by: principalOf(item).userId || null,
      created_at: now, last_modified_at: now, deleted: false,
    };
    rt.meta.insights.put([projectId, record.id], record);
    return record;
  });
  return json(201, serialize(rt.meta, insight));
};

export const retrieveInsight: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  return json(200, serialize(rt.meta, insightOf(rt.meta, projectIdOf(item), intParam(item, 'id'))));
};

export const updateInsight: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const filters = filtersOf(body);
  const insight = await rt.meta.write(() => {
    const next = { ...insightOf(rt.meta, projectId, id), last_modified_at: nowIso() };
    if (body.name !== undefined) next.name = (body.name as string | null)?.trim() ?? '';
    if (body.description !== undefined) next.description = (body.description as string | null) ?? '';
    if (filters !== undefined) next.filters = filters;
    if (body.deleted !== undefined) next.deleted = body.deleted as boolean;
    rt.meta.insights.put([projectId, id], next);
    return next;
  });
  return json(200, serialize(rt.meta, insight));
};

export const deleteInsight: OpHandler = (item, rt) => {
  insightOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of an insight is not allowed. Use PATCH with {"deleted": true} to delete it.');
};
