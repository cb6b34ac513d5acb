/**
 * The OpenAPI 3.1 description of Quill's API, generated from the route table (src/front/routes.ts) and the TypeBox
 * schemas (request bodies: src/protocol/api-schemas.ts; public payloads and responses: src/protocol/api-shapes.ts).
 * TypeBox writes JSON Schema 2020-12, which OpenAPI 3.1 adopted, so schemas go in as they are: every schema with an
 * `$id` becomes a named component and is referenced wherever it appears.
 *
 * Pure: the front builds the document once at start-up and serves it at `GET /api/schema/` (PostHog's path).
 * Deterministic: paths and component names are sorted, methods in OpenAPI's order, so the same table gives the
 * same bytes. What it covers and what it leaves out is said in `info.description` below and in src/front/README.md.
 */
import type { TSchema } from 'typebox';
import { SESSION_COOKIE } from '../domain/cookies.js';
import * as R from '../protocol/api-shapes.js';
import { isAnalysis } from '../worker/ops/analysis-ops.js';
import type { RouteDef } from './routes.js';

/** The media type of the document itself (drf-spectacular's, for `?format=json`). */
export const OPENAPI_MEDIA_TYPE = 'application/vnd.oai.openapi+json';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface DescriptionInfo {
  /** Quill's version (package.json). */
  version: string;
}

/** `/api/projects/:project_id` → `/api/projects/{project_id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

// ---- Schemas ------------------------------------------------------------------------------------------------

/** Keywords whose values are data, not schemas: copied as they are. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);

/** The named schemas met so far, as JSON with nested named schemas turned into `$ref`s. */
class SchemaComponents {
  private readonly json = new Map<string, JsonObject>();
  private readonly source = new Map<string, string>();

  /** `schema` as JSON for use anywhere in the document: a `$ref` when it is named. */
  use(schema: TSchema): Json {
    return this.convert(schema, false);
  }

  sorted(): JsonObject {
    return Object.fromEntries([...this.json.keys()].sort().map((name) => [name, this.json.get(name)!]));
  }

  private register(name: string, schema: Record<string, unknown>): void {
    // Optional() and friends copy a schema, $id included: the same name must always mean the same content.
    const text = JSON.stringify(schema);
    const known = this.source.get(name);
    if (known !== undefined) {
      if (known !== text) throw new Error(`two different schemas are named ${name}`);
      return;
    }
    this.source.set(name, text);
    this.json.set(name, {}); // reserved first: a schema that refers to itself ends in a $ref, not a loop
    this.json.set(name, this.convert(schema, true) as JsonObject);
  }

