/**
 * Shapes the API description documents (src/front/openapi.ts) that no request path checks: the payloads of the
 * public routes (raw bodies, decoded and checked by the workers) and the response bodies. Each mirrors what the
 * code builds — the error catalogue (src/protocol/errors.ts), the flag answers (src/worker/ops/decide.ts,
 * flags-response.ts), the local-evaluation definitions (src/domain/flags/definitions.ts), the serializers of
 * src/worker/ops — and test/e2e/openapi.test.ts checks real answers against them, so they cannot drift apart
 * unnoticed. Every schema with an `$id` becomes a named component of the description; objects stay open
 * (`additionalProperties`) where PostHog's answers carry more fields than Quill's.
 */
import Type, { type TSchema } from 'typebox';
import { WEB_VITALS } from '../domain/sdk-settings.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** A JSON object whose values all follow `value` (a map keyed by flag key, project id…). */
const MapOf = (value: TSchema, description?: string) =>
  Type.Object({}, { additionalProperties: value, ...(description ? { description } : {}) });
const OpenObject = (description?: string) => Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

// ---- Errors -------------------------------------------------------------------------------------------------

/** Every error body (src/protocol/errors.ts); a few endpoints add fields of their own (`message`). */
export const ErrorBody = Type.Object({
  type: Type.String({ description: 'validation_error, invalid_request, authentication_error, throttled_error, client_error or server_error' }),
  code: Type.String({ description: 'What went wrong, e.g. required, parse_error, not_authenticated, permission_denied, not_found' }),
  detail: Type.String({ description: 'A sentence for people' }),
  attr: Nullable(Type.String({ description: 'The field at fault (nested fields joined with __)' })),
}, { additionalProperties: true, $id: 'Error', description: "PostHog's error body (drf-exceptions-hog)" });

// ---- Public payloads ----------------------------------------------------------------------------------------

const EVENT_FIELDS = {
  event: Type.Optional(Type.String({ description: 'The event name (required per event)' })),
  distinct_id: Type.Optional(Type.Unknown({ description: 'Who did it (a string or number; also read from properties.distinct_id)' })),
  properties: Type.Optional(OpenObject('Event properties; `$set`/`$set_once` update the person')),
  timestamp: Type.Optional(Type.String({ description: 'ISO 8601; defaults to the time of receipt' })),
  uuid: Type.Optional(Type.String({ description: 'Idempotency: an event whose uuid is already stored is not stored twice' })),
  $set: Type.Optional(OpenObject()),
  $set_once: Type.Optional(OpenObject()),
};
const TOKEN_FIELDS = {
  api_key: Type.Optional(Type.String({ description: 'The project API key (phc_…); `token` and `$token` are read too' })),
  token: Type.Optional(Type.String()),
};

export const CaptureEvent = Type.Object({ ...TOKEN_FIELDS, ...EVENT_FIELDS }, { additionalProperties: true, $id: 'CaptureEvent' });

/** One event, a batch envelope, or a bare list of events (src/domain/ingest/events-of.ts). */
export const CapturePayload = Type.Union([
  CaptureEvent,
  Type.Object({
    ...TOKEN_FIELDS,
    batch: Type.Array(CaptureEvent),
    sent_at: Type.Optional(Type.String({ description: 'The client clock when sending: corrects event timestamps' })),
    historical_migration: Type.Optional(Type.Boolean()),
  }, { additionalProperties: true }),
  Type.Array(CaptureEvent),
], { $id: 'CapturePayload', description: 'One event, a batch envelope `{api_key, batch: [...]}`, or a list of events' });

/** What `/decide/` and `/flags/` read from their payload (src/worker/ops/decide.ts). */
export const FlagsRequest = Type.Object({
  ...TOKEN_FIELDS,
  distinct_id: Type.Optional(Type.Unknown({ description: 'Required unless disable_flags is true' })),
  $anon_distinct_id: Type.Optional(Type.String({ description: 'The previous anonymous id (experience continuity)' })),
  person_properties: Type.Optional(OpenObject()),
  groups: Type.Optional(MapOf(Type.Unknown(), 'Group type → group key')),
  group_properties: Type.Optional(MapOf(OpenObject(), 'Group type → properties')),
  device_id: Type.Optional(Type.String()),
  flag_keys_to_evaluate: Type.Optional(Type.Array(Type.String())),
  evaluation_runtime: Type.Optional(Type.String({ description: 'server, client or all' })),
  evaluation_contexts: Type.Optional(Type.Array(Type.String())),
  disable_flags: Type.Optional(Type.Boolean()),
}, { additionalProperties: true, $id: 'FlagsRequest' });

