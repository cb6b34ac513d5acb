/**
 * Request bodies of the management API, one schema per message. The front checks them (compiled once) before a
 * request reaches a worker; workers add the rules that need stored state (uniqueness, permissions, references).
 */
import Type from 'typebox';
import { SDK_SETTING_NAMES } from '../domain/sdk-settings.js';

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Any JSON object: the common case where a worker validates fields itself. */
export const AnyObject = Type.Object({}, { additionalProperties: true, $id: 'AnyObject' });

export const FeatureFlagWrite = Type.Object({
  key: Type.Optional(Type.Unknown()),
  name: Type.Optional(Nullable(Type.String())),
  filters: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  deleted: Type.Optional(Type.Boolean()),
  active: Type.Optional(Type.Boolean()),
  created_at: Type.Optional(Type.String({ format: 'date-time' })),
  ensure_experience_continuity: Type.Optional(Nullable(Type.Boolean())),
  rollback_conditions: Type.Optional(Type.Unknown()),
  performed_rollback: Type.Optional(Nullable(Type.Boolean())),
  evaluation_runtime: Type.Optional(Nullable(Type.Union([Type.Literal('server'), Type.Literal('client'), Type.Literal('all')]))),
  tags: Type.Optional(Type.Array(Type.String())),
  is_remote_configuration: Type.Optional(Nullable(Type.Boolean())),
}, { additionalProperties: true, $id: 'FeatureFlagWrite', description: 'Create or update a feature flag' });

/** POST …/feature_flags/:id/revert/: the version to restore (src/worker/ops/feature-flags.ts `revertFlag`). */
export const FlagRevert = Type.Object({
  version: Type.Integer({ minimum: 1, description: 'The flag version to restore (activity entries name the version each change produced).' }),
}, { additionalProperties: false, $id: 'FlagRevert', description: 'Revert a feature flag to one of its kept versions' });

/** PostHog's ScheduledChange fields (src/worker/ops/scheduled-changes.ts checks them as its serializer does). */
export const ScheduledChangeWrite = Type.Object({
  record_id: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'The flag id.' })),
  model_name: Type.Optional(Type.String({ description: 'FeatureFlag' })),
  payload: Type.Optional(Type.Object({
    operation: Type.String({ description: 'update_status, add_release_condition or update_variants' }),
    value: Type.Unknown(),
  }, { additionalProperties: true })),
  scheduled_at: Type.Optional(Type.String({ description: 'ISO 8601 time the change is applied at' })),
  is_recurring: Type.Optional(Type.Boolean()),
  recurrence_interval: Type.Optional(Nullable(Type.String({ description: 'daily, weekly, monthly or yearly' }))),
  cron_expression: Type.Optional(Nullable(Type.String())),
  end_date: Type.Optional(Nullable(Type.String())),
}, { additionalProperties: true, $id: 'ScheduledChangeWrite', description: 'Schedule a change to a feature flag' });

export const RoleWrite = Type.Object({
  name: Type.Optional(Type.Unknown()),
  feature_flags_access_level: Type.Optional(Type.Integer()),
}, { additionalProperties: true, $id: 'RoleWrite' });

export const RoleAccessCreate = Type.Object({
  role_id: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'RoleAccessCreate' });

export const ProjectCreate = Type.Object({
  name: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'ProjectCreate' });

/** PATCH /api/projects/:id/: the settings analyses read. */
export const ProjectUpdate = Type.Object({
  // Length and blank are checked by the worker, worded as DRF does (src/domain/account-fields.ts).
  name: Type.Optional(Type.String()),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 240 })),
  test_account_filters: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  path_cleaning_filters: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  // Checked by the worker, worded as DRF's IntegerField does (src/worker/ops/project-settings.ts).
  event_retention_days: Type.Optional(Type.Unknown()),
  // posthog-js's module switches: booleans or null, the metrics a list of CLS/FCP/INP/LCP or null; checked and
  // worded by src/domain/sdk-settings.ts.
  ...Object.fromEntries(SDK_SETTING_NAMES.map((name) => [name, Type.Optional(Type.Unknown())])),
}, { additionalProperties: true, $id: 'ProjectUpdate' });