  private convert(value: unknown, top: boolean): Json {
    if (Array.isArray(value)) return value.map((v) => this.convert(v, false));
    if (value === null || typeof value !== 'object') return value as Json;
    const schema = value as Record<string, unknown>;
    const name = schema.$id;
    if (typeof name === 'string' && !top) {
      this.register(name, schema);
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: JsonObject = {};
    // Enumerable keys only: TypeBox keeps its markers (`~kind`, `~optional`) non-enumerable.
    for (const key of Object.keys(schema)) {
      if (key === '$id') continue;
      const v = schema[key];
      out[key] = DATA_KEYWORDS.has(key) ? (JSON.parse(JSON.stringify(v)) as Json) : this.convert(v, false);
    }
    return out;
  }
}

// ---- What each operation answers ----------------------------------------------------------------------------

interface Outcome {
  description: string;
  schema?: TSchema | JsonObject;
  /** application/json unless said. */
  contentType?: string;
  headers?: Record<string, string>;
  /** No body (204, 304). */
  empty?: true;
  /** Also answers `text/csv` with `format=csv`. */
  alsoCsv?: true;
}

const STRING = { type: 'string' } as const;
const ANY_OBJECT = { type: 'object' } as const;
const ok = (schema?: Outcome['schema'], description = 'OK'): Outcome => ({ description, ...(schema ? { schema } : {}) });
const created = (schema?: Outcome['schema']): Outcome => ({ description: 'Created', ...(schema ? { schema } : {}) });
/** A list that answers CSV too (`format=csv`, at most 10,000 rows, the next page in a `Link` header). */
const withCsv = (outcome: Outcome): Outcome => ({ ...outcome, alsoCsv: true });
const ETAG_HEADERS = { ETag: 'Strong validator of the definitions; send it back in If-None-Match' };
const DEFINITIONS: Record<string, Outcome> = {
  200: { description: 'The definitions', schema: R.LocalEvaluation, headers: ETAG_HEADERS },
  304: { description: 'Not modified (If-None-Match matched the ETag)', empty: true },
};

/** Success answers that differ from the defaults (`successOf`), by operation. */
const SUCCESS: Record<string, Record<string, Outcome>> = {
  schema: { 200: { description: 'This document', schema: ANY_OBJECT, contentType: OPENAPI_MEDIA_TYPE } },
  capture: { 200: ok(R.CaptureAccepted) },
  'recordings.capture': { 200: ok(R.CaptureAccepted, 'Every snapshot chunk is on disk') },
  'recordings.list': { 200: ok(R.SessionRecordingList) },
  'recordings.retrieve': { 200: ok(R.SessionRecording) },
  'recordings.update': { 200: ok(R.SessionRecording) },
  'recordings.snapshots': {
    200: { description: 'Without `source`: the sources (one blob per chunk). With `source=blob_v2`: the chunks\' rrweb events as JSONL, one `[window_id, event]` per line', schema: R.SnapshotSources },
  },
  engage: { 200: ok(R.CaptureAccepted) },
  fault: { 200: ok(ANY_OBJECT, 'Apply loops paused or resumed'), 202: ok(ANY_OBJECT, 'The fault is under way') },
  stats: { 200: ok(ANY_OBJECT, 'Node-wide ingestion and storage counters') },
  backup: { 201: ok(ANY_OBJECT, 'The backup was written') },
  decide: { 200: ok(R.DecideResponse) },
  'decide.defaults': { 200: ok(R.DecideResponse, 'The defaults posthog-js needs, no evaluation') },
  flags: { 200: ok(R.FlagsResponse) },
  'flags.defaults': { 200: ok(R.FlagsResponse, 'An empty answer, no evaluation') },
  remote_config: { 200: ok(R.RemoteConfig) },
  'remote_config.js': { 200: { description: 'A script that records the remote config for posthog-js', schema: STRING, contentType: 'application/javascript' } },
  'sdk.surveys': { 200: ok(R.SdkSurveys) },
  'sdk.early_access_features': { 200: ok(R.SdkEarlyAccessFeatures) },
  'sdk.web_experiments': { 200: ok(R.SdkWebExperiments) },
  'sdk.product_tours': { 200: ok(R.SdkProductTours) },
  'flags.definitions': DEFINITIONS,
  'flags.local_evaluation_legacy': DEFINITIONS,
  'flags.local_evaluation': DEFINITIONS,
  'flags.stream': {
    200: {
      description: 'Server-Sent Events: `version` on connect, `change` {version, keys} per change, `reset` when Last-Event-ID cannot be resumed; '
        + 'without an Authorization header (project API key in ?token=) only `changed`. Comment `: ping` every 15 s',
      schema: STRING, contentType: 'text/event-stream',
    },
  },
  'flags.list': { 200: ok(R.FeatureFlagPage) },
  'flags.list_legacy': { 200: ok(R.FeatureFlagPage) },
  'flags.create': { 201: created(R.FeatureFlag) },
  'flags.retrieve': { 200: ok(R.FeatureFlag) },
  'flags.update': { 200: ok(R.FeatureFlag) },
  'flags.user_blast_radius': { 200: ok(R.BlastRadius) },
  'flags.usage': { 200: ok(R.FlagUsage) },
  'flags.revert': { 200: ok(R.FeatureFlag, 'The flag as reverted, saved as a new version') },
  'ofrep.evaluate': { 200: ok(R.OfrepEvaluation, 'The evaluation (OFREP); errors carry errorCode and errorDetails too') },
  'ofrep.bulk': {
    200: { description: 'Every live flag evaluated (OFREP)', schema: R.OfrepBulk, headers: { ETag: 'Strong validator of this answer; send it back in If-None-Match' } },
    304: { description: 'Not modified (If-None-Match matched the ETag)', empty: true },
  },
  'scheduled_changes.list': { 200: ok(R.ScheduledChangePage) },
  'scheduled_changes.create': { 201: created(R.ScheduledChange) },
  'scheduled_changes.retrieve': { 200: ok(R.ScheduledChange) },
  'scheduled_changes.update': { 200: ok(R.ScheduledChange) },
  'flags.remote_config': { 200: ok({ type: ['string', 'null'] }, 'The payload of a remote-configuration flag as JSON text (null without one)') },
  'auth.session': { 200: ok(R.SessionState) },
  'auth.login': { 200: { description: 'Signed in: sets the session cookie', schema: R.SignedIn, headers: { 'Set-Cookie': `${SESSION_COOKIE}=…; HttpOnly; SameSite=Lax` } } },
  'auth.logout': { 200: { description: 'Signed out: clears the session cookie', schema: R.Success, headers: { 'Set-Cookie': `${SESSION_COOKIE}=; Max-Age=0` } } },
  'projects.list': { 200: ok(R.ProjectPage) },
  'projects.create': { 201: created(R.Project) },
  'projects.retrieve': { 200: ok(R.Project) },
  'projects.update': { 200: ok(R.Project) },
  'cohorts.add_persons': { 200: ok(R.Success) },
  'cohorts.remove_person': { 200: ok(R.Success) },
  'persons.split': { 201: created(R.Success) },
  'persons.list': { 200: withCsv(ok(R.PersonPage)) },
  'persons.create': { 201: created(R.Person) },
  'persons.retrieve': { 200: ok(R.Person) },
  'persons.update': { 200: ok(R.Person) },
  'events.list': { 200: withCsv(ok(R.EventPage)) },
  'events.retrieve': { 200: ok(R.Event) },
  'event_definitions.list': { 200: ok(R.EventDefinitionPage) },
  'event_definitions.retrieve': { 200: ok(R.EventDefinition) },
  'event_definitions.update': { 200: ok(R.EventDefinition) },
  'property_definitions.list': { 200: ok(R.PropertyDefinitionPage) },
  'property_definitions.retrieve': { 200: ok(R.PropertyDefinition) },
  'property_definitions.update': { 200: ok(R.PropertyDefinition) },
  'cohorts.list': { 200: ok(R.CohortPage) },
  'cohorts.create': { 201: created(R.Cohort) },
  'cohorts.retrieve': { 200: ok(R.Cohort) },
  'cohorts.update': { 200: ok(R.Cohort) },
  'annotations.list': { 200: ok(R.AnnotationPage) },
  'annotations.create': { 201: created(R.Annotation) },
  'annotations.retrieve': { 200: ok(R.Annotation) },
  'annotations.update': { 200: ok(R.Annotation) },
  'actions.list': { 200: withCsv(ok(R.ActionList)) },
  'actions.create': { 201: created(R.Action) },
  'actions.retrieve': { 200: ok(R.Action) },
  'actions.update': { 200: ok(R.Action) },
  'experiments.list': { 200: ok(R.ExperimentPage) },
  'experiments.create': { 201: created(R.Experiment) },
  'experiments.retrieve': { 200: ok(R.Experiment) },
  'experiments.update': { 200: ok(R.Experiment) },
  'insights.list': { 200: ok(R.InsightPage) },
  'insights.create': { 201: created(R.Insight) },
  'insights.retrieve': { 200: ok(R.Insight) },
  'insights.update': { 200: ok(R.Insight) },
  'insights.trend': { 200: ok(R.InsightAnswer) },
  'insights.funnel': { 200: ok(R.InsightAnswer) },
  'insights.retention': { 200: ok(R.InsightAnswer) },
  'insights.path': { 200: ok(R.InsightAnswer) },
  'dashboards.list': { 200: ok(R.DashboardPage) },
  'dashboards.create': { 201: created(R.Dashboard) },
  'dashboards.retrieve': { 200: ok(R.Dashboard) },
  'dashboards.update': { 200: ok(R.Dashboard) },
  'personal_keys.list': { 200: ok(R.PersonalApiKeyList) },
  'personal_keys.create': { 201: created(R.PersonalApiKey) },
  'personal_keys.current': { 200: ok(R.PersonalApiKey) },
  'personal_keys.retrieve': { 200: ok(R.PersonalApiKey) },
  'users.me': { 200: ok(R.User) },
  'users.update': { 200: ok(R.User) },
  'flags.activity': { 200: ok(R.ActivityPage) },
  'flags.all_activity': { 200: ok(R.ActivityPage) },
  'persons.activity': { 200: ok(R.ActivityPage) },
  'persons.all_activity': { 200: ok(R.ActivityPage) },
  'actions.activity': { 200: ok(R.ActivityPage) },
  'actions.all_activity': { 200: ok(R.ActivityPage) },
  'experiments.activity': { 200: ok(R.ActivityPage) },
  'experiments.all_activity': { 200: ok(R.ActivityPage) },
  'persons.trends': { 200: ok(R.ActorsAnswer) },
  'persons.stickiness': { 200: ok(R.ActorsAnswer) },
  'persons.lifecycle': { 200: ok(R.ActorsAnswer) },
  'persons.funnel': { 200: ok(R.ActorsAnswer) },
  'persons.path': { 200: ok(R.ActorsAnswer) },
  'persons.correlation': { 200: ok(R.ActorsAnswer) },
  'members.list': { 200: ok(R.MemberPage) },
  'organizations.retrieve': { 200: ok(R.Organization) },
  'organizations.update': { 200: ok(R.Organization) },
  'query.run': {
    200: ok(R.QueryAnswer, 'The answer (`results`, `is_cached`, `last_refresh`, …)'),
    202: ok(ANY_OBJECT, 'Started (refresh=async): `query_status`; poll GET query/{id}/'),
  },
};

/** Hard deletes PostHog refuses (soft delete is `PATCH {"deleted": true}`): DELETE answers 405. */
const SOFT_DELETE = new Set(['flags.delete', 'cohorts.delete', 'experiments.delete', 'actions.delete', 'insights.delete', 'dashboards.delete']);

function successOf(route: RouteDef): Record<string, Outcome> {
  const special = SUCCESS[route.op];
  if (special) return special;
  if (SOFT_DELETE.has(route.op)) return {};
  switch (route.method) {
    case 'DELETE':
      return { 204: { description: 'Deleted', empty: true } };
    case 'POST':
      return route.op.endsWith('.create') ? { 201: created() } : { 200: ok() };
    default:
      return { 200: ok() };
  }
}

/** The error answers, each with the error body (components.responses). */
const ERROR_RESPONSES: Record<string, { status: string; description: string; retryAfter?: true }> = {
  BadRequest: { status: '400', description: 'Invalid request: validation_error (attr names the field), parse_error, invalid_payload, no_data…' },
  Unauthorized: { status: '401', description: 'No credentials, or credentials that are not valid' },
  Forbidden: { status: '403', description: 'The key lacks the scope, project or organization the route needs; or a cookie-authenticated write without its CSRF token' },
  NotFound: { status: '404', description: 'No such project or object' },
  MethodNotAllowed: { status: '405', description: 'Hard delete is not allowed: PATCH with {"deleted": true} instead' },
  Conflict: { status: '409', description: 'A backup is already running' },
  PayloadTooLarge: { status: '413', description: 'The body (or a layer of it once decompressed) passes QUILL_MAX_BODY_MB' },
  TooManyRequests: { status: '429', description: 'Throttled: too many analyses waiting on this worker, or too many failed sign-ins', retryAfter: true },
  ServerError: { status: '5XX', description: '500 unexpected; 503 storage unavailable, overloaded (with Retry-After) or shutting down; 504 an analysis past its time budget', retryAfter: true },
};

/** Public operations that authenticate the project token (the others need nothing). */
const TOKEN_OPS = new Set(['capture', 'engage', 'recordings.capture', 'decide', 'flags', 'remote_config', 'remote_config.js', 'ofrep.evaluate', 'ofrep.bulk',
  'sdk.surveys', 'sdk.early_access_features', 'sdk.web_experiments', 'sdk.product_tours']);

function errorsOf(route: RouteDef): string[] {
  const names: string[] = [];
  const personal = route.auth === 'personal';
  if (route.auth !== 'none' && route.op !== 'auth.session') names.push('BadRequest');
  if (personal || TOKEN_OPS.has(route.op)) names.push('Unauthorized');
  if (personal) names.push('Forbidden');
  // OFREP answers 404 FLAG_NOT_FOUND for a key no live flag has.
  if (personal || route.op === 'fault' || route.op === 'ofrep.evaluate') names.push('NotFound');
  if (SOFT_DELETE.has(route.op)) names.push('MethodNotAllowed');
  if (route.op === 'backup') names.push('Conflict');
  if (route.body !== 'none' && route.method !== 'GET') names.push('PayloadTooLarge');
  if (isAnalysis(route.op) || route.op === 'auth.login') names.push('TooManyRequests');
  names.push('ServerError');
  return names;
}

// ---- Authentication -----------------------------------------------------------------------------------------

const SECURITY_SCHEMES: JsonObject = {
  PersonalApiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'A personal API key (phx_…) as `Authorization: Bearer`. An operation lists the scope it needs ' +
      '(`<object>:read|write`; `write` implies `read`, `*` grants all); a key confined to projects or organizations ' +
      'reaches only those.',
  },
  PersonalApiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'personal_api_key',
    description: 'The personal API key in the query string (or as `personal_api_key` in a JSON body); same scopes.',
  },
  SessionCookie: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: `The console's session (POST /api/login), with its user's rights in their organization. A request ` +
      'that is not GET must echo the session\'s csrf_token in X-CSRFToken.',
  },
  OperatorKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator key (QUILL_OPERATOR_KEY) as `Authorization: Bearer`, where an operation accepts it.',
  },
  ProjectApiKeyBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'OFREP: the project API key (phc_…) as `Authorization: Bearer`.',
  },
  ProjectApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: "OFREP: the project API key (phc_…) in OFREP's `X-API-Key` header.",
  },
  ProjectApiKey: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The project API key (phc_…): in the body (`api_key`, `token` or `$token`, also inside the first ' +
      'event of a batch or the form field `api_key`), or in the query (`token` or `api_key`).',
  },
};