// ---- Ingestion and flag evaluation answers ------------------------------------------------------------------

export const CaptureAccepted = Type.Object({
  status: Type.Literal(1),
}, { additionalProperties: false, $id: 'CaptureAccepted', description: 'Every event that can be stored is durable' });

/** The remote-config fields decide and `/array/:token/config` answer with (decide.ts `configFields`). */
const CONFIG_FIELDS = {
  supportedCompression: Type.Array(Type.String()),
  sessionRecording: Type.Unknown(),
  surveys: Type.Unknown(),
  heatmaps: Type.Boolean(),
  capturePerformance: Type.Union([Type.Literal(false), Type.Object({
    network_timing: Type.Boolean(),
    web_vitals: Type.Boolean(),
    web_vitals_allowed_metrics: Nullable(Type.Array(Type.String())),
  })]),
  autocaptureExceptions: Type.Boolean(),
  errorTracking: Type.Object({ autocaptureExceptions: Type.Boolean(), suppressionRules: Type.Array(Type.Unknown()) }),
  autocapture_opt_out: Type.Boolean(),
  captureDeadClicks: Type.Boolean(),
  elementsChainAsString: Type.Boolean(),
  siteApps: Type.Array(Type.Unknown()),
  hasFeatureFlags: Type.Boolean(),
  defaultIdentifiedOnly: Type.Boolean(),
};
const LEGACY_CONFIG_FIELDS = {
  config: OpenObject(),
  editorParams: OpenObject(),
  toolbarParams: OpenObject(),
  isAuthenticated: Type.Boolean(),
};

export const RemoteConfig = Type.Object({
  token: Type.String(),
  ...CONFIG_FIELDS,
}, { additionalProperties: true, $id: 'RemoteConfig' });

/** The empty lists posthog-js asks for with `?token=` (src/worker/ops/sdk-lists.ts): PostHog's keys, no entries. */
const EmptyList = (key: string, id: string, description: string) =>
  Type.Object({ [key]: Type.Array(Type.Unknown(), { maxItems: 0 }) }, { additionalProperties: false, $id: id, description });
export const SdkSurveys = EmptyList('surveys', 'SdkSurveys', 'The surveys posthog-js may show: Quill has none');
export const SdkEarlyAccessFeatures = EmptyList('earlyAccessFeatures', 'SdkEarlyAccessFeatures', 'Early access features: Quill has none');
export const SdkWebExperiments = EmptyList('experiments', 'SdkWebExperiments', 'No-code web experiments: Quill has none');
export const SdkProductTours = EmptyList('product_tours', 'SdkProductTours', 'Product tours: Quill has none');

const REASON_CODES = ['condition_match', 'no_condition_match', 'out_of_rollout_bound', 'no_group_type', 'super_condition_value', 'holdout_condition_value', 'flag_disabled', 'missing_dependency'];

export const FlagDetail = Type.Object({
  key: Type.String(),
  enabled: Type.Boolean(),
  variant: Nullable(Type.String()),
  reason: Type.Object({
    code: Type.Union(REASON_CODES.map((c) => Type.Literal(c))),
    condition_index: Nullable(Type.Integer()),
    description: Type.String(),
  }),
  metadata: Type.Object({
    id: Type.Integer(),
    version: Type.Integer(),
    description: Nullable(Type.String()),
    payload: Type.Unknown({ description: 'The payload (JSON text) of the matched value, or null' }),
  }),
  failed: Type.Optional(Type.Boolean({ description: 'Present (true) when the flag could not be evaluated' })),
}, { $id: 'FlagDetail' });

