/**
 * The scan behind the web analytics kinds: one pass over the events of the range on every shard, each folding
 * the events it holds into per-session parts (src/domain/web-analytics/sessions.ts); the coordinator merges the
 * parts of a session (its distinct ids, hence its events, can be on several shards) and finishes them.
 *
 * What a shard computes per event, with columns read once per block and per-value tables where it can: the session
 * (`$session_id`), its time bounds, entry and exit candidates (pageviews and screens first), bounce events, and
 * whether the event is counted (a pageview or screen, or a goal event, passing the filters inside the periods) with
 * its breakdown value. Every part travels to the coordinator: the cost is a few hundred bytes per session of the
 * range (see src/README.md, "Web analytics").
 */
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import { propertyNumber, propertyText } from '../../domain/analytics/property-filters.js';
import { eventBreakdownKey } from '../../domain/web-analytics/breakdowns.js';
import type { Breakdown, Periods } from '../../domain/web-analytics/query.js';
import { periodOf } from '../../domain/web-analytics/query.js';
import { emptyPart, entryBefore, exitAfter, mergePart, RANK_OTHER, RANK_PAGE, type Attribution, type SessionPart } from '../../domain/web-analytics/sessions.js';
import { withoutQueryAndFragment } from '../../domain/web-analytics/urls.js';
import { itemCleaner, type CleaningRule } from '../../domain/analytics/paths.js';
import { mergeClicks, type ClickCounts } from '../../domain/web-analytics/external-clicks.js';
import { COL, EVENT_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView, DictColumn } from '../../stores/scan/column-block.js';
import type { PeerMessage } from '../peers.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { rowMask } from './block-filter.js';
import { scanEnvOf, type ScanContext } from './scatter.js';
import { Slicer } from './slices.js';

export const WEB_SESSIONS_SCAN = 'web.sessions';

/** What every shard needs to fold its sessions (plain data: it travels between threads). */
export interface WebScanSpec {
  team: number;
  /** Events read: the periods widened by a day each way, so that sessions crossing their bounds are whole. */
  from: number;
  to: number;
  /** Counted events lie inside the periods (goals split by them). */
  periods: Periods;
  /** Event, person and cohort filters (with the project's test-account filters when asked). */
  filter: FilterNode | null;
  /** Filters of the Page bounce rate (no `$pathname` filters); absent when not asked. */
  bounceFilter?: FilterNode | null;
  /** Goals (actions, a conversion goal): bit i of a counted event says it matches goal i; goal events also count. */
  goals: FilterNode[];
  /** Whether pageviews and screens count (not when only a conversion goal's events do). */
  pages: boolean;
  breakdown: Breakdown | null;
  /** Conversions per breakdown value: goal 0 is the conversion goal. */
  conversionByValue: boolean;
  /** Page scroll depth: `$pageview`, `$pageleave` and `$screen` events passing this filter. */
  scroll?: { filter: FilterNode | null };
  /** External clicks (autocaptured clicks on links to other sites). */
  clicks?: { strip: boolean; filter: FilterNode | null };
  /** Path cleaning rules for pathnames (doPathCleaning). */
  pathRules: CleaningRule[];
}

export interface WebScanResult {
  sessions: SessionPart[];
  clicks: [string, number[], number][];
}

interface ScanMessage extends PeerMessage {
  spec: WebScanSpec;
  ctx: ScanContext;
}

/** The same day of margin PostHog's session table allows: a session lasts 24 hours at most (posthog-js). */
export const SESSION_MARGIN_MS = 24 * 3_600_000;

/** Runs the scan on every shard; the parts of each session merged. */
export async function webSessionsEverywhere(rt: WorkerRuntime, spec: WebScanSpec, ctx: ScanContext): Promise<{ sessions: Map<string, SessionPart>; clicks: ClickCounts }> {
  const parts = await rt.peers.all<WebScanResult>({ kind: WEB_SESSIONS_SCAN, spec, ctx } satisfies ScanMessage);
  const sessions = new Map<string, SessionPart>();
  const clicks: ClickCounts = new Map();
  const slicer = new Slicer();
  for (const part of parts) {
    for (const s of part.sessions) {
      const had = sessions.get(s.id);
      if (had) mergePart(had, s);
      else sessions.set(s.id, s);
      if (slicer.due()) await slicer.pace();
    }
    mergeClicks(clicks, part.clicks);
  }
  return { sessions, clicks };
}

const PAGEVIEW = 1;
const SCREEN = 2;
const AUTOCAPTURE = 3;
const PAGELEAVE = 4;
const KIND_OF: Record<string, number> = { $pageview: PAGEVIEW, $screen: SCREEN, $autocapture: AUTOCAPTURE, $pageleave: PAGELEAVE };