function securityOf(route: RouteDef): Json[] {
  switch (route.auth) {
    case 'personal': {
      const scopes = route.scope ? [route.scope] : [];
      return [
        { PersonalApiKey: scopes },
        { PersonalApiKeyQuery: scopes },
        { SessionCookie: [] },
        ...(route.operator ? [{ OperatorKey: [] }] : []),
      ];
    }
    case 'public':
      // A share link's token is its path; a password-protected one's unlock token is a Bearer of its own.
      if (route.op.startsWith('shared.')) return [];
      if (route.keyHeader) return [{ ProjectApiKeyBearer: [] }, { ProjectApiKeyHeader: [] }];
      return TOKEN_OPS.has(route.op) && !route.path.includes(':token') ? [{ ProjectApiKey: [] }] : [];
    case 'login':
      return route.method === 'GET' ? [{ SessionCookie: [] }, {}] : [];
    case 'none':
      return [];
  }
}

// ---- Parameters and bodies ----------------------------------------------------------------------------------

const PATH_PARAMETERS: Record<string, string> = {
  project_id: 'The project: its numeric id, or `@current` (the user\'s current project)',
  organization_id: 'The organization: its uuid, numeric id, or `@current`',
  token: 'The project API key (phc_…)',
  access_token: 'A share link\'s token (its `access_token`)',
  password_id: 'A share link password\'s id',
  kind: 'throw, crash, pause-apply, resume-apply or block (only with QUILL_FAULT_INJECTION=1; 404 otherwise)',
  id: 'The object\'s id',
  access_id: 'The role access entry\'s id',
  membership_id: 'The role membership\'s id',
  key: 'The flag\'s key',
};
/** Where `:id` means more than a numeric id. */
const ID_NOTES: Record<string, string> = {
  'flags.remote_config': 'The flag\'s id or key',
  'events.retrieve': 'The event\'s uuid',
  'query.status': 'The query id from a 202',
  'query.cancel': 'The query id from a 202',
};

