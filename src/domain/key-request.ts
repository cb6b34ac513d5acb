/**
 * The rights asked for when a personal API key is created (`scopes`, `scoped_teams`, `scoped_organizations`),
 * checked as PostHog's serializer checks them: each scope `*` or `<object>:read|write`, the projects and the
 * organizations ones the user belongs to. A field left out takes `inherited` (the creating key's own rights).
 */
import type { FieldProblem } from './account-fields.js';
import { isValidScope, type KeyReach } from './scopes.js';

export interface UserReach {
  /** Ids of the projects of the user's organization. */
  projectIds: ReadonlySet<number>;
  organizationUuid: string;
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

const invalid = (attr: string, detail: string, code: FieldProblem['code'] = 'invalid_input'): { problem: FieldProblem } =>
  ({ problem: { attr, code, detail } });

function typeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  return 'dict';
}

/** A DRF ListField: a JSON array, or the `not_a_list` error. */
function listOf(attr: string, value: unknown): unknown[] | { problem: FieldProblem } {
  if (Array.isArray(value)) return value;
  if (value === null) return invalid(attr, 'This field may not be null.', 'null');
  return invalid(attr, `Expected a list of items but got type "${typeName(value)}".`, 'not_a_list');
}

export function checkKeyReach(body: Record<string, unknown>, user: UserReach, inherited: KeyReach): { reach: KeyReach } | { problem: FieldProblem } {
  let scopes = inherited.scopes;
  if (body.scopes !== undefined) {
    const list = listOf('scopes', body.scopes);
    if (!Array.isArray(list)) return list;
    for (const [i, scope] of list.entries()) {
      if (typeof scope !== 'string') return invalid(`scopes__${i}`, 'Not a valid string.');
      if (!isValidScope(scope)) return invalid('scopes', `Invalid scope: ${scope}`);
    }
    scopes = [...new Set(list as string[])];
  }

  let scopedTeams = inherited.scopedTeams;
  if (body.scoped_teams !== undefined) {
    const list = listOf('scoped_teams', body.scoped_teams);
    if (!Array.isArray(list)) return list;
    const ids: number[] = [];
    for (const [i, id] of list.entries()) {
      const n = typeof id === 'string' && /^-?\d+$/.test(id.trim()) ? Number(id) : id;
      if (typeof n !== 'number' || !Number.isInteger(n)) return invalid(`scoped_teams__${i}`, 'A valid integer is required.');
      ids.push(n);
    }
    if (ids.some((id) => !user.projectIds.has(id))) return invalid('scoped_teams', 'You must be a member of all teams that you are scoping the key to.');
    scopedTeams = ids.length > 0 ? [...new Set(ids)] : null;
  }

  let scopedOrganizations = inherited.scopedOrganizations;
  if (body.scoped_organizations !== undefined) {
    const list = listOf('scoped_organizations', body.scoped_organizations);
    if (!Array.isArray(list)) return list;
    for (const [i, id] of list.entries()) {
      if (typeof id !== 'string') return invalid(`scoped_organizations__${i}`, 'Not a valid string.');
      if (!UUID.test(id)) return invalid('scoped_organizations', 'Invalid organization UUID');
    }
    const uuids = (list as string[]).map((id) => id.toLowerCase());
    if (uuids.some((id) => id.replace(/-/g, '') !== user.organizationUuid.replace(/-/g, ''))) {
      return invalid('scoped_organizations', 'You must be a member of all organizations that you are scoping the key to.');
    }
    scopedOrganizations = uuids.length > 0 ? [user.organizationUuid] : null;
  }
  return { reach: { scopes, scopedTeams, scopedOrganizations } };
}
