/**
 * The feature-flag management API: list, create, retrieve, PATCH (including the soft delete), the refused hard
 * delete, and the activity log. Every change bumps `version`, is logged with field-level changes, and is
 * replicated into every worker's flag cache before the call returns.
 */
import { flagStatus, isSimpleFlag, simpleRolloutPercentage, validateFlagFilters } from '../../domain/flags/index.js';
import type { FeatureFlag, User } from '../../domain/model.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { replicate } from '../replication.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { flushUsageEverywhere } from '../flag-usage.js';
import { userOf, userRefById } from './accounts.js';
import { activityEndpoints, changesBetween, logActivity } from './activity-log.js';
import { experimentSetOf } from './experiments.js';
import { canEditFlag } from './flag-permissions.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
const MAX_KEY_LENGTH = 400;

/** Fields whose changes the activity log reports (PostHog excludes ids, timestamps, creator and derived fields). */
const LOGGED_FIELDS = [
  'name', 'key', 'filters', 'deleted', 'active', 'ensure_experience_continuity', 'rollback_conditions',
  'performed_rollback', 'evaluation_runtime', 'tags', 'is_remote_configuration',
] as const;

/** What a revert restores: what a person edits (not `deleted`, not rollback state, not the experiment's link). */
const REVERTED_FIELDS = ['name', 'key', 'filters', 'active', 'ensure_experience_continuity', 'evaluation_runtime', 'tags', 'is_remote_configuration'] as const;

/** Stored filters without `groups` are the legacy form: one condition with the legacy rollout column. */
export function effectiveFilters(flag: FeatureFlag): Record<string, unknown> {
  if (Array.isArray(flag.filters.groups)) return flag.filters;
  return { ...flag.filters, groups: [{ properties: flag.filters.properties ?? [], rollout_percentage: flag.rollout_percentage }] };
}

export function serializeFlag(meta: MetaStore, flag: FeatureFlag, user: User | null): Record<string, unknown> {
  const filters = effectiveFilters(flag);
  const simple = isSimpleFlag(filters);
  return {
    id: flag.id,
    name: flag.name,
    key: flag.key,
    filters,
    deleted: flag.deleted,
    active: flag.active,
    created_by: userRefById(meta, flag.created_by),
    created_at: flag.created_at,
    updated_at: flag.updated_at,
    is_simple_flag: simple,
    rollout_percentage: simple ? simpleRolloutPercentage(filters) : null,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    experiment_set: experimentSetOf(meta, flag),
    rollback_conditions: flag.rollback_conditions,
    performed_rollback: flag.performed_rollback,
    can_edit: user ? canEditFlag(meta, user, flag) : false,
    version: flag.version,
    evaluation_runtime: flag.evaluation_runtime ?? 'all',
    tags: flag.tags,
    surveys: [],
    features: [],
    usage_dashboard: null,
    analytics_dashboards: [],
    is_remote_configuration: flag.is_remote_configuration ?? false,
    // Quill stores payloads as given; it has no encrypted payloads (PostHog's are for remote-config secrets).
    has_encrypted_payloads: false,
    ...usageFields(meta, flag),
  };
}

/**
 * `last_called_at` (PostHog's field: when the flag was last evaluated or named by a `$feature_flag_called` event,
 * as the workers last flushed their counts, src/worker/flag-usage.ts) and `status` with its `status_reason`
 * (src/domain/flags/status.ts).
 */
export function usageFields(meta: MetaStore, flag: FeatureFlag): { last_called_at: string | null; status: string; status_reason: string } {
  const last = meta.flagLastCalled.get([flag.project_id, flag.id]) ?? null;
  const { status, reason } = flagStatus(flag, last, Date.now());
  return { last_called_at: last === null ? null : new Date(last).toISOString(), status, status_reason: reason };
}

export function flagOf(meta: MetaStore, projectId: number, id: number): FeatureFlag {
  const flag = meta.flags.get([projectId, id]);
  if (!flag) throw Errors.notFound();
  return flag;
}