const query = (name: string, description: string, schema: JsonObject = STRING, required = false): JsonObject =>
  ({ name, in: 'query', required, description, schema });

/**
 * Parameters that recur (`project_id`, paging…) become components named `<in>.<name>`, referenced where they
 * recur; a parameter of that name worded differently elsewhere stays inline there.
 */
class ParameterComponents {
  private readonly seen = new Map<string, { text: string; param: JsonObject; uses: number }>();

  /** First pass: counts each parameter. */
  count(param: JsonObject): void {
    const key = `${String(param.in)}.${String(param.name)}`;
    const known = this.seen.get(key);
    if (!known) this.seen.set(key, { text: JSON.stringify(param), param, uses: 1 });
    else if (known.text === JSON.stringify(param)) known.uses++;
  }

  use(param: JsonObject): Json {
    const key = `${String(param.in)}.${String(param.name)}`;
    const known = this.seen.get(key);
    return known && known.uses > 1 && known.text === JSON.stringify(param) ? { $ref: `#/components/parameters/${key}` } : param;
  }

  sorted(): JsonObject {
    const shared = [...this.seen].filter(([, p]) => p.uses > 1).map(([key]) => key).sort();
    return Object.fromEntries(shared.map((key) => [key, this.seen.get(key)!.param]));
  }
}

