/**
 * PostHog's annotations API (`/api/projects/:id/annotations/`): notes on a date that time-series charts draw. An
 * annotation belongs to one insight (`scope: dashboard_item`), one dashboard, the project, or the organization (then
 * every project of it lists it). List (newest date first, paginated; `scope`, `dashboardItemId`, `search`,
 * `after`/`before` on creation, `deleted`), create, retrieve, PATCH/PUT (`deleted: true` hides it), DELETE.
 */
import type { Annotation, Project } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { empty, json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { answering } from './insights.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

type Scope = Annotation['scope'];

function projectOf(rt: WorkerRuntime, team: number): Project {
  const p = rt.meta.projects.get(team);
  if (!p) throw Errors.notFound();
  return p;
}

export function serializeAnnotation(meta: MetaStore, a: Annotation): Record<string, unknown> {
  const insight = a.dashboard_item === null ? undefined : meta.insights.get([a.project_id, a.dashboard_item]);
  const dashboard = a.dashboard_id === null ? undefined : meta.dashboards.get([a.project_id, a.dashboard_id]);
  return {
    id: a.id,
    content: a.content,
    date_marker: a.date_marker,
    creation_type: a.creation_type,
    dashboard_item: a.dashboard_item,
    dashboard_id: a.dashboard_id,
    dashboard_name: dashboard?.name ?? null,
    insight_short_id: insight?.short_id ?? null,
    insight_name: insight?.name || null,
    insight_derived_name: null,
    created_by: userRefById(meta, a.created_by),
    created_at: a.created_at,
    updated_at: a.updated_at,
    deleted: a.deleted,
    scope: a.scope,
    is_emoji: a.is_emoji,
    emoji: a.emoji,
    recording_id: null,
  };
}

/** Annotations the project sees: its own, and its organization's organization-wide ones. */
function visible(rt: WorkerRuntime, project: Project): Annotation[] {
  return rt.meta.annotationsOf(project.organization_id).filter((a) => a.project_id === project.id || a.scope === 'organization');
}

function annotationOf(rt: WorkerRuntime, project: Project, id: number): Annotation {
  const a = rt.meta.annotations.get([project.organization_id, id]);
  if (!a || (a.project_id !== project.id && a.scope !== 'organization')) throw Errors.notFound();
  return a;
}

function dateOf(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  const ms = Date.parse(String(v));
  if (Number.isNaN(ms)) throw Errors.validation('date_marker', 'invalid', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].');
  return new Date(ms).toISOString();
}

/** The insight and dashboard an annotation names must be the project's. */
function checkReferences(rt: WorkerRuntime, team: number, a: Pick<Annotation, 'dashboard_item' | 'dashboard_id'>): void {
  if (a.dashboard_item !== null && !rt.meta.insights.get([team, a.dashboard_item])) {
    throw Errors.validation('dashboard_item', 'does_not_exist', `Invalid pk "${a.dashboard_item}" - object does not exist.`);
  }
  if (a.dashboard_id !== null && !rt.meta.dashboards.get([team, a.dashboard_id])) {
    throw Errors.validation('dashboard_id', 'does_not_exist', `Invalid pk "${a.dashboard_id}" - object does not exist.`);
  }
}

const truthy = (v: string | undefined) => v !== undefined && ['true', '1', 'yes', 'on'].includes(v.toLowerCase());

export const listAnnotations: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  const project = projectOf(rt, projectIdOf(item));
  const q = item.meta.query;
  const search = q.search?.toLowerCase() ?? '';
  const list = visible(rt, project).filter((a) => (q.deleted === undefined ? !a.deleted : a.deleted === truthy(q.deleted))
    && (q.scope === undefined || a.scope === q.scope)
    && (q.dashboardItemId === undefined || String(a.dashboard_item) === q.dashboardItemId)
    && (q.after === undefined || a.created_at > q.after)
    && (q.before === undefined || a.created_at < q.before)
    && (search === '' || a.content.toLowerCase().includes(search)));
  // Newest date first; annotations without a date last.
  list.sort((a, b) => (b.date_marker ?? '').localeCompare(a.date_marker ?? '') || b.id - a.id);
  return json(200, paginate(list.map((a) => serializeAnnotation(rt.meta, a)), item.meta));
};

export const retrieveAnnotation: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  const project = projectOf(rt, projectIdOf(item));
  return json(200, serializeAnnotation(rt.meta, annotationOf(rt, project, intParam(item, 'id'))));
};

export const createAnnotation: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const body = bodyOf(item);
  const created = await rt.meta.write(() => {
    const project = projectOf(rt, team);
    const now = nowIso();
    const dashboardItem = (body.dashboard_item as number | null | undefined) ?? null;
    const record: Annotation = {
      id: rt.meta.nextId('annotation'), project_id: team, organization_id: project.organization_id,
      content: (body.content as string | null | undefined) ?? '', date_marker: dateOf(body.date_marker), creation_type: 'USR',
      scope: (body.scope as Scope | undefined) ?? (dashboardItem !== null ? 'dashboard_item' : 'project'),
      dashboard_item: dashboardItem, dashboard_id: (body.dashboard_id as number | null | undefined) ?? null,
      is_emoji: body.is_emoji === true, emoji: (body.emoji as string | null | undefined) ?? null,
      created_by: principalOf(item).userId, created_at: now, updated_at: now, deleted: body.deleted === true,
    };
    checkReferences(rt, team, record);
    rt.meta.annotations.put([project.organization_id, record.id], record);
    return record;
  });
  return json(201, serializeAnnotation(rt.meta, created));
});

export const updateAnnotation: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const body = bodyOf(item);
  const updated = await rt.meta.write(() => {
    const project = projectOf(rt, team);
    const before = annotationOf(rt, project, intParam(item, 'id'));
    const next: Annotation = {
      ...before,
      ...(body.content !== undefined ? { content: (body.content as string | null) ?? '' } : {}),
      ...(body.date_marker !== undefined ? { date_marker: dateOf(body.date_marker) } : {}),
      ...(body.scope !== undefined ? { scope: body.scope as Scope } : {}),
      ...(body.dashboard_item !== undefined ? { dashboard_item: body.dashboard_item as number | null } : {}),
      ...(body.dashboard_id !== undefined ? { dashboard_id: body.dashboard_id as number | null } : {}),
      ...(body.deleted !== undefined ? { deleted: body.deleted as boolean } : {}),
      ...(body.is_emoji !== undefined ? { is_emoji: body.is_emoji === true } : {}),
      ...(body.emoji !== undefined ? { emoji: body.emoji as string | null } : {}),
      updated_at: nowIso(),
    };
    checkReferences(rt, before.project_id, next);
    rt.meta.annotations.put([project.organization_id, next.id], next);
    return next;
  });
  return json(200, serializeAnnotation(rt.meta, updated));
});

export const deleteAnnotation: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  await rt.meta.write(() => {
    const project = projectOf(rt, team);
    const a = annotationOf(rt, project, intParam(item, 'id'));
    rt.meta.annotations.remove([project.organization_id, a.id]);
  });
  return empty(204);
});
