/**
 * InsightActorsQuery: the persons behind one point of an insight (PostHog's persons modal), asked through the
 * query API. The source insight is converted to the legacy parameters like the insight kinds are, the point's
 * selectors (`day`, `series`, `breakdown`, `status`, `interval`, `funnelStep`…) become the parameters of the
 * matching legacy `persons/*` endpoint, and that endpoint's answer is returned as a table of actors — so both
 * front doors list the same persons by construction.
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { funnelsParams, lifecycleParams, pathsParams, retentionParams, stickinessParams, trendsParams } from '../../domain/analytics/query-to-filter.js';
import { actionLookup } from '../analytics/action-lookup.js';
import { personsFunnelAnswer } from '../ops/funnel-insights.js';
import { personsTrendsAnswer } from '../ops/insights.js';
import { personsPathAnswer } from '../ops/path-insights.js';
import { personsLifecycleAnswer, personsRetentionAnswer, personsStickinessAnswer, type ActorsAnswer } from '../ops/person-insights.js';
import type { WorkerRuntime } from '../runtime.js';
import { registerQueryKind, type QueryContext } from './runners.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One source kind: its legacy parameters, the selectors as persons parameters, and the persons answer. */
interface SourceKind {
  params: (q: Json) => FilterParams;
  selectors: (actorsQuery: Json, source: Json) => Json;
  answer: ActorsAnswer;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

function defined(entries: [string, unknown][]): Json {
  return Object.fromEntries(entries.filter(([, v]) => v !== undefined && v !== null));
}

/** The trends series `index` of the source as the legacy entity selectors (`entity_order` keeps duplicates apart). */
function trendsSeries(source: Json, index: unknown): Json {
  const list = Array.isArray(source.series) ? source.series : [];
  const i = index === undefined || index === null ? 0 : Number(index);
  if (!Number.isInteger(i) || i < 0 || i >= list.length) invalidInput('series', `series must be an index of the source's series (0 to ${list.length - 1}).`);
  const node = list[i];
  if (!isObject(node)) invalidInput('series', 'The series must be an EventsNode or ActionsNode object.');
  const actions = node.kind === 'ActionsNode';
  return defined([
    ['entity_id', actions ? node.id : node.event ?? null], ['entity_type', actions ? 'actions' : 'events'],
    ['entity_math', node.math ?? 'total'], ['entity_math_property', node.math_property], ['entity_order', i],
  ]);
}

const kinds: Record<string, SourceKind> = {
  TrendsQuery: {
    params: trendsParams,
    selectors: (a, s) => ({ ...trendsSeries(s, a.series), ...defined([['date_from', a.day], ['breakdown_value', breakdownValue(a.breakdown)]]) }),
    answer: personsTrendsAnswer,
  },
  StickinessQuery: {
    params: stickinessParams,
    selectors: (a, s) => ({ ...trendsSeries(s, a.series), ...defined([['stickiness_days', a.day]]) }),
    answer: personsStickinessAnswer,
  },
  LifecycleQuery: {
    params: lifecycleParams,
    selectors: (a) => defined([['target_date', a.day], ['lifecycle_type', a.status]]),
    answer: personsLifecycleAnswer,
  },
  RetentionQuery: {
    params: retentionParams,
    selectors: (a) => {
      if (a.breakdown !== undefined && a.breakdown !== null) invalidInput('breakdown', 'The persons of a retention breakdown row are not supported yet.');
      return defined([['selected_interval', a.interval ?? 0]]);
    },
    answer: personsRetentionAnswer,
  },
  FunnelsQuery: {
    params: funnelsParams,
    selectors: (a) => defined([
      ['funnel_step', a.funnelStep], ['funnel_custom_steps', a.funnelCustomSteps], ['funnel_step_breakdown', a.funnelStepBreakdown],
      ['drop_off', a.funnelTrendsDropOff], ['entrance_period_start', a.funnelTrendsEntrancePeriodStart],
    ]),
    answer: personsFunnelAnswer,
  },
  PathsQuery: {
    params: pathsParams,
    selectors: (_a, s) => {
      const f = isObject(s.pathsFilter) ? s.pathsFilter : {};
      return defined([['path_start_key', f.pathStartKey], ['path_end_key', f.pathEndKey], ['path_dropoff_key', f.pathDropoffKey]]);
    },
    answer: personsPathAnswer,
  },
};

/** A breakdown selector as the legacy `breakdown_value` (lists and numbers travel as JSON). */
function breakdownValue(v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function pageBound(q: Json, name: 'limit' | 'offset', fallback: number, max: number): number {
  const v = q[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < (name === 'limit' ? 1 : 0) || v > max) invalidInput(name, `${name} must be an integer between ${name === 'limit' ? 1 : 0} and ${max}.`);
  return v;
}

/** The persons of the answer as actor rows, with the value each person had at the point when there is one. */
function actorRows(body: Json): { rows: unknown[][]; valueColumn: string | null } {
  if (Array.isArray(body.result)) {
    // Retention: each row has the person and its appearances in the cohort's intervals.
    return { rows: (body.result as Json[]).map((r) => [r.person, r.appearances]), valueColumn: 'appearances' };
  }
  const people = ((body.results as Json[] | undefined)?.[0]?.people ?? []) as Json[];
  const valued = people.some((p) => typeof p.value_at_data_point === 'number');
  return { rows: people.map((p) => (valued ? [p, p.value_at_data_point ?? null] : [p])), valueColumn: valued ? 'event_count' : null };
}

/** Paging and search an ActorsQuery wrapping an InsightActorsQuery imposes on it. */
export interface ActorsPaging {
  limit: number;
  offset: number;
  search: string | null;
}

/**
 * Runs an InsightActorsQuery; `paging` overrides its limit/offset (ActorsQuery with an insight source pages it).
 * The answer is the table shape of the actors kinds: `results` rows of `[actor, value?]`, `columns`, `hasMore`.
 */
export async function runInsightActors(rt: WorkerRuntime, query: Json, ctx: QueryContext, paging?: ActorsPaging): Promise<Json> {
  const source = query.source;
  if (!isObject(source)) return invalidInput('source', 'InsightActorsQuery needs a "source": the insight query whose point it lists.');
  const wrapped = isObject(source.source) && source.kind === 'InsightVizNode' ? source.source : source;
  const kind = kinds[String(wrapped.kind)];
  if (!kind) return invalidInput('source', `The persons of a ${String(wrapped.kind)} are not supported; the source is one of ${Object.keys(kinds).join(', ')}.`);
  const limit = paging?.limit ?? pageBound(query, 'limit', DEFAULT_LIMIT, MAX_LIMIT);
  const offset = paging?.offset ?? pageBound(query, 'offset', 0, Number.MAX_SAFE_INTEGER);
  const search = paging?.search ?? null;
  const base = kind.params(wrapped).withActions(actionLookup(rt, ctx.team));
  const p = base.derive({ ...Object.fromEntries(base.entries()), ...kind.selectors(query, wrapped), limit, offset, ...(search ? { search } : {}) });
  const body = await kind.answer(rt, ctx.team, p, ctx.now, ctx.url);
  const { rows, valueColumn } = actorRows(body);
  const columns = valueColumn ? ['actor', valueColumn] : ['actor'];
  return {
    results: rows,
    columns,
    types: valueColumn ? ['Person', valueColumn === 'appearances' ? 'Array(UInt8)' : 'UInt64'] : ['Person'],
    hasMore: body.next !== null && body.next !== undefined,
    limit,
    offset,
    missing_actors_count: typeof body.missing_persons === 'number' ? body.missing_persons : 0,
    // Which executor listed them (QUILL_ANALYTICS=clickhouse), as the insight kinds say it.
    ...(body.clickhouse !== undefined ? { clickhouse: body.clickhouse } : {}),
    ...(body.clickhouse_export !== undefined ? { clickhouse_export: body.clickhouse_export } : {}),
  };
}

registerQueryKind('InsightActorsQuery', (rt, query, ctx) => runInsightActors(rt, query, ctx));
