/**
 * One alert check, run by the scheduler when the alert's due entry comes (./scheduler.ts).
 *
 * Exactly once per interval, across restarts: the insight is computed first, outside any transaction; then one
 * metadata write transaction removes the due entry, checks that it still stands for the alert as stored (enabled,
 * its `next_check_at` the entry's time: an edit or a "check now" meanwhile moved it and left its own entry), records
 * the check and the new state, stores the message to send if the state went into Firing or out of it (the outbox,
 * delivered afterwards by ./outbox-job.ts), and puts the entry of the next check. A crash before the commit leaves
 * the entry, and the check is made at the next start; after it, the check is never made again.
 */
import { randomUUID } from 'node:crypto';
import { alertConfigProblem, trendsSource, type AlertSpec } from '../../domain/alerts/alert-config.js';
import { alertQuery, checkOutcome, evaluateTrendsAlert, type AlertEvaluation, type TrendSeries } from '../../domain/alerts/evaluate.js';
import { nextCheckAt } from '../../domain/alerts/schedule.js';
import type { Alert, AlertCheckRecord } from '../../domain/model.js';
import { alertFiringMessage, alertResolvedMessage, insightLink, type AlertFacts } from '../../domain/notifications/messages.js';
import { outgoing, webhookFormatOf, type Target } from '../../domain/notifications/outbox.js';
import { dueKey, putDue, takeDue, type DueKey } from './due.js';
import { iso, MAX_KEPT, Postponed, publicBase, shareTokenOf, type JobContext } from './context.js';

type Found = AlertEvaluation | { error: string };

/** Does the due entry at `at` still stand for this alert? */
export function alertDueAt(alert: Alert | undefined, at: number): alert is Alert {
  return alert !== undefined && alert.enabled && alert.next_check_at !== null && Date.parse(alert.next_check_at) === at;
}

export const specOf = (a: Pick<Alert, 'condition' | 'threshold' | 'config'>): AlertSpec => ({ condition: a.condition, threshold: a.threshold, config: a.config });

/** What the check finds: the evaluation, or the error it records (the insight gone or changed, its computation failed). */
async function evaluate(ctx: JobContext, alert: Alert): Promise<Found> {
  const insight = ctx.meta.insights.get([alert.project_id, alert.insight_id]);
  if (!insight || insight.deleted) return { error: 'The insight of this alert no longer exists.' };
  const query = ctx.insights.queryOf(insight);
  const spec = specOf(alert);
  const problem = alertConfigProblem(query, spec);
  if (problem) return { error: problem.detail };
  const trends = trendsSource(query)!;
  try {
    const answer = await ctx.insights.compute(alert.project_id, alertQuery(trends, spec));
    return evaluateTrendsAlert(spec, trends, (Array.isArray(answer.results) ? answer.results : []) as TrendSeries[]);
  } catch (error) {
    if (error instanceof Postponed) throw error;
    return { error: (error as Error).message || String(error) };
  }
}

/** Who is told: the alert's webhook, and its subscribed users by e-mail. */
function targetsOf(ctx: JobContext, alert: Alert): Target[] {
  const targets: Target[] = [];
  if (alert.webhook_url) targets.push({ kind: 'webhook', url: alert.webhook_url, format: webhookFormatOf(alert.webhook_url, alert.webhook_format) });
  const emails = new Set(alert.subscribed_users.map((id) => ctx.meta.users.get(id)?.email).filter((e): e is string => typeof e === 'string' && e !== ''));
  for (const to of emails) targets.push({ kind: 'email', to });
  return targets;
}

function factsOf(ctx: JobContext, alert: Alert, check: AlertCheckRecord): AlertFacts {
  const insight = ctx.meta.insights.get([alert.project_id, alert.insight_id]);
  const project = ctx.meta.projects.get(alert.project_id);
  const token = shareTokenOf(ctx.meta, alert.project_id, { kind: 'insight', id: alert.insight_id });
  return {
    alert: { id: alert.id, name: alert.name, condition: alert.condition, threshold: alert.threshold, calculation_interval: alert.calculation_interval },
    insight: { id: alert.insight_id, short_id: insight?.short_id ?? '', name: insight?.name ?? '', url: insightLink(publicBase(ctx.config), alert.project_id, alert.insight_id, token) },
    project: { id: alert.project_id, name: project?.name ?? '' },
    check: { id: check.id, created_at: check.created_at, calculated_value: check.calculated_value, breaches: check.breaches },
  };
}

