/**
 * Stored records of the metadata environment. These are the storage shapes; API responses are built from them by
 * the serializers of each resource (src/worker/ops/*), never by returning records as they are.
 */
import type { ActionStep } from './actions/steps.js';
import type { SdkSettings } from './sdk-settings.js';

export interface Organization {
  id: number;
  uuid: string;
  name: string;
  created_at: string;
  /** Organization-wide default for new roles and for flag editing (37 = can always edit, 21 = view only). */
  feature_flags_access_level: number;
}

export interface User {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  email: string;
  organization_id: number;
  current_project_id: number | null;
  /** 1 member, 8 admin, 15 owner (PostHog's organization membership levels). */
  membership_level: number;
  created_at: string;
  /** Console sign-in (src/domain/passwords.ts); absent until a password is set. */
  password_hash?: string | null;
}

export interface Project {
  id: number;
  uuid: string;
  organization_id: number;
  name: string;
  api_token: string;
  created_at: string;
  /** IANA time zone analyses bucket and read dates in (PATCH /api/projects/:id/). */
  timezone: string;
  /** Property filters ANDed into analyses with `filter_test_accounts=true`. */
  test_account_filters?: unknown[];
  /** Regex rewrites of path items applied with `path_replacements=true` (analytics.md §7.1). */
  path_cleaning_filters?: { regex: string; alias: string }[];
  /**
   * Events older than this many days are deleted in the background (src/worker/retention.ts); null: kept forever.
   * Absent in data directories of format 1 (src/worker/upgrade.ts adds it).
   */
  event_retention_days?: number | null;
  /** posthog-js's optional modules switched on from the server, as set (src/domain/sdk-settings.ts has the defaults). */
  sdk_settings?: Partial<SdkSettings>;
  /** Session-recording settings (src/domain/recordings/settings.ts); absent: the defaults (recording off). */
  recordings?: Partial<import('./recordings/settings.js').RecordingSettings>;
}

export interface PersonalApiKey {
  id: string;
  user_id: number;
  label: string;
  /** SHA-256 hex of the key; the key itself is shown once, on creation. */
  digest: string;
  mask_value: string;
  created_at: string;
  last_used_at: string | null;
  /** `*` or `<object>:read|write` (src/domain/scopes.ts). */
  scopes: string[];
  /** Project ids the key is confined to; null (or absent, in keys stored before scoping existed): every project. */
  scoped_teams?: number[] | null;
  /** Organization uuids the key is confined to; null or absent: not confined. */
  scoped_organizations?: string[] | null;
}

export const ACCESS_LEVEL_VIEW = 21;
export const ACCESS_LEVEL_EDIT = 37;

export interface Role {
  id: string;
  organization_id: number;
  name: string;
  feature_flags_access_level: number;
  created_at: string;
  created_by: number | null;
  /** Member user ids with when they joined. */
  members: { id: string; user_id: number; joined_at: string; updated_at: string }[];
}

/** An experiment (PostHog's fields); `status` is derived from the dates, never stored. */
export interface Experiment {
  id: number;
  project_id: number;
  name: string;
  description: string;
  feature_flag_id: number;
  feature_flag_key: string;
  parameters: Record<string, unknown>;
  metrics: Record<string, unknown>[];
  metrics_secondary: Record<string, unknown>[];
  exposure_criteria: Record<string, unknown>;
  start_date: string | null;
  end_date: string | null;
  conclusion: string | null;
  conclusion_comment: string | null;
  stats_config: Record<string, unknown>;
  archived: boolean;
  deleted: boolean;
  created_by: number;
  created_at: string;
  updated_at: string;
}

export interface FeatureFlag {
  id: number;
  project_id: number;
  key: string;
  name: string;
  filters: Record<string, unknown>;
  deleted: boolean;
  active: boolean;
  created_by: number | null;
  created_at: string;
  updated_at: string;
  ensure_experience_continuity: boolean;
  rollback_conditions: unknown;
  performed_rollback: boolean | null;
  /** Legacy column, only meaningful for filters without `groups`. */
  rollout_percentage: number | null;
  version: number;
  evaluation_runtime: string | null;
  tags: string[];
  /**
   * A remote-configuration flag: a boolean flag whose `true` payload is the configuration, read with
   * `GET …/feature_flags/:key/remote_config/` (flags written before this field existed have none: false).
   */
  is_remote_configuration?: boolean | null;
}

/**
 * PostHog's ScheduledChange (posthog/models/scheduled_change.py): a change to a flag that the node applies at
 * `scheduled_at`. `payload` is `{operation: 'update_status' | 'add_release_condition' | 'update_variants', value}`.
 */