const JSON_TEXT = (what: string) => `${what}, as JSON text (URL-encoded)`;
const PROPERTY_FILTERS = query('properties', JSON_TEXT('PostHog property filters: a list of {key, value, operator, type}, or an AND/OR group'));

/** Filters of the lists, as the handlers read them (src/worker/ops). */
const LIST_FILTERS: Record<string, JsonObject[]> = {
  'flags.list': [
    query('search', 'Part of the key or name'), query('active', 'true, false, or STALE (the flags ready for clean-up: stale or inactive)'),
    query('status', 'active, inactive or stale'),
  ],
  'flags.usage': [query('days', 'How many days, up to today (1 to 366, default 30)')],
  'scheduled_changes.list': [query('model_name', 'FeatureFlag'), query('record_id', 'The flag id')],
  'persons.list': [
    query('search', 'Part of an e-mail, name or distinct id'), query('distinct_id', 'The person with this distinct id'),
    query('email', 'The persons with this email property'), query('uuid', 'The person with this uuid'),
    query('cohort', 'A cohort id: its members only'), PROPERTY_FILTERS, query('format', 'csv: the rows as CSV'),
  ],
  'events.list': [
    query('event', 'One event name'), query('distinct_id', 'One distinct id'), query('person_id', 'The events of one person (id or uuid)'),
    query('after', 'Events at or after this time (ISO 8601, or relative such as -24h)'), query('before', 'Events before this time'),
    PROPERTY_FILTERS, query('orderBy', JSON_TEXT('["timestamp"] (ascending) or ["-timestamp"] (newest first, the default)')),
    query('select', JSON_TEXT('Columns to answer instead of events (a documented subset of HogQL expressions)')),
    query('where', JSON_TEXT('Conditions on the selected columns')), query('format', 'csv: the rows as CSV'),
  ],
  'event_definitions.list': [
    query('search', 'Part of the name'),
    query('event_type', 'event (default), event_custom, event_posthog, action_event or all', { type: 'string', enum: ['event', 'event_custom', 'event_posthog', 'action_event', 'all'] }),
  ],
  'property_definitions.list': [
    query('type', 'event (default), person or group', { type: 'string', enum: ['event', 'person', 'group'] }),
    query('group_type_index', 'With type=group: the group type (0 to 4)'),
    query('search', 'Words that must all be part of the name (case-insensitive)'),
    query('properties', 'Comma-separated exact names: only these'),
    query('event_names', JSON_TEXT('Event names: rows say is_seen_on_filtered_events, and those seen come first')),
    query('filter_by_event_names', 'true, with event_names: only the properties seen on those events'),
    query('is_feature_flag', 'true: only the $feature/… properties; false: the others'),
    query('excluded_properties', JSON_TEXT('Names to leave out')),
    query('is_numerical', 'true: numeric properties only; false: the others'),
    query('exclude_hidden', 'Accepted for PostHog clients; no property is hidden here'),
  ],
  'actions.list': [query('search', 'Part of the name'), query('format', 'csv: the rows as CSV')],
  'annotations.list': [query('scope', 'dashboard_item, dashboard, project or organization'), query('dashboardItemId', 'The insight\'s id'), query('search', 'Part of the content'), query('after', 'Created after (ISO)'), query('before', 'Created before (ISO)'), query('deleted', 'true: the deleted ones')],
  'experiments.list': [
    query('search', 'Part of the name'), query('archived', 'true or false'),
    query('status', 'draft, running, stopped or all', { type: 'string', enum: ['draft', 'running', 'stopped', 'all'] }),
  ],
};

