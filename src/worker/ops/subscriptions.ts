/**
 * PostHog's subscriptions, `/api/projects/:id/subscriptions/` (posthog/api/subscription.py): list (`?insight_id=`,
 * `?dashboard=`, `?deleted=`), create, retrieve, PATCH (`deleted: true` removes one: like PostHog, there is no hard
 * DELETE); and Quill's `POST …/subscriptions/:id/deliver/`, which delivers the report now (the schedule goes on
 * from there) and answers once the first attempt at each target is recorded. The node's scheduler delivers them
 * (src/worker/notifications/); this file only writes the subscription and its due entry, in one transaction.
 *
 * Targets: `email` (comma-separated addresses, through QUILL_SMTP_URL) or `webhook` (a URL; Slack's body for
 * hooks.slack.com). PostHog's `slack` target needs its Slack app: a Slack incoming webhook URL does the same here.
 * Quill adds `deliveries`: every attempt of the latest reports, newest first.
 */
import { emailsOf, isEmailAddress } from '../../domain/notifications/mail.js';
import { webhookUrlProblem } from '../../domain/notifications/outbox.js';
import { occurrenceAfter, recurrenceSummary, SETPOS, type Weekday } from '../../domain/subscriptions/recurrence.js';
import type { Subscription } from '../../domain/model.js';
import { Errors } from '../../protocol/errors.js';
import { all } from '../../stores/lmdb-env.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { iso } from '../notifications/context.js';
import { dueKey, putDue, takeDue } from '../notifications/due.js';
import { subscriptionDueAt } from '../notifications/subscription-reports.js';
import { paginate } from '../pagination.js';
import { json } from '../reply.js';
import { userRefById } from './accounts.js';
import { bodyOf, intParam, principalOf, projectIdOf, type OpHandler } from './types.js';
import { untilSettled } from './until-settled.js';

type Json = Record<string, unknown>;

/** E-mail addresses one subscription may send to. */
export const MAX_RECIPIENTS = 50;

export function serializeSubscription(meta: MetaStore, s: Subscription): Json {
  return {
    id: s.id, dashboard: s.dashboard_id, insight: s.insight_id, target_type: s.target_type, target_value: s.target_value, frequency: s.frequency,
    interval: s.interval, byweekday: s.byweekday, bysetpos: s.bysetpos, count: s.count, start_date: s.start_date, until_date: s.until_date,
    created_at: s.created_at, created_by: userRefById(meta, s.created_by), deleted: s.deleted, title: s.title, summary: recurrenceSummary(s),
    next_delivery_date: s.next_delivery_date, invite_message: null,
    deliveries: s.reports.flatMap((r) => [...r.outgoing.deliveries].reverse().map((d) => ({ report_id: r.id, ...d }))),
  };
}

function subscriptionOf(meta: MetaStore, projectId: number, id: number): Subscription {
  const s = meta.subscriptions.get([projectId, id]);
  if (!s) throw Errors.notFound();
  return s;
}

function dateOf(raw: unknown, attr: string): string {
  const ms = typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw Errors.validation(attr, 'invalid', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].');
  return iso(ms);
}

/** The subscription as a write leaves it, checked against the store (inside `meta.write`). */
function applyBody(meta: MetaStore, projectId: number, body: Json, before: Subscription | null, now: number): Subscription {
  const s: Subscription = before ? { ...before } : {
    id: 0, project_id: projectId, insight_id: null, dashboard_id: null, target_type: 'email', target_value: '', frequency: 'daily', interval: 1,
    byweekday: null, bysetpos: null, count: null, start_date: iso(now), until_date: null, title: null, next_delivery_date: null, reports: [],
    created_by: null, created_at: iso(now), deleted: false,
  };
  if (!before) for (const field of ['target_type', 'target_value', 'frequency', 'start_date']) if (body[field] === undefined) throw Errors.required(field);
  if (!before || body.insight !== undefined || body.dashboard !== undefined) {
    const insightId = (body.insight === undefined ? s.insight_id : body.insight) as number | null;
    const dashboardId = (body.dashboard === undefined ? s.dashboard_id : body.dashboard) as number | null;
    if (insightId === null && dashboardId === null) throw Errors.validation(null, 'invalid_input', 'Either dashboard or insight is required for an export.');
    if (insightId !== null && dashboardId !== null) throw Errors.validation(null, 'invalid_input', 'A subscription is to an insight or to a dashboard, not both.');
    if (insightId !== null) {
      const insight = meta.insights.get([projectId, insightId]);
      if (!insight || insight.deleted) throw Errors.validation('insight', 'does_not_exist', `Invalid pk "${insightId}" - object does not exist.`);
    } else {
      const dashboard = meta.dashboards.get([projectId, dashboardId!]);
      if (!dashboard || dashboard.deleted) throw Errors.validation('dashboard', 'does_not_exist', `Invalid pk "${dashboardId}" - object does not exist.`);
    }
    s.insight_id = insightId;
    s.dashboard_id = dashboardId;
  }
  if (body.target_type !== undefined) {
    if (body.target_type === 'slack') throw Errors.validation('target_type', 'invalid_choice', 'Quill sends to Slack through an incoming webhook: use target_type "webhook" with its URL.');
    s.target_type = body.target_type as Subscription['target_type'];
  }
  if (body.target_value !== undefined) s.target_value = (body.target_value as string).trim();
  if (s.target_type === 'webhook') {
    const problem = webhookUrlProblem(s.target_value);
    if (problem) throw Errors.validation('target_value', 'invalid', problem);
  } else {
    const emails = emailsOf(s.target_value);
    const bad = emails.find((e) => !isEmailAddress(e));
    if (emails.length === 0 || bad !== undefined) throw Errors.validation('target_value', 'invalid', `Enter valid e-mail addresses, separated by commas${bad ? ` ("${bad}" is not one)` : ''}.`);
    if (emails.length > MAX_RECIPIENTS) throw Errors.validation('target_value', 'invalid', `A subscription sends to at most ${MAX_RECIPIENTS} addresses.`);
  }
  if (body.frequency !== undefined) s.frequency = body.frequency as Subscription['frequency'];
  if (body.interval !== undefined) s.interval = body.interval as number;
  if (body.byweekday !== undefined) {
    const days = (body.byweekday as Weekday[] | null) ?? [];
    s.byweekday = days.length === 0 ? null : [...new Set(days)];
  }
  if (body.bysetpos !== undefined) {
    if (body.bysetpos !== null && !(SETPOS as readonly number[]).includes(body.bysetpos as number)) throw Errors.validation('bysetpos', 'invalid_input', 'bysetpos is 1, 2, 3, 4 or -1 (the last).');
    s.bysetpos = body.bysetpos as number | null;
  }
  if (body.count !== undefined) s.count = body.count as number | null;
  if (body.start_date !== undefined) s.start_date = dateOf(body.start_date, 'start_date');
  if (body.until_date !== undefined) s.until_date = body.until_date === null ? null : dateOf(body.until_date, 'until_date');
  if (s.until_date !== null && Date.parse(s.until_date) < Date.parse(s.start_date)) throw Errors.validation('until_date', 'invalid_input', 'until_date must not be before start_date.');
  if (body.title !== undefined) s.title = (body.title as string | null)?.trim() || null;
  if (body.deleted !== undefined) s.deleted = body.deleted as boolean;
  return s;
}

