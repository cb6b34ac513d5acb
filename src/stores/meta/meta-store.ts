/**
 * The metadata environment: organizations, users, keys, projects, roles, flags, cohorts, actions, event definitions,
 * group types and the activity log. Every worker opens it; LMDB's single write lock serialises writers across
 * threads, and read-modify-write sequences run inside `transaction` so they are atomic.
 *
 * Nothing on a hot path reads it: workers mirror what /flags/ and ingestion need (src/worker/project-cache.ts).
 */
import { join } from 'node:path';
import { META_ENV } from '../data-dir/paths.js';
import { all } from '../lmdb-env.js';
import type {
  Action, ActivityEntry, Alert, Annotation, Cohort, Dashboard, EventDefinition, Experiment, FeatureFlag, FlagRoleAccess, GroupTypes, Insight,
  Organization, PersonalApiKey, Project, PropertyDefinitionNote, Role, ScheduledChange, Session, SharingConfiguration, Subscription, User,
} from '../../domain/model.js';
import { atomically, openEnv, openTable, type Env, type Table } from '../lmdb-env.js';

export interface Layout {
  /** Fixed when the data directory is created: events are placed by hash(project, distinct_id) mod shardCount. */
  shardCount: number;
  createdAt: string;
}

export class MetaStore {
  readonly env: Env;
  readonly organizations: Table<Organization, number>;
  readonly users: Table<User, number>;
  readonly personalKeys: Table<PersonalApiKey, string>;
  readonly projects: Table<Project, number>;
  readonly roles: Table<Role, string>;
  readonly flags: Table<FeatureFlag, [number, number]>;
  readonly flagRoleAccess: Table<FlagRoleAccess, [number, number]>;
  readonly activity: Table<ActivityEntry, [number, number, string]>;
  readonly cohorts: Table<Cohort, [number, number]>;
  readonly actions: Table<Action, [number, number]>;
  readonly eventDefinitions: Table<EventDefinition, [number, string]>;
  readonly groupTypes: Table<GroupTypes, number>;
  /** Descriptions, tags and type overrides of property definitions: [project, kind, name]. */
  readonly propertyNotes: Table<PropertyDefinitionNote, [number, string, string]>;
  /** Console sessions by token digest. */
  readonly sessions: Table<Session, string>;
  readonly insights: Table<Insight, [number, number]>;
  readonly dashboards: Table<Dashboard, [number, number]>;
  readonly experiments: Table<Experiment, [number, number]>;
  /** Annotations by [organization, id]: an organization-wide one is read by each of its projects. */
  readonly annotations: Table<Annotation, [number, number]>;
  /** Evaluations and `$feature_flag_called` events per flag and UTC day: [project, flag id, 'YYYY-MM-DD'] (src/worker/flag-usage.ts). */
  readonly flagUsage: Table<{ evaluations: number; called: number }, [number, number, string]>;
  /** When each flag was last evaluated or called, epoch ms: [project, flag id]. */
  readonly flagLastCalled: Table<number, [number, number]>;
  /** Every version of a flag as it was saved: [project, flag id, version] (revert reads them). */
  readonly flagVersions: Table<FeatureFlag, [number, number, number]>;
  /** PostHog's scheduled changes: [project, id] (src/worker/scheduled-changes.ts). */
  readonly scheduledChanges: Table<ScheduledChange, [number, number]>;
  /** The changes waiting to run, by when: [epoch ms, project, id] → 1. */
  readonly scheduledDue: Table<number, [number, number, number]>;
  /** Share links by [project, target key] (src/domain/sharing.ts `targetKey`). */
  readonly sharing: Table<SharingConfiguration, [number, string]>;
  /** The live share links by access token → [project, target key]: the one lookup a public link costs. */
  readonly sharingTokens: Table<[number, string], string>;
  /** PostHog's insight alerts by [project, id] (src/worker/ops/alerts.ts). */
  readonly alerts: Table<Alert, [number, string]>;
  /** PostHog's subscriptions by [project, id] (src/worker/ops/subscriptions.ts). */
  readonly subscriptions: Table<Subscription, [number, number]>;
  /**
   * The scheduled work of alerts and subscriptions, by when: [epoch ms, project, kind, id] → 1, kinds in
   * src/worker/notifications/due.ts. One index for both (and their deliveries): an environment holds at most 32
   * tables (src/stores/lmdb-env.ts), and one earliest-first walk serves every kind.
   */
  readonly notificationsDue: Table<number, [number, number, string, string | number]>;
  private readonly sequences: Table<number, string>;
  private readonly settings: Table<unknown, string>;