/** The legacy insight endpoints and the persons behind a point: they read the filter parameters below (GET). */
const FILTERED_ANALYSES: ReadonlySet<string> = new Set([
  'insights.trend', 'insights.retention', 'insights.funnel', 'insights.path', 'insights.correlation',
  'persons.trends', 'persons.funnel', 'persons.path', 'persons.retention', 'persons.lifecycle', 'persons.stickiness', 'persons.correlation',
]);

/** PostHog's legacy filter parameters, which every insight endpoint and the persons behind a point read. */
const ANALYSIS_FILTERS: JsonObject[] = [
  query('events', JSON_TEXT('Series of events: [{id, math, math_property, properties, order, …}]')),
  query('actions', JSON_TEXT('Series of actions: [{id, type: "actions", math, …}]')),
  query('date_from', 'Start: a date, an ISO time or relative (-7d, -1mStart, all)'), query('date_to', 'End, the same forms (default now)'),
  query('interval', 'hour, day, week or month', { type: 'string', enum: ['hour', 'day', 'week', 'month'] }),
  PROPERTY_FILTERS, query('filter_test_accounts', "true applies the project's test-account filters"),
  query('breakdown', 'A property to break the series down by (or a cohort id list)'), query('breakdown_type', 'event, person, group or cohort'),
  query('insight', 'TRENDS, LIFECYCLE, STICKINESS, FUNNELS, RETENTION or PATHS where the endpoint serves several'),
  query('display', 'How the answer is shaped, e.g. ActionsLineGraph, ActionsLineGraphCumulative, BoldNumber, ActionsTable'),
  query('refresh', 'true: compute again instead of answering from the cache'),
];

