/**
 * PostHog's query kinds (frontend/src/queries/schema: TrendsQuery, FunnelsQuery, RetentionQuery, LifecycleQuery,
 * StickinessQuery, PathsQuery) turned into the legacy filter parameters the engine's parsers read — the inverse of
 * PostHog's own filter-to-query converter, field for field. Both front doors then run the same analysis.
 */
import { invalidInput } from './errors.js';
import { FilterParams } from './filter-params.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function obj(q: Json, name: string): Json {
  const v = q[name];
  if (v === undefined || v === null) return {};
  if (!isObject(v)) return invalidInput('query', `"${name}" must be an object.`);
  return v;
}

/** An EventsNode or ActionsNode (`id`: the action's id) as a legacy entity. */
function entity(node: unknown, order: number): Json {
  if (!isObject(node)) return invalidInput('query', 'Every series must be an EventsNode or ActionsNode object.');
  if (node.kind !== 'EventsNode' && node.kind !== 'ActionsNode') invalidInput('query', `Unsupported series kind "${String(node.kind)}".`);
  const out: Json = node.kind === 'ActionsNode' ? { id: node.id ?? null, type: 'actions', order } : { id: node.event ?? null, type: 'events', order };
  for (const [from, to] of [['name', 'name'], ['custom_name', 'custom_name'], ['math', 'math'], ['math_property', 'math_property'], ['math_group_type_index', 'math_group_type_index'], ['properties', 'properties']]) {
    if (node[from!] !== undefined && node[from!] !== null) out[to!] = node[from!];
  }
  if (node.math === 'hogql') invalidInput('query', 'math "hogql" is not supported.');
  return out;
}

/** The series as the legacy `events` and `actions` lists (`order` keeps the series' order across both). */
function series(q: Json): { events: Json[]; actions: Json[] } {
  const list = q.series;
  if (!Array.isArray(list)) return invalidInput('query', '"series" must be a list of nodes.');
  const entities = list.map((node, i) => entity(node, i));
  return { events: entities.filter((e) => e.type === 'events'), actions: entities.filter((e) => e.type === 'actions') };
}

function common(q: Json, out: Json): Json {
  const range = obj(q, 'dateRange');
  if (range.date_from !== undefined) out.date_from = range.date_from;
  if (range.date_to !== undefined) out.date_to = range.date_to;
  if (range.explicitDate !== undefined) out.explicit_date = range.explicitDate;
  if (q.interval !== undefined) out.interval = q.interval;
  if (q.properties !== undefined) out.properties = q.properties;
  if (q.filterTestAccounts !== undefined) out.filter_test_accounts = q.filterTestAccounts;
  const b = obj(q, 'breakdownFilter');
  if (Array.isArray(b.breakdowns) && b.breakdowns.length > 0) out.breakdowns = b.breakdowns;
  for (const [from, to] of [['breakdown', 'breakdown'], ['breakdown_type', 'breakdown_type'], ['breakdown_limit', 'breakdown_limit'], ['breakdown_group_type_index', 'breakdown_group_type_index'], ['breakdown_histogram_bin_count', 'breakdown_histogram_bin_count']]) {
    if (b[from!] !== undefined && b[from!] !== null) out[to!] = b[from!];
  }
  return out;
}

export function trendsParams(q: Json): FilterParams {
  const out = common(q, { ...series(q) });
  const f = obj(q, 'trendsFilter');
  if (f.display !== undefined) out.display = f.display;
  if (f.formula !== undefined && f.formula !== null) out.formula = f.formula;
  if (Array.isArray(f.formulas) && f.formulas.length > 0) out.formula = f.formulas[0];
  if (f.smoothingIntervals !== undefined) out.smoothing_intervals = f.smoothingIntervals;
  if (obj(q, 'compareFilter').compare === true) out.compare = true;
  return new FilterParams(out);
}

export function lifecycleParams(q: Json): FilterParams {
  return new FilterParams({ ...common(q, { ...series(q) }), insight: 'LIFECYCLE' });
}

export function stickinessParams(q: Json): FilterParams {
  const out = common(q, { ...series(q), insight: 'STICKINESS' });
  if (obj(q, 'compareFilter').compare === true) out.compare = true;
  return new FilterParams(out);
}

export function funnelsParams(q: Json): FilterParams {
  const out = common(q, { ...series(q) });
  const f = obj(q, 'funnelsFilter');
  const map: [string, string][] = [
    ['funnelVizType', 'funnel_viz_type'], ['funnelOrderType', 'funnel_order_type'], ['funnelWindowInterval', 'funnel_window_interval'],
    ['funnelWindowIntervalUnit', 'funnel_window_interval_unit'], ['breakdownAttributionType', 'breakdown_attribution_type'],
    ['breakdownAttributionValue', 'breakdown_attribution_value'], ['funnelFromStep', 'funnel_from_step'], ['funnelToStep', 'funnel_to_step'], ['binCount', 'bin_count'],
  ];
  for (const [from, to] of map) if (f[from] !== undefined && f[from] !== null) out[to] = f[from];
  if (Array.isArray(f.exclusions)) {
    out.exclusions = f.exclusions.map((e) => {
      if (!isObject(e)) return invalidInput('query', 'Every exclusion must be an EventsNode or ActionsNode with funnelFromStep and funnelToStep.');
      return { ...entity(e, 0), funnel_from_step: e.funnelFromStep, funnel_to_step: e.funnelToStep };
    });
  }
  return new FilterParams(out);
}

export function retentionParams(q: Json): FilterParams {
  const out = common(q, {});
  const f = obj(q, 'retentionFilter');
  const ref = (e: unknown) => (isObject(e) ? { id: e.id ?? null, type: e.type ?? 'events', ...(e.properties ? { properties: e.properties } : {}) } : undefined);
  if (f.targetEntity !== undefined) out.target_entity = ref(f.targetEntity);
  if (f.returningEntity !== undefined) out.returning_entity = ref(f.returningEntity);
  for (const [from, to] of [['retentionType', 'retention_type'], ['period', 'period'], ['totalIntervals', 'total_intervals']] as const) if (f[from] !== undefined) out[to] = f[from];
  return new FilterParams(out);
}

export function pathsParams(q: Json): FilterParams {
  const out = common(q, {});
  const f = obj(q, 'pathsFilter');
  const map: [string, string][] = [
    ['includeEventTypes', 'include_event_types'], ['includeCustomEvents', 'include_custom_events'], ['excludeEvents', 'exclude_events'],
    ['startPoint', 'start_point'], ['endPoint', 'end_point'], ['stepLimit', 'step_limit'], ['pathGroupings', 'path_groupings'],
    ['pathReplacements', 'path_replacements'], ['localPathCleaningFilters', 'local_path_cleaning_filters'], ['edgeLimit', 'edge_limit'],
    ['minEdgeWeight', 'min_edge_weight'], ['maxEdgeWeight', 'max_edge_weight'],
  ];
  for (const [from, to] of map) if (f[from] !== undefined && f[from] !== null) out[to] = f[from];
  return new FilterParams(out);
}