/** A property column of a block read by row: its value (undefined when absent). */
type Reader = (row: number) => unknown;

function reader(col: DictColumn | null): Reader {
  if (col === null) return () => undefined;
  const { codes, values } = col;
  return (row) => {
    const c = codes[row]!;
    return c === 0 ? undefined : values[c - 1];
  };
}

const textOf = (v: unknown): string | null => (v === undefined || v === null ? null : propertyText(v));

const ATTRIBUTION_KEYS = ['$current_url', '$referring_domain', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gad_source', 'gclid', 'fbclid'] as const;

export const webSessionsHandler: PeerHandler = async (rt, msg) => {
  const { spec, ctx } = msg as ScanMessage;
  rt.persons.env.resetReadTxn();
  const env = scanEnvOf(rt, ctx);
  const clean = spec.pathRules.length === 0 ? (p: string) => p : itemCleaner(spec.pathRules, []);
  const parts = new Map<string, SessionPart>();
  const clicks: ClickCounts = new Map();
  const slicer = new Slicer();
  const { periods } = spec;
  const countFrom = periods.previous === null ? periods.current.from : Math.min(periods.current.from, periods.previous.from);
  const countTo = periods.previous === null ? periods.current.to : Math.max(periods.current.to, periods.previous.to);
  for (const shard of rt.ingest.shards.values()) {
    for (const block of shard.events.columns.blocks(spec.team, spec.from, spec.to)) {
      foldBlock(block, spec, env, parts, clicks, clean, countFrom, countTo);
      await slicer.pace();
    }
  }
  const out: WebScanResult = {
    sessions: [...parts.values()],
    clicks: [...clicks].map(([url, c]) => [url, [...c.persons], c.clicks]),
  };
  return out;
};

function foldBlock(
  block: BlockView, spec: WebScanSpec, env: ReturnType<typeof scanEnvOf>, parts: Map<string, SessionPart>, clicks: ClickCounts,
  clean: (path: string) => string, countFrom: number, countTo: number,
): void {
  const n = block.n;
  const ts = block.f64(COL.ts)!;
  const names = block.dict(COL.event);
  const sids = block.dict(`${EVENT_PROP}$session_id`);
  if (names === null || (sids === null && !spec.clicks)) return;
  const kindOf = new Uint8Array(names.values.length + 1);
  names.values.forEach((v, i) => { kindOf[i + 1] = KIND_OF[String(v)] ?? 0; });
  const persons = env.resolution.resolveAll(block.u32(COL.personId)!);
  const prop = (key: string) => reader(block.dict(EVENT_PROP + key));
  const filter = spec.filter === null ? null : rowMask(spec.filter, block, env);
  const bounceFilter = spec.bounceFilter === undefined ? undefined : spec.bounceFilter === null ? null : rowMask(spec.bounceFilter, block, env);
  const goalMasks = spec.goals.map((g) => rowMask(g, block, env));
  const attribution = ATTRIBUTION_KEYS.map(prop);
  const url = attribution[0]!;
  const externalUrl = prop('$external_click_url');
  const breakdownReaders = new Map<string, Reader>();
  const breakdownOf = spec.breakdown === null ? null : (row: number) => eventBreakdownKey(spec.breakdown!, (key) => {
    let r = breakdownReaders.get(key);
    if (!r) breakdownReaders.set(key, (r = prop(key)));
    return r(row);
  }, clean);
  const scrollFilter = spec.scroll ? (spec.scroll.filter === null ? null : rowMask(spec.scroll.filter, block, env)) : undefined;
  const prevPath = spec.scroll ? prop('$prev_pageview_pathname') : null;
  const scrollPct = spec.scroll ? prop('$prev_pageview_max_scroll_percentage') : null;
  const contentPct = spec.scroll ? prop('$prev_pageview_max_content_percentage') : null;
  const clickFilter = spec.clicks ? (spec.clicks.filter === null ? null : rowMask(spec.clicks.filter, block, env)) : undefined;
  const eventType = spec.clicks ? prop('$event_type') : null;

  // A session's part per dictionary code of $session_id, looked up by text once per block.
  const partOfCode: (SessionPart | null | undefined)[] = sids === null ? [] : new Array(sids.values.length + 1);
  const partAt = (code: number): SessionPart | null => {
    let p = partOfCode[code];
    if (p !== undefined) return p;
    const id = textOf(sids!.values[code - 1]);
    if (id === null || id === '') p = null;
    else {
      p = parts.get(id) ?? null;
      if (p === null) parts.set(id, (p = emptyPart(id, spec.goals.length)));
    }
    partOfCode[code] = p;
    return p;
  };

  for (let i = 0; i < n; i++) {
    const t = ts[i]!;
    if (t < spec.from || t > spec.to) continue;
    const kind = kindOf[names.codes[i]!]!;
    if (clickFilter !== undefined && kind === AUTOCAPTURE && t >= spec.periods.current.from && t <= spec.periods.current.to
      && (clickFilter === null || clickFilter[i] === 1) && textOf(eventType!(i)) === 'click') {
      let link = textOf(externalUrl(i));
      if (link !== null && spec.clicks!.strip) link = withoutQueryAndFragment(link);
      if (link !== null && link !== '') {
        let c = clicks.get(link);
        if (!c) clicks.set(link, (c = { persons: new Set(), clicks: 0 }));
        c.clicks++;
        if (persons[i] !== 0) c.persons.add(persons[i]!);
      }
    }
    const code = sids === null ? 0 : sids.codes[i]!;
    if (code === 0) continue;
    const s = partAt(code);
    if (s === null) continue;
    if (t < s.start) s.start = t;
    if (t > s.end) s.end = t;
    const page = kind === PAGEVIEW || kind === SCREEN;
    const rank = page ? RANK_PAGE : RANK_OTHER;
    if (entryBefore(rank, t, s.entryRank, s.entryTs)) {
      s.entryRank = rank;
      s.entryTs = t;
      s.entry = attributionAt(attribution, i);
    }
    if (exitAfter(rank, t, s.exitRank, s.exitTs)) {
      s.exitRank = rank;
      s.exitTs = t;
      s.exitUrl = textOf(url(i));
    }
    if (t > s.lastClickTs) {
      const link = textOf(externalUrl(i));
      if (link !== null) {
        s.lastClickTs = t;
        s.lastClickUrl = link;
      }
    }
    if ((page || kind === AUTOCAPTURE) && s.bounceEvents < 2) s.bounceEvents++;
    if (t < countFrom || t > countTo) continue;
    if (scrollFilter !== undefined && (page || kind === PAGELEAVE) && (scrollFilter === null || scrollFilter[i] === 1)) {
      const path = textOf(prevPath!(i));
      if (path !== null) addScroll(s, clean(path), propertyNumber(scrollPct!(i)), propertyNumber(contentPct!(i)));
    }
    // The Page bounce rate leaves the filters on $pathname out: decided before the full filter.
    if (bounceFilter !== undefined && page && (bounceFilter === null || bounceFilter[i] === 1)) s.countedForBounce++;
    if (filter !== null && filter[i] === 0) continue;
    let goalBits = 0;
    for (let g = 0; g < goalMasks.length; g++) if (goalMasks[g]![i] === 1) goalBits |= 1 << g;
    if (!(spec.pages && page) && goalBits === 0) continue;
    s.counted++;
    if (s.person === 0 || t < s.personTs) {
      s.person = persons[i]!;
      s.personTs = t;
    }
    const p = periodOf(spec.periods, t);
    for (let g = 0; goalBits !== 0; g++, goalBits >>>= 1) if (goalBits & 1 && p !== -1) s.goals[2 * g + p]!++;
    if (breakdownOf !== null) {
      const key = breakdownOf(i);
      if (key !== null) {
        s.values[key] = (s.values[key] ?? 0) + 1;
        if (spec.conversionByValue && goalMasks[0]![i] === 1) s.valueConversions[key] = (s.valueConversions[key] ?? 0) + 1;
      }
    }
  }
}

function attributionAt(readers: Reader[], row: number): Attribution {
  const [url, referringDomain, utmSource, utmMedium, utmCampaign, utmTerm, utmContent, gadSource] = readers.slice(0, 8).map((r) => textOf(r(row)));
  return {
    url: url ?? null, referringDomain: referringDomain ?? null, utmSource: utmSource ?? null, utmMedium: utmMedium ?? null,
    utmCampaign: utmCampaign ?? null, utmTerm: utmTerm ?? null, utmContent: utmContent ?? null, gadSource: gadSource ?? null,
    hasGclid: textOf(readers[8]!(row)) !== null, hasFbclid: textOf(readers[9]!(row)) !== null,
  };
}

function addScroll(s: SessionPart, path: string, scroll: number | null, content: number | null): void {
  const sums = s.scroll[path] ?? (s.scroll[path] = { scrollSum: 0, scrollN: 0, gt80Sum: 0, gt80N: 0 });
  if (scroll !== null) {
    sums.scrollSum += scroll;
    sums.scrollN++;
  }
  if (content !== null) {
    sums.gt80N++;
    if (content > 0.8) sums.gt80Sum++;
  }
}
