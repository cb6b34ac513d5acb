/**
 * Every operation a worker performs, by name. The front's route table (src/front/routes.ts) names these; a name
 * missing here is a programming error the route-table test catches.
 */
import * as accounts from './accounts.js';
import * as capture from './capture.js';
import * as decide from './decide.js';
import { injectFault } from './fault-injection.js';
import * as flagHelpers from './flag-helpers.js';
import * as localEvaluation from './local-evaluation.js';
import * as remoteConfig from './remote-config.js';
import * as sdkLists from './sdk-lists.js';
import * as flags from './feature-flags.js';
import * as ofrep from './ofrep.js';
import * as scheduledChanges from './scheduled-changes.js';
import { flagUsage } from './flag-usage.js';
import * as roleAccess from './flag-role-access.js';
import * as roles from './roles.js';
import * as persons from './persons.js';
import * as cohorts from './cohorts.js';
import * as experiments from './experiments.js';
import * as actions from './actions.js';
import * as events from './events.js';
import * as eventDefinitions from './event-definitions.js';
import * as propertyDefinitions from './property-definitions.js';
import { deadLetters, ingestionStats } from './stats.js';
import { backupNode } from './backup.js';
import * as insights from './insights.js';
import * as personInsights from './person-insights.js';
import * as funnelInsights from './funnel-insights.js';
import * as pathInsights from './path-insights.js';
import * as correlationInsights from './correlation-insights.js';
import { propertiesTimelineOp } from './properties-timeline.js';
import * as query from './query.js';
import * as annotations from './annotations.js';
import * as alerts from './alerts.js';
import * as subscriptions from './subscriptions.js';
import '../query/kinds.js';
import * as savedInsights from './saved-insights.js';
import * as dashboards from './dashboards.js';
import * as sessions from './sessions.js';
import * as projectSettings from './project-settings.js';
import * as recordings from './recordings.js';
import { queryShared, SHARING_OPS, unlockShared, viewShared } from './sharing.js';
import type { OpHandler } from './types.js';
import { jsonText } from '../reply.js';

