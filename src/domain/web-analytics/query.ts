/**
 * PostHog's web analytics query kinds on `/query/` (its schema's `WebOverviewQuery`, `WebStatsTableQuery`,
 * `WebGoalsQuery`, `WebExternalClicksTableQuery`, `WebVitalsQuery`): the message schema (one place), and the
 * internal form every kind is answered from. Fields PostHog accepts but Quill ignores (`sampling`,
 * `useSessionsTable`, `includeRevenue`) are accepted and ignored; anything else of the wrong type is a 400 naming it.
 */
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput } from '../analytics/errors.js';
import { DateParseError, parseDate, resolveDateRange } from '../analytics/date-range.js';
import { isFilterGroup, parseFilters, type FilterGroup, type FilterLeaf, type FilterNode } from '../analytics/property-filters.js';
import { SESSION_PROPERTY_KEYS } from './sessions.js';

const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** The breakdowns of `WebStatsTableQuery` Quill answers (PostHog's `WebStatsBreakdown` names). */
export const BREAKDOWNS = [
  'Page', 'InitialPage', 'ExitPage', 'ExitClick', 'PreviousPage', 'ScreenName', 'InitialChannelType', 'InitialReferringDomain',
  'InitialUTMSource', 'InitialUTMCampaign', 'InitialUTMMedium', 'InitialUTMTerm', 'InitialUTMContent',
  'InitialUTMSourceMediumCampaign', 'Browser', 'OS', 'Viewport', 'DeviceType', 'Country', 'Region', 'City', 'Timezone', 'Language',
] as const;
export type Breakdown = (typeof BREAKDOWNS)[number];

export const ORDER_FIELDS = [
  'Visitors', 'Views', 'Clicks', 'BounceRate', 'AverageScrollPercentage', 'ScrollGt80Percentage', 'TotalConversions',
  'UniqueConversions', 'ConversionRate', 'ConvertingUsers',
] as const;

const DateRangeSchema = Type.Object({
  date_from: Type.Optional(Nullable(Type.String())),
  date_to: Type.Optional(Nullable(Type.String())),
  explicitDate: Type.Optional(Nullable(Type.Boolean())),
}, { additionalProperties: true });

/** The fields every web analytics kind shares (PostHog's `WebAnalyticsQueryBase`). */
const base = {
  dateRange: Type.Optional(Nullable(DateRangeSchema)),
  properties: Type.Optional(Nullable(Type.Array(Type.Object({}, { additionalProperties: true })))),
  compareFilter: Type.Optional(Nullable(Type.Object({
    compare: Type.Optional(Nullable(Type.Boolean())),
    compare_to: Type.Optional(Nullable(Type.String())),
  }, { additionalProperties: true }))),
  conversionGoal: Type.Optional(Nullable(Type.Union([
    Type.Object({ actionId: Type.Integer() }, { additionalProperties: true }),
    Type.Object({ customEventName: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
  ]))),
  doPathCleaning: Type.Optional(Nullable(Type.Boolean())),
  filterTestAccounts: Type.Optional(Nullable(Type.Boolean())),
  orderBy: Type.Optional(Nullable(Type.Tuple([
    Type.Union(ORDER_FIELDS.map((f) => Type.Literal(f))),
    Type.Union([Type.Literal('ASC'), Type.Literal('DESC')]),
  ]))),
  limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 50_000 }))),
  offset: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
};

/** One schema for the web analytics kinds (the kind decides which of the optional fields it reads). */
export const WebAnalyticsQuerySchema = Type.Object({
  kind: Type.Union([
    Type.Literal('WebOverviewQuery'), Type.Literal('WebStatsTableQuery'), Type.Literal('WebGoalsQuery'),
    Type.Literal('WebExternalClicksTableQuery'),
  ]),
  ...base,
  breakdownBy: Type.Optional(Type.Union(BREAKDOWNS.map((b) => Type.Literal(b)))),
  includeBounceRate: Type.Optional(Nullable(Type.Boolean())),
  includeScrollDepth: Type.Optional(Nullable(Type.Boolean())),
  stripQueryParams: Type.Optional(Nullable(Type.Boolean())),
}, { additionalProperties: true, $id: 'WebAnalyticsQuery', description: 'A web analytics query of /query/ (PostHog\'s names and fields)' });
export type WebAnalyticsQueryMessage = Static<typeof WebAnalyticsQuerySchema>;

