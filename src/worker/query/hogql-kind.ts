/**
 * `HogQLQuery`: SQL in PostHog's dialect, answered by Quill's own scan engine (parse: src/domain/hogql/parser.ts,
 * plan: src/domain/hogql/planner.ts, run: src/worker/query/hogql-exec.ts). The answer has PostHog's shape
 * (`HogQLQueryResponse` of its schema): `results` as rows, `columns`, `types` as [name, ClickHouse type] pairs,
 * `hogql` (the query as run), `timings`, and, for a query without its own LIMIT, the default page of 100 rows
 * with `hasMore`, `limit` and `offset`. A LIMIT above 50,000 is lowered to it, as PostHog does.
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { parseQuery } from '../../domain/hogql/parser.js';
import type { Query } from '../../domain/hogql/ast.js';
import type { ColumnInfo } from '../../domain/hogql/plan.js';
import { planQuery } from '../../domain/hogql/planner.js';
import { printQuery } from '../../domain/hogql/print.js';
import { outputValue, typeName } from '../../domain/hogql/values.js';
import { queryContext } from '../analytics/query-context.js';
import type { WorkerRuntime } from '../runtime.js';
import { runOnClickHouse } from './hogql-clickhouse.js';
import { execute } from './hogql-exec.js';
import { hogqlValueContext } from './hogql-values.js';
import { registerQueryKind, type QueryContext } from './runners.js';
import { stepTimer } from './timings.js';

/** Rows of a query without LIMIT (PostHog's DEFAULT_RETURNED_ROWS). */
export const DEFAULT_ROWS = 100;
/** The most rows a query returns (PostHog's MAX_SELECT_RETURNED_ROWS). */
export const MAX_ROWS = 50_000;
/** Rows and groups a query may hold in memory on the way. */
const LIMITS = { maxRows: 1_000_000, maxGroups: 1_000_000 };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Applies the default and maximum limits to the top-level query; returns the page size when it paginates. */
function applyLimits(q: Query): number | null {
  if (q.k === 'union') {
    for (const part of q.selects) applyLimits(part);
    return null;
  }
  if (q.limit === null) {
    q.limit = { k: 'const', value: DEFAULT_ROWS + 1 };
    return DEFAULT_ROWS;
  }
  if (q.limit.k === 'const' && typeof q.limit.value === 'number' && q.limit.value > MAX_ROWS) q.limit = { k: 'const', value: MAX_ROWS };
  return null;
}

export interface HogQLRequest {
  query: string;
  filters?: Record<string, unknown> | null;
  values?: Record<string, unknown>;
}

/** The request's placeholder values: `values`, and `variables` as `{variables.<code_name>}`. */
function placeholderValues(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (query.values !== undefined && query.values !== null) {
    if (!isObject(query.values)) invalidInput('values', 'values must be an object of placeholder values.');
    Object.assign(out, query.values);
  }
  if (query.variables !== undefined && query.variables !== null) {
    if (!isObject(query.variables)) invalidInput('variables', 'variables must be an object.');
    for (const v of Object.values(query.variables)) {
      if (isObject(v) && typeof v.code_name === 'string') out[`variables.${v.code_name}`] = v.value ?? null;
    }
  }
  return out;
}

export interface RanQuery {
  /** Rows as the answer carries them. */
  rows: unknown[][];
  columns: ColumnInfo[];
  timeZone: string;
  timings: { k: string; t: number }[];
}

/** Plans and runs a parsed query (its limits already applied); rows in the answer's form. */
export async function runQueryAst(
  rt: WorkerRuntime, ast: Query, ctx: QueryContext, placeholders: { filters: Record<string, unknown> | null; values: Record<string, unknown> },
): Promise<RanQuery> {
  const { timings, lap } = stepTimer();
  const project = queryContext(rt, ctx.team, ctx.now, []);
  const planned = planQuery(ast, { team: ctx.team, timeZone: project.timeZone, now: ctx.now, ...placeholders, testAccountFilters: project.testAccountFilters });
  // The cohorts the request's filters name go to the shards with the scan.
  const scanCtx = planned.filterTrees.length > 0 ? queryContext(rt, ctx.team, ctx.now, planned.filterTrees).scan : project.scan;
  lap('./plan');
  const values = hogqlValueContext(rt, ctx.team, project.timeZone, ctx.now);
  const rows = await execute(planned.plan, { rt, team: ctx.team, scan: scanCtx, values, limits: LIMITS });
  lap('./execute');
  const columns = planned.plan.columns;
  const out = rows.map((row) => row.map((v, i) => outputValue(v, columns[i]!.type, values)));
  lap('./serialize');
  return { rows: out, columns, timeZone: project.timeZone, timings };
}

/** Runs one HogQL query and shapes PostHog's response. */
export async function runHogQL(rt: WorkerRuntime, query: Record<string, unknown>, ctx: QueryContext): Promise<Record<string, unknown>> {
  const text = query.query;
  if (typeof text !== 'string' || text.trim() === '') return invalidInput('query', 'A HogQLQuery needs its SQL text in "query".', 'required');
  if (query.filters !== undefined && query.filters !== null && !isObject(query.filters)) invalidInput('filters', 'filters must be an object.');
  const started = performance.now();
  const ast = parseQuery(text);
  const page = applyLimits(ast);
  const parsed = performance.now();
  const placeholders = { filters: (query.filters as Record<string, unknown> | null | undefined) ?? null, values: placeholderValues(query) };
  // QUILL_ANALYTICS=clickhouse: the export's tables answer (src/worker/query/hogql-clickhouse.ts).
  const onClickHouse = rt.config.analytics === 'clickhouse' ? await runOnClickHouse(rt, ast, ctx, placeholders) : null;
  const ran = onClickHouse ?? (await runQueryAst(rt, ast, ctx, placeholders));
  let results = ran.rows;
  const paging: Record<string, unknown> = { hasMore: null, limit: null, offset: null };
  if (page !== null) {
    paging.hasMore = results.length > page;
    paging.limit = page;
    paging.offset = 0;
    results = results.slice(0, page);
  }
  return {
    results,
    columns: ran.columns.map((c) => c.name),
    types: ran.columns.map((c) => [c.name, typeName(c.type, ran.timeZone)]),
    hogql: printQuery(ast),
    query: text,
    clickhouse: onClickHouse ? onClickHouse.sql : null,
    // Whether the export had caught up with the events acknowledged before the request (false: the wait ran out).
    ...(onClickHouse ? { clickhouse_export: { caught_up: onClickHouse.caughtUp } } : {}),
    error: null,
    explain: null,
    modifiers: {},
    timings: [{ k: './parse_select', t: (parsed - started) / 1000 }, ...ran.timings],
    ...paging,
  };
}

registerQueryKind('HogQLQuery', runHogQL);