export const OPS: Record<string, OpHandler> = {
  capture: capture.captureEvents,
  engage: capture.engageEvents,
  fault: injectFault,
  stats: ingestionStats,
  'dead-letters': deadLetters,
  backup: backupNode,
  decide: decide.decide,
  'decide.defaults': decide.decideDefaults,
  flags: decide.flags,
  'flags.defaults': decide.flagsDefaults,
  remote_config: remoteConfig.remoteConfig,
  'remote_config.js': remoteConfig.remoteConfigScript,
  'sdk.surveys': sdkLists.surveys,
  'sdk.early_access_features': sdkLists.earlyAccessFeatures,
  'sdk.web_experiments': sdkLists.webExperiments,
  'sdk.product_tours': sdkLists.productTours,
  'flags.definitions': localEvaluation.flagDefinitions,
  'flags.local_evaluation_legacy': localEvaluation.legacyLocalEvaluation,
  'flags.local_evaluation': localEvaluation.projectLocalEvaluation,
  'flags.stream': localEvaluation.flagStream,
  'flags.stream_public': localEvaluation.publicFlagStream,
  'flags.evaluation_reasons': flagHelpers.evaluationReasons,
  'flags.my_flags': flagHelpers.myFlags,
  'flags.user_blast_radius': flagHelpers.userBlastRadius,
  'ofrep.evaluate': ofrep.evaluateOne,
  'ofrep.bulk': ofrep.evaluateAll,
  'flags.usage': flagUsage,
  'flags.revert': flags.revertFlag,
  'scheduled_changes.list': scheduledChanges.listScheduledChanges,
  'scheduled_changes.create': scheduledChanges.createScheduledChange,
  'scheduled_changes.retrieve': scheduledChanges.retrieveScheduledChange,
  'scheduled_changes.update': scheduledChanges.updateScheduledChange,
  'scheduled_changes.delete': scheduledChanges.deleteScheduledChange,
  ...SHARING_OPS,
  'shared.view': viewShared,
  'shared.query': queryShared,
  'shared.unlock': unlockShared,
  'recordings.capture': recordings.captureSnapshots,
  'recordings.list': recordings.listRecordings,
  'recordings.retrieve': recordings.retrieveRecording,
  'recordings.update': recordings.updateRecording,
  'recordings.delete': recordings.deleteRecording,
  'recordings.snapshots': recordings.recordingSnapshots,

  /** Internal: this worker's part of GET /metrics, gathered by the front (src/front/metrics.ts); no route names it. */
  metrics: async (_item, rt) => jsonText(200, await rt.metrics.json()),
  /** Internal: the front's lookup of a key its cache does not know (src/front/key-lookup.ts); no route names it. */
  'auth.key': accounts.authKey,
  /** Internal: the front's batch of personal-key uses, as `last_used_at` (src/front/key-usage.ts); no route names it. */
  'auth.key_usage': accounts.recordKeyUsage,
  'users.me': accounts.me,
  'users.update': sessions.changePassword,
  'auth.login': sessions.login,
  'auth.logout': sessions.logout,
  'experiments.list': experiments.listExperiments,
  'experiments.create': experiments.createExperiment,
  'experiments.retrieve': experiments.retrieveExperiment,
  'experiments.update': experiments.updateExperiment,
  'experiments.delete': experiments.deleteExperiment,
  'experiments.results': experiments.experimentResults,
  'experiments.activity': experiments.experimentActivity,
  'experiments.all_activity': experiments.allExperimentsActivity,
  'insights.list': savedInsights.listInsights,
  'insights.create': savedInsights.createInsight,
  'insights.retrieve': savedInsights.retrieveInsight,
  'insights.update': savedInsights.updateInsight,
  'insights.delete': savedInsights.deleteInsight,
  'dashboards.list': dashboards.listDashboards,
  'dashboards.create': dashboards.createDashboard,
  'dashboards.retrieve': dashboards.retrieveDashboard,
  'dashboards.update': dashboards.updateDashboard,
  'dashboards.delete': dashboards.deleteDashboard,
  'organizations.create': accounts.createOrganizationOp,
  'organizations.retrieve': accounts.retrieveOrganization,
  'organizations.update': accounts.updateOrganization,
  'members.list': accounts.listMembers,
  'members.create': accounts.createMember,
  'projects.list': accounts.listProjects,
  'projects.create': accounts.createProjectOp,
  'projects.retrieve': accounts.retrieveProject,
  'projects.update': projectSettings.updateProject,
  'personal_keys.list': accounts.listPersonalKeys,
  'personal_keys.create': accounts.createPersonalKeyOp,
  'personal_keys.current': accounts.currentPersonalKey,
  'personal_keys.retrieve': accounts.retrievePersonalKey,
  'personal_keys.delete': accounts.deletePersonalKey,

  'roles.list': roles.listRoles,
  'roles.create': roles.createRole,
  'roles.retrieve': roles.retrieveRole,
  'roles.update': roles.updateRole,
  'roles.delete': roles.deleteRole,
  'role_memberships.list': roles.listRoleMemberships,
  'role_memberships.create': roles.createRoleMembership,
  'role_memberships.delete': roles.deleteRoleMembership,

  'flags.list': flags.listFlags,
  'flags.list_legacy': flags.listFlags,
  'flags.create': flags.createFlag,
  'flags.retrieve': flags.retrieveFlag,
  'flags.update': flags.updateFlag,
  'flags.delete': flags.deleteFlag,
  'flags.activity': flags.flagActivity,
  'flags.remote_config': flags.remoteConfigPayload,
  'flags.all_activity': flags.allFlagsActivity,
  'flag_role_access.list': roleAccess.listRoleAccess,
  'flag_role_access.create': roleAccess.createRoleAccess,
  'flag_role_access.retrieve': roleAccess.retrieveRoleAccess,
  'flag_role_access.delete': roleAccess.deleteRoleAccess,

  'persons.list': persons.listPersons,
  'persons.create': persons.createPerson,
  'persons.retrieve': persons.retrievePerson,
  'persons.update': persons.updatePerson,
  'persons.delete': persons.deletePerson,
  'persons.update_property': persons.updatePersonProperty,
  'persons.delete_property': persons.deletePersonProperty,
  'persons.split': persons.splitPerson,
  'persons.activity': persons.personActivity,
  'persons.all_activity': persons.allPersonsActivity,
  'persons.properties': persons.personPropertyKeys,
  'persons.values': persons.personPropertyValues,
  'persons.cohorts': persons.cohortsOfPerson,

  'cohorts.list': cohorts.listCohorts,
  'cohorts.create': cohorts.createCohort,
  'cohorts.retrieve': cohorts.retrieveCohort,
  'cohorts.update': cohorts.updateCohort,
  'cohorts.delete': cohorts.deleteCohort,
  'cohorts.persons': cohorts.cohortPersons,
  'cohorts.add_persons': cohorts.addPersonsToStaticCohort,
  'cohorts.remove_person': cohorts.removePersonFromStaticCohort,

  'events.list': events.listEvents,
  'events.values': events.eventValues,
  'events.retrieve': events.retrieveEvent,
  'insights.trend': insights.trend,
  'persons.trends': insights.personsTrends,
  'insights.retention': personInsights.retention,
  'insights.funnel': funnelInsights.funnel,
  'persons.funnel': funnelInsights.personsFunnel,
  'insights.path': pathInsights.path,
  'insights.correlation': correlationInsights.correlation,
  'persons.properties_timeline': propertiesTimelineOp,
  'query.run': query.runQuery,
  'query.status': query.queryStatus,
  'query.cancel': query.cancelQuery,
  'persons.correlation': correlationInsights.personsCorrelation,
  'persons.path': pathInsights.personsPath,
  'persons.retention': personInsights.personsRetention,
  'persons.lifecycle': personInsights.personsLifecycle,
  'persons.stickiness': personInsights.personsStickiness,
  'annotations.list': annotations.listAnnotations,
  'annotations.create': annotations.createAnnotation,
  'annotations.retrieve': annotations.retrieveAnnotation,
  'annotations.update': annotations.updateAnnotation,
  'annotations.delete': annotations.deleteAnnotation,
  'alerts.list': alerts.listAlerts,
  'alerts.create': alerts.createAlert,
  'alerts.retrieve': alerts.retrieveAlert,
  'alerts.update': alerts.updateAlert,
  'alerts.delete': alerts.deleteAlert,
  'alerts.check': alerts.checkAlertNow,
  'subscriptions.list': subscriptions.listSubscriptions,
  'subscriptions.create': subscriptions.createSubscription,
  'subscriptions.retrieve': subscriptions.retrieveSubscription,
  'subscriptions.update': subscriptions.updateSubscription,
  'subscriptions.deliver': subscriptions.deliverSubscriptionNow,
  'actions.list': actions.listActions,
  'actions.create': actions.createAction,
  'actions.retrieve': actions.retrieveAction,
  'actions.update': actions.updateAction,
  'actions.delete': actions.deleteAction,
  'actions.activity': actions.actionActivity,
  'actions.all_activity': actions.allActionsActivity,
  'event_definitions.list': eventDefinitions.listEventDefinitions,
  'event_definitions.retrieve': eventDefinitions.retrieveEventDefinition,
  'event_definitions.update': eventDefinitions.updateEventDefinition,
  'property_definitions.list': propertyDefinitions.listPropertyDefinitions,
  'property_definitions.retrieve': propertyDefinitions.retrievePropertyDefinition,
  'property_definitions.update': propertyDefinitions.updatePropertyDefinition,
};
