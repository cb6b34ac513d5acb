/**
 * The scan behind the web analytics kinds: one pass over the events of the range on every shard, each folding the
 * events it holds into per-session parts (src/domain/web-analytics/sessions.ts); then each session is finished and
 * counted once (src/domain/web-analytics/aggregate.ts). A session's distinct ids, hence its events, can be on
 * several shards (a sign-up in the middle of it), so, as the per-person analyses do (sequences.ts):
 *
 *  1. `fold`: every worker folds its shards' events into parts, keeps them under the query's id and answers a hash
 *     of each session id it holds;
 *  2. `reduce`: the coordinator sends the hashes held by more than one worker; each worker finishes and counts the
 *     sessions it holds whole into a mergeable state (persons as sets, sums), and ships the parts of the others;
 *  3. the coordinator merges the shipped parts of a session, counts them, and absorbs every worker's state.
 *
 * So only the states and the parts of sessions spread over workers travel, and every core finishes sessions. What
 * a shard computes per event, with columns read once per block and per-value tables where it can: the session
 * (`$session_id`), its time bounds, entry and exit candidates (pageviews and screens first), bounce events, and
 * whether the event is counted (a pageview or screen, or a goal event, passing the filters inside the periods) with
 * its breakdown value.
 */
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import { propertyNumber, propertyText } from '../../domain/analytics/property-filters.js';
import { eventBreakdownKey } from '../../domain/web-analytics/breakdowns.js';
import type { Breakdown, Periods } from '../../domain/web-analytics/query.js';
import { periodOf } from '../../domain/web-analytics/query.js';
import { countValue, emptyPart, entryBefore, exitAfter, mergePart, RANK_OTHER, RANK_PAGE, scrollSumsOf, type Attribution, type SessionPart } from '../../domain/web-analytics/sessions.js';
import { withoutQueryAndFragment } from '../../domain/web-analytics/urls.js';
import { itemCleaner, type CleaningRule } from '../../domain/analytics/paths.js';
import { mergeClicks, type ClickCounts } from '../../domain/web-analytics/external-clicks.js';
import { aggregatorFor, type AggregateSpec, type WebAggregator } from '../../domain/web-analytics/aggregate.js';
import { COL, EVENT_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView, DictColumn } from '../../stores/scan/column-block.js';
import type { PeerMessage } from '../peers.js';
import { currentBudget, withBudget } from '../query-budget.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { rowMask } from './block-filter.js';
import { scanEnvOf, type ScanContext } from './scatter.js';
import { Slicer } from './slices.js';

export const WEB_SESSIONS_FOLD = 'web.fold';
export const WEB_SESSIONS_REDUCE = 'web.reduce';
/** Folded parts are dropped if the coordinator never asks for them (it failed meanwhile). */
const FORGET_AFTER_MS = 120_000;

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

interface FoldMessage extends PeerMessage {
  id: string;
  spec: WebScanSpec;
  ctx: ScanContext;
}

interface ReduceMessage extends PeerMessage {
  id: string;
  /** Hashes of the session ids more than one worker holds, ascending. */
  shared: Uint32Array;
  aggregate: AggregateSpec;
}

interface ReduceAnswer {
  state: unknown;
  shipped: SessionPart[];
  clicks: [string, number[], number][];
}

/** The same day of margin PostHog's session table allows: a session lasts 24 hours at most (posthog-js). */
export const SESSION_MARGIN_MS = 24 * 3_600_000;

/** FNV-1a of a session id: which sessions several workers hold is decided by these (a collision ships a few more). */
export function sessionHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Per query: this worker's folded parts and clicks, until `reduce` takes them. */
const folded = new Map<string, { parts: Map<string, SessionPart>; hashes: Uint32Array; clicks: ClickCounts; at: number }>();

function forgetStale(): void {
  const now = Date.now();
  for (const [id, f] of folded) if (now - f.at > FORGET_AFTER_MS) folded.delete(id);
}

