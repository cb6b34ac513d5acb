/**
 * `HogQLQuery` answered by ClickHouse (`QUILL_ANALYTICS=clickhouse`): the query is planned as Quill's engine would
 * plan it (so it refuses what the local dialect refuses, and gives the answer's column names and types), printed
 * to ClickHouse SQL with the team guard (src/domain/hogql/clickhouse-printer.ts), and run on the export's tables
 * once the export has caught up with the events acknowledged before the request (every shard's oldest event not
 * yet exported is younger than the request). The wait is bounded: past it, the answer is what ClickHouse has,
 * and says so (`clickhouse_export.caught_up: false`).
 */
import { clickhouseReason } from '../../domain/analytics/clickhouse/error-reason.js';
import { printClickHouse } from '../../domain/hogql/clickhouse-printer.js';
import { hogqlError, NotPrintable } from '../../domain/hogql/errors.js';
import type { Query } from '../../domain/hogql/ast.js';
import { planQuery } from '../../domain/hogql/planner.js';
import { Errors } from '../../protocol/errors.js';
import { ClickHouseQueryError, type ClickHouseReader, type ReadLimits, type ReadResult } from '../../stores/clickhouse/reader.js';
import { failureText } from '../../stores/clickhouse/sink.js';
import { clickHouseSqlOptions, queryContext } from '../analytics/query-context.js';
import { currentBudget, QueryMemoryError, QueryTimeoutError } from '../query-budget.js';
import type { WorkerRuntime } from '../runtime.js';
import { AnsweredLocally } from '../analytics/executor-choice.js';
import { answerRows } from './clickhouse-rows.js';
import type { RanQuery } from './hogql-kind.js';
import type { QueryContext } from './runners.js';
import { stepTimer } from './timings.js';

/** The longest a query waits for the export (less when its budget is shorter: half of what is left). */
const MAX_EXPORT_WAIT_MS = 30_000;
const POLL_MS = 50;

export interface ClickHouseRan extends RanQuery {
  sql: string;
  caughtUp: boolean;
}

/**
 * Waits until the export covers what was acknowledged before the request: the events logged before `since`, and
 * the person changes recorded up to now (the request has already waited for those events to be applied, so their
 * person changes are in the log). False when the wait ran out first. The wait holds no query place.
 */
export async function exportCaughtUp(rt: WorkerRuntime, since: number): Promise<boolean> {
  const service = rt.export!;
  const budget = currentBudget();
  const left = budget ? budget.deadline - Date.now() : MAX_EXPORT_WAIT_MS * 2;
  const until = Date.now() + Math.min(MAX_EXPORT_WAIT_MS, left / 2);
  const persons = await service.personsPositionEverywhere();
  const caughtUp = async (): Promise<boolean> => {
    for (;;) {
      const eventsDone = await service.exportedEverywhereUntil(since);
      const personsDone = persons === null || ((await service.personsPositionEverywhere())?.done ?? 0) >= persons.last;
      if (eventsDone && personsDone) return true;
      if (Date.now() >= until) return false;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };
  return rt.queries.outside(caughtUp());
}

export async function runOnClickHouse(
  rt: WorkerRuntime, ast: Query, ctx: QueryContext, placeholders: { filters: Record<string, unknown> | null; values: Record<string, unknown> },
): Promise<ClickHouseRan> {
  if (!rt.export) throw new Error('QUILL_ANALYTICS=clickhouse without the ClickHouse export');
  const requested = Date.now();
  const { timings, lap } = stepTimer();
  const project = queryContext(rt, ctx.team, ctx.now, []);
  const planned = planQuery(ast, { team: ctx.team, timeZone: project.timeZone, now: ctx.now, ...placeholders, testAccountFilters: project.testAccountFilters });
  const columns = planned.plan.columns;
  const printed = printedOrRefused(() => printClickHouse(ast, columns, {
    ...clickHouseSqlOptions(rt, ctx.team, project.timeZone, ctx.now, project), values: placeholders.values,
    filters: placeholders.filters, testAccountFilters: project.testAccountFilters,
  }));
  lap('./print_clickhouse');
  const caughtUp = await exportCaughtUp(rt, requested);
  lap('./wait_for_export');
  const result = await selectOnClickHouse(rt, printed.sql, printed.params);
  lap('./clickhouse_execute');
  const rows = answerRows(result.data, columns, project.timeZone);
  lap('./serialize');
  return { rows, columns, timeZone: project.timeZone, timings, sql: printed.sql, caughtUp };
}

/**
 * Runs printed SQL on the export's ClickHouse within the request's budget: ClickHouse's own limits are the budget's,
 * answered with the local engine's errors; no answer at all is a 503 the client may retry.
 */
export async function selectOnClickHouse(rt: WorkerRuntime, sql: string, params: Record<string, string>, maxResultRows?: number): Promise<ReadResult> {
  return withinBudget(rt, maxResultRows, async (reader, limits) => reader.select(sql, params, limits));
}

/**
 * A HogQL query's print, or its refusal: a query has no local answer to fall back to once it is sent to ClickHouse,
 * so what the printer cannot print there (a cohort in `{filters}` the project's context does not hold as a tree)
 * is the query's error, as before cohorts were printed.
 */
function printedOrRefused<T>(print: () => T): T {
  try {
    return print();
  } catch (error) {
    if (error instanceof NotPrintable) return hogqlError(`In {filters}, ${error.reason} with QUILL_ANALYTICS=clickhouse.`);
    throw error;
  }
}

/** As selectOnClickHouse, each row handed to `each` as it arrives (ClickHouseReader.selectEach); returns the number of rows and their bytes. */
export async function selectEachOnClickHouse(
  rt: WorkerRuntime, sql: string, params: Record<string, string>, maxResultRows: number, each: (row: unknown[]) => void,
): Promise<{ rows: number; bytes: number }> {
  return withinBudget(rt, maxResultRows, async (reader, limits) => reader.selectEach(sql, params, limits, each));
}

async function withinBudget<T>(rt: WorkerRuntime, maxResultRows: number | undefined, read: (reader: ClickHouseReader, limits: ReadLimits) => Promise<T>): Promise<T> {
  const budget = currentBudget();
  const limits = {
    maxExecutionS: budget ? Math.max(1, (budget.deadline - Date.now()) / 1000) : rt.config.queryTimeoutS,
    maxMemoryBytes: budget ? budget.memoryBytes : rt.config.queryMemoryMb * 1024 * 1024,
    maxResultRows,
  };
  try {
    return await read(await rt.export!.reader(), limits);
  } catch (error) {
    if (!(error instanceof ClickHouseQueryError)) throw Errors.clickhouseUnavailable(clickhouseReason(failureText(error)));
    if (error.code === '159') throw new QueryTimeoutError(budget?.timeoutS ?? rt.config.queryTimeoutS);
    if (error.code === '241') throw new QueryMemoryError(Math.round(limits.maxMemoryBytes / 1024 / 1024));
    if (error.code === '396' && maxResultRows !== undefined) throw new AnsweredLocally(`more than ${maxResultRows.toLocaleString('en')} rows to bring back from ClickHouse`);
    // The user is told why; the operator's log has the whole message, generated SQL included.
    rt.log.warn({ event: 'clickhouse_query_refused', code: error.code }, `ClickHouse refused a query: ${error.message}`);
    return hogqlError(`ClickHouse could not run the query: ${clickhouseReason(error.message)}`);
  }
}