/** Runs the check the entry `key` stands for (kind `alert`). Throws Postponed when the insight cannot be computed now. */
export async function checkAlert(ctx: JobContext, key: DueKey): Promise<void> {
  const [at, projectId, , rawId] = key;
  const id = String(rawId);
  ctx.meta.env.resetReadTxn();
  const alert = ctx.meta.alerts.get([projectId, id]);
  if (!alertDueAt(alert, at)) {
    await ctx.meta.write(() => takeDue(ctx.meta, key));
    return;
  }
  const timeZone = ctx.meta.projects.get(projectId)?.timezone ?? 'UTC';
  if (alert.snoozed_until !== null && Date.parse(alert.snoozed_until) > ctx.now()) {
    // Snoozed: no check; the next one comes at the first regular time, and not before the snooze ends.
    await ctx.meta.write(() => {
      const current = ctx.meta.alerts.get([projectId, id]);
      if (!takeDue(ctx.meta, key) || !alertDueAt(current, at) || current.snoozed_until === null) return;
      const next = Math.max(nextCheckAt(current.calculation_interval, ctx.now(), timeZone, at), Date.parse(current.snoozed_until));
      ctx.meta.alerts.put([projectId, id], { ...current, next_check_at: iso(next) });
      putDue(ctx.meta, dueKey(next, projectId, 'alert', id));
    });
    return;
  }
  const found = await evaluate(ctx, alert);
  const checkedAt = ctx.now();
  const recorded = await ctx.meta.write(() => {
    const current = ctx.meta.alerts.get([projectId, id]);
    if (!takeDue(ctx.meta, key) || !alertDueAt(current, at)) return null;
    // A snooze that ended since the last check: PostHog resumes from Not firing, so a breach still there fires again.
    const snoozeOver = current.snoozed_until !== null && Date.parse(current.snoozed_until) <= checkedAt;
    const before = snoozeOver || current.state === 'Snoozed' ? 'Not firing' : current.state;
    const outcome = checkOutcome(before, found);
    const check: AlertCheckRecord = {
      id: randomUUID(), created_at: iso(checkedAt), calculated_value: 'error' in found ? null : found.value, state: outcome.state,
      error: 'error' in found ? { message: found.error } : null, breaches: 'error' in found ? [] : found.breaches,
      notification: outcome.notify, outgoing: null,
    };
    const targets = outcome.notify ? targetsOf(ctx, current) : [];
    if (outcome.notify && targets.length > 0) {
      const facts = factsOf(ctx, current, check);
      check.outgoing = outgoing(outcome.notify === 'firing' ? alertFiringMessage(facts) : alertResolvedMessage(facts), targets, checkedAt);
      putDue(ctx.meta, dueKey(checkedAt, projectId, 'alert_outbox', id));
    }
    const next = nextCheckAt(current.calculation_interval, checkedAt, timeZone, at);
    ctx.meta.alerts.put([projectId, id], {
      ...current, state: outcome.state, snoozed_until: snoozeOver ? null : current.snoozed_until, last_checked_at: check.created_at,
      next_check_at: iso(next), checks: [check, ...current.checks].slice(0, MAX_KEPT),
    });
    putDue(ctx.meta, dueKey(next, projectId, 'alert', id));
    return check;
  });
  if (!recorded) return;
  ctx.counters.alert_checks++;
  if (recorded.state === 'Errored') ctx.counters.alert_checks_errored++;
  const fields = { event: 'alert_checked', project_id: projectId, alert_id: id, state: recorded.state, value: recorded.calculated_value, notification: recorded.notification };
  if (recorded.error) ctx.log.warn({ ...fields, error: recorded.error.message }, `alert ${id} could not be checked: ${recorded.error.message}`);
  else ctx.log.info(fields, `alert ${id} checked: ${recorded.state}`);
}
