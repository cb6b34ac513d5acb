/**
 * The route table: every path Quill answers, as data. The front registers it on its router; each entry names the
 * worker operation (src/worker/ops/index.ts), how the caller is authenticated and how the body is handled.
 */
import type { TSchema } from 'typebox';
import * as S from '../protocol/api-schemas.js';
import type { FactNeeds } from '../http/exchange.js';
import type { RequiredScope, ScopeObject } from '../domain/scopes.js';

export type Auth =
  /** Personal API key (Bearer, body or query); project-scoped when the path has `:project_id`. */
  | 'personal'
  /** Public: the worker authenticates the project token found in the body or query. */
  | 'public'
  /** Console sign-in: no credentials but those in the body; throttled per account and address, CORS as private. */
  | 'login'
  /** No credentials, answered by the front itself without a worker (the API description). */
  | 'none';

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
  /**
   * Personal routes: the scope a key must hold (PostHog's `scope_object` with `read` for GET and `write` for the
   * rest, unless the route says otherwise); null: any key of the user (a key reading itself).
   */
  scope?: RequiredScope | null;
  /**
   * The project comes from `?token=` (the project API key) instead of `:project_id`; with `token-or-path`, from
   * `?token=` when given (as PostHog resolves `@current` for keys that reach several projects), else from
   * `:project_id`, else the user's current project.
   */
  projectFrom?: 'token' | 'token-or-path';
  /** The operator key (QUILL_OPERATOR_KEY) is accepted here as well as personal keys. */
  operator?: true;
  /** Public routes whose key comes in a header (`Authorization: Bearer` or `X-API-Key`), with If-None-Match: OFREP. */
  keyHeader?: true;
}

export interface RouteDef extends RouteSpec {
  /** The request facts the front copies for this route (derived below). */
  needs: FactNeeds;
}

/**
 * A private route guarded by `scope`: a scope object (the action follows the method: GET reads, anything else
 * writes) or a full scope for the exceptions (a POST that only reads).
 */
const api = (method: RouteSpec['method'], path: string, op: string, scope: ScopeObject | RequiredScope | null, body: BodyMode = 'none', schema?: TSchema): RouteSpec => ({
  method, path, op, auth: 'personal', body, ...(schema ? { schema } : {}),
  scope: scope === null || scope.includes(':') ? (scope as RequiredScope | null) : `${scope as ScopeObject}:${method === 'GET' ? 'read' : 'write'}`,
});

const P = '/api/projects/:project_id';
const FF = `${P}/feature_flags`;
const PERSONS = `${P}/persons`;
const COHORTS = `${P}/cohorts`;
const EXPERIMENTS = `${P}/experiments`;
const ACTIONS = `${P}/actions`;
const ANNOTATIONS = `${P}/annotations`;
const ALERTS = `${P}/alerts`;
const SUBSCRIPTIONS = `${P}/subscriptions`;
const ROLES = '/api/organizations/:organization_id/roles';

const pub = (method: RouteSpec['method'], path: string, op: string): RouteSpec =>
  ({ method, path, op, auth: 'public', body: 'raw' });
const ingest = (method: RouteSpec['method'], path: string, op: string): RouteSpec => ({ ...pub(method, path, op), recordsIp: true });

/** Every path PostHog SDKs (old and new) send events to; GET carries the payload in `?data=`. */
const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track'];