function parametersOf(route: RouteDef, paged: boolean): JsonObject[] {
  const params: JsonObject[] = [];
  for (const match of route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = match[1]!;
    const note = name === 'id' ? ID_NOTES[route.op] ?? (route.op.startsWith('persons.') ? 'The person\'s numeric id or uuid' : undefined) : undefined;
    params.push({ name, in: 'path', required: true, description: note ?? PATH_PARAMETERS[name] ?? name, schema: STRING });
  }
  if (route.projectFrom === 'token') params.push(query('token', 'The project API key naming the project', STRING, true));
  if (route.projectFrom === 'token-or-path') params.push(query('token', 'The project API key naming the project (else the path\'s, or the user\'s current project)'));
  if (route.op === 'capture' || route.op === 'engage') {
    if (route.method === 'GET') params.push(query('data', 'The payload (JSON, base64, or as `compression` says)', STRING, true));
    params.push(query('compression', 'gzip-js, lz64 or base64; the payload is sniffed as well, so a wrong hint is tolerated'));
  }
  if (route.op === 'decide') params.push(query('v', 'Answer version: 1 (default) enabled keys, 2 values, 3 payloads, 4 details', { type: 'string', enum: ['1', '2', '3', '4'] }));
  if (route.op === 'flags') {
    params.push(query('v', 'Answer version: 1 values and payloads, 2 (default) with details', { type: 'string', enum: ['1', '2'] }));
    params.push(query('config', 'true adds the remote-config fields (also the default when neither v nor config is given)'));
  }
  if (route.op === 'schema') params.push(query('format', 'Accepted for PostHog\'s clients (drf-spectacular\'s ?format=json); the answer is JSON whatever it says'));
  if (paged) {
    params.push(query('limit', 'Page size (at most 1,000)', { type: 'integer', minimum: 1 }));
    params.push(query('offset', 'Rows to skip', { type: 'integer', minimum: 0 }));
  }
  params.push(...(LIST_FILTERS[route.op] ?? []));
  if (FILTERED_ANALYSES.has(route.op) && route.method === 'GET') params.push(...ANALYSIS_FILTERS);
  if (isAnalysis(route.op)) params.push(query('timeout', 'Seconds: lowers the time budget for this request (never above QUILL_QUERY_TIMEOUT_S)', { type: 'number', exclusiveMinimum: 0 }));
  if (route.body === 'raw' && route.method !== 'GET' && route.op !== 'fault') {
    params.push({ name: 'Content-Encoding', in: 'header', required: false, description: 'gzip or deflate when the body is compressed', schema: STRING });
  }
  return params;
}

/** A raw public body, in every encoding the decoder accepts (src/domain/ingest/decode-payload.ts). */
function rawBody(payload: TSchema, components: SchemaComponents, what: string): JsonObject {
  return {
    required: true,
    description: `${what} As JSON; gzip-compressed (Content-Encoding: gzip, or ?compression=gzip-js); base64 of the ` +
      'JSON; LZ-String base64 (?compression=lz64); or a form whose `data` field holds any of those. Encodings are ' +
      'sniffed, so a mislabelled body is still read.',
    content: {
      'application/json': { schema: components.use(payload) },
      'text/plain': { schema: { type: 'string', description: 'The JSON, base64 or LZ-String text (sendBeacon and older SDKs)' } },
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['data'],
          properties: {
            data: { type: 'string', description: 'The payload: JSON, base64 or LZ-String base64' },
            compression: { type: 'string' },
            api_key: { type: 'string' },
          },
        },
      },
      'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/gzip', description: 'The gzip-compressed JSON' } },
    },
  };
}

function requestBodyOf(route: RouteDef, components: SchemaComponents): JsonObject | null {
  if (route.body === 'none' || route.method === 'GET') return null;
  if (route.body === 'json') {
    const schema = route.schema ? components.use(route.schema) : ANY_OBJECT;
    return { required: false, description: 'A JSON object (an empty body counts as {}).', content: { 'application/json': { schema } } };
  }
  if (route.op === 'capture' || route.op === 'engage') return rawBody(R.CapturePayload, components, 'Events.');
  if (route.op === 'recordings.capture') return rawBody(R.CapturePayload, components, '$snapshot events (their rrweb events in properties.$snapshot_data).');
  if (route.op === 'decide' || route.op === 'flags') return rawBody(R.FlagsRequest, components, 'Who to evaluate the flags for.');
  return null;
}

// ---- The document -------------------------------------------------------------------------------------------

const METHOD_ORDER = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];

/** operationId: the worker op, or with the method (and the path) where several routes share one op. */
function operationIds(routes: readonly RouteDef[]): Map<RouteDef, string> {
  const count = (key: (r: RouteDef) => string) => {
    const n = new Map<string, number>();
    for (const r of routes) n.set(key(r), (n.get(key(r)) ?? 0) + 1);
    return n;
  };
  const byOp = count((r) => r.op);
  const byOpMethod = count((r) => `${r.op} ${r.method}`);
  const ids = new Map<RouteDef, string>();
  for (const r of routes) {
    let id = r.op;
    if (byOp.get(r.op)! > 1) id += `_${r.method.toLowerCase()}`;
    if (byOpMethod.get(`${r.op} ${r.method}`)! > 1) {
      id += `_${r.path.split('/').filter((s) => s && !s.startsWith(':')).join('_').replace(/[^A-Za-z0-9_]/g, '_')}`;
    }
    ids.set(r, id);
  }
  if (new Set(ids.values()).size !== routes.length) throw new Error('operationIds are not unique');
  return ids;
}

const tagOf = (op: string): string => op.split('.')[0]!;

