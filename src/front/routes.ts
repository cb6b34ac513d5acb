/**
 * The route table: every path Quill answers, as data. The front registers it on its router; each entry names the
 * worker operation (src/worker/ops/index.ts), how the caller is authenticated and how the body is handled.
 */
import type { TSchema } from 'typebox';
import * as S from '../protocol/api-schemas.js';
import type { FactNeeds } from '../http/exchange.js';

export type Auth =
  /** Personal API key (Bearer, body or query); project-scoped when the path has `:project_id`. */
  | 'personal'
  /** Public: the worker authenticates the project token found in the body or query. */
  | 'public';

export type BodyMode =
  /** No body is read. */
  | 'none'
  /** JSON object, parsed and checked against `schema` by the front. */
  | 'json'
  /** Raw bytes handed to the worker (ingestion, flag evaluation: encodings vary, decoding is worker work). */
  | 'raw';

interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  op: string;
  auth: Auth;
  body: BodyMode;
  schema?: TSchema;
  /** Public ingestion: the client address is recorded as `$ip`. */
  recordsIp?: boolean;
}

export interface RouteDef extends RouteSpec {
  /** The request facts the front copies for this route (derived below). */
  needs: FactNeeds;
}

const api = (method: RouteSpec['method'], path: string, op: string, body: BodyMode = 'none', schema?: TSchema): RouteSpec =>
  ({ method, path, op, auth: 'personal', body, ...(schema ? { schema } : {}) });

const P = '/api/projects/:project_id';
const FF = `${P}/feature_flags`;
const PERSONS = `${P}/persons`;
const COHORTS = `${P}/cohorts`;
const ROLES = '/api/organizations/:organization_id/roles';

const pub = (method: RouteSpec['method'], path: string, op: string): RouteSpec =>
  ({ method, path, op, auth: 'public', body: 'raw' });
const ingest = (method: RouteSpec['method'], path: string, op: string): RouteSpec => ({ ...pub(method, path, op), recordsIp: true });

/** Every path PostHog SDKs (old and new) send events to; GET carries the payload in `?data=`. */
const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track'];