const FLAG_VALUE = Type.Union([Type.Boolean(), Type.String()], { description: 'false, true, or the variant key' });
const FLAG_MEMBERS = {
  featureFlagPayloads: MapOf(Type.Unknown(), 'Flag key → payload of the matched value'),
  errorsWhileComputingFlags: Type.Boolean(),
  requestId: Type.String({ format: 'uuid' }),
  evaluatedAt: Type.Optional(Type.Integer({ description: 'Epoch milliseconds' })),
};

/** `/flags/`: v1 values and payloads, v2 (the default) also `flags`; `config=true` (or no parameters) adds the config fields. */
export const FlagsResponse = Type.Object({
  flags: Type.Optional(MapOf(FlagDetail, 'Flag key → evaluation (v2)')),
  featureFlags: MapOf(FLAG_VALUE, 'Flag key → value'),
  ...FLAG_MEMBERS,
}, { additionalProperties: true, $id: 'FlagsResponse' });

/** `/decide/`: the config fields, then the flags as `v` asks (v1 a list of enabled keys, v2 values, v3 payloads, v4 details). */
export const DecideResponse = Type.Object({
  ...LEGACY_CONFIG_FIELDS,
  ...CONFIG_FIELDS,
  featureFlags: Type.Union([Type.Array(Type.String()), MapOf(FLAG_VALUE)], { description: 'v1: the enabled keys; v2 and later: key → value' }),
  flags: Type.Optional(MapOf(FlagDetail, 'Flag key → evaluation (v4)')),
  featureFlagPayloads: Type.Optional(FLAG_MEMBERS.featureFlagPayloads),
  errorsWhileComputingFlags: Type.Optional(Type.Boolean()),
  requestId: Type.Optional(Type.String({ format: 'uuid' })),
  evaluatedAt: FLAG_MEMBERS.evaluatedAt,
}, { additionalProperties: true, $id: 'DecideResponse' });

// ---- Feature flags ------------------------------------------------------------------------------------------

export const UserRef = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  distinct_id: Type.String(),
  first_name: Type.String(),
  email: Type.String(),
}, { additionalProperties: true, $id: 'UserRef' });

/** A flag as the management API answers it (src/worker/ops/feature-flags.ts `serializeFlag`). */
export const FeatureFlag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  key: Type.String(),
  filters: OpenObject('groups, multivariate, payloads, aggregation_group_type_index, …'),
  deleted: Type.Boolean(),
  active: Type.Boolean(),
  created_by: Nullable(UserRef),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  is_simple_flag: Type.Boolean(),
  rollout_percentage: Nullable(Type.Number()),
  ensure_experience_continuity: Nullable(Type.Boolean()),
  experiment_set: Type.Array(Type.Unknown()),
  rollback_conditions: Type.Unknown(),
  performed_rollback: Nullable(Type.Boolean()),
  can_edit: Type.Boolean(),
  version: Type.Integer(),
  evaluation_runtime: Type.Union([Type.Literal('server'), Type.Literal('client'), Type.Literal('all')]),
  tags: Type.Array(Type.String()),
  is_remote_configuration: Type.Boolean(),
  has_encrypted_payloads: Type.Boolean(),
  last_called_at: Nullable(Type.String({ format: 'date-time', description: 'When the flag was last evaluated or named by a $feature_flag_called event' })),
  status: Type.Union([Type.Literal('active'), Type.Literal('inactive'), Type.Literal('stale'), Type.Literal('deleted')], {
    description: "PostHog's rule: inactive (not evaluated for 30 days), stale (fully rolled out, older than 30 days), deleted, or active",
  }),
  status_reason: Type.String(),
}, { additionalProperties: true, $id: 'FeatureFlag' });

/** GET …/feature_flags/:id/usage/ (src/worker/ops/flag-usage.ts). */
export const FlagUsage = Type.Object({
  flag_id: Type.Integer(),
  key: Type.String(),
  days: Type.Integer(),
  results: Type.Array(Type.Object({
    date: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
    evaluations: Type.Integer({ description: 'Evaluations by /flags/, /decide/ and OFREP' }),
    called: Type.Integer({ description: '$feature_flag_called events naming the flag' }),
  })),
  total: Type.Object({ evaluations: Type.Integer(), called: Type.Integer() }),
  last_called_at: Nullable(Type.String({ format: 'date-time' })),
  status: Type.String(),
  status_reason: Type.String(),
}, { additionalProperties: true, $id: 'FlagUsage' });