const SPECS: RouteSpec[] = [
  // This API's OpenAPI 3.1 description, generated from this table at start-up (src/front/openapi.ts); PostHog's path.
  { method: 'GET', path: '/api/schema', op: 'schema', auth: 'none', body: 'none' },

  // Public ingestion
  ...CAPTURE_PATHS.flatMap((path) => [ingest('POST', path, 'capture'), ingest('GET', path, 'capture')]),
  ingest('POST', '/engage', 'engage'),
  ingest('GET', '/engage', 'engage'),
  // Session recordings: posthog-js' recorder posts its snapshots here (src/worker/ops/recordings.ts), never to the events.
  pub('POST', '/s', 'recordings.capture'),

  pub('POST', '/_fault/:kind', 'fault'),
  // Organization owners (node-wide counters, see src/worker/ops/stats.ts) or the operator key.
  { method: 'GET', path: '/_stats', op: 'stats', auth: 'personal', body: 'none', scope: 'organization:read', operator: true },
  // What the shards set aside and samples of what capture dropped (src/worker/ops/stats.ts): owners (their projects) or the operator key.
  { method: 'GET', path: '/_dead_letters', op: 'dead-letters', auth: 'personal', body: 'none', scope: 'organization:read', operator: true },
  // An online backup into QUILL_BACKUP_DIR: organization owners or the operator key (src/worker/ops/backup.ts).
  { method: 'POST', path: '/_backup', op: 'backup', auth: 'personal', body: 'none', scope: 'organization:write', operator: true },

  // Flag evaluation
  pub('POST', '/decide', 'decide'),
  pub('GET', '/decide', 'decide.defaults'),
  pub('POST', '/flags', 'flags'),
  pub('GET', '/flags', 'flags.defaults'),
  // OpenFeature's remote evaluation protocol (src/worker/ops/ofrep.ts): the project API key as Bearer or X-API-Key.
  { ...pub('POST', '/ofrep/v1/evaluate/flags', 'ofrep.bulk'), keyHeader: true },
  { ...pub('POST', '/ofrep/v1/evaluate/flags/:key', 'ofrep.evaluate'), keyHeader: true },
  pub('GET', '/array/:token/config', 'remote_config'),
  pub('GET', '/array/:token/config.js', 'remote_config.js'),
  // The lists posthog-js asks for with `?token=` (src/worker/ops/sdk-lists.ts): empty, in PostHog's shapes.
  pub('GET', '/api/surveys', 'sdk.surveys'),
  pub('GET', '/api/early_access_features', 'sdk.early_access_features'),
  pub('GET', '/api/web_experiments', 'sdk.web_experiments'),
  pub('GET', '/api/product_tours', 'sdk.product_tours'),

  // Local-evaluation definitions for server SDKs: a personal key (Bearer), the project named by `?token=`.
  { method: 'GET', path: '/flags/definitions', op: 'flags.definitions', auth: 'personal', body: 'none', scope: 'feature_flag:read', projectFrom: 'token' },
  // Flag changes pushed as Server-Sent Events (src/front/flag-streams.ts). With a personal key (Bearer) as for the
  // definitions; without an Authorization header the browser stream, for the project API key in `?token=`.
  { method: 'GET', path: '/flags/stream', op: 'flags.stream', auth: 'personal', body: 'none', scope: 'feature_flag:read', projectFrom: 'token' },
  { method: 'GET', path: '/api/feature_flag/local_evaluation', op: 'flags.local_evaluation_legacy', auth: 'personal', body: 'none', scope: 'feature_flag:read', projectFrom: 'token' },
  // The flag list without a project in the path (posthog-node 1.x polls it for local evaluation): `?token=` names
  // the project, else the user's current one.
  { method: 'GET', path: '/api/feature_flag', op: 'flags.list_legacy', auth: 'personal', body: 'none', scope: 'feature_flag:read', projectFrom: 'token-or-path' },

  // Console sign-in (sessions: src/worker/ops/sessions.ts); a session is accepted wherever a personal key is.
  { method: 'POST', path: '/api/login', op: 'auth.login', auth: 'login', body: 'json', schema: S.Login },
  // Is the session cookie valid? Answered by the front from memory, 200 either way (no failed request to log).
  { method: 'GET', path: '/api/login', op: 'auth.session', auth: 'login', body: 'none' },
  api('POST', '/api/logout', 'auth.logout', null),

  // Accounts
  api('GET', '/api/users/@me', 'users.me', 'user'),
  api('PATCH', '/api/users/@me', 'users.update', 'user', 'json', S.UserUpdate),
  api('POST', '/api/organizations', 'organizations.create', 'organization', 'json', S.AnyObject),
  api('GET', '/api/organizations/:organization_id', 'organizations.retrieve', 'organization'),
  api('PATCH', '/api/organizations/:organization_id', 'organizations.update', 'organization', 'json', S.OrganizationUpdate),
  api('GET', '/api/organizations/:organization_id/members', 'members.list', 'organization_member'),
  api('POST', '/api/organizations/:organization_id/members', 'members.create', 'organization_member', 'json', S.MemberCreate),
  api('GET', '/api/projects', 'projects.list', 'project'),
  api('POST', '/api/projects', 'projects.create', 'project', 'json', S.ProjectCreate),
  api('GET', P, 'projects.retrieve', 'project'),
  api('PATCH', P, 'projects.update', 'project', 'json', S.ProjectUpdate),
  api('GET', '/api/personal_api_keys', 'personal_keys.list', 'personal_api_key'),
  api('POST', '/api/personal_api_keys', 'personal_keys.create', 'personal_api_key', 'json', S.PersonalKeyCreate),
  // A key can always read itself (PostHog's `@current`), whatever its scopes.
  api('GET', '/api/personal_api_keys/@current', 'personal_keys.current', null),
  api('GET', '/api/personal_api_keys/:id', 'personal_keys.retrieve', 'personal_api_key'),
  api('DELETE', '/api/personal_api_keys/:id', 'personal_keys.delete', 'personal_api_key'),

  // Roles
  api('GET', ROLES, 'roles.list', 'organization'),
  api('POST', ROLES, 'roles.create', 'organization', 'json', S.RoleWrite),
  api('GET', `${ROLES}/:id`, 'roles.retrieve', 'organization'),
  api('PATCH', `${ROLES}/:id`, 'roles.update', 'organization', 'json', S.RoleWrite),
  api('DELETE', `${ROLES}/:id`, 'roles.delete', 'organization'),
  api('GET', `${ROLES}/:id/role_memberships`, 'role_memberships.list', 'organization'),
  api('POST', `${ROLES}/:id/role_memberships`, 'role_memberships.create', 'organization', 'json', S.RoleMembershipCreate),
  api('DELETE', `${ROLES}/:id/role_memberships/:membership_id`, 'role_memberships.delete', 'organization'),

  // Feature flags
  api('GET', FF, 'flags.list', 'feature_flag'),
  api('POST', FF, 'flags.create', 'feature_flag', 'json', S.FeatureFlagWrite),
  api('GET', `${FF}/activity`, 'flags.all_activity', 'feature_flag'),
  api('GET', `${FF}/local_evaluation`, 'flags.local_evaluation', 'feature_flag'),
  api('GET', `${FF}/evaluation_reasons`, 'flags.evaluation_reasons', 'feature_flag'),
  api('GET', `${FF}/my_flags`, 'flags.my_flags', 'feature_flag'),
  api('POST', `${FF}/user_blast_radius`, 'flags.user_blast_radius', 'feature_flag:read', 'json', S.AnyObject),
  api('GET', `${FF}/:id`, 'flags.retrieve', 'feature_flag'),
  api('PATCH', `${FF}/:id`, 'flags.update', 'feature_flag', 'json', S.FeatureFlagWrite),
  api('PUT', `${FF}/:id`, 'flags.update', 'feature_flag', 'json', S.FeatureFlagWrite),
  api('DELETE', `${FF}/:id`, 'flags.delete', 'feature_flag'),
  api('GET', `${FF}/:id/activity`, 'flags.activity', 'feature_flag'),
  // Evaluations per day and last use (src/worker/ops/flag-usage.ts); a revert to a kept version (Quill's).
  api('GET', `${FF}/:id/usage`, 'flags.usage', 'feature_flag'),
  api('POST', `${FF}/:id/revert`, 'flags.revert', 'feature_flag', 'json', S.FlagRevert),
  // `:id` is the flag's id or key here (posthog-node asks by key, and names the project by `?token=`).
  { ...api('GET', `${FF}/:id/remote_config`, 'flags.remote_config', 'feature_flag'), projectFrom: 'token-or-path' },
  // The seed names the flag parameter `parent_lookup_feature_flag_id`; the router position is shared with `:id`.
  api('GET', `${FF}/:id/role_access`, 'flag_role_access.list', 'feature_flag'),
  api('POST', `${FF}/:id/role_access`, 'flag_role_access.create', 'feature_flag', 'json', S.RoleAccessCreate),
  api('GET', `${FF}/:id/role_access/:access_id`, 'flag_role_access.retrieve', 'feature_flag'),
  api('DELETE', `${FF}/:id/role_access/:access_id`, 'flag_role_access.delete', 'feature_flag'),

  // Scheduled flag changes, PostHog's resource (src/worker/ops/scheduled-changes.ts), applied by the node when due.
  api('GET', `${P}/scheduled_changes`, 'scheduled_changes.list', 'feature_flag'),
  api('POST', `${P}/scheduled_changes`, 'scheduled_changes.create', 'feature_flag', 'json', S.ScheduledChangeWrite),
  api('GET', `${P}/scheduled_changes/:id`, 'scheduled_changes.retrieve', 'feature_flag'),
  api('PATCH', `${P}/scheduled_changes/:id`, 'scheduled_changes.update', 'feature_flag', 'json', S.ScheduledChangeWrite),
  api('DELETE', `${P}/scheduled_changes/:id`, 'scheduled_changes.delete', 'feature_flag'),

  // Persons (static paths before `:id`, which is a numeric id or a uuid)
  api('GET', PERSONS, 'persons.list', 'person'),
  api('POST', PERSONS, 'persons.create', 'person', 'json', S.PersonCreate),
  api('GET', `${PERSONS}/activity`, 'persons.all_activity', 'person'),
  api('GET', `${PERSONS}/properties`, 'persons.properties', 'person'),
  api('GET', `${PERSONS}/values`, 'persons.values', 'person'),
  api('GET', `${PERSONS}/cohorts`, 'persons.cohorts', 'person'),
  api('GET', `${PERSONS}/trends`, 'persons.trends', 'person'),
  api('GET', `${PERSONS}/retention`, 'persons.retention', 'person'),
  api('GET', `${PERSONS}/funnel`, 'persons.funnel', 'person'),
  api('GET', `${PERSONS}/funnel/correlation`, 'persons.correlation', 'person'),
  api('POST', `${PERSONS}/funnel/correlation`, 'persons.correlation', 'person:read', 'json', S.AnyObject),
  api('GET', `${PERSONS}/path`, 'persons.path', 'person'),
  api('POST', `${PERSONS}/path`, 'persons.path', 'person:read', 'json', S.AnyObject),
  api('POST', `${PERSONS}/funnel`, 'persons.funnel', 'person:read', 'json', S.AnyObject),
  api('GET', `${PERSONS}/lifecycle`, 'persons.lifecycle', 'person'),
  api('GET', `${PERSONS}/stickiness`, 'persons.stickiness', 'person'),
  api('GET', `${PERSONS}/:id`, 'persons.retrieve', 'person'),
  api('PATCH', `${PERSONS}/:id`, 'persons.update', 'person', 'json', S.PersonUpdate),
  api('PUT', `${PERSONS}/:id`, 'persons.update', 'person', 'json', S.PersonUpdate),
  api('DELETE', `${PERSONS}/:id`, 'persons.delete', 'person'),
  api('GET', `${PERSONS}/:id/activity`, 'persons.activity', 'person'),
  api('GET', `${PERSONS}/:id/properties_timeline`, 'persons.properties_timeline', 'person'),
  api('POST', `${PERSONS}/:id/update_property`, 'persons.update_property', 'person', 'json', S.PersonPropertyUpdate),
  api('POST', `${PERSONS}/:id/delete_property`, 'persons.delete_property', 'person', 'json', S.PersonPropertyDelete),
  api('POST', `${PERSONS}/:id/split`, 'persons.split', 'person', 'json', S.PersonSplit),

  // Experiments
  api('GET', EXPERIMENTS, 'experiments.list', 'experiment'),
  api('GET', `${EXPERIMENTS}/activity`, 'experiments.all_activity', 'experiment'),
  api('POST', EXPERIMENTS, 'experiments.create', 'experiment', 'json', S.ExperimentWrite),
  api('GET', `${EXPERIMENTS}/:id`, 'experiments.retrieve', 'experiment'),
  api('PATCH', `${EXPERIMENTS}/:id`, 'experiments.update', 'experiment', 'json', S.ExperimentWrite),
  api('PUT', `${EXPERIMENTS}/:id`, 'experiments.update', 'experiment', 'json', S.ExperimentWrite),
  api('DELETE', `${EXPERIMENTS}/:id`, 'experiments.delete', 'experiment'),
  api('GET', `${EXPERIMENTS}/:id/results`, 'experiments.results', 'experiment'),
  api('GET', `${EXPERIMENTS}/:id/activity`, 'experiments.activity', 'experiment'),
  // Cohorts
  api('GET', COHORTS, 'cohorts.list', 'cohort'),
  api('POST', COHORTS, 'cohorts.create', 'cohort', 'json', S.CohortWrite),
  api('GET', `${COHORTS}/:id`, 'cohorts.retrieve', 'cohort'),
  api('PATCH', `${COHORTS}/:id`, 'cohorts.update', 'cohort', 'json', S.CohortWrite),
  api('PUT', `${COHORTS}/:id`, 'cohorts.update', 'cohort', 'json', S.CohortWrite),
  api('DELETE', `${COHORTS}/:id`, 'cohorts.delete', 'cohort'),
  api('GET', `${COHORTS}/:id/persons`, 'cohorts.persons', 'cohort'),
  api('PATCH', `${COHORTS}/:id/add_persons_to_static_cohort`, 'cohorts.add_persons', 'cohort', 'json', S.StaticCohortAdd),
  api('PATCH', `${COHORTS}/:id/remove_person_from_static_cohort`, 'cohorts.remove_person', 'cohort', 'json', S.StaticCohortRemove),

  // Annotations
  api('GET', ANNOTATIONS, 'annotations.list', 'annotation'),
  api('POST', ANNOTATIONS, 'annotations.create', 'annotation', 'json', S.AnnotationWrite),
  api('GET', `${ANNOTATIONS}/:id`, 'annotations.retrieve', 'annotation'),
  api('PATCH', `${ANNOTATIONS}/:id`, 'annotations.update', 'annotation', 'json', S.AnnotationWrite),
  api('PUT', `${ANNOTATIONS}/:id`, 'annotations.update', 'annotation', 'json', S.AnnotationWrite),
  api('DELETE', `${ANNOTATIONS}/:id`, 'annotations.delete', 'annotation'),

  // Insight alerts and subscriptions (src/worker/ops/alerts.ts, subscriptions.ts), checked and delivered by the
  // node (src/worker/notifications/). `check` and `deliver` are Quill's: now, instead of at the next due time.
  api('GET', ALERTS, 'alerts.list', 'alert'),
  api('POST', ALERTS, 'alerts.create', 'alert', 'json', S.AlertWrite),
  api('GET', `${ALERTS}/:id`, 'alerts.retrieve', 'alert'),
  api('PATCH', `${ALERTS}/:id`, 'alerts.update', 'alert', 'json', S.AlertWrite),
  api('DELETE', `${ALERTS}/:id`, 'alerts.delete', 'alert'),
  api('POST', `${ALERTS}/:id/check`, 'alerts.check', 'alert', 'json', S.AnyObject),
  api('GET', SUBSCRIPTIONS, 'subscriptions.list', 'subscription'),
  api('POST', SUBSCRIPTIONS, 'subscriptions.create', 'subscription', 'json', S.SubscriptionWrite),
  api('GET', `${SUBSCRIPTIONS}/:id`, 'subscriptions.retrieve', 'subscription'),
  api('PATCH', `${SUBSCRIPTIONS}/:id`, 'subscriptions.update', 'subscription', 'json', S.SubscriptionWrite),
  api('POST', `${SUBSCRIPTIONS}/:id/deliver`, 'subscriptions.deliver', 'subscription', 'json', S.AnyObject),

  // Actions (`activity` before `:id`)
  api('GET', ACTIONS, 'actions.list', 'action'),
  api('POST', ACTIONS, 'actions.create', 'action', 'json', S.ActionWrite),
  api('GET', `${ACTIONS}/activity`, 'actions.all_activity', 'action'),
  api('GET', `${ACTIONS}/:id`, 'actions.retrieve', 'action'),
  api('PATCH', `${ACTIONS}/:id`, 'actions.update', 'action', 'json', S.ActionWrite),
  api('PUT', `${ACTIONS}/:id`, 'actions.update', 'action', 'json', S.ActionWrite),
  api('DELETE', `${ACTIONS}/:id`, 'actions.delete', 'action'),
  api('GET', `${ACTIONS}/:id/activity`, 'actions.activity', 'action'),

  // Stored events (`values` before `:id`, which is an event uuid)
  api('GET', `${P}/events`, 'events.list', 'query'),
  api('GET', `${P}/events/values`, 'events.values', 'query'),
  api('GET', `${P}/events/:id`, 'events.retrieve', 'query'),

  // Analyses (the body, for POST, is merged over the query string)
  api('GET', `${P}/insights/trend`, 'insights.trend', 'insight'),
  api('POST', `${P}/insights/trend`, 'insights.trend', 'insight:read', 'json', S.AnyObject),
  api('GET', `${P}/insights/retention`, 'insights.retention', 'insight'),
  api('POST', `${P}/query`, 'query.run', 'query:read', 'json', S.AnyObject),
  api('GET', `${P}/query/:id`, 'query.status', 'query:read'),
  api('DELETE', `${P}/query/:id`, 'query.cancel', 'query:read'),
  api('GET', `${P}/insights/funnel`, 'insights.funnel', 'insight'),
  api('GET', `${P}/insights/funnel/correlation`, 'insights.correlation', 'insight'),
  api('POST', `${P}/insights/funnel/correlation`, 'insights.correlation', 'insight:read', 'json', S.AnyObject),
  api('GET', `${P}/insights/path`, 'insights.path', 'insight'),
  api('POST', `${P}/insights/path`, 'insights.path', 'insight:read', 'json', S.AnyObject),
  api('POST', `${P}/insights/funnel`, 'insights.funnel', 'insight:read', 'json', S.AnyObject),
  // Saved insights (static `trend` above wins over `:id`)
  api('GET', `${P}/insights`, 'insights.list', 'insight'),
  api('POST', `${P}/insights`, 'insights.create', 'insight', 'json', S.InsightWrite),
  api('GET', `${P}/insights/:id`, 'insights.retrieve', 'insight'),
  api('PATCH', `${P}/insights/:id`, 'insights.update', 'insight', 'json', S.InsightWrite),
  api('DELETE', `${P}/insights/:id`, 'insights.delete', 'insight'),
  api('GET', `${P}/dashboards`, 'dashboards.list', 'dashboard'),
  api('POST', `${P}/dashboards`, 'dashboards.create', 'dashboard', 'json', S.AnyObject),
  api('GET', `${P}/dashboards/:id`, 'dashboards.retrieve', 'dashboard'),
  api('PATCH', `${P}/dashboards/:id`, 'dashboards.update', 'dashboard', 'json', S.AnyObject),
  api('DELETE', `${P}/dashboards/:id`, 'dashboards.delete', 'dashboard'),

  // Share links (src/worker/ops/sharing.ts): PostHog's `sharing` endpoints of a dashboard and an insight, and the
  // same for the web analytics page (Quill's path). The links themselves are the public routes below.
  ...([['dashboards', `${P}/dashboards/:id`], ['insights', `${P}/insights/:id`], ['web_analytics', `${P}/web_analytics`]] as const).flatMap(([name, base]) => [
    api('GET', `${base}/sharing`, `${name}.sharing.retrieve`, 'sharing_configuration'),
    api('PATCH', `${base}/sharing`, `${name}.sharing.update`, 'sharing_configuration', 'json', S.SharingUpdate),
    api('POST', `${base}/sharing/refresh`, `${name}.sharing.refresh`, 'sharing_configuration', 'json', S.AnyObject),
    api('POST', `${base}/sharing/passwords`, `${name}.sharing.passwords_create`, 'sharing_configuration', 'json', S.SharePasswordCreate),
    api('DELETE', `${base}/sharing/passwords/:password_id`, `${name}.sharing.passwords_delete`, 'sharing_configuration'),
  ]),
  // What a link opens: its token is the only credential, a password-protected one's unlock token comes as Bearer.
  { method: 'GET', path: '/api/shared/:access_token', op: 'shared.view', auth: 'public', body: 'none', keyHeader: true },
  { method: 'POST', path: '/api/shared/:access_token/query', op: 'shared.query', auth: 'public', body: 'json', schema: S.AnyObject, keyHeader: true },
  // PostHog's unlock of a password-protected link; throttled by the front as sign-in is, per link and address.
  { method: 'POST', path: '/shared/:access_token', op: 'shared.unlock', auth: 'login', body: 'json', schema: S.ShareUnlock },

  // Session recordings (PostHog's resource; snapshots as its `sources` then `blob_v2` JSONL: src/worker/ops/recordings.ts)
  api('GET', `${P}/session_recordings`, 'recordings.list', 'session_recording'),
  api('GET', `${P}/session_recordings/:id`, 'recordings.retrieve', 'session_recording'),
  api('PATCH', `${P}/session_recordings/:id`, 'recordings.update', 'session_recording', 'json', S.AnyObject),
  api('DELETE', `${P}/session_recordings/:id`, 'recordings.delete', 'session_recording'),
  api('GET', `${P}/session_recordings/:id/snapshots`, 'recordings.snapshots', 'session_recording'),

  // Event definitions
  api('GET', `${P}/event_definitions`, 'event_definitions.list', 'event_definition'),
  api('GET', `${P}/event_definitions/:id`, 'event_definitions.retrieve', 'event_definition'),
  api('PATCH', `${P}/event_definitions/:id`, 'event_definitions.update', 'event_definition', 'json', S.EventDefinitionUpdate),

  // Property definitions: names and types of the event, person and group properties seen (src/worker/ops/property-definitions.ts)
  api('GET', `${P}/property_definitions`, 'property_definitions.list', 'property_definition'),
  api('GET', `${P}/property_definitions/:id`, 'property_definitions.retrieve', 'property_definition'),
  api('PATCH', `${P}/property_definitions/:id`, 'property_definitions.update', 'property_definition', 'json', S.PropertyDefinitionUpdate),
];

/**
 * Ingestion records the client address; the private API needs credentials, host and scheme (absolute URLs); sign-in
 * needs the address it throttles.
 */
export const ROUTES: RouteDef[] = SPECS.map((r) => {
  // A private route without a declared scope would be reachable by every key: refuse to start instead.
  if (r.auth === 'personal' && r.scope === undefined) throw new Error(`route ${r.method} ${r.path} declares no scope`);
  const login = r.auth === 'login';
  return { ...r, needs: { body: r.body !== 'none', ip: r.recordsIp === true, api: r.auth === 'personal' || login, peer: login, keyHeader: r.keyHeader === true } };
});