function responseJson(outcome: Outcome, components: SchemaComponents): JsonObject {
  const out: JsonObject = { description: outcome.description };
  if (outcome.headers) {
    out.headers = Object.fromEntries(Object.entries(outcome.headers).map(([name, description]) => [name, { description, schema: STRING }]));
  }
  // Without a schema: a JSON body whose shape this description leaves open.
  if (!outcome.empty) out.content = { [outcome.contentType ?? 'application/json']: outcome.schema ? { schema: components.use(outcome.schema as TSchema) } : {} };
  if (outcome.alsoCsv) (out.content as JsonObject)['text/csv'] = { schema: STRING };
  return out;
}

const PAGES = new Set<TSchema>([R.FeatureFlagPage, R.ProjectPage, R.PersonPage, R.EventDefinitionPage, R.PropertyDefinitionPage, R.CohortPage, R.ExperimentPage, R.InsightPage, R.DashboardPage]);

export function openApiDocument(routes: readonly RouteDef[], info: DescriptionInfo): JsonObject {
  const components = new SchemaComponents();
  const parameterComponents = new ParameterComponents();
  const ids = operationIds(routes);
  const pagedOf = (route: RouteDef) => Object.values(successOf(route)).some((o) => o.schema !== undefined && PAGES.has(o.schema as TSchema));
  for (const route of routes) for (const p of parametersOf(route, pagedOf(route))) parameterComponents.count(p);
  const paths = new Map<string, Map<string, JsonObject>>();
  for (const route of routes) {
    const success = successOf(route);
    const responses: JsonObject = {};
    for (const [status, outcome] of Object.entries(success)) responses[status] = responseJson(outcome, components);
    for (const name of errorsOf(route)) responses[ERROR_RESPONSES[name]!.status] = { $ref: `#/components/responses/${name}` };
    const operation: JsonObject = { operationId: ids.get(route)!, tags: [tagOf(route.op)] };
    if (SOFT_DELETE.has(route.op)) operation.description = 'Always 405: soft delete with PATCH {"deleted": true}.';
    if (route.op === 'flags.remote_config') operation.description = 'A flag that is not a remote-configuration flag answers 404 with an empty body.';
    const parameters = parametersOf(route, pagedOf(route));
    if (parameters.length > 0) operation.parameters = parameters.map((p) => parameterComponents.use(p));
    const body = requestBodyOf(route, components);
    if (body) operation.requestBody = body;
    operation.responses = responses;
    operation.security = securityOf(route);
    const path = openApiPath(route.path);
    if (!paths.has(path)) paths.set(path, new Map());
    const methods = paths.get(path)!;
    if (methods.has(route.method)) throw new Error(`${route.method} ${route.path} twice`);
    methods.set(route.method, operation);
  }
  const pathsJson: JsonObject = {};
  for (const path of [...paths.keys()].sort()) {
    const methods = paths.get(path)!;
    pathsJson[path] = Object.fromEntries(METHOD_ORDER.filter((m) => methods.has(m)).map((m) => [m.toLowerCase(), methods.get(m)!]));
  }
  const errorSchema = components.use(R.ErrorBody);
  const responses: JsonObject = {};
  for (const name of Object.keys(ERROR_RESPONSES).sort()) {
    const e = ERROR_RESPONSES[name]!;
    responses[name] = {
      description: e.description,
      ...(e.retryAfter ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying (429; 503 overloaded)', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: errorSchema } },
    };
  }
  const document: JsonObject = {
    openapi: '3.1.1',
    info: {
      title: 'Quill',
      version: info.version,
      description:
        "Quill speaks PostHog's wire protocol: event ingestion, feature flags (remote and local evaluation) and the " +
        'management API its SDKs and console use. This description is generated from the route table at start-up. ' +
        'Every path also answers with a trailing slash (PostHog\'s form). Public routes read the project API key ' +
        '(ProjectApiKey); private routes take a personal API key with the scope listed on each operation, or the ' +
        "console's session cookie. Errors have PostHog's body `{type, code, detail, attr}`. Lists document their " +
        'filters and the insight endpoints PostHog\'s common legacy filter parameters (each kind reads more of ' +
        'them: funnel_window_days, retention_type, path_type, …). The shape of a few answers (roles, role access, ' +
        'experiment results, correlation, property values and timelines) is documented as a JSON object.',
    },
    tags: [...new Set(routes.map((r) => tagOf(r.op)))].sort().map((name) => ({ name })),
    paths: pathsJson,
    components: {
      schemas: components.sorted(),
      parameters: parameterComponents.sorted(),
      responses,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
  // A tree of fresh objects: parts above are shared (the error schema's $ref, module constants), and a consumer
  // that edits the document in place (a $ref resolver) must not see its edits elsewhere or in the next document.
  return JSON.parse(JSON.stringify(document)) as JsonObject;
}
