/**
 * Accounts: enough management to run more than one project. Users, organizations, projects, personal API keys,
 * organization members. Roles live in roles.ts.
 */
import { randomUUID } from 'node:crypto';
import { all } from '../../stores/lmdb-env.js';
import { ACCESS_LEVEL_EDIT, type Organization, type PersonalApiKey, type Project, type User } from '../../domain/model.js';
import { checkEmail, checkText, MAX_LENGTH, type Checked } from '../../domain/account-fields.js';
import { checkKeyReach } from '../../domain/key-request.js';
import { FULL_ACCESS, firstUngranted, reachWithin, restrictionWithin, type KeyReach } from '../../domain/scopes.js';
import { keyDigest, maskKey, newPersonalApiKey, newProjectApiKey } from '../../domain/secrets.js';
import { hashPassword, passwordProblem } from '../../domain/passwords.js';
import { recordingSettingsOf, serializeRecordingSettings } from '../../domain/recordings/settings.js';
import { Errors } from '../../protocol/errors.js';
import type { AuthKey, AuthKeyLookup, AuthSnapshot, AuthUser, TaskItem } from '../../protocol/worker-messages.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { paginate } from '../pagination.js';
import { replicate } from '../replication.js';
import { json, empty } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { bodyOf, nowIso, principalOf, type OpHandler } from './types.js';
import { sdkSettingsOf } from '../../domain/sdk-settings.js';

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
  const project: Project = { id: meta.nextId('project'), uuid: randomUUID(), organization_id: orgId, name, api_token: apiToken, created_at: nowIso(), timezone: 'UTC', event_retention_days: null };
  meta.projects.put(project.id, project);
  return project;
}

const FULL_REACH: KeyReach = { scopes: [FULL_ACCESS], scopedTeams: null, scopedOrganizations: null };

export function createPersonalKey(
  meta: MetaStore, userId: number, label: string, key: string = newPersonalApiKey(), reach: KeyReach = FULL_REACH,
): { record: PersonalApiKey; key: string } {
  const digest = keyDigest(key);
  if (meta.personalKeys.get(digest)) throw Errors.validation('value', 'unique', 'This personal API key already exists.');
  const record: PersonalApiKey = {
    id: randomUUID(), user_id: userId, label, digest, mask_value: maskKey(key), created_at: nowIso(), last_used_at: null,
    scopes: [...reach.scopes], scoped_teams: reach.scopedTeams ? [...reach.scopedTeams] : null,
    scoped_organizations: reach.scopedOrganizations ? [...reach.scopedOrganizations] : null,
  };
  meta.personalKeys.put(digest, record);
  return { record, key };
}

export function reachOf(k: PersonalApiKey): KeyReach {
  return { scopes: k.scopes, scopedTeams: k.scoped_teams ?? null, scopedOrganizations: k.scoped_organizations ?? null };
}

/** The checked value of an account field (src/domain/account-fields.ts), or its DRF-style 400. */
export function fieldValue(checked: Checked): string | undefined {
  if ('problem' in checked) throw Errors.validation(checked.problem.attr, checked.problem.code, checked.problem.detail);
  return checked.value;
}

const requiredText = (body: Record<string, unknown>, attr: string, max: number): string =>
  fieldValue(checkText(attr, body[attr], { max, required: true }))!;

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
  return { id: p.id, uuid: p.uuid, organization: org?.uuid ?? null, api_token: p.api_token, name: p.name, created_at: p.created_at, timezone: p.timezone, test_account_filters: p.test_account_filters ?? [], path_cleaning_filters: p.path_cleaning_filters ?? [], event_retention_days: p.event_retention_days ?? null, ...sdkSettingsOf(p.sdk_settings), is_demo: false, ...serializeRecordingSettings(recordingSettingsOf(p.recordings)) };
}

