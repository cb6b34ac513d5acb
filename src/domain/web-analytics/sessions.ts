/**
 * Sessions as PostHog's web analytics sees them (its `sessions` table, version 3): all events sharing a
 * `$session_id`, folded into one row. What a session is made of, per PostHog:
 *
 *  - start and end: its first and last event (any event), duration `end - start` in whole seconds as ClickHouse's
 *    `dateDiff('second', …)` counts them (the difference of the truncated seconds);
 *  - entry URL and attribution (referring domain, UTM parameters, ad click ids): those of its first pageview or
 *    screen, or of its first event when it has neither; exit URL: its last pageview or screen (else last event);
 *  - a bounce: at least one pageview, screen or autocapture, and neither more than one of them nor a duration of
 *    `bounceSeconds` (10) or more; a session with none of them is neither a bounce nor not one (null);
 *  - its channel type from the entry attribution (src/domain/web-analytics/channel-type.ts).
 *
 * A session's events can live on several shards (its distinct ids change at sign-up), so each shard folds what it
 * has into a `SessionPart` and parts merge (min, max, earliest, latest, sums): ClickHouse's -State/-Merge.
 */
import { channelType } from './channel-type.js';
import { pathOf } from './urls.js';

/** The attribution of the event a session takes its entry from. */
export interface Attribution {
  url: string | null;
  referringDomain: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
  gadSource: string | null;
  hasGclid: boolean;
  hasFbclid: boolean;
}

/** Pageviews and screens come first when choosing a session's entry and exit; other events only without them. */
export const RANK_PAGE = 0;
export const RANK_OTHER = 1;

/** Per breakdown value: the counted events, and scroll depth sums (`$prev_pageview_…` of the events leaving a page). */
export interface ScrollSums {
  scrollSum: number;
  scrollN: number;
  gt80Sum: number;
  gt80N: number;
}

/** What one shard knows of a session; parts of one session merge with `mergePart`. */
export interface SessionPart {
  id: string;
  start: number;
  end: number;
  entryRank: number;
  entryTs: number;
  entry: Attribution | null;
  exitRank: number;
  exitTs: number;
  exitUrl: string | null;
  /** `$last_external_click_url`: the latest event's `$external_click_url`. */
  lastClickTs: number;
  lastClickUrl: string | null;
  /** Pageviews, screens and autocaptures, counted up to 2 (a bounce needs fewer than 2). */
  bounceEvents: number;
  /** The person of the earliest counted event (0: none counted) and its time. */
  person: number;
  personTs: number;
  /** Pageviews and screens passing the query's filters, inside its periods. */
  counted: number;
  /** Likewise with the filters on `$pathname` left out (bounce rate per entry page). */
  countedForBounce: number;
  /** Breakdown value → counted events with it (event-level breakdowns). */
  values: Record<string, number>;
  /** Breakdown value → counted events that are also conversions (a conversion goal with an event breakdown). */
  valueConversions: Record<string, number>;
  /** `$prev_pageview_pathname` → scroll depth sums (pages' scroll depth). */
  scroll: Record<string, ScrollSums>;
  /** Per goal (action) i: matching events inside the current period [2i] and the previous one [2i + 1]. */
  goals: number[];
}

/**
 * The tables of a part that most sessions never fill (breakdown values, conversions by value, scroll sums, goals)
 * start as these shared empties; the first count gives the part its own (`countValue`, `scrollSumsOf`). A scan
 * makes a part per session, millions of them: four objects fewer each is most of its garbage.
 */
const NO_COUNTS = Object.freeze({}) as Record<string, number>;
const NO_SCROLL = Object.freeze({}) as Record<string, ScrollSums>;
const NO_GOALS = Object.freeze([]) as unknown as number[];

export function emptyPart(id: string, goals: number): SessionPart {
  return {
    id, start: Infinity, end: -Infinity, entryRank: 2, entryTs: Infinity, entry: null, exitRank: 2, exitTs: -Infinity, exitUrl: null, lastClickTs: -Infinity, lastClickUrl: null,
    bounceEvents: 0, person: 0, personTs: Infinity, counted: 0, countedForBounce: 0, values: NO_COUNTS, valueConversions: NO_COUNTS, scroll: NO_SCROLL,
    goals: goals === 0 ? NO_GOALS : new Array<number>(goals * 2).fill(0),
  };
}