function validKey(raw: unknown): string {
  if (raw === undefined || raw === null) throw Errors.required('key');
  if (typeof raw !== 'string') throw Errors.validation('key', 'invalid', 'Not a valid string.');
  if (raw === '') throw Errors.validation('key', 'blank', 'This field may not be blank.');
  if (raw.length > MAX_KEY_LENGTH) throw Errors.validation('key', 'max_length', `Ensure this field has no more than ${MAX_KEY_LENGTH} characters.`);
  if (!KEY_PATTERN.test(raw)) throw Errors.validation('key', 'invalid_key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.');
  return raw;
}

function checkFilters(rt: WorkerRuntime, projectId: number, filters: Record<string, unknown>): void {
  const cohorts = rt.meta.cohortsOf(projectId).filter((c) => !c.deleted);
  const error = validateFlagFilters(filters, {
    existingCohortIds: new Set(cohorts.map((c) => c.id)),
    isStaticCohort: (id) => cohorts.some((c) => c.id === id && c.is_static),
    groupTypes: rt.cache.groupTypeMapping(projectId),
  });
  if (error) throw new ApiError(400, 'validation_error', error.code, error.detail, error.attr);
}

/** Unique among non-deleted flags; soft-deleted flags holding the key are hard-deleted (PostHog does the same). */
function claimKey(meta: MetaStore, projectId: number, key: string, exceptId: number | null): void {
  for (const other of meta.flagsOf(projectId)) {
    if (other.key !== key || other.id === exceptId) continue;
    if (!other.deleted) throw Errors.validation('key', 'unique', 'There is already a feature flag with this key.');
    meta.flags.remove([projectId, other.id]);
  }
}

function objectOrEmpty(v: unknown, attr: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw Errors.validation(attr, 'invalid', 'Expected a dictionary of items.');
  return v as Record<string, unknown>;
}

/**
 * Also `GET /api/feature_flag/?token=<project key>`, the project-less legacy path that posthog-node 1.x polls for
 * its local evaluation (it reads `results`, keeps the active flags and evaluates `is_simple_flag` ones itself); the
 * front takes the project from `?token=`, else the user's current one.
 */
export const listFlags: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  await flushUsageEverywhere(rt);
  const user = userOf(rt.meta, principalOf(item).userId);
  const flags = rt.meta.flagsOf(projectId).filter((f) => !f.deleted);
  flags.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id - a.id);
  const q = item.meta.query;
  const search = q.search?.toLowerCase();
  // `active=STALE` (PostHog's filter): the flags ready for clean-up, stale or inactive (src/domain/flags/status.ts).
  const wantStale = q.active?.toUpperCase() === 'STALE';
  const status = q.status?.toLowerCase();
  const selected = flags.filter((f) =>
    (!search || f.key.toLowerCase().includes(search) || f.name.toLowerCase().includes(search)) &&
    (q.active === undefined || wantStale || String(f.active) === q.active.toLowerCase()));
  let rows = selected.map((f) => serializeFlag(rt.meta, f, user));
  if (wantStale) rows = rows.filter((r) => r.status === 'stale' || r.status === 'inactive');
  if (status) rows = rows.filter((r) => r.status === status);
  return json(200, paginate(rows, item.meta));
};

export const retrieveFlag: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  await flushUsageEverywhere(rt);
  const flag = flagOf(rt.meta, projectId, intParam(item, 'id'));
  return json(200, serializeFlag(rt.meta, flag, userOf(rt.meta, principalOf(item).userId)));
};

