/**
 * Who may change a flag (PostHog's RBAC rules, ingestion-and-api.md §4.4–4.5). Organization admins and a flag's
 * creator always may; otherwise the organization's default access level applies unless the user's roles say more:
 * 37 ("can always edit") allows, 21 ("can only view") allows only flags one of the user's roles was given access to.
 */
import { ACCESS_LEVEL_EDIT, type FeatureFlag, type User } from '../../domain/model.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { isOrgAdmin } from './accounts.js';
import { rolesOfOrg } from './roles.js';

function rolesOfUser(meta: MetaStore, user: User) {
  return rolesOfOrg(meta, user.organization_id).filter((r) => r.members.some((m) => m.user_id === user.id));
}

function orgLevel(meta: MetaStore, user: User): number {
  return meta.organizations.get(user.organization_id)?.feature_flags_access_level ?? ACCESS_LEVEL_EDIT;
}

export function canEditFlag(meta: MetaStore, user: User, flag: FeatureFlag): boolean {
  if (isOrgAdmin(user) || flag.created_by === user.id) return true;
  if (orgLevel(meta, user) >= ACCESS_LEVEL_EDIT) return true;
  const roles = rolesOfUser(meta, user);
  if (roles.some((r) => r.feature_flags_access_level >= ACCESS_LEVEL_EDIT)) return true;
  const roleIds = new Set(roles.map((r) => r.id));
  for (const { value } of meta.flagRoleAccess.getRange({ start: [flag.project_id, 0], end: [flag.project_id, Number.MAX_SAFE_INTEGER] })) {
    if (value.feature_flag_id === flag.id && roleIds.has(value.role_id)) return true;
  }
  return false;
}

export function canEditFlagRoles(meta: MetaStore, user: User, flag: FeatureFlag): boolean {
  if (isOrgAdmin(user) || flag.created_by === user.id) return true;
  if (orgLevel(meta, user) >= ACCESS_LEVEL_EDIT) return true;
  return rolesOfUser(meta, user).some((r) => r.feature_flags_access_level >= ACCESS_LEVEL_EDIT);
}
