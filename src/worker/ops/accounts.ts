/**
 * Accounts: enough management to run more than one project. Users, organizations, projects, personal API keys,
 * organization members. Roles live in roles.ts.
 */
import { randomUUID } from 'node:crypto';
import { all } from '../../stores/lmdb-env.js';
import { ACCESS_LEVEL_EDIT, type Organization, type PersonalApiKey, type Project, type User } from '../../domain/model.js';
import { keyDigest, maskKey, newPersonalApiKey, newProjectApiKey } from '../../domain/secrets.js';
import { Errors } from '../../protocol/errors.js';
import type { AuthSnapshot } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { replicate } from '../replication.js';
import { json, empty } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { bodyOf, nowIso, principalOf, type OpHandler } from './types.js';

export const LEVEL_MEMBER = 1;
export const LEVEL_ADMIN = 8;
export const LEVEL_OWNER = 15;

// ---- writes used by the API and by first start-up (all must run inside meta.write) ----

export function createOrganization(meta: MetaStore, name: string): Organization {
  const org: Organization = { id: meta.nextId('organization'), uuid: randomUUID(), name, created_at: nowIso(), feature_flags_access_level: ACCESS_LEVEL_EDIT };
  meta.organizations.put(org.id, org);
  return org;
}

export function createUser(meta: MetaStore, org: Organization, fields: { email: string; first_name: string; level: number; currentProjectId: number | null }): User {
  const user: User = {
    id: meta.nextId('user'), uuid: randomUUID(), distinct_id: randomUUID(), first_name: fields.first_name,
    email: fields.email, organization_id: org.id, current_project_id: fields.currentProjectId,
    membership_level: fields.level, created_at: nowIso(),
  };
  meta.users.put(user.id, user);
  return user;
}

export function createProject(meta: MetaStore, orgId: number, name: string, apiToken: string = newProjectApiKey()): Project {
  if (meta.projectByToken(apiToken)) throw Errors.validation('api_token', 'unique', 'A project with this API token already exists.');
  const project: Project = { id: meta.nextId('project'), uuid: randomUUID(), organization_id: orgId, name, api_token: apiToken, created_at: nowIso(), timezone: 'UTC' };
  meta.projects.put(project.id, project);
  return project;
}

export function createPersonalKey(meta: MetaStore, userId: number, label: string, key: string = newPersonalApiKey()): { record: PersonalApiKey; key: string } {
  const digest = keyDigest(key);
  if (meta.personalKeys.get(digest)) throw Errors.validation('value', 'unique', 'This personal API key already exists.');
  const record: PersonalApiKey = { id: randomUUID(), user_id: userId, label, digest, mask_value: maskKey(key), created_at: nowIso(), last_used_at: null, scopes: ['*'] };
  meta.personalKeys.put(digest, record);
  return { record, key };
}

// ---- serializers ----

export function userRef(user: User | undefined | null): object | null {
  if (!user) return null;
  return { id: user.id, uuid: user.uuid, distinct_id: user.distinct_id, first_name: user.first_name, email: user.email };
}

export function userRefById(meta: MetaStore, id: number | null | undefined): object | null {
  return id == null ? null : userRef(meta.users.get(id));
}

function serializeOrganization(org: Organization, level: number): object {
  return { id: org.uuid, numeric_id: org.id, name: org.name, created_at: org.created_at, membership_level: level, feature_flags_access_level: org.feature_flags_access_level };
}

export function serializeProject(meta: MetaStore, p: Project): object {
  const org = meta.organizations.get(p.organization_id);
  return { id: p.id, uuid: p.uuid, organization: org?.uuid ?? null, api_token: p.api_token, name: p.name, created_at: p.created_at, timezone: p.timezone, test_account_filters: p.test_account_filters ?? [], is_demo: false };
}

function serializeKey(k: PersonalApiKey, plain?: string): object {
  const out: Record<string, unknown> = { id: k.id, label: k.label, mask_value: k.mask_value, created_at: k.created_at, last_used_at: k.last_used_at, user_id: k.user_id, scopes: k.scopes };
  if (plain) out.value = plain;
  return out;
}

