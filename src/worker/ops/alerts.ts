/**
 * PostHog's insight alerts, `/api/projects/:id/alerts/` (posthog/api/alert.py): list (`?insight=` or
 * `?insight_id=`), create, retrieve, PATCH (`snoozed_until` snoozes, null unsnoozes; a new condition or threshold
 * resets the state and checks again at once, as does a new interval or enabling it), DELETE; and Quill's
 * `POST …/alerts/:id/check/`, which checks it now and answers once the check and its first deliveries are
 * recorded. Checks run on the node's scheduler (src/worker/notifications/); this file only writes the alert and its
 * due entry, in one transaction.
 *
 * Quill's additions to PostHog's fields: `webhook_url` and `webhook_format` (who else is told), and on each check
 * its `breaches`, `notification` and `deliveries` (every attempt).
 */
import { randomUUID } from 'node:crypto';
import { alertConfigProblem, type AlertCondition, type InsightThreshold, type TrendsAlertConfig } from '../../domain/alerts/alert-config.js';
import { snoozeUntil, SnoozeError } from '../../domain/alerts/schedule.js';
import type { Alert, AlertCheckRecord, Project } from '../../domain/model.js';
import { notifiedAny, webhookUrlProblem, type WebhookFormat } from '../../domain/notifications/outbox.js';
import { Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import { all } from '../../stores/lmdb-env.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { alertDueAt, specOf } from '../notifications/alert-checks.js';
import { iso, MAX_KEPT } from '../notifications/context.js';
import { dueKey, putDue, takeDue } from '../notifications/due.js';
import { paginate } from '../pagination.js';
import { empty, json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userRefById } from './accounts.js';
import { queryOfInsight } from './saved-insights.js';
import { bodyOf, principalOf, projectIdOf, type OpHandler } from './types.js';
import { untilSettled } from './until-settled.js';

type Json = Record<string, unknown>;

/** Enabled alerts a project may have (PostHog limits them per team too): each costs an insight computation per interval. */
export const ALERTS_PER_PROJECT = 100;

function checkJson(c: AlertCheckRecord): Json {
  return {
    id: c.id, created_at: c.created_at, calculated_value: c.calculated_value, state: c.state, error: c.error,
    targets_notified: notifiedAny(c.outgoing), breaches: c.breaches, notification: c.notification,
    deliveries: c.outgoing?.deliveries ?? [],
  };
}

/** PostHog's InsightBasicSerializer, the part a client of alerts reads. */
function insightBasic(meta: MetaStore, projectId: number, insightId: number): Json {
  const i = meta.insights.get([projectId, insightId]);
  if (!i) return { id: insightId, deleted: true };
  return { id: i.id, short_id: i.short_id, name: i.name, derived_name: null, description: i.description, query: queryOfInsight(i), created_at: i.created_at, last_modified_at: i.last_modified_at, deleted: i.deleted };
}

export function serializeAlert(meta: MetaStore, a: Alert): Json {
  return {
    id: a.id, created_by: userRefById(meta, a.created_by), created_at: a.created_at, insight: insightBasic(meta, a.project_id, a.insight_id), name: a.name,
    subscribed_users: a.subscribed_users.map((id) => userRefById(meta, id)).filter((u) => u !== null),
    threshold: { name: '', configuration: a.threshold }, condition: a.condition, config: a.config, calculation_interval: a.calculation_interval,
    state: a.state, enabled: a.enabled, last_notified_at: a.last_notified_at, last_checked_at: a.last_checked_at, next_check_at: a.next_check_at,
    snoozed_until: a.snoozed_until, skip_weekend: false, last_value: a.checks.find((c) => c.state !== 'Snoozed')?.calculated_value ?? null,
    checks: a.checks.map(checkJson), webhook_url: a.webhook_url, webhook_format: a.webhook_format,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function alertIdOf(item: TaskItem): string {
  const id = item.params.id ?? '';
  if (!UUID.test(id)) throw Errors.notFound();
  return id.toLowerCase();
}

function alertOf(meta: MetaStore, projectId: number, id: string): Alert {
  const a = meta.alerts.get([projectId, id]);
  if (!a) throw Errors.notFound();
  return a;
}

function alertsOf(meta: MetaStore, projectId: number): Alert[] {
  return all(meta.alerts.getRange({ start: [projectId, ''], end: [projectId, '\uffff'] }).map((e) => e.value));
}

function projectOf(meta: MetaStore, projectId: number): Project {
  const p = meta.projects.get(projectId);
  if (!p) throw Errors.notFound('Project not found.');
  return p;
}

/** The alert as a write leaves it, checked against the store (inside `meta.write`). */
function applyBody(meta: MetaStore, projectId: number, body: Json, before: Alert | null, now: number): Alert {
  const base: Alert = before ?? {
    id: randomUUID(), project_id: projectId, insight_id: 0, name: '', subscribed_users: [], threshold: { type: 'absolute', bounds: {} },
    condition: { type: 'absolute_value' }, config: { type: 'TrendsAlertConfig', series_index: 0 }, calculation_interval: 'daily', enabled: true,
    state: 'Not firing', webhook_url: null, webhook_format: null, next_check_at: null, last_checked_at: null, last_notified_at: null,
    snoozed_until: null, checks: [], created_by: null, created_at: iso(now),
  };
  const a: Alert = { ...base };
  if (!before) {
    if (body.insight === undefined) throw Errors.required('insight');
    if (body.subscribed_users === undefined) throw Errors.required('subscribed_users');
    if (body.threshold === undefined) throw Errors.required('threshold');
  }
  if (body.insight !== undefined) {
    const insight = meta.insights.get([projectId, body.insight as number]);
    if (!insight || insight.deleted) throw Errors.validation('insight', 'does_not_exist', `Invalid pk "${String(body.insight)}" - object does not exist.`);
    a.insight_id = insight.id;
  }
  if (body.name !== undefined) a.name = ((body.name as string | null) ?? '').trim();
  if (body.subscribed_users !== undefined) {
    const organization = projectOf(meta, projectId).organization_id;
    const ids = [...new Set(body.subscribed_users as number[])];
    for (const id of ids) {
      const user = meta.users.get(id);
      if (!user) throw Errors.validation('subscribed_users', 'does_not_exist', `Invalid pk "${id}" - object does not exist.`);
      if (user.organization_id !== organization) throw Errors.validation('subscribed_users', 'invalid_input', "User does not belong to the same organization as the alert's team.");
    }
    a.subscribed_users = ids;
  }
  if (body.threshold !== undefined) {
    const configuration = (body.threshold as { configuration: Json }).configuration;
    a.threshold = { type: configuration.type as InsightThreshold['type'], bounds: (configuration.bounds as InsightThreshold['bounds']) ?? {} };
  }
  if (body.condition !== undefined) a.condition = (body.condition as AlertCondition | null) ?? { type: 'absolute_value' };
  if (body.config !== undefined) {
    const c = (body.config as Json | null) ?? {};
    a.config = { type: 'TrendsAlertConfig', series_index: (c.series_index as number | undefined) ?? 0, ...(c.check_ongoing_interval ? { check_ongoing_interval: true } : {}) } satisfies TrendsAlertConfig;
  }
  if (body.calculation_interval !== undefined) a.calculation_interval = (body.calculation_interval as Alert['calculation_interval'] | null) ?? 'daily';
  if (body.enabled !== undefined) a.enabled = body.enabled as boolean;
  if (body.webhook_url !== undefined) {
    const url = body.webhook_url as string | null;
    const problem = url === null || url === '' ? null : webhookUrlProblem(url);
    if (problem) throw Errors.validation('webhook_url', 'invalid', problem);
    a.webhook_url = url === '' ? null : url;
  }
  if (body.webhook_format !== undefined) a.webhook_format = body.webhook_format as WebhookFormat | null;
  if (body.skip_weekend === true) throw Errors.validation('skip_weekend', 'invalid_input', 'Quill does not skip weekends: every interval is checked.');
  const insight = meta.insights.get([projectId, a.insight_id])!;
  const problem = alertConfigProblem(queryOfInsight(insight), specOf(a));
  if (problem) throw Errors.validation(problem.attr, 'invalid_input', problem.detail);
  return a;
}

/** A record of the snooze or unsnooze, as PostHog writes one among the checks. */
function snoozeCheck(state: Alert['state'], now: number): AlertCheckRecord {
  return { id: randomUUID(), created_at: iso(now), calculated_value: null, state, error: null, breaches: [], notification: null, outgoing: null };
}

/** Stores `next` over `before` and keeps its due entry where `next_check_at` says (inside `meta.write`). */
function save(meta: MetaStore, before: Alert | null, next: Alert): void {
  if (before?.next_check_at) takeDue(meta, dueKey(Date.parse(before.next_check_at), before.project_id, 'alert', before.id));
  if (next.enabled && next.next_check_at) putDue(meta, dueKey(Date.parse(next.next_check_at), next.project_id, 'alert', next.id));
  meta.alerts.put([next.project_id, next.id], next);
}

export const listAlerts: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const q = item.meta.query;
  const insight = q.insight ?? q.insight_id;
  const rows = alertsOf(rt.meta, projectId)
    .filter((a) => insight === undefined || String(a.insight_id) === insight)
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
  return json(200, paginate(rows.map((a) => serializeAlert(rt.meta, a)), item.meta));
};

export const retrieveAlert: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  return json(200, serializeAlert(rt.meta, alertOf(rt.meta, projectIdOf(item), alertIdOf(item))));
};

export const createAlert: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const created = await rt.meta.write(() => {
    const now = Date.now();
    const a = applyBody(rt.meta, projectId, body, null, now);
    if (a.enabled && alertsOf(rt.meta, projectId).filter((x) => x.enabled).length >= ALERTS_PER_PROJECT) {
      throw Errors.validation('alert', 'invalid_input', `Your team has reached the limit of ${ALERTS_PER_PROJECT} enabled alerts.`);
    }
    // PostHog checks a new alert at the scheduler's next run.
    const next: Alert = { ...a, created_by: principalOf(item).userId || null, next_check_at: a.enabled ? iso(now) : null };
    save(rt.meta, null, next);
    return next;
  });
  return json(201, serializeAlert(rt.meta, created));
};

