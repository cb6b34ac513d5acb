/**
 * Share links, as pure functions: what a link points at, the answer PostHog's `sharing` endpoints give, the token
 * an unlocked viewer of a password-protected link carries, and which queries a shared web analytics page may ask.
 * The operations around them are in src/worker/ops/sharing.ts.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ShareTarget, SharingConfiguration } from './model.js';

/** The key of a target inside its project: `dashboard:5`, `insight:12`, `web_analytics`. */
export function targetKey(t: ShareTarget): string {
  return t.kind === 'web_analytics' ? t.kind : `${t.kind}:${t.id}`;
}

/** An access token: 22 random bytes, URL-safe (PostHog's `secrets.token_urlsafe(22)`), 176 bits nobody guesses. */
export const newAccessToken = (): string => randomBytes(22).toString('base64url');
export const newSessionSecret = (): string => randomBytes(32).toString('base64url');

/** Does the text have the shape of an access token? Anything else is refused before a lookup. */
export const looksLikeAccessToken = (s: string): boolean => /^[A-Za-z0-9_-]{16,64}$/.test(s);

/** PostHog's SharingConfigurationSerializer; `access_token` is null until the link is first enabled. */
export function sharingJson(c: SharingConfiguration | undefined, emailOf: (userId: number | null) => string): Record<string, unknown> {
  if (!c) return { created_at: null, enabled: false, access_token: null, settings: null, password_required: false, share_passwords: [] };
  return {
    created_at: c.created_at, enabled: c.enabled, access_token: c.access_token, settings: c.settings,
    password_required: c.password_required,
    share_passwords: c.passwords.map((p) => ({ id: p.id, created_at: p.created_at, note: p.note, created_by_email: emailOf(p.created_by), is_active: true })),
  };
}

/** How long an unlocked viewer stays unlocked (PostHog's share JWT lives 24 hours). */
export const SHARE_SESSION_MS = 24 * 3_600_000;

function signature(c: Pick<SharingConfiguration, 'session_secret' | 'access_token'>, passwordId: number, expiresAt: number): string {
  return createHmac('sha256', c.session_secret).update(`${c.access_token}.${passwordId}.${expiresAt}`).digest('base64url');
}

/** The token a correct password buys: `<password id>.<expiry, epoch ms>.<HMAC>`; no state is kept for it. */
export function shareSessionToken(c: SharingConfiguration, passwordId: number, now: number): string {
  const expiresAt = now + SHARE_SESSION_MS;
  return `${passwordId}.${expiresAt}.${signature(c, passwordId, expiresAt)}`;
}

/**
 * Does `token` unlock this link now? It must be signed with the link's current secret (rotating the link replaces
 * it), unexpired, and made with a password the link still has (deleting a password locks out whoever used it).
 */
export function shareSessionValid(c: SharingConfiguration, token: string, now: number): boolean {
  const m = /^(\d{1,12})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const passwordId = Number(m[1]);
  const expiresAt = Number(m[2]);
  if (expiresAt <= now || !c.passwords.some((p) => p.id === passwordId)) return false;
  const want = Buffer.from(signature(c, passwordId, expiresAt));
  const got = Buffer.from(m[3]!);
  return want.length === got.length && timingSafeEqual(want, got);
}

// ---- What a shared web analytics page may ask -------------------------------------------------------------------

/** The date ranges the page offers (its range picker); a shared page asks for no other. */
export const SHARED_WEB_RANGES: readonly string[] = ['-24h', '-7d', '-14d', '-30d', '-90d'];

/** The properties a click on a table row filters by (the page's tables): a viewer narrows by these and no other. */
const FILTER_KEYS: Record<'event' | 'session', ReadonlySet<string>> = {
  event: new Set(['$pathname', '$browser', '$os', '$device_type', '$geoip_country_code']),
  session: new Set(['$entry_pathname', '$end_pathname', '$channel_type', '$entry_referring_domain', '$entry_utm_source', '$entry_utm_medium', '$entry_utm_campaign']),
};

const WEB_TABLE_FIELDS = new Set(['kind', 'dateRange', 'properties', 'compareFilter', 'filterTestAccounts', 'doPathCleaning', 'breakdownBy', 'limit', 'offset', 'orderBy', 'includeBounceRate', 'includeScrollDepth', 'stripQueryParams']);
const TRENDS_FIELDS = new Set(['kind', 'dateRange', 'interval', 'properties', 'series', 'trendsFilter', 'filterTestAccounts']);
const SERIES_FIELDS = new Set(['kind', 'event', 'name', 'custom_name', 'math', 'math_property']);
const VITAL_PROPERTY = /^\$web_vitals_(INP|LCP|CLS|FCP)_value$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function fieldsProblem(q: Json, allowed: ReadonlySet<string>, what: string): string | null {
  const extra = Object.keys(q).find((k) => !allowed.has(k) && q[k] !== undefined && q[k] !== null);
  return extra === undefined ? null : `"${extra}" is not something a shared ${what} can ask for.`;
}