const SPECS: RouteSpec[] = [
  // Public ingestion
  ...CAPTURE_PATHS.flatMap((path) => [ingest('POST', path, 'capture'), ingest('GET', path, 'capture')]),
  ingest('POST', '/engage', 'engage'),
  ingest('GET', '/engage', 'engage'),

  pub('POST', '/_fault/:kind', 'fault'),
  { method: 'GET', path: '/_stats', op: 'stats', auth: 'personal', body: 'none' },

  // Flag evaluation
  pub('POST', '/decide', 'decide'),
  pub('GET', '/decide', 'decide.defaults'),
  pub('POST', '/flags', 'flags'),
  pub('GET', '/flags', 'flags.defaults'),
  pub('GET', '/array/:token/config', 'remote_config'),
  pub('GET', '/array/:token/config.js', 'remote_config.js'),

  // Local-evaluation definitions for server SDKs: a personal key (Bearer), the project named by `?token=`.
  { method: 'GET', path: '/flags/definitions', op: 'flags.definitions', auth: 'personal', body: 'none' },
  { method: 'GET', path: '/api/feature_flag/local_evaluation', op: 'flags.local_evaluation_legacy', auth: 'personal', body: 'none' },
  // The flag list without a project in the path (posthog-node 1.x polls it for local evaluation).
  { method: 'GET', path: '/api/feature_flag', op: 'flags.list_legacy', auth: 'personal', body: 'none' },

  // Accounts
  api('GET', '/api/users/@me', 'users.me'),
  api('POST', '/api/organizations', 'organizations.create', 'json', S.AnyObject),
  api('GET', '/api/organizations/:organization_id', 'organizations.retrieve'),
  api('PATCH', '/api/organizations/:organization_id', 'organizations.update', 'json', S.OrganizationUpdate),
  api('GET', '/api/organizations/:organization_id/members', 'members.list'),
  api('POST', '/api/organizations/:organization_id/members', 'members.create', 'json', S.MemberCreate),
  api('GET', '/api/projects', 'projects.list'),
  api('POST', '/api/projects', 'projects.create', 'json', S.ProjectCreate),
  api('GET', P, 'projects.retrieve'),
  api('GET', '/api/personal_api_keys', 'personal_keys.list'),
  api('POST', '/api/personal_api_keys', 'personal_keys.create', 'json', S.PersonalKeyCreate),
  api('GET', '/api/personal_api_keys/:id', 'personal_keys.retrieve'),
  api('DELETE', '/api/personal_api_keys/:id', 'personal_keys.delete'),

  // Roles
  api('GET', ROLES, 'roles.list'),
  api('POST', ROLES, 'roles.create', 'json', S.RoleWrite),
  api('GET', `${ROLES}/:id`, 'roles.retrieve'),
  api('PATCH', `${ROLES}/:id`, 'roles.update', 'json', S.RoleWrite),
  api('DELETE', `${ROLES}/:id`, 'roles.delete'),
  api('GET', `${ROLES}/:id/role_memberships`, 'role_memberships.list'),
  api('POST', `${ROLES}/:id/role_memberships`, 'role_memberships.create', 'json', S.RoleMembershipCreate),
  api('DELETE', `${ROLES}/:id/role_memberships/:membership_id`, 'role_memberships.delete'),

  // Feature flags
  api('GET', FF, 'flags.list'),
  api('POST', FF, 'flags.create', 'json', S.FeatureFlagWrite),
  api('GET', `${FF}/activity`, 'flags.all_activity'),
  api('GET', `${FF}/local_evaluation`, 'flags.local_evaluation'),
  api('GET', `${FF}/evaluation_reasons`, 'flags.evaluation_reasons'),
  api('GET', `${FF}/my_flags`, 'flags.my_flags'),
  api('POST', `${FF}/user_blast_radius`, 'flags.user_blast_radius', 'json', S.AnyObject),
  api('GET', `${FF}/:id`, 'flags.retrieve'),
  api('PATCH', `${FF}/:id`, 'flags.update', 'json', S.FeatureFlagWrite),
  api('PUT', `${FF}/:id`, 'flags.update', 'json', S.FeatureFlagWrite),
  api('DELETE', `${FF}/:id`, 'flags.delete'),
  api('GET', `${FF}/:id/activity`, 'flags.activity'),
  // `:id` is the flag's id or key here (posthog-node asks by key).
  api('GET', `${FF}/:id/remote_config`, 'flags.remote_config'),
  // The seed names the flag parameter `parent_lookup_feature_flag_id`; the router position is shared with `:id`.
  api('GET', `${FF}/:id/role_access`, 'flag_role_access.list'),
  api('POST', `${FF}/:id/role_access`, 'flag_role_access.create', 'json', S.RoleAccessCreate),
  api('GET', `${FF}/:id/role_access/:access_id`, 'flag_role_access.retrieve'),
  api('DELETE', `${FF}/:id/role_access/:access_id`, 'flag_role_access.delete'),

  // Persons (static paths before `:id`, which is a numeric id or a uuid)
  api('GET', PERSONS, 'persons.list'),
  api('POST', PERSONS, 'persons.create', 'json', S.PersonCreate),
  api('GET', `${PERSONS}/activity`, 'persons.all_activity'),
  api('GET', `${PERSONS}/properties`, 'persons.properties'),
  api('GET', `${PERSONS}/values`, 'persons.values'),
  api('GET', `${PERSONS}/cohorts`, 'persons.cohorts'),
  api('GET', `${PERSONS}/:id`, 'persons.retrieve'),
  api('PATCH', `${PERSONS}/:id`, 'persons.update', 'json', S.PersonUpdate),
  api('PUT', `${PERSONS}/:id`, 'persons.update', 'json', S.PersonUpdate),
  api('DELETE', `${PERSONS}/:id`, 'persons.delete'),
  api('GET', `${PERSONS}/:id/activity`, 'persons.activity'),
  api('POST', `${PERSONS}/:id/update_property`, 'persons.update_property', 'json', S.PersonPropertyUpdate),
  api('POST', `${PERSONS}/:id/delete_property`, 'persons.delete_property', 'json', S.PersonPropertyDelete),
  api('POST', `${PERSONS}/:id/split`, 'persons.split', 'json', S.PersonSplit),

  // Cohorts
  api('GET', COHORTS, 'cohorts.list'),
  api('POST', COHORTS, 'cohorts.create', 'json', S.CohortWrite),
  api('GET', `${COHORTS}/:id`, 'cohorts.retrieve'),
  api('PATCH', `${COHORTS}/:id`, 'cohorts.update', 'json', S.CohortWrite),
  api('PUT', `${COHORTS}/:id`, 'cohorts.update', 'json', S.CohortWrite),
  api('DELETE', `${COHORTS}/:id`, 'cohorts.delete'),
  api('GET', `${COHORTS}/:id/persons`, 'cohorts.persons'),
  api('PATCH', `${COHORTS}/:id/add_persons_to_static_cohort`, 'cohorts.add_persons', 'json', S.StaticCohortAdd),
  api('PATCH', `${COHORTS}/:id/remove_person_from_static_cohort`, 'cohorts.remove_person', 'json', S.StaticCohortRemove),

  // Stored events (`values` before `:id`, which is an event uuid)
  api('GET', `${P}/events`, 'events.list'),
  api('GET', `${P}/events/values`, 'events.values'),
  api('GET', `${P}/events/:id`, 'events.retrieve'),

  // Event definitions
  api('GET', `${P}/event_definitions`, 'event_definitions.list'),
  api('GET', `${P}/event_definitions/:id`, 'event_definitions.retrieve'),
  api('PATCH', `${P}/event_definitions/:id`, 'event_definitions.update', 'json', S.EventDefinitionUpdate),
];

/** Ingestion records the client address; the private API needs credentials, host and scheme (absolute URLs). */
export const ROUTES: RouteDef[] = SPECS.map((r) => ({
  ...r,
  needs: { body: r.body !== 'none', ip: r.recordsIp === true, api: r.auth === 'personal' },
}));