export const updateAlert: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = alertIdOf(item);
  const body = bodyOf(item);
  const updated = await rt.meta.write(() => {
    const now = Date.now();
    const before = alertOf(rt.meta, projectId, id);
    const next = applyBody(rt.meta, projectId, body, before, now);
    const rules = JSON.stringify([before.condition, before.threshold, before.config, before.insight_id]) !== JSON.stringify([next.condition, next.threshold, next.config, next.insight_id]);
    if (rules) next.state = 'Not firing';
    if (body.snoozed_until !== undefined) {
      if (body.snoozed_until === null) {
        next.snoozed_until = null;
        next.state = 'Not firing';
      } else {
        try {
          next.snoozed_until = iso(snoozeUntil(body.snoozed_until as string, now));
        } catch (error) {
          if (error instanceof SnoozeError) throw Errors.validation('snoozed_until', 'invalid', error.message);
          throw error;
        }
        next.state = 'Snoozed';
      }
      next.checks = [snoozeCheck(next.state, now), ...next.checks].slice(0, MAX_KEPT);
    }
    if (!next.enabled) next.next_check_at = null;
    // Checked again at once: new rules or interval, or enabled again (PostHog's mark_for_recheck).
    else if (rules || !before.enabled || next.calculation_interval !== before.calculation_interval || next.next_check_at === null) next.next_check_at = iso(now);
    if (next.enabled && !before.enabled && alertsOf(rt.meta, projectId).filter((x) => x.enabled).length >= ALERTS_PER_PROJECT) {
      throw Errors.validation('alert', 'invalid_input', `Your team has reached the limit of ${ALERTS_PER_PROJECT} enabled alerts.`);
    }
    save(rt.meta, before, next);
    return next;
  });
  return json(200, serializeAlert(rt.meta, updated));
};

