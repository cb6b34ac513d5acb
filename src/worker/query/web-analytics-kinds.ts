/**
 * PostHog's web analytics kinds of `/query/`: `WebOverviewQuery`, `WebStatsTableQuery`, `WebGoalsQuery`,
 * `WebExternalClicksTableQuery` (one session scan each: src/worker/analytics/web-sessions.ts; what counts:
 * src/domain/web-analytics/) and `WebVitalsQuery` (its `source`, a trends query of `$web_vitals` percentiles, run
 * as trends). Answers in PostHog's shapes: overview items, tables as `columns` + `results` rows with
 * `[current, previous]` pairs, `hasMore`/`limit`/`offset`.
 */
import { actionFilter } from '../../domain/analytics/action-filter.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { andFilters, type FilterNode } from '../../domain/analytics/property-filters.js';
import { localIso } from '../../domain/analytics/time-zone.js';
import { aggregatorFor, type WebAggregator } from '../../domain/web-analytics/aggregate.js';
import { clicksTable, clicksTableOf, type ClickCounts } from '../../domain/web-analytics/external-clicks.js';
import { GOAL_COLUMNS, MAX_GOALS } from '../../domain/web-analytics/goals.js';
import { overviewItems } from '../../domain/web-analytics/overview.js';
import { pathnameAsPrevious, periodsOf, webQueryOf, withoutPathnameFilters, type Periods, type WebQuery } from '../../domain/web-analytics/query.js';
import { isEventBreakdown } from '../../domain/web-analytics/tables.js';
import type { Action } from '../../domain/model.js';
import { clickHouseSqlOptions, queryContext, type QueryContext as AnalysisContext } from '../analytics/query-context.js';
import { firstEventIfAll } from '../analytics/scatter.js';
import { SESSION_MARGIN_MS, webSessionsEverywhere, type WebScanSpec } from '../analytics/web-sessions.js';
import { externalClicksOnClickHouse, webSessionsOnClickHouse } from '../analytics/web-clickhouse.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { clickHouseWebGap, goalsGap } from '../../domain/web-analytics/clickhouse-sql.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryRunner, registerQueryKind, type QueryContext } from './runners.js';

const eventNameLeaf = (name: string): FilterNode => ({ type: 'event_name', key: 'event', operator: 'exact', value: name, groupTypeIndex: null, negation: false });

/** The project's actions PostHog takes as goals: pinned first (oldest pin first), then the newest. */
function goalActions(rt: WorkerRuntime, team: number): Action[] {
  rt.meta.env.resetReadTxn();
  return rt.meta.actionsOf(team).filter((a) => !a.deleted).sort((a, b) => {
    if (a.pinned_at !== b.pinned_at) return a.pinned_at === null ? 1 : b.pinned_at === null ? -1 : a.pinned_at < b.pinned_at ? -1 : 1;
    return b.id - a.id;
  }).slice(0, MAX_GOALS);
}

function conversionFilter(rt: WorkerRuntime, team: number, q: WebQuery): FilterNode | null {
  const goal = q.conversionGoal;
  if (goal === null) return null;
  if ('customEventName' in goal) return eventNameLeaf(goal.customEventName);
  rt.meta.env.resetReadTxn();
  const action = rt.meta.actions.get([team, goal.actionId]);
  if (!action || action.deleted) return invalidInput('conversionGoal', `Action ${goal.actionId} does not exist.`);
  return actionFilter(action);
}

interface Run {
  q: WebQuery;
  ctx: AnalysisContext;
  periods: Periods;
  aggregator: WebAggregator;
  /** Outbound clicks: counted here, or ClickHouse's [url, visitors, clicks] rows. */
  clicks: ClickCounts | [string, number, number][];
  /** Which executor answered (QUILL_ANALYTICS=clickhouse): `clickhouse: {fallback}` and the export's state. */
  where: Record<string, unknown>;
}

