/**
 * One subscription delivery, run by the scheduler when the subscription's due entry comes (./scheduler.ts): the
 * insight (or each of the dashboard's first insights) is computed, fresh, and its headline numbers and link become
 * the report; one metadata write transaction then removes the due entry (checking it still stands for the
 * subscription as stored), stores the report with its targets (the outbox, delivered by ./outbox-job.ts), and moves
 * `next_delivery_date` to the next occurrence of the schedule with its own entry. Once per occurrence across
 * restarts, as alert checks are (./alert-checks.ts).
 */
import { insightOnDashboard } from '../../domain/analytics/dashboard-filters.js';
import { trendsSource } from '../../domain/alerts/alert-config.js';
import { emailsOf } from '../../domain/notifications/mail.js';
import { dashboardLink, insightLink, subscriptionMessage, trendsHeadlines, type ReportFacts, type ReportItem } from '../../domain/notifications/messages.js';
import { outgoing, webhookFormatOf, type Target } from '../../domain/notifications/outbox.js';
import { occurrenceAfter, recurrenceSummary } from '../../domain/subscriptions/recurrence.js';
import type { Insight, Subscription } from '../../domain/model.js';
import { dueKey, putDue, takeDue, type DueKey } from './due.js';
import { iso, MAX_KEPT, Postponed, publicBase, shareTokenOf, type JobContext } from './context.js';

/** A dashboard's report shows its first insights only (PostHog's exports stop at 6). */
export const MAX_DASHBOARD_INSIGHTS = 6;

export function subscriptionDueAt(s: Subscription | undefined, at: number): s is Subscription {
  return s !== undefined && !s.deleted && s.next_delivery_date !== null && Date.parse(s.next_delivery_date) === at;
}

export function targetsOfSubscription(s: Pick<Subscription, 'target_type' | 'target_value'>): Target[] {
  if (s.target_type === 'webhook') return [{ kind: 'webhook', url: s.target_value, format: webhookFormatOf(s.target_value, null) }];
  return [...new Set(emailsOf(s.target_value))].map((to) => ({ kind: 'email', to }));
}

async function itemOf(ctx: JobContext, projectId: number, insight: Insight): Promise<ReportItem> {
  const token = shareTokenOf(ctx.meta, projectId, { kind: 'insight', id: insight.id });
  const item: ReportItem = { id: insight.id, short_id: insight.short_id, name: insight.name, url: insightLink(publicBase(ctx.config), projectId, insight.id, token), series: [], note: null };
  const trends = trendsSource(ctx.insights.queryOf(insight));
  if (!trends) return { ...item, note: 'Open the insight to see it.' };
  try {
    const answer = await ctx.insights.compute(projectId, trends);
    return { ...item, series: trendsHeadlines(answer.results) };
  } catch (error) {
    if (error instanceof Postponed) throw error;
    return { ...item, note: `It could not be computed: ${(error as Error).message}` };
  }
}

/** The report of a subscription now. */
async function reportOf(ctx: JobContext, s: Subscription): Promise<ReportFacts> {
  const base = publicBase(ctx.config);
  const projectId = s.project_id;
  const head = { subscription: { id: s.id, title: s.title, summary: recurrenceSummary(s) }, project: { id: projectId, name: ctx.meta.projects.get(projectId)?.name ?? '' } };
  if (s.insight_id !== null) {
    const insight = ctx.meta.insights.get([projectId, s.insight_id]);
    const url = insightLink(base, projectId, s.insight_id, shareTokenOf(ctx.meta, projectId, { kind: 'insight', id: s.insight_id }));
    if (!insight || insight.deleted) return { ...head, resource: { kind: 'insight', id: s.insight_id, name: '(deleted)', url }, items: [] };
    return { ...head, resource: { kind: 'insight', id: insight.id, name: insight.name, url }, items: [await itemOf(ctx, projectId, insight)] };
  }
  const dashboardId = s.dashboard_id!;
  const dashboard = ctx.meta.dashboards.get([projectId, dashboardId]);
  const url = dashboardLink(base, projectId, dashboardId, shareTokenOf(ctx.meta, projectId, { kind: 'dashboard', id: dashboardId }));
  if (!dashboard || dashboard.deleted) return { ...head, resource: { kind: 'dashboard', id: dashboardId, name: '(deleted)', url }, items: [] };
  const items: ReportItem[] = [];
  for (const tile of dashboard.tiles) {
    if (items.length >= MAX_DASHBOARD_INSIGHTS) break;
    const insight = ctx.meta.insights.get([projectId, tile.insight_id]);
    if (insight && !insight.deleted) items.push(await itemOf(ctx, projectId, insightOnDashboard(insight, dashboard.filters)));
  }
  return { ...head, resource: { kind: 'dashboard', id: dashboard.id, name: dashboard.name, url }, items };
}

/** Builds and stores the report the entry `key` stands for (kind `subscription`). Throws Postponed as checks do. */
export async function reportSubscription(ctx: JobContext, key: DueKey): Promise<void> {
  const [at, projectId, , rawId] = key;
  const id = Number(rawId);
  ctx.meta.env.resetReadTxn();
  const s = ctx.meta.subscriptions.get([projectId, id]);
  if (!subscriptionDueAt(s, at)) {
    await ctx.meta.write(() => takeDue(ctx.meta, key));
    return;
  }
  const facts = await reportOf(ctx, s);
  const now = ctx.now();
  const stored = await ctx.meta.write(() => {
    const current = ctx.meta.subscriptions.get([projectId, id]);
    if (!takeDue(ctx.meta, key) || !subscriptionDueAt(current, at)) return null;
    const report = { id: (current.reports[0]?.id ?? 0) + 1, created_at: iso(now), outgoing: outgoing(subscriptionMessage(facts), targetsOfSubscription(current), now) };
    // The next occurrence after this one, and after now: a node that was down sends one late report, not every one it missed.
    const next = occurrenceAfter(current, Math.max(at, now));
    ctx.meta.subscriptions.put([projectId, id], { ...current, next_delivery_date: next === null ? null : iso(next), reports: [report, ...current.reports].slice(0, MAX_KEPT) });
    if (next !== null) putDue(ctx.meta, dueKey(next, projectId, 'subscription', id));
    putDue(ctx.meta, dueKey(now, projectId, 'subscription_outbox', id));
    return { report, next };
  });
  if (!stored) return;
  ctx.counters.subscription_reports++;
  ctx.log.info({ event: 'subscription_report', project_id: projectId, subscription_id: id, report_id: stored.report.id, next_delivery_date: stored.next === null ? null : iso(stored.next) },
    `subscription ${id}: report ${stored.report.id} made`);
}
