/**
 * Organization roles and their members. A role's `feature_flags_access_level` (21 view, 37 edit) feeds the flag
 * permission rules in flag-permissions.ts.
 */
import { randomUUID } from 'node:crypto';
import { all } from '../../stores/lmdb-env.js';
import type { Role } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { empty, json } from '../reply.js';
import { checkText, MAX_LENGTH } from '../../domain/account-fields.js';
import { accessLevel, fieldValue, isOrgAdmin, userOf, userRef, userRefById } from './accounts.js';
import { bodyOf, nowIso, principalOf, type OpHandler } from './types.js';

function roleOf(meta: MetaStore, orgId: number, id: string | undefined): Role {
  const role = id ? meta.roles.get(id) : undefined;
  if (!role || role.organization_id !== orgId) throw Errors.notFound();
  return role;
}

export function rolesOfOrg(meta: MetaStore, orgId: number): Role[] {
  return all(meta.roles.getRange().map((e) => e.value).filter((r) => r.organization_id === orgId));
}

export function serializeRole(meta: MetaStore, role: Role): object {
  const associated: { id: number; key: string }[] = [];
  for (const { value } of meta.flagRoleAccess.getRange()) {
    if (value.role_id !== role.id) continue;
    const flag = meta.flags.get([value.project_id, value.feature_flag_id]);
    if (flag && !flag.deleted) associated.push({ id: flag.id, key: flag.key });
  }
  return {
    id: role.id,
    name: role.name,
    feature_flags_access_level: role.feature_flags_access_level,
    created_at: role.created_at,
    created_by: userRefById(meta, role.created_by),
    members: role.members.map((m) => serializeMembership(meta, role, m)),
    associated_flags: associated,
  };
}

function serializeMembership(meta: MetaStore, role: Role, m: Role['members'][number]): object {
  return { id: m.id, role_id: role.id, user: userRefById(meta, m.user_id), joined_at: m.joined_at, updated_at: m.updated_at };
}

function requireAdminOf(meta: MetaStore, userId: number) {
  const user = userOf(meta, userId);
  if (!isOrgAdmin(user)) throw Errors.permissionDenied('Your organization access level is insufficient.');
  return user;
}

function roleName(body: Record<string, unknown>, meta: MetaStore, orgId: number, exceptId?: string): string {
  const name = fieldValue(checkText('name', body.name, { max: MAX_LENGTH.roleName, required: true }))!;
  for (const r of rolesOfOrg(meta, orgId)) {
    if (r.id !== exceptId && r.name.toLowerCase() === name.toLowerCase()) throw Errors.validation('name', 'unique', 'There is already a role with this name.');
  }
  return name;
}

export const listRoles: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const roles = rolesOfOrg(rt.meta, user.organization_id).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return json(200, paginate(roles.map((r) => serializeRole(rt.meta, r)), item.meta));
};

export const createRole: OpHandler = async (item, rt) => {
  const user = requireAdminOf(rt.meta, principalOf(item).userId);
  const body = bodyOf(item);
  const role = await rt.meta.write(() => {
    const org = rt.meta.organizations.get(user.organization_id)!;
    const name = roleName(body, rt.meta, org.id);
    const level = body.feature_flags_access_level === undefined ? org.feature_flags_access_level : accessLevel(body.feature_flags_access_level);
    const r: Role = { id: randomUUID(), organization_id: org.id, name, feature_flags_access_level: level, created_at: nowIso(), created_by: user.id, members: [] };
    rt.meta.roles.put(r.id, r);
    return r;
  });
  return json(201, serializeRole(rt.meta, role));
};

export const retrieveRole: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  return json(200, serializeRole(rt.meta, roleOf(rt.meta, user.organization_id, item.params.id)));
};

export const updateRole: OpHandler = async (item, rt) => {
  const user = requireAdminOf(rt.meta, principalOf(item).userId);
  const body = bodyOf(item);
  const role = await rt.meta.write(() => {
    const r = { ...roleOf(rt.meta, user.organization_id, item.params.id) };
    if (body.name !== undefined) r.name = roleName(body, rt.meta, user.organization_id, r.id);
    if (body.feature_flags_access_level !== undefined) r.feature_flags_access_level = accessLevel(body.feature_flags_access_level);
    rt.meta.roles.put(r.id, r);
    return r;
  });
  return json(200, serializeRole(rt.meta, role));
};

export const deleteRole: OpHandler = async (item, rt) => {
  const user = requireAdminOf(rt.meta, principalOf(item).userId);
  await rt.meta.write(() => {
    const r = roleOf(rt.meta, user.organization_id, item.params.id);
    rt.meta.roles.remove(r.id);
    // Role access rows of a deleted role no longer grant anything; remove them with it.
    for (const { key, value } of rt.meta.flagRoleAccess.getRange()) if (value.role_id === r.id) rt.meta.flagRoleAccess.remove(key);
  });
  return empty(204);
};

export const listRoleMemberships: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const role = roleOf(rt.meta, user.organization_id, item.params.id);
  return json(200, paginate(role.members.map((m) => serializeMembership(rt.meta, role, m)), item.meta));
};

export const createRoleMembership: OpHandler = async (item, rt) => {
  const admin = requireAdminOf(rt.meta, principalOf(item).userId);
  const body = bodyOf(item);
  const userUuid = body.user_uuid;
  if (typeof userUuid !== 'string' || !userUuid) throw Errors.required('user_uuid');
  const result = await rt.meta.write(() => {
    const role = { ...roleOf(rt.meta, admin.organization_id, item.params.id) };
    const member = all(rt.meta.users.getRange().map((e) => e.value)).find((u) => u.uuid === userUuid && u.organization_id === admin.organization_id);
    if (!member) throw Errors.validation('user_uuid', 'does_not_exist', 'User does not exist.');
    if (role.members.some((m) => m.user_id === member.id)) throw Errors.validation('user_uuid', 'unique', 'User is already part of the role.');
    const now = nowIso();
    const membership = { id: randomUUID(), user_id: member.id, joined_at: now, updated_at: now };
    role.members = [...role.members, membership];
    rt.meta.roles.put(role.id, role);
    return { role, membership };
  });
  return json(201, { id: result.membership.id, role_id: result.role.id, user: userRef(rt.meta.users.get(result.membership.user_id)), joined_at: result.membership.joined_at, updated_at: result.membership.updated_at });
};

export const deleteRoleMembership: OpHandler = async (item, rt) => {
  const admin = requireAdminOf(rt.meta, principalOf(item).userId);
  await rt.meta.write(() => {
    const role = { ...roleOf(rt.meta, admin.organization_id, item.params.id) };
    const before = role.members.length;
    role.members = role.members.filter((m) => m.id !== item.params.membership_id);
    if (role.members.length === before) throw Errors.notFound();
    rt.meta.roles.put(role.id, role);
  });
  return empty(204);
};