/**
 * Compiled on first use: compiling this schema (its many kinds and breakdowns) took ~100 ms, paid by every thread
 * at every start whether or not it is ever asked a web analytics query.
 */
const compileCheck = () => Compile(WebAnalyticsQuerySchema);
let compiled: ReturnType<typeof compileCheck> | undefined;
const checker = () => (compiled ??= compileCheck());

/** A kind's message checked against the schema: the first error becomes a 400 naming its field. */
export function checkWebQuery(raw: Record<string, unknown>): WebAnalyticsQueryMessage {
  const check = checker();
  if (check.Check(raw)) return raw as WebAnalyticsQueryMessage;
  const first = [...check.Errors(raw)][0];
  const path = first ? first.instancePath.split('/').filter(Boolean) : [];
  const attr = path.length === 0 ? 'query' : path.join('__');
  if (raw.kind === 'WebStatsTableQuery' && (raw.breakdownBy === undefined || path[0] === 'breakdownBy')) {
    return invalidInput('breakdownBy', `breakdownBy must be one of ${BREAKDOWNS.join(', ')}.`);
  }
  return invalidInput(attr, `Invalid ${attr}: ${first?.message ?? 'not valid'}.`);
}

export type ConversionGoal = { actionId: number } | { customEventName: string };

/** The internal form of a web analytics query. */
export interface WebQuery {
  kind: WebAnalyticsQueryMessage['kind'];
  dateFrom: string | null;
  dateTo: string | null;
  explicitDate: boolean;
  compare: boolean;
  compareTo: string | null;
  /** Event, person and cohort filters (the project's test-account filters are added by the caller). */
  filter: FilterGroup | null;
  /** Session property filters (`type: "session"`), each ANDed, decided on the folded session. */
  sessionFilters: FilterLeaf[];
  filterTestAccounts: boolean;
  conversionGoal: ConversionGoal | null;
  doPathCleaning: boolean;
  breakdownBy: Breakdown | null;
  includeBounceRate: boolean;
  includeScrollDepth: boolean;
  stripQueryParams: boolean;
  orderBy: [string, 'ASC' | 'DESC'] | null;
  limit: number | null;
  offset: number;
}

/**
 * Splits the session property filters out of the top-level list: they are decided on folded sessions, the others
 * on events. (PostHog's web analytics filter bar makes a flat list; a session filter inside a nested group is
 * refused rather than answered differently.)
 */
function splitFilters(raw: unknown[]): { events: unknown[]; sessions: FilterLeaf[] } {
  const events: unknown[] = [];
  const sessions: FilterLeaf[] = [];
  for (const f of raw) {
    const rec = f as Record<string, unknown>;
    if (rec.type !== 'session') {
      if (JSON.stringify(f).includes('"type":"session"')) invalidInput('properties', 'Session property filters are supported in the top-level list only.');
      events.push(f);
      continue;
    }
    if (typeof rec.key !== 'string' || !SESSION_PROPERTY_KEYS.has(rec.key)) {
      invalidInput('properties', `Unknown session property "${String(rec.key)}". Known: ${[...SESSION_PROPERTY_KEYS].join(', ')}.`);
    }
    // Parsed as an event filter for its operator and value checks; the key is read from the session instead.
    const tree = parseFilters([{ ...rec, type: 'event' }], 'properties');
    const leaf = tree!.children[0]!;
    if (isFilterGroup(leaf)) invalidInput('properties', 'A session property filter must be a single filter.');
    sessions.push(leaf as FilterLeaf);
  }
  return { events, sessions };
}