export const createFlag: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  const body = bodyOf(item);
  const key = validKey(body.key);
  const filters = objectOrEmpty(body.filters, 'filters');
  checkFilters(rt, projectId, filters);
  const now = nowIso();
  const flag = await rt.meta.write(() => {
    claimKey(rt.meta, projectId, key, null);
    const active = body.active === undefined ? true : Boolean(body.active);
    const record: FeatureFlag = {
      id: rt.meta.nextId('feature_flag'),
      project_id: projectId,
      key,
      name: typeof body.name === 'string' ? body.name : '',
      filters,
      deleted: body.deleted === true,
      active,
      created_by: user.id,
      created_at: typeof body.created_at === 'string' ? body.created_at : now,
      updated_at: now,
      ensure_experience_continuity: body.ensure_experience_continuity === true,
      rollback_conditions: body.rollback_conditions ?? null,
      performed_rollback: active ? false : (body.performed_rollback as boolean | null | undefined) ?? null,
      rollout_percentage: null,
      version: 1,
      evaluation_runtime: typeof body.evaluation_runtime === 'string' ? body.evaluation_runtime : null,
      tags: Array.isArray(body.tags) ? (body.tags as string[]) : [],
      is_remote_configuration: (body.is_remote_configuration as boolean | null | undefined) ?? false,
    };
    rt.meta.flags.put([projectId, record.id], record);
    rt.meta.flagVersions.put([projectId, record.id, record.version], record);
    logActivity(rt.meta, {
      project_id: projectId, user_id: user.id, activity: 'created', scope: 'FeatureFlag', item_id: String(record.id),
      detail: { changes: null, merge: null, trigger: null, name: record.key, short_id: null, type: null, version: record.version },
    });
    return record;
  });
  await replicate(rt, { projectId });
  return json(201, serializeFlag(rt.meta, flag, user));
};

/** What made a change, when it was not a person editing the flag (PostHog's activity `detail.trigger`). */
export interface ChangeTrigger {
  job_type: 'scheduled_change' | 'revert';
  job_id: string | null;
  payload: unknown;
}

/**
 * Applies a PATCH body to a flag: validation, the new version, its snapshot (what revert reads) and the activity
 * entry, field by field. Only inside `rt.meta.write`. `user` null: the node itself (a scheduled change), which
 * skips the edit-permission check (it was checked when the change was scheduled) and is logged as `userId`.
 */
export function patchFlagInTxn(
  rt: WorkerRuntime, projectId: number, id: number, body: Record<string, unknown>,
  by: { user: User | null; userId: number | null; trigger: ChangeTrigger | null },
): FeatureFlag {
  const before = flagOf(rt.meta, projectId, id);
  if (by.user && !canEditFlag(rt.meta, by.user, before)) throw Errors.permissionDenied("You don't have edit permissions for this feature flag.");
  const next: FeatureFlag = { ...before };
  if (body.key !== undefined && body.key !== before.key) {
    next.key = validKey(body.key);
    claimKey(rt.meta, projectId, next.key, id);
  }
  if (body.name !== undefined) next.name = typeof body.name === 'string' ? body.name : '';
  if (body.filters !== undefined) {
    const incoming = objectOrEmpty(body.filters, 'filters');
    // A PATCH whose filters lack `groups` keeps the existing release conditions.
    next.filters = Array.isArray(incoming.groups) || !Array.isArray(before.filters.groups) ? incoming : { ...incoming, groups: before.filters.groups };
    checkFilters(rt, projectId, next.filters);
  }
  if (body.deleted !== undefined) next.deleted = Boolean(body.deleted);
  if (!before.deleted && next.deleted) {
    const experiments = experimentSetOf(rt.meta, before);
    if (experiments.length > 0) {
      throw Errors.validation(null, 'invalid_input', `Cannot delete a feature flag that experiments use (${experiments.join(', ')}): delete the experiments first.`);
    }
  }
  if (body.active !== undefined) next.active = Boolean(body.active);
  if (body.ensure_experience_continuity !== undefined) next.ensure_experience_continuity = Boolean(body.ensure_experience_continuity);
  if (body.rollback_conditions !== undefined) next.rollback_conditions = body.rollback_conditions;
  if (body.performed_rollback !== undefined) next.performed_rollback = body.performed_rollback as boolean | null;
  if (body.active === true) next.performed_rollback = false;
  if (body.created_at !== undefined && typeof body.created_at === 'string') next.created_at = body.created_at;
  if (body.evaluation_runtime !== undefined) next.evaluation_runtime = typeof body.evaluation_runtime === 'string' ? body.evaluation_runtime : null;
  if (body.tags !== undefined) next.tags = Array.isArray(body.tags) ? (body.tags as string[]) : [];
  if (body.is_remote_configuration !== undefined) next.is_remote_configuration = body.is_remote_configuration as boolean | null;

  const changes = changesBetween('FeatureFlag', before as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, LOGGED_FIELDS);
  if (changes.length === 0 && body.created_at === undefined) return before;
  next.version = before.version + 1;
  next.updated_at = nowIso();
  // Versions saved before Quill kept them: the one being replaced is kept now, so it can be reverted to.
  if (!rt.meta.flagVersions.get([projectId, id, before.version])) rt.meta.flagVersions.put([projectId, id, before.version], before);
  rt.meta.flagVersions.put([projectId, id, next.version], next);
  rt.meta.flags.put([projectId, id], next);
  logActivity(rt.meta, {
    project_id: projectId, user_id: by.user?.id ?? by.userId, activity: !before.deleted && next.deleted ? 'deleted' : 'updated', scope: 'FeatureFlag',
    item_id: String(id), detail: { changes, merge: null, trigger: by.trigger, name: next.key, short_id: null, type: null, version: next.version },
  });
  return next;
}