/** PostHog's ScheduledChange (src/worker/ops/scheduled-changes.ts). */
export const ScheduledChange = Type.Object({
  id: Type.Integer(),
  team_id: Type.Integer(),
  record_id: Type.String(),
  model_name: Type.Literal('FeatureFlag'),
  payload: Type.Object({ operation: Type.String(), value: Type.Unknown() }, { additionalProperties: true }),
  scheduled_at: Type.String({ format: 'date-time' }),
  executed_at: Nullable(Type.String({ format: 'date-time' })),
  failure_reason: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Nullable(UserRef),
  updated_at: Type.String({ format: 'date-time' }),
  is_recurring: Type.Boolean(),
  recurrence_interval: Nullable(Type.String()),
  last_executed_at: Nullable(Type.String({ format: 'date-time' })),
  end_date: Nullable(Type.String({ format: 'date-time' })),
}, { additionalProperties: true, $id: 'ScheduledChange' });

const OfrepValue = Type.Union([Type.Boolean(), Type.String(), Type.Number(), Type.Object({}, { additionalProperties: true }), Type.Array(Type.Unknown()), Type.Null()]);

/** One flag's OFREP evaluation (src/domain/flags/ofrep.ts); without `value`, the caller's default applies. */
export const OfrepEvaluation = Type.Object({
  key: Type.String(),
  value: Type.Optional(OfrepValue),
  reason: Type.String({ description: 'STATIC, TARGETING_MATCH, SPLIT, DISABLED or DEFAULT' }),
  variant: Type.Optional(Type.String()),
  metadata: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), { description: 'id, version, description, payload (JSON text)' }),
}, { additionalProperties: true, $id: 'OfrepEvaluation' });

/** A flag that could not be evaluated, inside a bulk answer. */
export const OfrepFailure = Type.Object({
  key: Type.String(),
  errorCode: Type.String(),
  errorDetails: Type.String(),
}, { additionalProperties: true, $id: 'OfrepFailure' });

export const OfrepBulk = Type.Object({
  flags: Type.Array(Type.Union([OfrepEvaluation, OfrepFailure])),
}, { additionalProperties: true, $id: 'OfrepBulk' });

/** DRF's limit/offset page (src/worker/pagination.ts). */
const Page = (item: TSchema, $id: string) => Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String({ description: 'The absolute URL of the next page' })),
  previous: Nullable(Type.String()),
  results: Type.Array(item),
}, { additionalProperties: true, $id });

export const FeatureFlagPage = Page(FeatureFlag, 'FeatureFlagPage');
export const ScheduledChangePage = Page(ScheduledChange, 'ScheduledChangePage');

/** One flag of the local-evaluation definitions (src/domain/flags/definitions.ts `LocalEvaluationFlag`). */
export const LocalEvaluationFlag = Type.Object({
  id: Type.Integer(),
  team_id: Type.Integer(),
  name: Type.String(),
  key: Type.String(),
  filters: OpenObject(),
  deleted: Type.Boolean(),
  active: Type.Boolean(),
  ensure_experience_continuity: Nullable(Type.Boolean()),
  has_encrypted_payloads: Type.Boolean(),
  version: Type.Integer(),
  evaluation_runtime: Type.String(),
  evaluation_contexts: Type.Array(Type.String()),
  evaluation_tags: Type.Array(Type.String()),
  bucketing_identifier: Type.Optional(Type.String()),
  has_experiment: Type.Optional(Type.Boolean()),
}, { additionalProperties: true, $id: 'LocalEvaluationFlag' });

export const LocalEvaluation = Type.Object({
  flags: Type.Array(LocalEvaluationFlag),
  group_type_mapping: MapOf(Type.String(), 'Group type index → group type'),
  cohorts: MapOf(Type.Unknown(), 'Cohort id → its property tree (with send_cohorts)'),
}, { additionalProperties: true, $id: 'LocalEvaluation' });