/** Adds `n` events with breakdown value `key` (and, with `conversions`, as conversions by value). */
export function countValue(part: SessionPart, key: string, n: number, conversions: boolean): void {
  if (conversions) {
    if (part.valueConversions === NO_COUNTS) part.valueConversions = {};
    part.valueConversions[key] = (part.valueConversions[key] ?? 0) + n;
  } else {
    if (part.values === NO_COUNTS) part.values = {};
    part.values[key] = (part.values[key] ?? 0) + n;
  }
}

/** The scroll sums of a page of the session, made on first use. */
export function scrollSumsOf(part: SessionPart, path: string): ScrollSums {
  if (part.scroll === NO_SCROLL) part.scroll = {};
  return part.scroll[path] ?? (part.scroll[path] = { scrollSum: 0, scrollN: 0, gt80Sum: 0, gt80N: 0 });
}

/** Whether (rank, ts) comes before (rank', ts') as an entry: pages first, then the earlier. */
export const entryBefore = (rank: number, ts: number, rank2: number, ts2: number) => rank < rank2 || (rank === rank2 && ts < ts2);
/** Whether (rank, ts) comes after (rank', ts') as an exit: pages first, then the later. */
export const exitAfter = (rank: number, ts: number, rank2: number, ts2: number) => rank < rank2 || (rank === rank2 && ts > ts2);

/** Folds `other` into `into` (same session id). */
export function mergePart(into: SessionPart, other: SessionPart): void {
  into.start = Math.min(into.start, other.start);
  into.end = Math.max(into.end, other.end);
  if (other.entry !== null && entryBefore(other.entryRank, other.entryTs, into.entryRank, into.entryTs)) {
    into.entryRank = other.entryRank;
    into.entryTs = other.entryTs;
    into.entry = other.entry;
  }
  if (other.exitRank < 2 && exitAfter(other.exitRank, other.exitTs, into.exitRank, into.exitTs)) {
    into.exitRank = other.exitRank;
    into.exitTs = other.exitTs;
    into.exitUrl = other.exitUrl;
  }
  if (other.lastClickUrl !== null && other.lastClickTs > into.lastClickTs) {
    into.lastClickTs = other.lastClickTs;
    into.lastClickUrl = other.lastClickUrl;
  }
  into.bounceEvents = Math.min(2, into.bounceEvents + other.bounceEvents);
  if (other.person !== 0 && (into.person === 0 || other.personTs < into.personTs)) {
    into.person = other.person;
    into.personTs = other.personTs;
  }
  into.counted += other.counted;
  into.countedForBounce += other.countedForBounce;
  for (const [v, n] of Object.entries(other.values)) countValue(into, v, n, false);
  for (const [v, n] of Object.entries(other.valueConversions)) countValue(into, v, n, true);
  for (const [v, s] of Object.entries(other.scroll)) {
    const had = into.scroll[v];
    if (!had) {
      if (into.scroll === NO_SCROLL) into.scroll = {};
      into.scroll[v] = { ...s };
    } else {
      had.scrollSum += s.scrollSum;
      had.scrollN += s.scrollN;
      had.gt80Sum += s.gt80Sum;
      had.gt80N += s.gt80N;
    }
  }
  for (let i = 0; i < into.goals.length; i++) into.goals[i]! += other.goals[i] ?? 0;
}

/** PostHog's default: a session of 10 seconds or more is not a bounce, whatever it did. */
export const BOUNCE_SECONDS = 10;

/** A session folded from all its parts: PostHog's session properties, and what the query counted in it. */
export interface WebSession {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  /** `$session_duration`, seconds. */
  readonly duration: number;
  /** `$is_bounce`: null for a session without pageviews, screens or autocaptures. */
  readonly isBounce: boolean | null;
  readonly entryUrl: string | null;
  readonly entryPathname: string | null;
  readonly exitUrl: string | null;
  readonly exitPathname: string | null;
  readonly attribution: Attribution | null;
  readonly channelType: string;
  readonly part: SessionPart;
}