function serializeMember(u: User): object {
  return { id: u.uuid, user: userRef(u), level: u.membership_level, joined_at: u.created_at };
}

// ---- helpers ----

export function userOf(meta: MetaStore, id: number): User {
  const user = meta.users.get(id);
  if (!user) throw Errors.notAuthenticated();
  return user;
}

function organizationOf(meta: MetaStore, user: User): Organization {
  const org = meta.organizations.get(user.organization_id);
  if (!org) throw Errors.notFound('Organization not found.');
  return org;
}

export function isOrgAdmin(user: User): boolean {
  return user.membership_level >= LEVEL_ADMIN;
}

export function requireAdmin(user: User): void {
  if (!isOrgAdmin(user)) throw Errors.permissionDenied('Your organization access level is insufficient.');
}

function requiredString(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  if (v === undefined || v === null) throw Errors.required(field);
  if (typeof v !== 'string' || v.trim() === '') throw Errors.validation(field, 'blank', 'This field may not be blank.');
  return v;
}

// ---- operations ----

export const me: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const org = organizationOf(rt.meta, user);
  const team = user.current_project_id == null ? null : rt.meta.projects.get(user.current_project_id);
  return json(200, {
    ...userRef(user),
    is_staff: false,
    organization: serializeOrganization(org, user.membership_level),
    organizations: [serializeOrganization(org, user.membership_level)],
    team: team ? serializeProject(rt.meta, team) : null,
  });
};

function projectsOfOrg(meta: MetaStore, orgId: number): Project[] {
  return all(meta.projects.getRange().map((e) => e.value).filter((p) => p.organization_id === orgId));
}

export const listProjects: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  return json(200, paginate(projectsOfOrg(rt.meta, user.organization_id).map((p) => serializeProject(rt.meta, p)), item.meta));
};

export const retrieveProject: OpHandler = (item, rt) => {
  const project = rt.meta.projects.get(principalOf(item).projectId ?? -1);
  if (!project) throw Errors.notFound('Project not found.');
  return json(200, serializeProject(rt.meta, project));
};

export const createProjectOp: OpHandler = async (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  requireAdmin(user);
  const name = requiredString(bodyOf(item), 'name');
  const project = await rt.meta.write(() => createProject(rt.meta, user.organization_id, name));
  await replicate(rt, { projects: true, projectId: project.id });
  return { ...json(201, serializeProject(rt.meta, project)), authChanged: true };
};

/**
 * Creates another organization with its own owner, project and keys. Quill has no self-serve sign-up; the owner of
 * an existing organization (an instance operator) does this, and hands the new owner their key.
 */
export const createOrganizationOp: OpHandler = async (item, rt) => {
  const caller = userOf(rt.meta, principalOf(item).userId);
  if (caller.membership_level < LEVEL_OWNER) throw Errors.permissionDenied('Only organization owners can create organizations.');
  const body = bodyOf(item);
  const name = requiredString(body, 'name');
  const email = typeof body.email === 'string' && body.email ? body.email : null;
  const result = await rt.meta.write(() => {
    const org = createOrganization(rt.meta, name);
    const project = createProject(rt.meta, org.id, 'Default project');
    const owner = createUser(rt.meta, org, { email: email ?? `owner-${org.id}@quill.local`, first_name: 'Owner', level: LEVEL_OWNER, currentProjectId: project.id });
    const key = createPersonalKey(rt.meta, owner.id, 'Created with the organization');
    return { org, project, owner, key: key.key };
  });
  await replicate(rt, { projects: true, projectId: result.project.id });
  return {
    ...json(201, {
      ...serializeOrganization(result.org, LEVEL_OWNER),
      project: serializeProject(rt.meta, result.project),
      owner: userRef(result.owner),
      personal_api_key: result.key,
    }),
    authChanged: true,
  };
};

export const retrieveOrganization: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  return json(200, serializeOrganization(organizationOf(rt.meta, user), user.membership_level));
};

export const updateOrganization: OpHandler = async (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  requireAdmin(user);
  const body = bodyOf(item);
  const org = await rt.meta.write(() => {
    const current = organizationOf(rt.meta, user);
    const next = { ...current };
    if (typeof body.name === 'string' && body.name.trim()) next.name = body.name;
    if (body.feature_flags_access_level !== undefined) next.feature_flags_access_level = accessLevel(body.feature_flags_access_level);
    rt.meta.organizations.put(next.id, next);
    return next;
  });
  return json(200, serializeOrganization(org, user.membership_level));
};