export const BlastRadius = Type.Object({
  users_affected: Type.Integer(),
  total_users: Type.Integer(),
}, { $id: 'BlastRadius' });

// ---- Accounts -----------------------------------------------------------------------------------------------

/** src/worker/ops/accounts.ts `serializeProject`. */
export const Project = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  organization: Nullable(Type.String()),
  api_token: Type.String(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  timezone: Type.String(),
  test_account_filters: Type.Array(Type.Unknown()),
  path_cleaning_filters: Type.Array(Type.Unknown()),
  event_retention_days: Nullable(Type.Integer()),
  // posthog-js's optional modules, switched on from the server (src/domain/sdk-settings.ts; PostHog's fields).
  autocapture_opt_out: Nullable(Type.Boolean()),
  autocapture_exceptions_opt_in: Nullable(Type.Boolean()),
  autocapture_web_vitals_opt_in: Nullable(Type.Boolean()),
  autocapture_web_vitals_allowed_metrics: Nullable(Type.Array(Type.Union(WEB_VITALS.map((m) => Type.Literal(m))))),
  capture_performance_opt_in: Nullable(Type.Boolean()),
  capture_dead_clicks: Nullable(Type.Boolean()),
  heatmaps_opt_in: Nullable(Type.Boolean()),
  surveys_opt_in: Nullable(Type.Boolean()),
  is_demo: Type.Boolean(),
  // Session recording (src/domain/recordings/settings.ts), PostHog's team fields and Quill's retention.
  session_recording_opt_in: Type.Boolean(),
  session_recording_sample_rate: Nullable(Type.String({ description: '"0.00" to "1.00"; null records every session' })),
  session_recording_minimum_duration_milliseconds: Nullable(Type.Integer()),
  session_recording_linked_flag: Nullable(Type.Object({ id: Nullable(Type.Integer()), key: Type.String(), variant: Nullable(Type.String()) })),
  capture_console_log_opt_in: Type.Boolean(),
  session_recording_network_payload_capture_config: Nullable(Type.Object({ recordHeaders: Type.Boolean(), recordBody: Type.Boolean() })),
  session_recording_masking_config: Nullable(Type.Object({}, { additionalProperties: true })),
  session_replay_config: Type.Object({ record_canvas: Type.Boolean() }),
  recording_retention_days: Type.Integer(),
  session_recording_retention_period: Nullable(Type.String({ description: "PostHog's 30d, 90d, 1y or 5y when the days are one of those" })),
}, { additionalProperties: true, $id: 'Project' });

/** src/domain/recordings/view.ts: PostHog's SessionRecordingSerializer fields. */
export const SessionRecording = Type.Object({
  id: Type.String({ description: 'The session id' }),
  distinct_id: Type.String(),
  viewed: Type.Boolean(),
  viewers: Type.Array(Type.String()),
  recording_duration: Type.Integer({ description: 'Seconds from the first to the last event' }),
  active_seconds: Type.Integer(),
  inactive_seconds: Type.Integer(),
  start_time: Nullable(Type.String({ format: 'date-time' })),
  end_time: Nullable(Type.String({ format: 'date-time' })),
  click_count: Type.Integer(),
  keypress_count: Type.Integer(),
  mouse_activity_count: Type.Integer(),
  console_log_count: Type.Integer(),
  console_warn_count: Type.Integer(),
  console_error_count: Type.Integer(),
  start_url: Nullable(Type.String()),
  person: Nullable(Type.Object({}, { additionalProperties: true })),
  retention_period_days: Type.Integer(),
  expiry_time: Nullable(Type.String({ format: 'date-time' })),
  recording_ttl: Type.Integer(),
  snapshot_source: Type.String(),
  snapshot_library: Nullable(Type.String()),
  ongoing: Type.Boolean(),
}, { additionalProperties: true, $id: 'SessionRecording' });

/** `GET session_recordings/`: PostHog's listing (no count; `has_next` says whether another page exists). */
export const SessionRecordingList = Type.Object({
  results: Type.Array(SessionRecording),
  has_next: Type.Boolean(),
  version: Type.Integer(),
}, { additionalProperties: true, $id: 'SessionRecordingList' });