let nextQuery = 0;

/**
 * Runs the scan on every shard and counts every session once into the kind's aggregator (answered with the
 * external clicks, counted from events).
 */
export async function webSessionsEverywhere(rt: WorkerRuntime, spec: WebScanSpec, ctx: ScanContext, aggregate: AggregateSpec): Promise<{ aggregator: WebAggregator; clicks: ClickCounts }> {
  const answer = await rt.peers.call<ScanAnswer>(SCAN_WORKER, { kind: WEB_SESSIONS_SCAN, spec, ctx, aggregate } satisfies ScanMessage);
  const aggregator = aggregatorFor(aggregate);
  aggregator.absorb(answer.state);
  return { aggregator, clicks: answer.clicks };
}

/**
 * One web scan at a time on the node, run by worker 0 whichever worker the request reached. Every scan holds a
 * part per session on every worker until its reduce, and the console's page asks for eight tiles at once: run
 * together at 10M events they outgrew the query memory budget (a query is charged the growth of the others on its
 * thread) and most tiles answered 400. In turn, each has the memory to itself, measured from its own start. Only
 * the start is queued: folds and reduces are never held, so no scan waits on another's work.
 */
const SCAN_WORKER = 0;
export const WEB_SESSIONS_SCAN = 'web.scan';

interface ScanMessage extends PeerMessage {
  spec: WebScanSpec;
  ctx: ScanContext;
  aggregate: AggregateSpec;
}

interface ScanAnswer {
  state: unknown;
  clicks: ClickCounts;
}

let scanTurn: Promise<unknown> = Promise.resolve();

export const webScanHandler: PeerHandler = (rt, msg) => {
  const { spec, ctx, aggregate } = msg as ScanMessage;
  const turn = scanTurn.then(() => {
    // A budget object of its own: its memory is measured from the start of its turn, not its arrival.
    const budget = currentBudget();
    return withBudget(budget === undefined ? undefined : { ...budget }, async (): Promise<ScanAnswer> => {
      const { aggregator, clicks } = await scanEverywhere(rt, spec, ctx, aggregate);
      return { state: aggregator.state(), clicks };
    });
  });
  scanTurn = turn.catch(() => undefined);
  return turn;
};

async function scanEverywhere(rt: WorkerRuntime, spec: WebScanSpec, ctx: ScanContext, aggregate: AggregateSpec): Promise<{ aggregator: WebAggregator; clicks: ClickCounts }> {
  const id = `${rt.index}.${process.pid}.web.${nextQuery++}.${Date.now()}`;
  const held = await rt.peers.all<Uint32Array>({ kind: WEB_SESSIONS_FOLD, id, spec, ctx } satisfies FoldMessage);
  // Hashes seen twice or more (by two workers, or a collision within one: a few sessions more shipped), found by
  // sorting them all: four bytes a session, no map of millions of entries.
  const all = new Uint32Array(held.reduce((n, h) => n + h.length, 0));
  let at = 0;
  for (const hashes of held) {
    all.set(hashes, at);
    at += hashes.length;
  }
  all.sort();
  const twice: number[] = [];
  for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1] && all[i] !== twice[twice.length - 1]) twice.push(all[i]!);
  const shared = Uint32Array.from(twice);
  const answers = await rt.peers.all<ReduceAnswer>({ kind: WEB_SESSIONS_REDUCE, id, shared, aggregate } satisfies ReduceMessage);
  const aggregator = aggregatorFor(aggregate);
  const clicks: ClickCounts = new Map();
  const spread = new Map<string, SessionPart>();
  const slicer = new Slicer();
  for (const a of answers) {
    aggregator.absorb(a.state);
    mergeClicks(clicks, a.clicks);
    for (const part of a.shipped) {
      const had = spread.get(part.id);
      if (had) mergePart(had, part);
      else spread.set(part.id, part);
      if (slicer.due()) await slicer.pace();
    }
  }
  for (const part of spread.values()) aggregator.addPart(part);
  return { aggregator, clicks };
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

