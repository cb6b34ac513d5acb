/**
 * Paths (analytics.md §7): which path items persons went through in a row. Pure: the parameters, turning one
 * person's events into path items, sessions and edges, and ranking the edges.
 *
 * Besides event names, `include_custom_events` takes actions (`{"id": <action id>, "type": "actions"}`, a Quill
 * extension: PostHog's paths have no actions): an event one of them matches becomes a path item named after the
 * first such action, whatever its name or URL.
 */
import { invalidInput } from './errors.js';
import type { FilterParams } from './filter-params.js';
import { actionFilter } from './action-filter.js';
import { parseFilters, type FilterGroup, type FilterNode } from './property-filters.js';
import type { DateParams } from './query.js';
import { compileLike, PATH_WILDCARD } from '../patterns/like.js';
import { compileRegex, regexProblem } from '../patterns/regex.js';

export interface CleaningRule {
  regex: string;
  alias: string;
}

/** An action whose events become path items named after it (an `include_custom_events` entry of type actions). */
export interface PathAction {
  id: number;
  name: string;
  filter: FilterNode;
}

export interface PathsQuery {
  kind: 'PathsQuery';
  includeTypes: string[];
  includeCustom: string[];
  includeActions: PathAction[];
  exclude: string[];
  startPoint: string | null;
  endPoint: string | null;
  stepLimit: number;
  groupings: string[];
  /** Apply the project's path cleaning rules. */
  pathReplacements: boolean;
  localCleaning: CleaningRule[];
  edgeLimit: number | null;
  minEdgeWeight: number | null;
  maxEdgeWeight: number | null;
  dates: DateParams;
  properties: FilterGroup | null;
  filterTestAccounts: boolean;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(['$pageview', '$screen', 'custom_event']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function stringList(p: FilterParams, name: string): string[] {
  return p.list(name).map((v) => {
    if (typeof v !== 'string') invalidInput(name, 'Expected a list of strings.');
    return v as string;
  });
}

export function cleaningRules(raw: unknown, attr: string): CleaningRule[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (!Array.isArray(raw)) return invalidInput(attr, 'Path cleaning rules are a list of {"regex": ..., "alias": ...}.');
  return raw.map((r) => {
    if (!isObject(r) || typeof r.regex !== 'string' || typeof r.alias !== 'string') invalidInput(attr, 'Path cleaning rules are a list of {"regex": ..., "alias": ...}.');
    const problem = regexProblem(r.regex as string, 'clickhouse');
    if (problem !== null) invalidInput(attr, `A path cleaning rule's regex: ${problem}`);
    return { regex: r.regex as string, alias: r.alias as string };
  });
}

export function pathsQueryOf(p: FilterParams): PathsQuery {
  let includeTypes = stringList(p, 'include_event_types');
  const legacy = p.string('path_type');
  if (includeTypes.length === 0 && legacy !== null) {
    if (legacy === '$autocapture') invalidInput('path_type', 'Autocapture paths are not supported.');
    includeTypes = [legacy];
  }
  if (includeTypes.length === 0) includeTypes = ['$pageview'];
  for (const t of includeTypes) {
    if (t === 'hogql') invalidInput('include_event_types', 'HogQL path items are not supported.');
    if (!EVENT_TYPES.has(t)) invalidInput('include_event_types', `Unknown event type "${t}": use $pageview, $screen or custom_event.`);
  }
  const includeCustom: string[] = [];
  const includeActions: PathAction[] = [];
  for (const v of p.list('include_custom_events')) {
    if (typeof v === 'string') includeCustom.push(v);
    else if (isObject(v) && v.type === 'actions') {
      const action = p.action(v.id, 'include_custom_events');
      includeActions.push({ id: action.id, name: action.name, filter: actionFilter(action) });
    } else invalidInput('include_custom_events', 'Expected a list of event names or action entities {"id": <action id>, "type": "actions"}.');
  }
  if (includeActions.length > 32) invalidInput('include_custom_events', 'Paths take at most 32 actions.');
  if (includeCustom.length + includeActions.length > 0 && includeTypes.includes('custom_event')) invalidInput('include_custom_events', 'include_custom_events cannot be combined with custom_event.');
  if (p.has('funnel_paths') || p.has('funnel_filter')) invalidInput('funnel_paths', 'Funnel paths are not supported yet.');
  const min = p.has('min_edge_weight') ? p.int('min_edge_weight', 0, 0) : null;
  const max = p.has('max_edge_weight') ? p.int('max_edge_weight', 0, 0) : null;
  if (min !== null && max !== null && max < min) invalidInput('max_edge_weight', 'Max Edge weight can\'t be lower than min edge weight');
  const startPoint = p.string('start_point');
  const endPoint = p.string('end_point');
  return {
    kind: 'PathsQuery', includeTypes, includeCustom, includeActions, exclude: stringList(p, 'exclude_events'), startPoint, endPoint,
    stepLimit: p.int('step_limit', 5, 2, 20), groupings: stringList(p, 'path_groupings'),
    pathReplacements: p.bool('path_replacements'), localCleaning: cleaningRules(p.json('local_path_cleaning_filters'), 'local_path_cleaning_filters'),
    edgeLimit: p.has('edge_limit') ? p.int('edge_limit', 50, 1, 10_000) : startPoint !== null && endPoint !== null ? null : 50,
    minEdgeWeight: min, maxEdgeWeight: max,
    dates: { dateFrom: p.string('date_from'), dateTo: p.string('date_to'), explicitDate: p.bool('explicit_date') },
    properties: parseFilters(p.json('properties') ?? null), filterTestAccounts: p.bool('filter_test_accounts'),
  };
}

/** Whether an event becomes a path item (by its name). */
export function includesEvent(q: PathsQuery, name: string): boolean {
  if (name === '$pageview') return q.includeTypes.includes('$pageview');
  if (name === '$screen') return q.includeTypes.includes('$screen');
  if (q.includeCustom.includes(name)) return true;
  return q.includeTypes.includes('custom_event') && !name.startsWith('$');
}

/** An event's raw path item: the URL of a pageview (one trailing slash dropped), a screen's name, else the name. */
export function rawItem(name: string, url: string | null, screen: string | null): string {
  if (name === '$pageview') {
    const u = url ?? '';
    return u.length > 1 && u.endsWith('/') ? u.slice(0, -1) : u;
  }
  if (name === '$screen') return screen ?? '';
  return name;
}

/**
 * Cleaning rules (in order, replace-all, as ClickHouse's `replaceRegexpAll`: `\\1` in an alias is a group), then
 * groupings (`*` any run of characters; an item matching pattern j becomes pattern j).
 */
export function itemCleaner(rules: readonly CleaningRule[], groupings: readonly string[]): (item: string) => string {
  // Rules are validated when stored; one stored before patterns were RE2 and that RE2 refuses cleans nothing.
  const compiled = rules.flatMap((r) => {
    const re = compileRegex(r.regex, 'clickhouse');
    return re === null ? [] : [{ re, alias: r.alias }];
  });
  const groups = groupings.map((g) => ({ pattern: g, re: compileLike(g, PATH_WILDCARD) }));
  const cache = new Map<string, string>();
  return (item) => {
    let out = cache.get(item);
    if (out !== undefined) return out;
    out = item;
    for (const r of compiled) out = r.re.replace(out, r.alias, true);
    for (const g of groups) {
      if (g.re.test(out)) {
        out = g.pattern;
        break;
      }
    }
    cache.set(item, out);
    return out;
  };
}

export const SESSION_GAP_MS = 30 * 60_000;

/** Where a session's path starts and ends, and how many items it keeps (§7.2 steps 3-4). */
export interface PathBounds<T> {
  startPoint: T | null;
  endPoint: T | null;
  stepLimit: number;
}

/**
 * One person's path items (time order, with times) → the sessions' limited paths (§7.2 steps 2-4): split where the
 * gap is ≥ 30 minutes, collapse repeats, anchor at the start/end points, keep `stepLimit` items. Items are any
 * comparable value (names, or the engine's ids for them); `ellipsis` stands for the items cut out of a path that
 * has both a start and an end point.
 */
export function sessionPaths<T>(items: readonly T[], times: readonly number[], q: PathBounds<T>, ellipsis: T): { items: T[]; times: number[] }[] {
  const out: { items: T[]; times: number[] }[] = [];
  let cur: { items: T[]; times: number[] } | null = null;
  for (let i = 0; i < items.length; i++) {
    if (cur === null || times[i]! - times[i - 1]! >= SESSION_GAP_MS) {
      cur = { items: [], times: [] };
      out.push(cur);
    }
    if (cur.items.length > 0 && cur.items[cur.items.length - 1] === items[i]) continue;
    cur.items.push(items[i]!);
    cur.times.push(times[i]!);
  }
  const limit = q.stepLimit;
  const result: { items: T[]; times: number[] }[] = [];
  for (const s of out) {
    let from = 0;
    let to = s.items.length;
    if (q.startPoint !== null) {
      from = s.items.indexOf(q.startPoint);
      if (from < 0) continue;
    }
    if (q.endPoint !== null) {
      const end = s.items.indexOf(q.endPoint, from);
      if (end < 0) continue;
      to = end + 1;
    }
    let items = s.items.slice(from, to);
    let times = s.times.slice(from, to);
    if (items.length > limit) {
      if (q.startPoint !== null && q.endPoint !== null) {
        const half = Math.floor(limit / 2);
        items = [...items.slice(0, half), ellipsis, ...items.slice(-half)];
        times = [...times.slice(0, half), times[half]!, ...times.slice(-half)];
      } else if (q.endPoint !== null) {
        items = items.slice(-limit);
        times = times.slice(-limit);
      } else {
        items = items.slice(0, limit);
        times = times.slice(0, limit);
      }
    }
    result.push({ items, times });
  }
  return result;
}

/** The item standing for the middle of a path cut between a start and an end point. */
export const PATH_ELLIPSIS = '...';

export interface Edge {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

/** §7.2 step 6: weights, order (value, source, target), limit, and edges reachable from a first step. */
export function rankEdges(edges: Map<string, { value: number; time: number }>, q: Pick<PathsQuery, 'edgeLimit' | 'minEdgeWeight' | 'maxEdgeWeight'>): Edge[] {
  let list: Edge[] = [...edges].map(([key, e]) => {
    const [source, target] = JSON.parse(key) as [string, string];
    return { source, target, value: e.value, average_conversion_time: e.value === 0 ? 0 : e.time / e.value };
  });
  if (q.minEdgeWeight !== null) list = list.filter((e) => e.value >= q.minEdgeWeight!);
  if (q.maxEdgeWeight !== null) list = list.filter((e) => e.value <= q.maxEdgeWeight!);
  list.sort((a, b) => b.value - a.value || (a.source < b.source ? -1 : a.source > b.source ? 1 : a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
  if (q.edgeLimit !== null) list = list.slice(0, q.edgeLimit);
  if (q.minEdgeWeight === null && q.maxEdgeWeight === null) {
    const reachable = new Set<string>();
    for (const e of list) if (e.source.startsWith('1_')) reachable.add(e.source);
    let grew = true;
    while (grew) {
      grew = false;
      for (const e of list) if (reachable.has(e.source) && !reachable.has(e.target)) {
        reachable.add(e.target);
        grew = true;
      }
    }
    list = list.filter((e) => reachable.has(e.source));
  }
  return list;
}