/** ClickHouse's `dateDiff('second', start, end)` on DateTime64: the difference of the whole seconds. */
export function durationSeconds(start: number, end: number): number {
  return Math.floor(end / 1000) - Math.floor(start / 1000);
}

/** PostHog's bounce rule (sessions v3: pageviews, screens and autocaptures together). */
export function isBounce(bounceEvents: number, duration: number, bounceSeconds = BOUNCE_SECONDS): boolean | null {
  if (bounceEvents === 0) return null;
  return !(bounceEvents > 1 || duration >= bounceSeconds);
}

/**
 * A finished session. What only some kinds read (the entry and exit pathnames, the channel type) is worked out when
 * first read: the overview counts millions of sessions and asks none of it.
 */
class FinishedSession implements WebSession {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly duration: number;
  readonly isBounce: boolean | null;
  readonly entryUrl: string | null;
  readonly exitUrl: string | null;
  readonly attribution: Attribution | null;
  private entryPath: string | null | undefined = undefined;
  private exitPath: string | null | undefined = undefined;
  private channel: string | null = null;

  constructor(readonly part: SessionPart, bounceSeconds: number) {
    this.id = part.id;
    this.start = part.start;
    this.end = part.end;
    this.duration = durationSeconds(part.start, part.end);
    this.isBounce = isBounce(part.bounceEvents, this.duration, bounceSeconds);
    this.attribution = part.entry;
    this.entryUrl = part.entry?.url ?? null;
    this.exitUrl = part.exitUrl;
  }

  get entryPathname(): string | null {
    if (this.entryPath === undefined) this.entryPath = this.entryUrl === null ? null : pathOf(this.entryUrl);
    return this.entryPath;
  }

  get exitPathname(): string | null {
    if (this.exitPath === undefined) this.exitPath = this.exitUrl === null ? null : pathOf(this.exitUrl);
    return this.exitPath;
  }

  get channelType(): string {
    const a = this.attribution;
    return (this.channel ??= channelType({
      utmSource: a?.utmSource ?? null, utmMedium: a?.utmMedium ?? null, utmCampaign: a?.utmCampaign ?? null,
      referringDomain: a?.referringDomain ?? null, hasGclid: a?.hasGclid ?? false, hasFbclid: a?.hasFbclid ?? false,
      gadSource: a?.gadSource ?? null,
    }));
  }
}

export function finishSession(part: SessionPart, bounceSeconds = BOUNCE_SECONDS): WebSession {
  return new FinishedSession(part, bounceSeconds);
}

/** The session properties a `session` property filter or a session breakdown reads, by PostHog's names. */
export function sessionProperty(s: WebSession, key: string): unknown {
  const a = s.attribution;
  switch (key) {
    case '$session_duration': return s.duration;
    case '$is_bounce': return s.isBounce;
    case '$channel_type': return s.channelType;
    case '$entry_current_url': return s.entryUrl;
    case '$entry_pathname': return s.entryPathname;
    case '$end_current_url': case '$exit_current_url': return s.exitUrl;
    case '$end_pathname': case '$exit_pathname': return s.exitPathname;
    case '$entry_referring_domain': return a?.referringDomain ?? null;
    case '$entry_utm_source': return a?.utmSource ?? null;
    case '$entry_utm_medium': return a?.utmMedium ?? null;
    case '$entry_utm_campaign': return a?.utmCampaign ?? null;
    case '$entry_utm_term': return a?.utmTerm ?? null;
    case '$entry_utm_content': return a?.utmContent ?? null;
    case '$entry_gad_source': return a?.gadSource ?? null;
    case '$start_timestamp': return new Date(s.start).toISOString();
    case '$end_timestamp': return new Date(s.end).toISOString();
    default: return undefined;
  }
}

export const SESSION_PROPERTY_KEYS: ReadonlySet<string> = new Set([
  '$session_duration', '$is_bounce', '$channel_type', '$entry_current_url', '$entry_pathname', '$end_current_url', '$exit_current_url',
  '$end_pathname', '$exit_pathname', '$entry_referring_domain', '$entry_utm_source', '$entry_utm_medium', '$entry_utm_campaign',
  '$entry_utm_term', '$entry_utm_content', '$entry_gad_source', '$start_timestamp', '$end_timestamp',
]);