export interface ScheduledChange {
  id: number;
  project_id: number;
  record_id: string;
  model_name: 'FeatureFlag';
  payload: { operation: string; value: unknown };
  scheduled_at: string;
  executed_at: string | null;
  failure_reason: string | null;
  failure_count: number;
  is_recurring: boolean;
  recurrence_interval: 'daily' | 'weekly' | 'monthly' | 'yearly' | null;
  last_executed_at: string | null;
  end_date: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface FlagRoleAccess {
  id: number;
  project_id: number;
  feature_flag_id: number;
  role_id: string;
  added_at: string;
  updated_at: string;
}

export interface ActivityChange {
  type: string;
  action: 'changed' | 'created' | 'deleted' | 'split';
  field: string | null;
  before: unknown;
  after: unknown;
}

export interface ActivityEntry {
  id: string;
  project_id: number;
  user_id: number | null;
  activity: string;
  scope: string;
  item_id: string;
  detail: {
    id?: string; changes: ActivityChange[] | null; merge: unknown; trigger: unknown; name: string | null; short_id: string | null; type: string | null;
    /** Quill's addition on flag entries: the flag version the change produced (what revert takes). */
    version?: number;
  };
  created_at: string;
}

export interface Cohort {
  id: number;
  project_id: number;
  name: string;
  description: string;
  filters: Record<string, unknown>;
  is_static: boolean;
  deleted: boolean;
  created_by: number | null;
  created_at: string;
  version: number;
}

/** A named definition of what counts (src/domain/actions/steps.ts for its steps). */
export interface Action {
  id: number;
  project_id: number;
  name: string;
  description: string;
  tags: string[];
  steps: ActionStep[];
  created_by: number | null;
  created_at: string;
  updated_at: string;
  deleted: boolean;
  pinned_at: string | null;
}

export interface EventDefinition {
  id: string;
  project_id: number;
  name: string;
  owner: number | null;
  description: string | null;
  tags: string[];
  created_at: string;
  updated_at: string | null;
  updated_by: number | null;
  last_seen_at: string | null;
  verified: boolean;
  verified_at: string | null;
  verified_by: number | null;
  post_to_chat: boolean;
}

/**
 * What a user wrote about a property (PATCH of a property definition); the property itself (its name, seen type)
 * comes from the stored events. Keyed by project, kind (`event`, `person`, `group:<index>`) and name.
 */
export interface PropertyDefinitionNote {
  description: string | null;
  tags: string[];
  /** Overrides the type inferred from the values; null: inferred. */
  property_type: 'String' | 'Numeric' | 'Boolean' | 'DateTime' | null;
  updated_at: string;
  updated_by: number | null;
}

/** Group type name -> index, per project (PostHog allows 5: indexes 0..4). */
export type GroupTypes = Record<string, number>;

/** A console sign-in: the cookie carries the token, only its SHA-256 digest is stored (the key of the table). */
export interface Session {
  digest: string;
  user_id: number;
  /** The token a cookie-authenticated state-changing request must echo in `X-CSRFToken`. */
  csrf: string;
  created_at: string;
  /** Epoch ms. */
  expires_at: number;
}

/** A saved insight (PostHog's shape, minimal): legacy `filters`, shown on the project's dashboard. */
export interface Insight {
  id: number;
  short_id: string;
  project_id: number;
  name: string;
  description: string;
  /** Legacy filters as given (the console's pages send these); `query` is derived from them when absent. */
  filters: Record<string, unknown>;
  /** The query form PostHog stores (`{kind: 'InsightVizNode', source: {...}}`). */
  query?: Record<string, unknown> | null;
  created_by: number | null;
  created_at: string;
  last_modified_at: string;
  deleted: boolean;
}

/** A dashboard: named tiles, each showing a saved insight. Deletion is soft, as for insights. */
export interface Dashboard {
  id: number;
  project_id: number;
  name: string;
  description: string;
  pinned: boolean;
  created_at: string;
  created_by: number | null;
  deleted: boolean;
  tiles: DashboardTile[];
  /** The date range every tile uses instead of its own; absent on dashboards stored before it existed. */
  filters?: DashboardFilters;
}

/** PostHog's dashboard `filters`: only the date range override is kept. */
export interface DashboardFilters {
  date_from?: string;
  date_to?: string;
}

export interface DashboardTile {
  id: number;
  insight_id: number;
  /** Grid positions by breakpoint, as the client sent them. */
  layouts: Record<string, unknown>;
  color: string | null;
}

/** PostHog's annotation: a note on a date, drawn on time-series charts (src/worker/ops/annotations.ts). */
export interface Annotation {
  id: number;
  project_id: number;
  organization_id: number;
  content: string;
  /** ISO date-time the note marks (null: none). */
  date_marker: string | null;
  creation_type: 'USR' | 'GIT';
  /** `dashboard_item`: one insight's; `dashboard`: one dashboard's; `project`; `organization`: every project of it. */
  scope: 'dashboard_item' | 'dashboard' | 'project' | 'organization' | 'recording';
  /** The insight of a `dashboard_item` annotation. */
  dashboard_item: number | null;
  dashboard_id: number | null;
  is_emoji: boolean;
  emoji: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
  deleted: boolean;
}

/** What a share link opens: one dashboard, one saved insight, or the project's web analytics page. */
export type ShareTarget = { kind: 'dashboard'; id: number } | { kind: 'insight'; id: number } | { kind: 'web_analytics' };

/** A password of a password-protected share link (PostHog's SharePassword); only its scrypt hash is kept. */
export interface SharePassword {
  id: number;
  hash: string;
  note: string;
  created_at: string;
  created_by: number | null;
}

/**
 * PostHog's SharingConfiguration: a read-only link to one target (src/worker/ops/sharing.ts). The link is the
 * `access_token`; rotating it (`sharing/refresh`) or disabling the link makes the old one open nothing. Unlocked
 * viewers of a password-protected link carry a token signed with `session_secret`, which rotation also replaces.
 */
export interface SharingConfiguration {
  project_id: number;
  target: ShareTarget;
  enabled: boolean;
  access_token: string;
  created_at: string;
  password_required: boolean;
  passwords: SharePassword[];
  session_secret: string;
  settings: Record<string, unknown> | null;
}

/**
 * PostHog's insight alert (AlertConfiguration; src/worker/ops/alerts.ts, checked by src/worker/notifications/):
 * a saved trends insight watched against a threshold every `calculation_interval`. Its latest checks are kept on
 * it, newest first, each with the message it sent and every delivery attempt.
 */
export interface Alert {
  id: string;
  project_id: number;
  insight_id: number;
  name: string;
  subscribed_users: number[];
  threshold: import('./alerts/alert-config.js').InsightThreshold;
  condition: import('./alerts/alert-config.js').AlertCondition;
  config: import('./alerts/alert-config.js').TrendsAlertConfig;
  calculation_interval: import('./alerts/alert-config.js').CalculationInterval;
  enabled: boolean;
  state: import('./alerts/alert-config.js').AlertState;
  /** Quill's: a webhook told on each state change into Firing and back, and its body's format (null: from the URL). */
  webhook_url: string | null;
  webhook_format: import('./notifications/outbox.js').WebhookFormat | null;
  /** When the next check is due (ISO); its due-index entry is [this instant, project, 'alert', id]. Null while disabled. */
  next_check_at: string | null;
  last_checked_at: string | null;
  last_notified_at: string | null;
  snoozed_until: string | null;
  checks: AlertCheckRecord[];
  created_by: number | null;
  created_at: string;
}

export interface AlertCheckRecord {
  id: string;
  created_at: string;
  calculated_value: number | null;
  state: import('./alerts/alert-config.js').AlertState;
  error: { message: string } | null;
  breaches: string[];
  /** What this check told, if anything, with its delivery state and attempts. */
  notification: 'firing' | 'resolved' | null;
  outgoing: import('./notifications/outbox.js').OutgoingMessage | null;
}

/**
 * PostHog's subscription: a saved insight's or a dashboard's headline numbers delivered on a schedule (an iCalendar
 * rule: src/domain/subscriptions/recurrence.ts) by e-mail or webhook. Its latest reports are kept on it, newest
 * first, each with its delivery state and attempts.
 */
export interface Subscription {
  id: number;
  project_id: number;
  insight_id: number | null;
  dashboard_id: number | null;
  target_type: 'email' | 'webhook';
  target_value: string;
  frequency: import('./subscriptions/recurrence.js').Frequency;
  interval: number;
  byweekday: import('./subscriptions/recurrence.js').Weekday[] | null;
  bysetpos: number | null;
  count: number | null;
  start_date: string;
  until_date: string | null;
  title: string | null;
  /** The next delivery (ISO); its due-index entry is [this instant, project, 'subscription', id]. Null: none left. */
  next_delivery_date: string | null;
  reports: SubscriptionReport[];
  created_by: number | null;
  created_at: string;
  deleted: boolean;
}

export interface SubscriptionReport {
  id: number;
  created_at: string;
  outgoing: import('./notifications/outbox.js').OutgoingMessage;
}