/** `GET session_recordings/:id/snapshots` without `source`: one blob per stored chunk. */
export const SnapshotSources = Type.Object({
  sources: Type.Array(Type.Object({
    source: Type.Literal('blob_v2'),
    start_timestamp: Type.String({ format: 'date-time' }),
    end_timestamp: Type.String({ format: 'date-time' }),
    blob_key: Type.String(),
  })),
}, { additionalProperties: true, $id: 'SnapshotSources' });

export const ProjectPage = Page(Project, 'ProjectPage');

/** `GET /api/login`: whether the request's session cookie is live. */
export const SessionState = Type.Object({
  authenticated: Type.Boolean(),
}, { additionalProperties: false, $id: 'SessionState' });

/** `POST /api/login`: the user, and the token cookie-authenticated writes echo in X-CSRFToken. */
export const SignedIn = Type.Object({
  ...UserRef.properties,
  csrf_token: Type.String(),
}, { additionalProperties: true, $id: 'SignedIn' });

export const Success = Type.Object({
  success: Type.Literal(true),
}, { additionalProperties: false, $id: 'Success' });

// ---- Persons, events and definitions --------------------------------------------------------------------------

/** src/worker/ops/persons/person-view.ts `viewOf`. */
export const Person = Type.Object({
  id: Type.Integer(),
  uuid: Type.String({ format: 'uuid' }),
  name: Type.String({ description: 'The email property, else the first distinct id' }),
  distinct_ids: Type.Array(Type.String()),
  properties: OpenObject(),
  created_at: Type.String({ format: 'date-time' }),
  is_identified: Type.Boolean(),
}, { additionalProperties: true, $id: 'Person' });

export const PersonPage = Page(Person, 'PersonPage');

/** An event of the events API (src/worker/ops/events): the person as it is now. */
export const Event = Type.Object({
  id: Type.String({ description: "The event's uuid" }),
  distinct_id: Type.String(),
  properties: OpenObject(),
  event: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  person: Nullable(Type.Object({
    is_identified: Type.Boolean(),
    distinct_ids: Type.Array(Type.String()),
    properties: OpenObject(),
  }, { additionalProperties: true })),
  elements: Type.Array(OpenObject()),
  elements_chain: Type.String(),
}, { additionalProperties: true, $id: 'Event' });

/** The events list pages by time: `next` asks for the events before the last one shown. */
export const EventPage = Type.Object({
  next: Nullable(Type.String({ description: 'The absolute URL of the next page' })),
  results: Type.Array(Event),
}, { additionalProperties: true, $id: 'EventPage' });

export const EventDefinition = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  owner: Nullable(Type.Unknown()),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  volume_30_day: Nullable(Type.Integer()),
  created_at: Nullable(Type.String({ format: 'date-time' })),
  last_seen_at: Nullable(Type.String({ format: 'date-time' })),
  verified: Type.Boolean(),
  is_action: Type.Boolean(),
  action_id: Nullable(Type.Integer()),
  post_to_chat: Type.Boolean(),
}, { additionalProperties: true, $id: 'EventDefinition' });

export const EventDefinitionPage = Page(EventDefinition, 'EventDefinitionPage');

export const PropertyDefinition = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Derived from the project, the kind and the name: stable' }),
  name: Type.String(),
  type: Type.String({ enum: ['event', 'person', 'group'] }),
  group_type_index: Nullable(Type.Integer()),
  is_numerical: Type.Boolean(),
  property_type: Nullable(Type.String({ enum: ['String', 'Numeric', 'Boolean', 'DateTime'], description: 'Inferred from the values seen unless set by a PATCH; null when only null values were seen' })),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  is_seen_on_filtered_events: Nullable(Type.Boolean({ description: 'With event_names: whether recent events of those names carry it; null otherwise' })),
}, { additionalProperties: true, $id: 'PropertyDefinition' });

export const PropertyDefinitionPage = Page(PropertyDefinition, 'PropertyDefinitionPage');