/** Scans the range once; every session counted once into the kind's aggregator (src/worker/analytics/web-sessions.ts). */
async function runWeb(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext, goals: FilterNode[] | null = null): Promise<Run> {
  const q = webQueryOf(raw);
  const conversion = conversionFilter(rt, qc.team, q);
  // Cohorts named by the filters, the goals' actions and the conversion goal travel with the scan.
  const ctx = queryContext(rt, qc.team, qc.now, [q.filter, conversion, ...(goals ?? [])]);
  const first = await firstEventIfAll(rt, qc.team, { dateFrom: q.dateFrom });
  const periods = periodsOf(q, ctx.timeZone, qc.now, first);
  const filter = andFilters(q.filter, q.filterTestAccounts ? ctx.testAccountFilters : null);
  const rules = q.doPathCleaning ? ctx.project.path_cleaning_filters ?? [] : [];
  const from = Math.min(periods.current.from, periods.previous?.from ?? Infinity) - SESSION_MARGIN_MS;
  const to = Math.max(periods.current.to, periods.previous?.to ?? -Infinity) + SESSION_MARGIN_MS;
  const b = q.breakdownBy;
  const goalTrees = goals ?? (conversion === null ? [] : [conversion]);
  const spec: WebScanSpec = {
    team: qc.team, from, to, periods, filter,
    goals: goalTrees,
    pages: true,
    breakdown: b !== null && isEventBreakdown(b) ? b : null,
    conversionByValue: conversion !== null && b !== null && isEventBreakdown(b),
    pathRules: rules,
    ...(b === 'Page' && q.includeBounceRate ? { bounceFilter: withoutPathnameFilters(filter) } : {}),
    ...(b === 'Page' && q.includeScrollDepth ? { scroll: { filter: pathnameAsPrevious(filter) } } : {}),
    ...(q.kind === 'WebExternalClicksTableQuery' ? { clicks: { strip: q.stripQueryParams, filter } } : {}),
  };
  const aggregate = { query: raw, periods, rules, goals: goalTrees.length };
  const counted = { from: Math.min(periods.current.from, periods.previous?.from ?? Infinity), to: Math.max(periods.current.to, periods.previous?.to ?? -Infinity) };
  const opts = clickHouseSqlOptions(rt, qc.team, ctx.timeZone, qc.now);
  const { run, where } = await runOnChosenExecutor<{ aggregator: WebAggregator; clicks: ClickCounts | [string, number, number][] }>(
    rt,
    () => clickHouseWebGap(q, filter) ?? goalsGap(goalTrees),
    async () => (q.kind === 'WebExternalClicksTableQuery'
      ? await externalClicksOnClickHouse(rt, periods.current, q.stripQueryParams, filter, opts).then(({ rows, caughtUp }) => ({ aggregator: aggregatorFor(aggregate), clicks: rows, caughtUp }))
      : { ...(await webSessionsOnClickHouse(rt, { from, to }, counted, filter, goalTrees, aggregate, opts)), clicks: new Map() as ClickCounts }),
    () => webSessionsEverywhere(rt, spec, ctx.scan, aggregate),
  );
  return { q, ctx, periods, aggregator: run.aggregator, clicks: run.clicks, where };
}

/** Fields every web analytics answer carries (and, with QUILL_ANALYTICS=clickhouse, which executor answered). */
function envelope(run: Pick<Run, 'ctx' | 'periods'> & { where?: Record<string, unknown> }): Record<string, unknown> {
  return {
    ...(run.where ?? {}),
    timezone: run.ctx.timeZone,
    dateFrom: localIso(run.periods.current.from, run.ctx.timeZone),
    dateTo: localIso(run.periods.current.to, run.ctx.timeZone),
    samplingRate: { numerator: 1 },
    usedPreAggregatedTables: false,
  };
}

async function overview(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext): Promise<Record<string, unknown>> {
  const run = await runWeb(rt, raw, qc);
  if (run.aggregator.kind !== 'overview') throw new Error('internal: overview aggregator');
  return { results: overviewItems(run.aggregator.totals, run.periods.previous !== null, run.q.conversionGoal !== null), ...envelope(run) };
}