export const updateFlag: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const flag = await rt.meta.write(() => patchFlagInTxn(rt, projectId, id, body, { user, userId: user.id, trigger: null }));
  await replicate(rt, { projectId });
  return json(200, serializeFlag(rt.meta, flag, user));
};

/**
 * `POST …/feature_flags/:id/revert {version}` (Quill's): the flag's fields as they were at that version (name,
 * key, filters with payloads, active, continuity, runtime, tags, remote configuration), saved as a new version and
 * logged like any change, with `trigger: {job_type: "revert", payload: {version}}`. The versions Quill keeps are
 * the ones saved since it keeps them (each change also keeps the version it replaces).
 */
export const revertFlag: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  const id = intParam(item, 'id');
  const version = bodyOf(item).version;
  if (!Number.isInteger(version) || (version as number) < 1) throw Errors.validation('version', 'invalid_input', 'version must be a positive integer.');
  const flag = await rt.meta.write(() => {
    const current = flagOf(rt.meta, projectId, id);
    const target = rt.meta.flagVersions.get([projectId, id, version as number]) ?? (current.version === version ? current : undefined);
    if (!target) throw Errors.validation('version', 'invalid_input', `Version ${version} of this flag is not kept (it was saved before Quill kept versions).`);
    const body: Record<string, unknown> = {};
    for (const field of REVERTED_FIELDS) body[field] = (target as unknown as Record<string, unknown>)[field];
    return patchFlagInTxn(rt, projectId, id, body, { user, userId: user.id, trigger: { job_type: 'revert', job_id: null, payload: { version } } });
  });
  await replicate(rt, { projectId });
  return json(200, serializeFlag(rt.meta, flag, user));
};

/** Hard delete is not allowed (the seed's state table): the flag stays as it is. */
export const deleteFlag: OpHandler = (item, rt) => {
  flagOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of a feature flag is not allowed. Use PATCH with {"deleted": true} to delete it.');
};

/**
 * `GET …/feature_flags/:id_or_key/remote_config/` (posthog-node `getRemoteConfigPayload`): the `true` payload of a
 * remote-configuration flag as PostHog answers it, the stored JSON text as a JSON string (`null` without one), and
 * a bodiless 404 for any other flag. The front took the project from `?token=` (which posthog-node sends) when
 * given, as PostHog's `@current` resolution does for keys with access to several projects.
 */
export const remoteConfigPayload: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  const ref = item.params.id ?? '';
  const flag = /^\d+$/.test(ref)
    ? rt.meta.flags.get([projectId, Number(ref)])
    : rt.meta.flagsOf(projectId).find((f) => f.key === ref && !f.deleted);
  if (!flag || flag.deleted || flag.is_remote_configuration !== true) throw Errors.notFoundEmpty();
  const payloads = flag.filters.payloads as Record<string, unknown> | undefined;
  return json(200, payloads?.true || null);
};

const flagActivityEndpoints = activityEndpoints('FeatureFlag', (rt, projectId, id) => flagOf(rt.meta, projectId, id));
export const flagActivity = flagActivityEndpoints.item;
export const allFlagsActivity = flagActivityEndpoints.all;