export function accessLevel(v: unknown): number {
  if (v !== 21 && v !== 37) throw Errors.validation('feature_flags_access_level', 'invalid_choice', `"${String(v)}" is not a valid choice.`);
  return v;
}

export const listMembers: OpHandler = (item, rt) => {
  const user = userOf(rt.meta, principalOf(item).userId);
  const members = all(rt.meta.users.getRange().map((e) => e.value).filter((u) => u.organization_id === user.organization_id));
  return json(200, paginate(members.map(serializeMember), item.meta));
};

/**
 * Adds a user to the caller's organization and returns the member with a first personal API key (Quill has no
 * e-mail invitations; this is how a second person gets access).
 */
export const createMember: OpHandler = async (item, rt) => {
  const admin = userOf(rt.meta, principalOf(item).userId);
  requireAdmin(admin);
  const body = bodyOf(item);
  const email = requiredString(body, 'email');
  const level = body.level === undefined ? LEVEL_MEMBER : body.level;
  if (level !== LEVEL_MEMBER && level !== LEVEL_ADMIN) throw Errors.validation('level', 'invalid_choice', `"${String(level)}" is not a valid choice.`);
  const result = await rt.meta.write(() => {
    for (const { value } of rt.meta.users.getRange()) {
      if (value.email.toLowerCase() === email.toLowerCase()) throw Errors.validation('email', 'unique', 'A user with this email already exists.');
    }
    const org = organizationOf(rt.meta, admin);
    const user = createUser(rt.meta, org, { email, first_name: typeof body.first_name === 'string' ? body.first_name : '', level, currentProjectId: admin.current_project_id });
    const key = createPersonalKey(rt.meta, user.id, 'Initial key');
    return { user, key: key.key };
  });
  return { ...json(201, { ...serializeMember(result.user), personal_api_key: result.key }), authChanged: true };
};

export const listPersonalKeys: OpHandler = (item, rt) => {
  const userId = principalOf(item).userId;
  const keys = all(rt.meta.personalKeys.getRange().map((e) => e.value).filter((k) => k.user_id === userId));
  keys.sort((a, b) => b.created_at.localeCompare(a.created_at));
  return json(200, keys.map((k) => serializeKey(k)));
};

export const createPersonalKeyOp: OpHandler = async (item, rt) => {
  const userId = principalOf(item).userId;
  const label = requiredString(bodyOf(item), 'label');
  const { record, key } = await rt.meta.write(() => createPersonalKey(rt.meta, userId, label));
  return { ...json(201, serializeKey(record, key)), authChanged: true };
};

function findKey(meta: MetaStore, userId: number, id: string): PersonalApiKey {
  for (const { value } of meta.personalKeys.getRange()) if (value.id === id && value.user_id === userId) return value;
  throw Errors.notFound();
}

export const retrievePersonalKey: OpHandler = (item, rt) =>
  json(200, serializeKey(findKey(rt.meta, principalOf(item).userId, item.params.id ?? '')));

export const deletePersonalKey: OpHandler = async (item, rt) => {
  const userId = principalOf(item).userId;
  await rt.meta.write(() => {
    const key = findKey(rt.meta, userId, item.params.id ?? '');
    rt.meta.personalKeys.remove(key.digest);
  });
  return { ...empty(204), authChanged: true };
};

/** The front's auth cache source (see AuthSnapshot). */
export function authSnapshot(rt: WorkerRuntime): AuthSnapshot {
  rt.meta.env.resetReadTxn();
  return {
    keys: all(rt.meta.personalKeys.getRange().map(({ value }) => ({ digest: value.digest, userId: value.user_id }))),
    users: all(rt.meta.users.getRange().map(({ value }) => ({ id: value.id, organizationId: value.organization_id, currentProjectId: value.current_project_id }))),
    projects: all(rt.meta.projects.getRange().map(({ value }) => ({ id: value.id, organizationId: value.organization_id }))),
  };
}