function serializeKey(k: PersonalApiKey, plain?: string): object {
  const out: Record<string, unknown> = {
    id: k.id, label: k.label, mask_value: k.mask_value, created_at: k.created_at, last_used_at: k.last_used_at, user_id: k.user_id,
    scopes: k.scopes, scoped_teams: k.scoped_teams ?? [], scoped_organizations: k.scoped_organizations ?? [],
  };
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
    has_password: Boolean(user.password_hash),
    // Only for the console's session: the token its state-changing requests echo (readable by same-origin pages only).
    ...(item.principal?.sessionDigest ? { csrf_token: rt.meta.sessions.get(item.principal.sessionDigest)?.csrf ?? null } : {}),
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
  const name = requiredText(bodyOf(item), 'name', MAX_LENGTH.projectName);
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
  const name = requiredText(body, 'name', MAX_LENGTH.organizationName);
  const email = fieldValue(checkEmail('email', body.email, false)) ?? null;
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
  const name = fieldValue(checkText('name', body.name, { max: MAX_LENGTH.organizationName, required: false }));
  const org = await rt.meta.write(() => {
    const current = organizationOf(rt.meta, user);
    const next = { ...current };
    if (name !== undefined) next.name = name;
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
 * e-mail invitations; this is how a second person gets access), with a console password when `password` is given.
 */
export const createMember: OpHandler = async (item, rt) => {
  const admin = userOf(rt.meta, principalOf(item).userId);
  requireAdmin(admin);
  const body = bodyOf(item);
  const email = fieldValue(checkEmail('email', body.email, true))!;
  const firstName = fieldValue(checkText('first_name', body.first_name, { max: MAX_LENGTH.firstName, required: false, allowBlank: true })) ?? '';
  const level = body.level === undefined ? LEVEL_MEMBER : body.level;
  if (level !== LEVEL_MEMBER && level !== LEVEL_ADMIN) throw Errors.validation('level', 'invalid_choice', `"${String(level)}" is not a valid choice.`);
  // An optional console password (else the member signs in with keys only until one is set).
  let passwordHash: string | null = null;
  if (body.password !== undefined) {
    const problem = passwordProblem(body.password);
    if (problem) throw Errors.validation('password', 'invalid_input', problem);
    passwordHash = await hashPassword(body.password as string);
  }
  const result = await rt.meta.write(() => {
    for (const { value } of rt.meta.users.getRange()) {
      if (value.email.toLowerCase() === email.toLowerCase()) throw Errors.validation('email', 'unique', 'A user with this email already exists.');
    }
    const org = organizationOf(rt.meta, admin);
    const user = createUser(rt.meta, org, { email, first_name: firstName, level, currentProjectId: admin.current_project_id });
    if (passwordHash) rt.meta.users.put(user.id, { ...user, password_hash: passwordHash });
    const key = createPersonalKey(rt.meta, user.id, 'Initial key');
    return { user, key: key.key };
  });
  return { ...json(201, { ...serializeMember(result.user), personal_api_key: result.key }), authChanged: true };
};

/**
 * The key the caller used, read afresh (it may have been minted by `quill create-key` in another process).
 * A key sees, creates and deletes only keys whose rights are within its own (src/domain/scopes.ts `reachWithin`):
 * a read-only key cannot mint a full-access key, nor delete or list the full-access key it was made from.
 */
interface Caller {
  userId: number;
  reach: KeyReach;
  /** The key used; null for the console's session, which has the full rights of its user. */
  key: PersonalApiKey | null;
}

function callerOf(meta: MetaStore, item: TaskItem): Caller {
  const principal = principalOf(item);
  if (principal.sessionDigest) return { userId: principal.userId, reach: FULL_REACH, key: null };
  meta.env.resetReadTxn();
  const key = principal.keyDigest ? meta.personalKeys.get(principal.keyDigest) : undefined;
  if (!key) throw Errors.invalidPersonalApiKey();
  return { userId: key.user_id, reach: reachOf(key), key };
}

function visibleKeys(meta: MetaStore, caller: Caller): PersonalApiKey[] {
  return all(meta.personalKeys.getRange().map((e) => e.value).filter((k) => k.user_id === caller.userId && reachWithin(caller.reach, reachOf(k))));
}

export const listPersonalKeys: OpHandler = (item, rt) => {
  const keys = visibleKeys(rt.meta, callerOf(rt.meta, item));
  keys.sort((a, b) => b.created_at.localeCompare(a.created_at));
  return json(200, keys.map((k) => serializeKey(k)));
};

/** The rights of a new key: those asked for, each within the caller's; a field left out copies the caller's. */
function newKeyReach(meta: MetaStore, user: User, caller: Caller, body: Record<string, unknown>): KeyReach {
  const org = organizationOf(meta, user);
  const checked = checkKeyReach(body, { projectIds: new Set(projectsOfOrg(meta, org.id).map((p) => p.id)), organizationUuid: org.uuid }, caller.reach);
  if ('problem' in checked) throw Errors.validation(checked.problem.attr, checked.problem.code, checked.problem.detail);
  const outer = caller.reach;
  const ungranted = firstUngranted(outer.scopes, checked.reach.scopes);
  if (ungranted) throw Errors.permissionDenied(`API key cannot grant scope '${ungranted}': it does not hold it.`);
  if (!restrictionWithin(outer.scopedTeams, checked.reach.scopedTeams) || !restrictionWithin(outer.scopedOrganizations, checked.reach.scopedOrganizations)) {
    throw Errors.permissionDenied('API key cannot create a key reaching projects or organizations it cannot reach.');
  }
  return checked.reach;
}

export const createPersonalKeyOp: OpHandler = async (item, rt) => {
  const caller = callerOf(rt.meta, item);
  const user = userOf(rt.meta, caller.userId);
  const body = bodyOf(item);
  const label = requiredText(body, 'label', MAX_LENGTH.keyLabel);
  const reach = newKeyReach(rt.meta, user, caller, body);
  const { record, key } = await rt.meta.write(() => createPersonalKey(rt.meta, user.id, label, undefined, reach));
  return { ...json(201, serializeKey(record, key)), authChanged: true };
};

function findKey(meta: MetaStore, caller: Caller, id: string): PersonalApiKey {
  const found = visibleKeys(meta, caller).find((k) => k.id === id);
  if (!found) throw Errors.notFound();
  return found;
}

export const currentPersonalKey: OpHandler = (item, rt) => {
  const { key } = callerOf(rt.meta, item);
  if (!key) throw Errors.notFound('This request was not made with a personal API key.');
  return json(200, serializeKey(key));
};

export const retrievePersonalKey: OpHandler = (item, rt) =>
  json(200, serializeKey(findKey(rt.meta, callerOf(rt.meta, item), item.params.id ?? '')));

export const deletePersonalKey: OpHandler = async (item, rt) => {
  await rt.meta.write(() => {
    const key = findKey(rt.meta, callerOf(rt.meta, item), item.params.id ?? '');
    rt.meta.personalKeys.remove(key.digest);
  });
  return { ...empty(204), authChanged: true };
};

const authUserOf = (u: User): AuthUser => ({ id: u.id, organizationId: u.organization_id, currentProjectId: u.current_project_id });

function authKeyOf(k: PersonalApiKey): AuthKey {
  return { digest: k.digest, userId: k.user_id, scopes: k.scopes, scopedTeams: k.scoped_teams ?? null, scopedOrganizations: k.scoped_organizations ?? null };
}

/** The front's auth cache source (see AuthSnapshot). */
export function authSnapshot(rt: WorkerRuntime): AuthSnapshot {
  rt.meta.env.resetReadTxn();
  return {
    keys: all(rt.meta.personalKeys.getRange().map(({ value }) => authKeyOf(value))),
    sessions: all(rt.meta.sessions.getRange().map(({ value }) => value))
      .filter((s) => s.expires_at > Date.now())
      .map((s) => ({ digest: s.digest, userId: s.user_id, csrf: s.csrf, expiresAt: s.expires_at })),
    users: all(rt.meta.users.getRange().map(({ value }) => authUserOf(value))),
    organizations: all(rt.meta.organizations.getRange().map(({ value }) => ({ id: value.id, uuid: value.uuid }))),
    projects: all(rt.meta.projects.getRange().map(({ value }) => ({ id: value.id, organizationId: value.organization_id, token: value.api_token }))),
  };
}

/**
 * Internal operation `auth.key` (no route names it): one key by digest, read in a fresh read transaction so a key
 * written by another process is seen (src/front/key-lookup.ts).
 */
export const authKey: OpHandler = (item, rt) => {
  const digest = (bodyOf(item).digest as string | undefined) ?? '';
  rt.meta.env.resetReadTxn();
  const key = rt.meta.personalKeys.get(digest);
  const user = key ? rt.meta.users.get(key.user_id) : undefined;
  const found: AuthKeyLookup = key && user
    ? { key: authKeyOf(key), user: authUserOf(user) }
    : null;
  return json(200, found);
};

/**
 * Internal operation `auth.key_usage` (no route names it): the front's batch of key uses (src/front/key-usage.ts),
 * `{uses: [[digest, epoch ms], …]}`, written as each key's `last_used_at` in one transaction. A use older than the
 * stored one (another front's, or a batch that arrived late) leaves it; a key deleted meanwhile is skipped.
 */
export const recordKeyUsage: OpHandler = async (item, rt) => {
  const raw = bodyOf(item).uses;
  const uses = Array.isArray(raw)
    ? raw.filter((u): u is [string, number] => Array.isArray(u) && typeof u[0] === 'string' && Number.isFinite(u[1]))
    : [];
  if (uses.length > 0) {
    await rt.meta.write(() => {
      for (const [digest, at] of uses) {
        const key = rt.meta.personalKeys.get(digest);
        if (!key) continue;
        const usedAt = new Date(at).toISOString();
        if (key.last_used_at !== null && key.last_used_at >= usedAt) continue;
        rt.meta.personalKeys.put(digest, { ...key, last_used_at: usedAt });
      }
    });
  }
  return empty(204);
};