  constructor(dataDir: string) {
    this.env = openEnv(join(dataDir, META_ENV));
    this.organizations = openTable(this.env, 'organizations');
    this.users = openTable(this.env, 'users');
    this.personalKeys = openTable(this.env, 'personal_api_keys');
    this.projects = openTable(this.env, 'projects');
    this.roles = openTable(this.env, 'roles');
    this.flags = openTable(this.env, 'feature_flags');
    this.flagRoleAccess = openTable(this.env, 'feature_flag_role_access');
    this.activity = openTable(this.env, 'activity_log');
    this.cohorts = openTable(this.env, 'cohorts');
    this.actions = openTable(this.env, 'actions');
    this.eventDefinitions = openTable(this.env, 'event_definitions');
    this.groupTypes = openTable(this.env, 'group_types');
    this.propertyNotes = openTable(this.env, 'property_definitions');
    this.sessions = openTable(this.env, 'sessions');
    this.insights = openTable(this.env, 'insights');
    this.dashboards = openTable(this.env, 'dashboards');
    this.experiments = openTable(this.env, 'experiments');
    this.annotations = openTable(this.env, 'annotations');
    this.flagUsage = openTable(this.env, 'feature_flag_usage');
    this.flagLastCalled = openTable(this.env, 'feature_flag_last_called');
    this.flagVersions = openTable(this.env, 'feature_flag_versions');
    this.scheduledChanges = openTable(this.env, 'scheduled_changes');
    this.scheduledDue = openTable(this.env, 'scheduled_changes_due');
    this.sharing = openTable(this.env, 'sharing_configurations');
    this.sharingTokens = openTable(this.env, 'sharing_tokens');
    this.alerts = openTable(this.env, 'alerts');
    this.subscriptions = openTable(this.env, 'subscriptions');
    this.notificationsDue = openTable(this.env, 'notifications_due');
    this.sequences = openTable(this.env, 'sequences');
    this.settings = openTable(this.env, 'settings');
  }

  /**
   * Runs `fn` atomically: its reads see every committed write of every thread, and no other writer runs until it
   * commits; if it throws, nothing it wrote is kept. Resolves after the commit is flushed to disk, so an API answer
   * never reports an unsafe write.
   */
  async write<T>(fn: () => T): Promise<T> {
    const result = await atomically(this.env, fn);
    await this.env.flushed;
    return result;
  }

  /** Next value of a named id sequence. Only valid inside `write`. */
  nextId(name: string): number {
    const next = (this.sequences.get(name) ?? 0) + 1;
    this.sequences.put(name, next);
    return next;
  }

  layout(): Layout | undefined {
    return this.settings.get('layout') as Layout | undefined;
  }

  setLayout(layout: Layout): void {
    this.settings.put('layout', layout);
  }

  /** The data directory's format version (src/stores/data-dir/format.ts); undefined in directories of format 1. */
  formatVersion(): number | undefined {
    return (this.settings.get('format') as { version: number } | undefined)?.version;
  }

  /** Only inside `write`. */
  setFormatVersion(version: number): void {
    this.settings.put('format', { version, recordedAt: new Date().toISOString() });
  }

  projectByToken(token: string): Project | undefined {
    for (const { value } of this.projects.getRange()) if (value.api_token === token) return value;
    return undefined;
  }

  flagsOf(projectId: number): FeatureFlag[] {
    return all(this.flags.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value));
  }

  cohortsOf(projectId: number): Cohort[] {
    return all(this.cohorts.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value));
  }

  experimentsOf(projectId: number): Experiment[] {
    return all(this.experiments.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value));
  }

  annotationsOf(organizationId: number): Annotation[] {
    return all(this.annotations.getRange({ start: [organizationId, 0], end: [organizationId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value));
  }

  actionsOf(projectId: number): Action[] {
    return all(this.actions.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value));
  }

  close(): Promise<void> {
    return this.env.close();
  }
}