/** Round 1 on one worker: folds its shards' events; answers the hashes of the sessions it holds. */
export const webFoldHandler: PeerHandler = async (rt, msg) => {
  const { id, spec, ctx } = msg as FoldMessage;
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
  forgetStale();
  const hashes = new Uint32Array(parts.size);
  let k = 0;
  for (const sid of parts.keys()) hashes[k++] = sessionHash(sid);
  // Kept in the parts' order: the reduce reads them back instead of hashing every session id again.
  folded.set(id, { parts, hashes, clicks, at: Date.now() });
  return hashes;
};

/** Whether a sorted array holds `h`. */
function holds(sorted: Uint32Array, h: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === h) return true;
    if (v < h) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Round 2 on one worker: counts the sessions it holds whole; ships the parts of those spread over workers. */
export const webReduceHandler: PeerHandler = async (_rt, msg) => {
  const { id, shared, aggregate } = msg as ReduceMessage;
  const entry = folded.get(id);
  folded.delete(id);
  if (!entry) throw new Error(`no folded sessions for query ${id}`);
  const aggregator = aggregatorFor(aggregate);
  const shipped: SessionPart[] = [];
  const slicer = new Slicer();
  let handled = 0;
  const { hashes } = entry;
  for (const part of entry.parts.values()) {
    if (shared.length > 0 && holds(shared, hashes[handled]!)) shipped.push(part);
    else aggregator.addPart(part);
    if (++handled % 256 === 0 && slicer.due()) await slicer.pace();
  }
  const answer: ReduceAnswer = {
    state: aggregator.state(),
    shipped,
    clicks: [...entry.clicks].map(([url, c]) => [url, [...c.persons], c.clicks]),
  };
  return answer;
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
  // The rows of each session's best entry and exit candidates in this block (-1: none), and the codes that have
  // one: their properties are read once the block is done, as a session's entry and exit move within a block.
  const entryRows = new Int32Array(sids === null ? 0 : sids.values.length + 1).fill(-1);
  const exitRows = new Int32Array(entryRows.length).fill(-1);
  const touched: number[] = [];
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
      if (entryRows[code] === -1 && exitRows[code] === -1) touched.push(code);
      entryRows[code] = i;
    }
    if (exitAfter(rank, t, s.exitRank, s.exitTs)) {
      s.exitRank = rank;
      s.exitTs = t;
      if (exitRows[code] === -1 && entryRows[code] === -1) touched.push(code);
      exitRows[code] = i;
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
        countValue(s, key, 1, false);
        if (spec.conversionByValue && goalMasks[0]![i] === 1) countValue(s, key, 1, true);
      }
    }
  }
  for (const code of touched) {
    const part = partOfCode[code]!;
    if (entryRows[code]! !== -1) part.entry = attributionAt(attribution, entryRows[code]!);
    if (exitRows[code]! !== -1) part.exitUrl = textOf(url(exitRows[code]!));
  }
}

function attributionAt(r: Reader[], row: number): Attribution {
  return {
    url: textOf(r[0]!(row)), referringDomain: textOf(r[1]!(row)), utmSource: textOf(r[2]!(row)), utmMedium: textOf(r[3]!(row)),
    utmCampaign: textOf(r[4]!(row)), utmTerm: textOf(r[5]!(row)), utmContent: textOf(r[6]!(row)), gadSource: textOf(r[7]!(row)),
    hasGclid: textOf(r[8]!(row)) !== null, hasFbclid: textOf(r[9]!(row)) !== null,
  };
}

function addScroll(s: SessionPart, path: string, scroll: number | null, content: number | null): void {
  const sums = scrollSumsOf(s, path);
  if (scroll !== null) {
    sums.scrollSum += scroll;
    sums.scrollN++;
  }
  if (content !== null) {
    sums.gt80N++;
    if (content > 0.8) sums.gt80Sum++;
  }
}