async function statsTableKind(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext): Promise<Record<string, unknown>> {
  const run = await runWeb(rt, raw, qc);
  if (run.aggregator.kind !== 'table') throw new Error('internal: table aggregator');
  return { ...run.aggregator.table.finish(), ...envelope(run) };
}

async function goals(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext): Promise<Record<string, unknown>> {
  const actions = goalActions(rt, qc.team);
  if (actions.length === 0) {
    const q = webQueryOf(raw);
    const ctx = queryContext(rt, qc.team, qc.now, [q.filter]);
    return { results: [], columns: GOAL_COLUMNS, ...envelope({ ctx, periods: periodsOf(q, ctx.timeZone, qc.now, null) }) };
  }
  const run = await runWeb(rt, raw, qc, actions.map((a) => actionFilter(a)));
  if (run.aggregator.kind !== 'goals') throw new Error('internal: goals aggregator');
  return { results: run.aggregator.goals.finish(actions.map((a) => a.name), run.q.orderBy), columns: GOAL_COLUMNS, ...envelope(run) };
}

async function externalClicks(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext): Promise<Record<string, unknown>> {
  const run = await runWeb(rt, raw, qc);
  const table = Array.isArray(run.clicks) ? clicksTableOf(run.clicks, run.q.limit, run.q.offset) : clicksTable(run.clicks, run.q.limit, run.q.offset);
  return { ...table, ...envelope(run) };
}

/** `WebVitalsQuery`: its `source` (a TrendsQuery of `$web_vitals` percentiles) with the query's filters, as trends. */
async function webVitals(rt: WorkerRuntime, raw: Record<string, unknown>, qc: QueryContext): Promise<Record<string, unknown>> {
  const source = raw.source as Record<string, unknown> | undefined;
  if (source === null || typeof source !== 'object' || source.kind !== 'TrendsQuery') {
    return invalidInput('source', 'A WebVitalsQuery needs a TrendsQuery as its source.', 'required');
  }
  const properties = [...(Array.isArray(source.properties) ? source.properties : []), ...(Array.isArray(raw.properties) ? raw.properties : [])];
  const trends = queryRunner('TrendsQuery')!;
  // Trends read event, person and cohort filters; a web vitals sample is an event of its own, outside the session
  // rules, so session filters of the page do not apply to it.
  const eventLevel = properties.filter((f) => (f as Record<string, unknown> | null)?.type !== 'session');
  const answer = await trends(rt, { ...source, properties: dedupe(eventLevel), filterTestAccounts: source.filterTestAccounts ?? raw.filterTestAccounts }, qc);
  // Items name their metric and percentile (PostHog's WebVitalsItem.action); without a breakdown or compare, the
  // trends results come in the order of the source's series.
  const series = Array.isArray(source.series) ? (source.series as Record<string, unknown>[]) : [];
  const results = (answer.results as Record<string, unknown>[]).map((r, i) => {
    const action = (r.action ?? {}) as Record<string, unknown>;
    const own = series[i] ?? {};
    return { ...r, action: { ...action, custom_name: action.custom_name ?? own.custom_name ?? null, math: action.math ?? own.math ?? null }, data: r.data, days: r.days };
  });
  return { ...answer, results };
}

/** The same filter given in the source and in the query counts once. */
function dedupe(list: unknown[]): unknown[] {
  const seen = new Set<string>();
  return list.filter((f) => {
    const key = JSON.stringify(f);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What else than the query decides an answer: the project's zone, test-account filters, path cleaning and actions. */
function fingerprint(rt: WorkerRuntime, team: number): unknown {
  rt.meta.env.resetReadTxn();
  const p = rt.meta.projects.get(team);
  return [p?.timezone ?? null, p?.test_account_filters ?? null, p?.path_cleaning_filters ?? null];
}

registerQueryKind('WebOverviewQuery', overview, fingerprint);
registerQueryKind('WebStatsTableQuery', statsTableKind, fingerprint);
registerQueryKind('WebGoalsQuery', goals, fingerprint);
registerQueryKind('WebExternalClicksTableQuery', externalClicks, fingerprint);
registerQueryKind('WebVitalsQuery', webVitals, fingerprint);
