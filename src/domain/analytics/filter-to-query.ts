/**
 * Legacy insight `filters` turned into the query form PostHog stores on insights today:
 * `{kind: 'InsightVizNode', source: {kind: 'TrendsQuery' | 'FunnelsQuery' | …}}` (the direction of PostHog's
 * filter_to_query converter; src/domain/analytics/query-to-filter.ts goes back). Keys it does not know are left out.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { invalidInput } from './errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A value, JSON-decoded when it is a string holding JSON (bounded as request bodies are: src/domain/json-depth.ts). */
function parsed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  let value: unknown;
  try {
    value = JSON.parse(v);
  } catch {
    return v;
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) invalidInput('filters', `A filter nests deeper than ${MAX_JSON_DEPTH} levels.`);
  return value;
}

function node(e: unknown, kind: 'EventsNode' | 'ActionsNode' = 'EventsNode'): Json {
  if (!isObject(e)) return invalidInput('filters', 'Every entity must be an object.');
  const out: Json = kind === 'EventsNode' ? { kind, event: e.id ?? null } : { kind, id: e.id };
  for (const key of ['name', 'custom_name', 'math', 'math_property', 'math_group_type_index', 'properties']) if (e[key] !== undefined && e[key] !== null) out[key] = e[key];
  return out;
}

function listOf(f: Json, key: string): unknown[] {
  const v = parsed(f[key]);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return invalidInput('filters', `"${key}" must be a list.`);
  return v;
}

/** Events and actions interleaved by their `order`, as the legacy series were. */
function seriesOf(f: Json): Json[] {
  const entities = [
    ...listOf(f, 'events').map((e) => ({ e, kind: 'EventsNode' as const })),
    ...listOf(f, 'actions').map((e) => ({ e, kind: 'ActionsNode' as const })),
  ];
  const orderOf = (x: { e: unknown }): number => Number((x.e as Json)?.order ?? 0);
  return entities.sort((a, b) => orderOf(a) - orderOf(b)).map((x) => node(x.e, x.kind));
}

function dateRange(f: Json): Json | undefined {
  const out: Json = {};
  if (f.date_from !== undefined) out.date_from = f.date_from;
  if (f.date_to !== undefined) out.date_to = f.date_to;
  if (f.explicit_date !== undefined) out.explicitDate = f.explicit_date;
  return Object.keys(out).length > 0 ? out : undefined;
}

function breakdownFilter(f: Json): Json | undefined {
  const out: Json = {};
  for (const key of ['breakdown', 'breakdown_type', 'breakdown_limit', 'breakdown_group_type_index']) if (f[key] !== undefined) out[key] = parsed(f[key]);
  const list = parsed(f.breakdowns);
  if (Array.isArray(list)) out.breakdowns = list;
  return Object.keys(out).length > 0 ? out : undefined;
}

function pick(f: Json, map: [string, string][]): Json {
  const out: Json = {};
  for (const [from, to] of map) if (f[from] !== undefined) out[to] = parsed(f[from]);
  return out;
}

/** The InsightVizNode of a legacy filter (`insight` picks the kind; TRENDS by default). */
export function filterToQuery(f: Json): Json {
  const insight = String(f.insight ?? 'TRENDS').toUpperCase();
  const common: Json = {};
  const range = dateRange(f);
  if (range) common.dateRange = range;
  if (f.interval !== undefined) common.interval = f.interval;
  if (f.properties !== undefined) common.properties = parsed(f.properties);
  if (f.filter_test_accounts !== undefined) common.filterTestAccounts = f.filter_test_accounts === true || f.filter_test_accounts === 'true';
  const breakdown = breakdownFilter(f);
  let source: Json;
  switch (insight) {
    case 'TRENDS': {
      source = { kind: 'TrendsQuery', series: seriesOf(f), ...common };
      if (breakdown) source.breakdownFilter = breakdown;
      const trendsFilter = pick(f, [['display', 'display'], ['formula', 'formula'], ['smoothing_intervals', 'smoothingIntervals']]);
      if (Object.keys(trendsFilter).length > 0) source.trendsFilter = trendsFilter;
      if (f.compare === true || f.compare === 'true') source.compareFilter = { compare: true };
      break;
    }
    case 'FUNNELS':
      source = {
        kind: 'FunnelsQuery', series: seriesOf(f), ...common,
        funnelsFilter: pick(f, [
          ['funnel_viz_type', 'funnelVizType'], ['funnel_order_type', 'funnelOrderType'], ['funnel_window_interval', 'funnelWindowInterval'],
          ['funnel_window_interval_unit', 'funnelWindowIntervalUnit'], ['breakdown_attribution_type', 'breakdownAttributionType'],
          ['breakdown_attribution_value', 'breakdownAttributionValue'], ['funnel_from_step', 'funnelFromStep'], ['funnel_to_step', 'funnelToStep'], ['bin_count', 'binCount'],
        ]),
      };
      if (f.funnel_window_days !== undefined && (source.funnelsFilter as Json).funnelWindowInterval === undefined) {
        Object.assign(source.funnelsFilter as Json, { funnelWindowInterval: Number(f.funnel_window_days), funnelWindowIntervalUnit: 'day' });
      }
      if (Array.isArray(parsed(f.exclusions))) {
        (source.funnelsFilter as Json).exclusions = (parsed(f.exclusions) as Json[]).map((e) => ({ ...node(e), funnelFromStep: e.funnel_from_step, funnelToStep: e.funnel_to_step }));
      }
      if (breakdown) source.breakdownFilter = breakdown;
      break;
    case 'RETENTION':
      source = {
        kind: 'RetentionQuery', ...common,
        retentionFilter: pick(f, [['target_entity', 'targetEntity'], ['returning_entity', 'returningEntity'], ['retention_type', 'retentionType'], ['period', 'period'], ['total_intervals', 'totalIntervals']]),
      };
      if (breakdown) source.breakdownFilter = breakdown;
      break;
    case 'LIFECYCLE':
      source = { kind: 'LifecycleQuery', series: seriesOf(f), ...common };
      break;
    case 'STICKINESS':
      source = { kind: 'StickinessQuery', series: seriesOf(f), ...common };
      if (f.compare === true || f.compare === 'true') source.compareFilter = { compare: true };
      break;
    case 'PATHS':
      source = {
        kind: 'PathsQuery', ...common,
        pathsFilter: pick(f, [
          ['include_event_types', 'includeEventTypes'], ['include_custom_events', 'includeCustomEvents'], ['exclude_events', 'excludeEvents'],
          ['start_point', 'startPoint'], ['end_point', 'endPoint'], ['step_limit', 'stepLimit'], ['path_groupings', 'pathGroupings'],
          ['path_replacements', 'pathReplacements'], ['local_path_cleaning_filters', 'localPathCleaningFilters'], ['edge_limit', 'edgeLimit'],
          ['min_edge_weight', 'minEdgeWeight'], ['max_edge_weight', 'maxEdgeWeight'],
        ]),
      };
      break;
    default:
      return invalidInput('filters', `Unknown insight "${insight}".`);
  }
  return { kind: 'InsightVizNode', source };
}