export function webQueryOf(raw: Record<string, unknown>): WebQuery {
  const q = checkWebQuery(raw);
  const { events, sessions } = splitFilters(q.properties ?? []);
  return {
    kind: q.kind,
    dateFrom: q.dateRange?.date_from ?? null,
    dateTo: q.dateRange?.date_to ?? null,
    explicitDate: q.dateRange?.explicitDate === true,
    compare: q.compareFilter?.compare === true,
    compareTo: q.compareFilter?.compare_to ?? null,
    filter: parseFilters(events, 'properties'),
    sessionFilters: sessions,
    filterTestAccounts: q.filterTestAccounts === true,
    conversionGoal: (q.conversionGoal as ConversionGoal | null | undefined) ?? null,
    doPathCleaning: q.doPathCleaning === true,
    breakdownBy: q.kind === 'WebStatsTableQuery' ? q.breakdownBy ?? invalidInput('breakdownBy', `breakdownBy must be one of ${BREAKDOWNS.join(', ')}.`, 'required') : null,
    // Scroll depth comes with the bounce rate, as in PostHog.
    includeBounceRate: q.includeBounceRate === true || q.includeScrollDepth === true,
    includeScrollDepth: q.includeScrollDepth === true,
    stripQueryParams: q.stripQueryParams === true,
    orderBy: q.orderBy ?? null,
    limit: q.limit ?? null,
    offset: q.offset ?? 0,
  };
}

/** An inclusive range of instants, epoch ms. */
export interface Period {
  from: number;
  to: number;
}

export interface Periods {
  current: Period;
  /** The compared period (null without `compareFilter.compare`). */
  previous: Period | null;
}

/**
 * The current period (PostHog's default `-7d` to now, widened to whole days in the project's time zone), and the
 * previous one: the same length just before it, or with `compare_to` (`-1w`, `-1m`…) both bounds moved back by
 * that much in the project's calendar (a week back across a DST change is 7 local days, not 168 hours).
 */
export function periodsOf(q: Pick<WebQuery, 'dateFrom' | 'dateTo' | 'explicitDate' | 'compare' | 'compareTo'>, timeZone: string, now: number, firstEvent: number | null): Periods {
  let range;
  try {
    range = resolveDateRange({ dateFrom: q.dateFrom, dateTo: q.dateTo, explicitDate: q.explicitDate }, 'day', timeZone, now, firstEvent);
  } catch (error) {
    if (error instanceof DateParseError) return invalidInput(`dateRange__${error.attr}`, error.message);
    throw error;
  }
  const current = { from: range.from, to: range.to };
  if (!q.compare) return { current, previous: null };
  if (q.compareTo === null) {
    const length = current.to + 1 - current.from;
    return { current, previous: { from: current.from - length, to: current.from - 1 } };
  }
  try {
    const shift = (ms: number) => parseDate(q.compareTo!, ms, timeZone, 'compare_to').ms;
    return { current, previous: { from: shift(current.from), to: shift(current.to + 1) - 1 } };
  } catch (error) {
    if (error instanceof DateParseError) return invalidInput('compareFilter__compare_to', error.message);
    throw error;
  }
}

/** Which period an instant is in: 0 current, 1 previous, -1 neither. */
export function periodOf(p: Periods, ms: number): 0 | 1 | -1 {
  if (ms >= p.current.from && ms <= p.current.to) return 0;
  if (p.previous !== null && ms >= p.previous.from && ms <= p.previous.to) return 1;
  return -1;
}

/** Removes the event filters on `$pathname` (PostHog's bounce rate per entry page ignores them). */
export function withoutPathnameFilters(node: FilterNode | null): FilterNode | null {
  if (node === null) return null;
  if (!isFilterGroup(node)) return node.type === 'event' && node.key === '$pathname' ? null : node;
  const children = node.children.map(withoutPathnameFilters).filter((c): c is FilterNode => c !== null);
  return children.length === 0 ? null : { and: node.and, children };
}

/** Event filters on `$pathname` read `$prev_pageview_pathname` instead (scroll depth of the page being left). */
export function pathnameAsPrevious(node: FilterNode | null): FilterNode | null {
  if (node === null) return null;
  if (!isFilterGroup(node)) return node.type === 'event' && node.key === '$pathname' ? { ...node, key: '$prev_pageview_pathname' } : node;
  return { and: node.and, children: node.children.map((c) => pathnameAsPrevious(c)!) };
}