function rangeProblem(range: unknown): string | null {
  if (range === undefined || range === null) return null;
  if (!isObject(range)) return '"dateRange" must be an object.';
  const { date_from: from, date_to: to, ...rest } = range;
  if (Object.keys(rest).length > 0 || (to !== undefined && to !== null)) return 'A shared page asks for a date range the page offers.';
  if (from !== undefined && from !== null && !SHARED_WEB_RANGES.includes(from as string)) return `A shared page offers the ranges ${SHARED_WEB_RANGES.join(', ')}.`;
  return null;
}

function filtersProblem(properties: unknown, types: readonly ('event' | 'session')[]): string | null {
  if (properties === undefined || properties === null) return null;
  if (!Array.isArray(properties) || properties.length > 10) return '"properties" must be a list of at most 10 filters.';
  for (const f of properties) {
    if (!isObject(f) || !types.includes(f.type as 'event') || !FILTER_KEYS[f.type as 'event'].has(f.key as string)) {
      return 'A shared page filters only by the values its tables show.';
    }
    if ((f.operator ?? 'exact') !== 'exact' || typeof f.value !== 'string' || f.value.length > 2000) return 'A shared page filters by one exact value.';
    if (Object.keys(f).some((k) => !['type', 'key', 'value', 'operator'].includes(k))) return 'A shared page filters by one exact value.';
  }
  return null;
}

/** The visitors/views chart and the web vitals' trend: only these series, only these events. */
function trendsProblem(q: Json, event: '$pageview' | '$web_vitals'): string | null {
  const fields = fieldsProblem(q, TRENDS_FIELDS, 'page');
  if (fields) return fields;
  if (q.interval !== undefined && q.interval !== 'hour' && q.interval !== 'day') return 'A shared chart counts by hour or by day.';
  const range = rangeProblem(q.dateRange) ?? filtersProblem(q.properties, ['event']);
  if (range) return range;
  if (!Array.isArray(q.series) || q.series.length === 0 || q.series.length > 6) return 'A shared chart has the page\'s own series.';
  for (const s of q.series) {
    if (!isObject(s) || s.kind !== 'EventsNode' || s.event !== event || fieldsProblem(s, SERIES_FIELDS, 'chart')) return 'A shared chart has the page\'s own series.';
    const ok = event === '$pageview'
      ? (s.math === 'dau' || s.math === 'total') && s.math_property === undefined
      : s.math === 'total' ? s.math_property === undefined : ['p75', 'p90', 'p99'].includes(s.math as string) && VITAL_PROPERTY.test(String(s.math_property));
    if (!ok) return 'A shared chart has the page\'s own series.';
  }
  return null;
}

/**
 * Null when a shared web analytics page may run `query`, else why not. The page's own queries pass: PostHog's web
 * analytics kinds with the page's ranges and row filters, its visitors/views chart and its web vitals. Anything
 * else (HogQL, other events, other properties, a conversion goal naming any event) would let a link's holder read
 * more than the page shows.
 */
export function sharedWebQueryProblem(query: unknown): string | null {
  if (!isObject(query)) return '"query" must be an object.';
  switch (query.kind) {
    case 'WebOverviewQuery':
    case 'WebStatsTableQuery':
    case 'WebGoalsQuery':
    case 'WebExternalClicksTableQuery': {
      const fields = fieldsProblem(query, WEB_TABLE_FIELDS, 'page');
      if (fields) return fields;
      if (query.limit !== undefined && (!Number.isInteger(query.limit) || (query.limit as number) < 1 || (query.limit as number) > 100)) return '"limit" must be 1 to 100.';
      if (query.breakdownBy !== undefined && typeof query.breakdownBy !== 'string') return '"breakdownBy" must be a string.';
      return rangeProblem(query.dateRange) ?? filtersProblem(query.properties, ['event', 'session']);
    }
    case 'TrendsQuery':
      return trendsProblem(query, '$pageview');
    case 'WebVitalsQuery': {
      const fields = fieldsProblem(query, new Set(['kind', 'dateRange', 'properties', 'source']), 'page');
      if (fields) return fields;
      if (Array.isArray(query.properties) && query.properties.length > 0) return 'Web vitals are filtered through their source.';
      if (!isObject(query.source) || query.source.kind !== 'TrendsQuery') return 'Web vitals need their TrendsQuery source.';
      return rangeProblem(query.dateRange) ?? trendsProblem(query.source, '$web_vitals');
    }
    default:
      return `A shared web analytics page does not run ${typeof query.kind === 'string' ? `"${query.kind}"` : 'this query'}.`;
  }
}