export const deleteAlert: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = alertIdOf(item);
  await rt.meta.write(() => {
    const before = alertOf(rt.meta, projectId, id);
    if (before.next_check_at) takeDue(rt.meta, dueKey(Date.parse(before.next_check_at), projectId, 'alert', id));
    // Its pending deliveries' entries stay and find no alert: they are dropped when they come.
    rt.meta.alerts.remove([projectId, id]);
  });
  return empty(204);
};

/**
 * Quill's `POST …/alerts/:id/check/`: moves the alert's next check to now and answers once the node recorded it and
 * made the first attempt at each delivery it caused (200), or with the alert as it is if that took longer than a
 * query may (202). The check counts as the interval's: the next one follows from it.
 */
export const checkAlertNow: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = alertIdOf(item);
  const asked = await rt.meta.write(() => {
    const now = Date.now();
    const before = alertOf(rt.meta, projectId, id);
    if (!before.enabled) throw Errors.validation('enabled', 'invalid_input', 'The alert is disabled: enable it to check it.');
    if (before.snoozed_until !== null && Date.parse(before.snoozed_until) > now) {
      throw Errors.validation('snoozed_until', 'invalid_input', `The alert is snoozed until ${before.snoozed_until}: unsnooze it to check it.`);
    }
    save(rt.meta, before, { ...before, next_check_at: iso(now) });
    return now;
  });
  const settled = await untilSettled(rt, () => {
    const a = rt.meta.alerts.get([projectId, id]);
    if (!a) throw Errors.notFound();
    const latest = a.checks.find((c) => c.state !== 'Snoozed');
    const done = latest !== undefined && Date.parse(latest.created_at) >= asked && !alertDueAt(a, asked)
      && !(latest.outgoing?.targets.some((t) => t.attempts === 0) ?? false);
    return { value: a, done };
  });
  return json(settled.done ? 200 : 202, serializeAlert(rt.meta, settled.value));
};
