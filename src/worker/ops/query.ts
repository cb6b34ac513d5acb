/**
 * `POST /api/projects/:id/query/`: PostHog's query API. `{query: {kind, …}, refresh?, client_query_id?}`, the kind
 * answered by its runner (src/worker/query/runners.ts). Refresh modes: `blocking` (default: a fresh cached answer,
 * else computed now), `force_blocking` (computed now; also legacy `true`), `force_cache` (only the cache: results
 * null when there is none), and `async`, `lazy_async`, `force_async` (answered at once with 202 and a
 * `query_status` to poll at `GET /query/:id/`, or cancel with `DELETE`; `lazy_async` answers from the cache when it
 * can). Answers carry `is_cached` and `last_refresh`; every answer first waits for the events acknowledged before it.
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply } from '../../protocol/worker-messages.js';
import { cancelStatus, finishStatus, readStatus, startStatus } from '../query/query-status.js';
import { queryFingerprint, queryKinds, queryRunner, type QueryContext } from '../query/runners.js';
import { answerFor, empty, json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { budgetFor, currentBudget, withBudget } from '../query-budget.js';
import { answering, cachedEntry, storeCached } from './insights.js';
import type { OpHandler } from './types.js';
import { bodyOf, projectIdOf } from './types.js';

const REFRESH_MODES = new Set(['blocking', 'force_blocking', 'force_cache', 'async', 'lazy_async', 'force_async']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function refreshOf(raw: unknown): string {
  if (raw === undefined || raw === null || raw === false || raw === 'false') return 'blocking';
  if (raw === true || raw === 'true') return 'force_blocking';
  if (typeof raw !== 'string' || !REFRESH_MODES.has(raw)) return invalidInput('refresh', `Unknown refresh mode "${String(raw)}".`);
  return raw;
}

/** A stable text of the query (sorted keys) for the cache. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

async function compute(rt: WorkerRuntime, query: Record<string, unknown>, ctx: QueryContext): Promise<Record<string, unknown>> {
  const runner = queryRunner(String(query.kind))!;
  return runner(rt, query, ctx);
}

const WRAPPERS = new Set(['InsightVizNode', 'DataTableNode', 'DataVisualizationNode']);

/** The query a node stands for: PostHog's wrappers (`InsightVizNode`, `DataTableNode`…) run their `source`. */
export function runnableQuery(query: unknown, attr = 'query'): Record<string, unknown> {
  if (!isObject(query)) return invalidInput(attr, 'A query object {"kind": …} is required.', 'required');
  const inner = WRAPPERS.has(String(query.kind)) ? query.source : query;
  if (!isObject(inner) || typeof inner.kind !== 'string' || !queryRunner(inner.kind)) {
    const kind = isObject(inner) ? inner.kind : undefined;
    return invalidInput(attr, `Unknown or unsupported query kind "${String(kind)}". Supported: ${queryKinds().join(', ')}.`);
  }
  return inner;
}

function cacheKey(rt: WorkerRuntime, team: number, query: Record<string, unknown>, now: number): string {
  const extra = queryFingerprint(rt, team, query);
  return JSON.stringify(['query', canonical(query), Math.floor(now / 3_600_000), ...(extra === null ? [] : [extra])]);
}

export interface QueryAnswer {
  value: Record<string, unknown>;
  is_cached: boolean;
  last_refresh: string;
}

/**
 * A query's answer through the worker's result cache: `cache_only` never computes (undefined without a cached answer),
 * `blocking` computes when nothing fresh is cached, `force` always computes. Saved insights and dashboards use it.
 */
export async function answerQuery(
  rt: WorkerRuntime, query: Record<string, unknown>, ctx: QueryContext, mode: 'cache_only' | 'blocking' | 'force',
): Promise<QueryAnswer | undefined> {
  const key = cacheKey(rt, ctx.team, query, ctx.now);
  // Events acknowledged before the request count: once applied, they make older cached answers stale.
  if (mode !== 'cache_only') await rt.ingest.appliedEverywhere();
  const hit = mode === 'force' ? undefined : cachedEntry(rt, ctx.team, key);
  if (hit) return { value: hit.value as Record<string, unknown>, is_cached: true, last_refresh: hit.computedAt };
  if (mode === 'cache_only') return undefined;
  const version = rt.shared.projectVersion(ctx.team);
  const value = await compute(rt, query, ctx);
  return { value, is_cached: false, last_refresh: storeCached(rt, ctx.team, key, version, value) };
}

export const runQuery: OpHandler = (item, rt) => answering(async (): Promise<Reply> => {
  const team = projectIdOf(item);
  const body = bodyOf(item);
  const query = runnableQuery(body.query);
  const refresh = refreshOf(body.refresh ?? (body.async === true ? 'async' : undefined));
  const ctx: QueryContext = { team, now: item.meta.now, url: item.meta.url };
  await rt.ingest.appliedEverywhere();
  const key = cacheKey(rt, ctx.team, query, ctx.now);
  const clientId = typeof body.client_query_id === 'string' ? { client_query_id: body.client_query_id } : {};
  const hit = refresh === 'force_blocking' || refresh === 'force_async' ? undefined : cachedEntry(rt, team, key);
  if (hit && refresh !== 'async') return json(200, { ...hit.value as object, is_cached: true, last_refresh: hit.computedAt, ...clientId });
  if (refresh === 'force_cache') return json(200, { results: null, is_cached: false, last_refresh: null, ...clientId });
  if (refresh === 'async' || refresh === 'lazy_async' || refresh === 'force_async') {
    const status = await startStatus(rt, team);
    const version = rt.shared.projectVersion(team);
    // The work carries the status' key: `DELETE query/:id` stops it at its next slice, on every worker it reached.
    const budget = currentBudget() ?? budgetFor(rt.config.queryTimeoutS, rt.config.queryMemoryMb);
    void withBudget({ ...budget, cancelKey: [team, status.id] }, () => compute(rt, query, ctx)).then(
      async (value) => {
        const at = storeCached(rt, team, key, version, value);
        await finishStatus(rt, team, status.id, { results: { ...value, is_cached: false, last_refresh: at } });
      },
      async (error: unknown) => {
        rt.metrics.noteQueryError(error);
        const answer = answerFor(error);
        const message = answer !== null ? answer.detail : 'The query failed.';
        if (answer === null) rt.log.error(`async query failed: ${(error as Error)?.stack ?? error}`);
        await finishStatus(rt, team, status.id, { error: message });
      },
    );
    return json(202, { query_status: status, ...clientId });
  }
  const version = rt.shared.projectVersion(team);
  const value = await compute(rt, query, ctx);
  const at = storeCached(rt, team, key, version, value);
  return json(200, { ...value, is_cached: false, last_refresh: at, ...clientId });
});

export const queryStatus: OpHandler = (item, rt) => {
  const team = projectIdOf(item);
  const status = readStatus(rt, team, item.params.id ?? '');
  if (!status) throw Errors.notFound('Query not found.');
  return json(200, { query_status: status });
};

export const cancelQuery: OpHandler = async (item, rt) => {
  const team = projectIdOf(item);
  if (!(await cancelStatus(rt, team, item.params.id ?? ''))) throw Errors.notFound('Query not found.');
  return empty(204);
};