export const Cohort = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  filters: OpenObject('properties: an OR of AND groups of property filters'),
  groups: Type.Array(Type.Unknown()),
  is_static: Type.Boolean(),
  deleted: Type.Boolean(),
  is_calculating: Type.Boolean(),
  created_by: Nullable(UserRef),
  created_at: Type.String({ format: 'date-time' }),
  count: Nullable(Type.Integer()),
  version: Nullable(Type.Integer()),
}, { additionalProperties: true, $id: 'Cohort' });

export const CohortPage = Page(Cohort, 'CohortPage');

export const Action = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  steps: Type.Array(OpenObject('event, url and url_matching, text, href, selector, tag_name, properties')),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Nullable(UserRef),
  deleted: Type.Boolean(),
  team_id: Type.Integer(),
}, { additionalProperties: true, $id: 'Action' });

/** PostHog's actions list: every live action, no paging. */
export const ActionList = Type.Object({
  results: Type.Array(Action),
}, { additionalProperties: true, $id: 'ActionList' });

export const Annotation = Type.Object({
  id: Type.Integer(),
  content: Type.String(),
  date_marker: Nullable(Type.String({ format: 'date-time' })),
  creation_type: Type.String({ description: 'USR: made by a user' }),
  scope: Type.String({ description: 'dashboard_item, dashboard, project, organization or recording' }),
  dashboard_item: Nullable(Type.Integer()),
  dashboard_id: Nullable(Type.Integer()),
  insight_short_id: Nullable(Type.String()),
  created_by: Nullable(UserRef),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  deleted: Type.Boolean(),
}, { additionalProperties: true, $id: 'Annotation' });

export const AnnotationPage = Page(Annotation, 'AnnotationPage');

// ---- Experiments, insights and dashboards ----------------------------------------------------------------------

export const Experiment = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  start_date: Nullable(Type.String({ format: 'date-time' })),
  end_date: Nullable(Type.String({ format: 'date-time' })),
  feature_flag_key: Type.String(),
  feature_flag: Nullable(OpenObject('The flag (id, key, filters, active, …)')),
  parameters: OpenObject('feature_flag_variants, minimum_detectable_effect, recommended_sample_size'),
  metrics: Type.Array(OpenObject()),
  metrics_secondary: Type.Array(OpenObject()),
  exposure_criteria: OpenObject(),
  stats_config: OpenObject('method: bayesian or frequentist'),
  status: Type.Union([Type.Literal('draft'), Type.Literal('running'), Type.Literal('stopped')]),
  conclusion: Nullable(Type.String()),
  archived: Type.Boolean(),
  deleted: Type.Boolean(),
  created_by: Nullable(UserRef),
  created_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: true, $id: 'Experiment' });

export const ExperimentPage = Page(Experiment, 'ExperimentPage');

export const Insight = Type.Object({
  id: Type.Integer(),
  short_id: Type.String(),
  name: Nullable(Type.String()),
  description: Type.String(),
  filters: OpenObject('The legacy form of the question'),
  query: Nullable(OpenObject('The question as a query (InsightVizNode, …)')),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Nullable(UserRef),
  last_modified_at: Type.String({ format: 'date-time' }),
  deleted: Type.Boolean(),
  saved: Type.Boolean(),
  dashboards: Type.Array(Type.Integer()),
  result: Type.Unknown({ description: 'The cached answer (retrieve computes it when stale)' }),
  is_cached: Type.Boolean(),
  last_refresh: Nullable(Type.String({ format: 'date-time' })),
}, { additionalProperties: true, $id: 'Insight' });

export const InsightPage = Page(Insight, 'InsightPage');

export const Dashboard = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  pinned: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  created_by: Nullable(UserRef),
  deleted: Type.Boolean(),
  tags: Type.Array(Type.String()),
  filters: OpenObject('date_from, date_to: the date range every tile computes over instead of its own (none when empty)'),
  tiles: Type.Optional(Type.Array(OpenObject('An insight (computed over the dashboard\'s range) with its layouts, color and last_refresh'), { description: 'On retrieve' })),
  last_refresh: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'When the oldest tile result was computed (on retrieve)' }))),
}, { additionalProperties: true, $id: 'Dashboard' });

export const DashboardPage = Page(Dashboard, 'DashboardPage');

