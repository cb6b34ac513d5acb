/** Feature flag role access: which roles may edit a flag when the organization default is "view only". */
import type { FeatureFlag, FlagRoleAccess, User } from '../../domain/model.js';
import { all } from '../../stores/lmdb-env.js';
import { Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { empty, json } from '../reply.js';
import { userOf } from './accounts.js';
import { serializeFlag } from './feature-flags.js';
import { canEditFlagRoles } from './flag-permissions.js';
import { serializeRole } from './roles.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

function flagFor(meta: MetaStore, projectId: number, id: number): FeatureFlag {
  const flag = meta.flags.get([projectId, id]);
  if (!flag || flag.deleted) throw Errors.notFound('Feature flag not found.');
  return flag;
}

function accessRowsOf(meta: MetaStore, flag: FeatureFlag): FlagRoleAccess[] {
  return all(meta.flagRoleAccess
    .getRange({ start: [flag.project_id, 0], end: [flag.project_id, Number.MAX_SAFE_INTEGER] })
    .map((e) => e.value)
    .filter((row) => row.feature_flag_id === flag.id));
}

function serializeAccess(meta: MetaStore, row: FlagRoleAccess, flag: FeatureFlag, user: User): object {
  const role = meta.roles.get(row.role_id);
  return {
    id: row.id,
    feature_flag: serializeFlag(meta, flag, user),
    role: role ? serializeRole(meta, role) : null,
    role_id: row.role_id,
    added_at: row.added_at,
    updated_at: row.updated_at,
  };
}

function requireRoleEditor(meta: MetaStore, user: User, flag: FeatureFlag): void {
  if (!canEditFlagRoles(meta, user, flag)) throw Errors.permissionDenied("You can't edit roles for this feature flag.");
}

export const listRoleAccess: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const flag = flagFor(rt.meta, projectIdOf(item), intParam(item, 'id', 'Feature flag not found.'));
  const rows = accessRowsOf(rt.meta, flag).sort((a, b) => a.id - b.id);
  return json(200, paginate(rows.map((r) => serializeAccess(rt.meta, r, flag, user)), item.meta));
};

export const createRoleAccess: OpHandler = async (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const projectId = projectIdOf(item);
  const flagId = intParam(item, 'id', 'Feature flag not found.');
  const roleId = bodyOf(item).role_id;
  if (roleId === undefined || roleId === null || roleId === '') throw Errors.required('role_id');
  if (typeof roleId !== 'string') throw Errors.validation('role_id', 'invalid', 'Must be a valid UUID.');
  const { row, flag } = await rt.meta.write(() => {
    const flag = flagFor(rt.meta, projectId, flagId);
    requireRoleEditor(rt.meta, user, flag);
    const role = rt.meta.roles.get(roleId);
    if (!role || role.organization_id !== user.organization_id) throw Errors.notFound('Role not found.');
    if (accessRowsOf(rt.meta, flag).some((r) => r.role_id === roleId)) {
      throw Errors.validation('role_id', 'unique', 'This role already has access to this feature flag.');
    }
    const now = nowIso();
    const row: FlagRoleAccess = { id: rt.meta.nextId('feature_flag_role_access'), project_id: projectId, feature_flag_id: flag.id, role_id: roleId, added_at: now, updated_at: now };
    rt.meta.flagRoleAccess.put([projectId, row.id], row);
    return { row, flag };
  });
  return json(201, serializeAccess(rt.meta, row, flag, user));
};

function accessRow(meta: MetaStore, flag: FeatureFlag, raw: string | undefined): FlagRoleAccess {
  const id = /^\d+$/.test(raw ?? '') ? Number(raw) : -1;
  const row = meta.flagRoleAccess.get([flag.project_id, id]);
  if (!row || row.feature_flag_id !== flag.id) throw Errors.notFound();
  return row;
}

export const retrieveRoleAccess: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const flag = flagFor(rt.meta, projectIdOf(item), intParam(item, 'id', 'Feature flag not found.'));
  return json(200, serializeAccess(rt.meta, accessRow(rt.meta, flag, item.params.access_id), flag, user));
};

export const deleteRoleAccess: OpHandler = async (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const projectId = projectIdOf(item);
  const flagId = intParam(item, 'id', 'Feature flag not found.');
  await rt.meta.write(() => {
    const flag = flagFor(rt.meta, projectId, flagId);
    requireRoleEditor(rt.meta, user, flag);
    const row = accessRow(rt.meta, flag, item.params.access_id);
    rt.meta.flagRoleAccess.remove([projectId, row.id]);
  });
  return empty(204);
};
