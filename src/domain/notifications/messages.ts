/**
 * The messages alerts and subscriptions send, pure: their subject, plain text (e-mail, Slack) and the generic
 * webhook's JSON document, and the links in them. A link opens the insight or dashboard in the console, or, when it
 * has an enabled share link, that link (which opens without signing in, as the recipients of a subscription may
 * have no account).
 */
import type { NotificationMessage } from './outbox.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The address of a saved insight for people: its share link when one is enabled, else its console page. */
export function insightLink(base: string, projectId: number, insightId: number, shareToken: string | null): string {
  return shareToken !== null ? `${base}/shared/${shareToken}` : `${base}/console/project/${projectId}/insights/saved/${insightId}`;
}

export function dashboardLink(base: string, projectId: number, dashboardId: number, shareToken: string | null): string {
  return shareToken !== null ? `${base}/shared/${shareToken}` : `${base}/console/project/${projectId}/dashboard/${dashboardId}`;
}

/** A number as a message shows it: integers as they are, others to 4 significant decimals. */
export function shown(v: number | null): string {
  if (v === null) return '–';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 10_000) / 10_000);
}

// ---- Alerts ---------------------------------------------------------------------------------------------------

export interface AlertFacts {
  alert: { id: string; name: string; condition: unknown; threshold: unknown; calculation_interval: string };
  insight: { id: number; short_id: string; name: string; url: string };
  project: { id: number; name: string };
  check: { id: string; created_at: string; calculated_value: number | null; breaches: string[] };
}

const alertTitle = (f: AlertFacts): string => f.alert.name || `Alert on ${f.insight.name || 'an insight'}`;

/** PostHog's "alert … is firing" message: the breaches and where to look. */
export function alertFiringMessage(f: AlertFacts): NotificationMessage {
  const subject = `Quill alert ${alertTitle(f)} is firing`;
  const text = [...f.check.breaches, '', `Insight: ${f.insight.name || f.insight.short_id} — ${f.insight.url}`].join('\n');
  return { subject, text, payload: { event: 'alert_firing', state: 'Firing', ...factsJson(f), text } };
}

/** The alert is back within its bounds. */
export function alertResolvedMessage(f: AlertFacts): NotificationMessage {
  const subject = `Quill alert ${alertTitle(f)} is resolved`;
  const text = [`The insight value (${shown(f.check.calculated_value)}) is within the alert's thresholds again.`, '', `Insight: ${f.insight.name || f.insight.short_id} — ${f.insight.url}`].join('\n');
  return { subject, text, payload: { event: 'alert_resolved', state: 'Not firing', ...factsJson(f), text } };
}

function factsJson(f: AlertFacts): Json {
  return { alert: f.alert, insight: f.insight, project: f.project, check: f.check };
}

// ---- Subscriptions --------------------------------------------------------------------------------------------

/** A trends series' headline numbers: its latest point (the interval under way) and its total over the range. */
export interface SeriesHeadline {
  label: string;
  latest: number | null;
  /** The date of the latest point (null for a number that is not a time series). */
  latest_date: string | null;
  total: number | null;
}

/** The series a report shows of one insight, at most. */
export const MAX_REPORT_SERIES = 10;

/** Headline numbers of a trends answer's results (`results` of a TrendsQuery). */
export function trendsHeadlines(results: unknown): SeriesHeadline[] {
  if (!Array.isArray(results)) return [];
  return results.slice(0, MAX_REPORT_SERIES).filter(isObject).map((r) => {
    const label = String(r.label ?? '');
    if (typeof r.aggregated_value === 'number') return { label, latest: r.aggregated_value, latest_date: null, total: r.aggregated_value };
    const data = Array.isArray(r.data) ? r.data.filter((x): x is number => typeof x === 'number') : [];
    const days = Array.isArray(r.days) ? r.days : [];
    return {
      label, latest: data.length > 0 ? data[data.length - 1]! : null, latest_date: typeof days[days.length - 1] === 'string' ? days[days.length - 1] as string : null,
      total: typeof r.count === 'number' ? r.count : data.reduce((a, b) => a + b, 0),
    };
  });
}

export interface ReportItem {
  id: number;
  short_id: string;
  name: string;
  url: string;
  series: SeriesHeadline[];
  /** Why there are no numbers (not a trend, or its computation failed). */
  note: string | null;
}

export interface ReportFacts {
  subscription: { id: number; title: string | null; summary: string };
  project: { id: number; name: string };
  resource: { kind: 'insight' | 'dashboard'; id: number; name: string; url: string };
  items: ReportItem[];
}

/** The report a subscription delivers: each insight's headline numbers and link, and the link to the whole. */
export function subscriptionMessage(f: ReportFacts): NotificationMessage {
  const what = f.resource.kind === 'dashboard' ? 'Dashboard' : 'Insight';
  const name = f.resource.name || `${what} ${f.resource.id}`;
  const subject = `Quill report: ${f.subscription.title || name}`;
  const lines = [`${what} "${name}" (${f.subscription.summary}):`, ''];
  for (const item of f.items) {
    lines.push(`${item.name || item.short_id}`);
    for (const s of item.series) {
      lines.push(`  ${s.label || 'Series'}: ${shown(s.latest)}${s.latest_date ? ` on ${s.latest_date}` : ''}${s.total !== s.latest ? `, ${shown(s.total)} in all` : ''}`);
    }
    if (item.note) lines.push(`  ${item.note}`);
    if (f.resource.kind === 'dashboard') lines.push(`  ${item.url}`);
  }
  lines.push('', `Open: ${f.resource.url}`);
  const text = lines.join('\n');
  return { subject, text, payload: { event: 'subscription_report', subscription: f.subscription, project: f.project, resource: f.resource, insights: f.items, text } };
}