export const PersonalKeyCreate = Type.Object({
  label: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonalKeyCreate' });

export const MemberCreate = Type.Object({
  email: Type.Optional(Type.Unknown()),
  first_name: Type.Optional(Type.String()),
  level: Type.Optional(Type.Integer()),
}, { additionalProperties: true, $id: 'MemberCreate' });

export const RoleMembershipCreate = Type.Object({
  user_uuid: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'RoleMembershipCreate' });

export const OrganizationUpdate = Type.Object({
  name: Type.Optional(Type.String()),
  feature_flags_access_level: Type.Optional(Type.Integer()),
}, { additionalProperties: true, $id: 'OrganizationUpdate' });

// Persons: field types are checked by the worker, which words the errors per field (attr `properties`, `key`...).
export const PersonCreate = Type.Object({
  properties: Type.Optional(Type.Unknown()),
  distinct_ids: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonCreate' });

export const PersonUpdate = Type.Object({
  properties: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonUpdate' });

export const PersonPropertyUpdate = Type.Object({
  key: Type.Optional(Type.Unknown()),
  value: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonPropertyUpdate' });

export const PersonPropertyDelete = Type.Object({
  $unset: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonPropertyDelete' });

export const PersonSplit = Type.Object({
  main_distinct_id: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PersonSplit' });

// Experiments: fields are checked by the worker (PostHog's 400 bodies name the nested attribute).
export const ExperimentWrite = Type.Object({
  name: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  feature_flag_key: Type.Optional(Type.Unknown()),
  parameters: Type.Optional(Type.Unknown()),
  metrics: Type.Optional(Type.Unknown()),
  metrics_secondary: Type.Optional(Type.Unknown()),
  exposure_criteria: Type.Optional(Type.Unknown()),
  start_date: Type.Optional(Type.Unknown()),
  end_date: Type.Optional(Type.Unknown()),
  conclusion: Type.Optional(Type.Unknown()),
  stats_config: Type.Optional(Type.Unknown()),
  archived: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
}, { additionalProperties: true, $id: 'ExperimentWrite' });

// Cohorts
export const CohortWrite = Type.Object({
  name: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  filters: Type.Optional(Type.Unknown()),
  groups: Type.Optional(Type.Unknown()),
  is_static: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  person_ids: Type.Optional(Type.Unknown()),
  distinct_ids: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'CohortWrite' });

export const StaticCohortAdd = Type.Object({
  person_ids: Type.Optional(Type.Unknown()),
  distinct_ids: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'StaticCohortAdd' });

export const StaticCohortRemove = Type.Object({
  person_id: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'StaticCohortRemove' });

// Actions: the worker validates each field (the steps with a field path as attr, e.g. steps__0__url_matching).
export const ActionWrite = Type.Object({
  name: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Type.Unknown()),
  steps: Type.Optional(Type.Unknown()),
  deleted: Type.Optional(Type.Unknown()),
  pinned_at: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'ActionWrite', description: 'Create or update an action' });

/** Annotations: a note on a date (src/worker/ops/annotations.ts checks references and the date). */
export const AnnotationWrite = Type.Object({
  content: Type.Optional(Nullable(Type.String({ maxLength: 8192 }))),
  date_marker: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
  scope: Type.Optional(Type.Union([Type.Literal('dashboard_item'), Type.Literal('dashboard'), Type.Literal('project'), Type.Literal('organization'), Type.Literal('recording')])),
  dashboard_item: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  dashboard_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  deleted: Type.Optional(Type.Boolean()),
  is_emoji: Type.Optional(Nullable(Type.Boolean())),
  emoji: Type.Optional(Nullable(Type.String({ maxLength: 16 }))),
}, { additionalProperties: true, $id: 'AnnotationWrite', description: 'Create or update an annotation' });

// Event definitions: the worker type-checks each writable field (attr per field); other fields are ignored.
export const EventDefinitionUpdate = Type.Object({
  owner: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Type.Unknown()),
  verified: Type.Optional(Type.Unknown()),
  post_to_chat: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'EventDefinitionUpdate' });

/** PATCH of a property definition: what a user may write about a property; the worker type-checks each field. */
export const PropertyDefinitionUpdate = Type.Object({
  description: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Type.Unknown()),
  property_type: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'PropertyDefinitionUpdate' });

/** Console sign-in (PostHog's `POST /api/login`); the worker words missing fields as DRF does. */
export const Login = Type.Object({
  email: Type.Optional(Type.Unknown()),
  password: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'Login' });

/** `POST /shared/:access_token`: a password-protected share link's password (PostHog's unlock). */
export const ShareUnlock = Type.Object({
  password: Type.String({ minLength: 1, maxLength: 128 }),
}, { additionalProperties: false, $id: 'ShareUnlock' });

/** `PATCH …/sharing/`: PostHog's SharingConfiguration fields a client may write. */
export const SharingUpdate = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  password_required: Type.Optional(Type.Boolean()),
  settings: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
}, { additionalProperties: true, $id: 'SharingUpdate' });

/** `POST …/sharing/passwords/`: a new password (a random one when `raw_password` is left out). */
export const SharePasswordCreate = Type.Object({
  raw_password: Type.Optional(Type.String({ maxLength: 128 })),
  note: Type.Optional(Type.String({ maxLength: 100 })),
}, { additionalProperties: false, $id: 'SharePasswordCreate' });

/** `PATCH /api/users/@me/`: the password change (PostHog's field names). */
export const UserUpdate = Type.Object({
  current_password: Type.Optional(Type.Unknown()),
  password: Type.Optional(Type.Unknown()),
}, { additionalProperties: true, $id: 'UserUpdate' });

/** A saved insight: its name and legacy `filters` (what the console's insight pages produce). */
export const InsightWrite = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  filters: Type.Optional(Type.Object({}, { additionalProperties: true })),
  deleted: Type.Optional(Type.Boolean()),
}, { additionalProperties: true, $id: 'InsightWrite' });

/**
 * An insight alert (PostHog's AlertSerializer fields; src/worker/ops/alerts.ts checks what needs the store: the
 * insight, the users, the combination of condition, threshold and insight). Read-only fields a client sends back
 * (`id`, `state`, `checks`, …) are ignored.
 */
export const AlertWrite = Type.Object({
  insight: Type.Optional(Type.Integer({ minimum: 1, description: 'The saved trends insight watched.' })),
  name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  subscribed_users: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100, description: 'Users told by e-mail (ids); may be empty.' })),
  threshold: Type.Optional(Type.Object({
    name: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    configuration: Type.Object({
      type: Type.Union([Type.Literal('absolute'), Type.Literal('percentage')]),
      bounds: Type.Optional(Nullable(Type.Object({
        lower: Type.Optional(Nullable(Type.Number())),
        upper: Type.Optional(Nullable(Type.Number())),
      }, { additionalProperties: false }))),
    }, { additionalProperties: true }),
  }, { additionalProperties: true })),
  condition: Type.Optional(Nullable(Type.Object({
    type: Type.Union([Type.Literal('absolute_value'), Type.Literal('relative_increase'), Type.Literal('relative_decrease')]),
  }, { additionalProperties: true }))),
  config: Type.Optional(Nullable(Type.Object({
    type: Type.Literal('TrendsAlertConfig'),
    series_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    check_ongoing_interval: Type.Optional(Nullable(Type.Boolean())),
  }, { additionalProperties: true }))),
  calculation_interval: Type.Optional(Nullable(Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly')]))),
  enabled: Type.Optional(Type.Boolean()),
  snoozed_until: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'A date-time or a relative time (2h, 1d, 1w); null unsnoozes.' }))),
  skip_weekend: Type.Optional(Nullable(Type.Boolean())),
  webhook_url: Type.Optional(Nullable(Type.String({ maxLength: 2000, description: "Quill's: a URL told on each change into Firing and back." }))),
  webhook_format: Type.Optional(Nullable(Type.Union([Type.Literal('json'), Type.Literal('slack')], { description: "Quill's: the webhook body; unset, Slack's for hooks.slack.com, else JSON." }))),
}, { additionalProperties: true, $id: 'AlertWrite', description: 'Create or update an insight alert' });

/** A subscription (PostHog's SubscriptionSerializer fields; src/worker/ops/subscriptions.ts checks the rest). */
export const SubscriptionWrite = Type.Object({
  insight: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  dashboard: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  target_type: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('webhook'), Type.Literal('slack')])),
  target_value: Type.Optional(Type.String({ minLength: 1, maxLength: 5000, description: 'Comma-separated e-mail addresses, or the webhook URL.' })),
  frequency: Type.Optional(Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Literal('yearly')])),
  interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  byweekday: Type.Optional(Nullable(Type.Array(Type.Union(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((d) => Type.Literal(d))), { maxItems: 7 }))),
  bysetpos: Type.Optional(Nullable(Type.Integer({ minimum: -1, maximum: 4 }))),
  count: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  start_date: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  until_date: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
  title: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  deleted: Type.Optional(Type.Boolean()),
  invite_message: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
}, { additionalProperties: true, $id: 'SubscriptionWrite', description: 'Create or update a subscription' });