// ---- Queries ------------------------------------------------------------------------------------------------

/** A legacy insight endpoint's answer (`insights/trend/`, …): the rows of the chart in `result`. */
export const InsightAnswer = Type.Object({
  result: Type.Array(Type.Unknown()),
  is_cached: Type.Optional(Type.Boolean()),
  last_refresh: Type.Optional(Nullable(Type.String())),
  timezone: Type.Optional(Type.String()),
}, { additionalProperties: true, $id: 'InsightAnswer' });

/** `POST query/` with a HogQLQuery (PostHog's HogQLQueryResponse); other kinds answer their own `results`. */
export const QueryAnswer = Type.Object({
  results: Type.Unknown({ description: 'Rows (HogQLQuery, EventsQuery, ActorsQuery) or the insight kind\'s series' }),
  columns: Type.Optional(Type.Array(Type.Unknown())),
  types: Type.Optional(Type.Array(Type.Unknown())),
  hasMore: Type.Optional(Nullable(Type.Boolean())),
  is_cached: Type.Boolean(),
  last_refresh: Nullable(Type.String()),
}, { additionalProperties: true, $id: 'QueryAnswer' });

// ---- Keys, users and organizations ----------------------------------------------------------------------------

export const PersonalApiKey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  label: Type.String(),
  mask_value: Type.String({ description: 'The first and last characters: the key itself is shown once, at creation (`value`)' }),
  value: Type.Optional(Type.String({ description: 'Only in the answer to its creation' })),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Nullable(Type.String({ format: 'date-time' })),
  user_id: Type.Integer(),
  scopes: Type.Array(Type.String()),
  scoped_teams: Type.Array(Type.Integer()),
  scoped_organizations: Type.Array(Type.String()),
}, { additionalProperties: true, $id: 'PersonalApiKey' });

export const PersonalApiKeyList = Type.Array(PersonalApiKey, { $id: 'PersonalApiKeyList' });

export const Organization = Type.Object({
  id: Type.String({ format: 'uuid' }),
  numeric_id: Type.Integer(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  membership_level: Type.Integer({ description: '1 member, 8 admin, 15 owner' }),
}, { additionalProperties: true, $id: 'Organization' });

export const User = Type.Object({
  ...UserRef.properties,
  is_staff: Type.Boolean(),
  organization: Nullable(Organization),
  organizations: Type.Array(Organization),
  team: Nullable(Project),
  has_password: Type.Boolean(),
}, { additionalProperties: true, $id: 'User' });

// ---- Activity, persons behind a number, members ------------------------------------------------------------------

export const ActivityEntry = Type.Object({
  id: Type.String({ format: 'uuid' }),
  user: Nullable(OpenObject('first_name, email')),
  activity: Type.String({ description: 'created, updated, deleted, …' }),
  scope: Type.String({ description: 'FeatureFlag, Person, Action, …' }),
  item_id: Nullable(Type.String()),
  detail: OpenObject('changes (field, before, after), name, …'),
  created_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: true, $id: 'ActivityEntry' });

export const ActivityPage = Type.Object({
  results: Type.Array(ActivityEntry),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  total_count: Type.Integer(),
}, { additionalProperties: true, $id: 'ActivityPage' });

/** The persons behind one point of an analysis (`persons/trends/`, `persons/funnel/`, …): PostHog's actors answer. */
export const ActorsAnswer = Type.Object({
  results: Type.Array(Type.Object({
    people: Type.Array(OpenObject('A person: id, uuid, name, distinct_ids, properties, created_at, …')),
    count: Type.Integer(),
  }, { additionalProperties: true })),
  next: Nullable(Type.String({ description: 'The absolute URL of the next page' })),
}, { additionalProperties: true, $id: 'ActorsAnswer' });

export const Member = Type.Object({
  id: Type.String({ format: 'uuid' }),
  user: UserRef,
  level: Type.Integer({ description: '1 member, 8 admin, 15 owner' }),
  joined_at: Type.String({ format: 'date-time' }),
}, { additionalProperties: true, $id: 'Member' });

export const MemberPage = Page(Member, 'MemberPage');