const schedule = (s: Subscription): string => JSON.stringify([s.frequency, s.interval, s.byweekday, s.bysetpos, s.count, s.start_date, s.until_date]);

/** Stores `next` over `before` and keeps its due entry where `next_delivery_date` says (inside `meta.write`). */
function save(meta: MetaStore, before: Subscription | null, next: Subscription): void {
  if (before?.next_delivery_date) takeDue(meta, dueKey(Date.parse(before.next_delivery_date), before.project_id, 'subscription', before.id));
  if (!next.deleted && next.next_delivery_date) putDue(meta, dueKey(Date.parse(next.next_delivery_date), next.project_id, 'subscription', next.id));
  meta.subscriptions.put([next.project_id, next.id], next);
}

const truthy = (v: string) => ['true', '1', 'yes', 'on'].includes(v.toLowerCase());

export const listSubscriptions: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  rt.meta.env.resetReadTxn();
  const q = item.meta.query;
  const rows = all(rt.meta.subscriptions.getRange({ start: [projectId, 0], end: [projectId, Number.MAX_SAFE_INTEGER] }).map((e) => e.value))
    .filter((s) => (q.deleted === undefined ? !s.deleted : s.deleted === truthy(q.deleted))
      && (q.insight_id === undefined || String(s.insight_id) === q.insight_id)
      && (q.dashboard === undefined || String(s.dashboard_id) === q.dashboard));
  return json(200, paginate(rows.map((s) => serializeSubscription(rt.meta, s)), item.meta));
};

export const retrieveSubscription: OpHandler = (item, rt) => {
  rt.meta.env.resetReadTxn();
  return json(200, serializeSubscription(rt.meta, subscriptionOf(rt.meta, projectIdOf(item), intParam(item, 'id'))));
};

export const createSubscription: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const body = bodyOf(item);
  const created = await rt.meta.write(() => {
    const now = Date.now();
    const s = applyBody(rt.meta, projectId, body, null, now);
    const next = occurrenceAfter(s, now);
    const record: Subscription = { ...s, id: rt.meta.nextId('subscription'), created_by: principalOf(item).userId || null, next_delivery_date: next === null ? null : iso(next) };
    save(rt.meta, null, record);
    return record;
  });
  return json(201, serializeSubscription(rt.meta, created));
};

export const updateSubscription: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const updated = await rt.meta.write(() => {
    const now = Date.now();
    const before = subscriptionOf(rt.meta, projectId, id);
    const next = applyBody(rt.meta, projectId, body, before, now);
    // As PostHog's save(): the next delivery is computed again only when the schedule changed (or it comes back).
    if (schedule(next) !== schedule(before) || (before.deleted && !next.deleted)) {
      const at = occurrenceAfter(next, now);
      next.next_delivery_date = at === null ? null : iso(at);
    }
    save(rt.meta, before, next);
    return next;
  });
  return json(200, serializeSubscription(rt.meta, updated));
};

/** Quill's `POST …/subscriptions/:id/deliver/`: the report now, answered once each target had its first attempt. */
export const deliverSubscriptionNow: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const asked = await rt.meta.write(() => {
    const now = Date.now();
    const before = subscriptionOf(rt.meta, projectId, id);
    if (before.deleted) throw Errors.notFound();
    save(rt.meta, before, { ...before, next_delivery_date: iso(now) });
    return now;
  });
  const settled = await untilSettled(rt, () => {
    const s = rt.meta.subscriptions.get([projectId, id]);
    if (!s) throw Errors.notFound();
    const latest = s.reports[0];
    const done = latest !== undefined && Date.parse(latest.created_at) >= asked && !subscriptionDueAt(s, asked) && !latest.outgoing.targets.some((t) => t.attempts === 0);
    return { value: s, done };
  });
  return json(settled.done ? 200 : 202, serializeSubscription(rt.meta, settled.value));
};
