/**
 * The insight kinds of the query API: each converted to the legacy parameters (src/domain/analytics/
 * query-to-filter.ts) and answered by the same analysis as the legacy endpoint, in the query API's shape:
 * `results` instead of `result`, plus `timezone` and `resolved_date_range`.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { intervalOf } from '../../domain/analytics/legacy-filters.js';
import { funnelsParams, lifecycleParams, pathsParams, retentionParams, stickinessParams, trendsParams } from '../../domain/analytics/query-to-filter.js';
import { localIso } from '../../domain/analytics/time-zone.js';
import { actionLookup } from '../analytics/action-lookup.js';
import { funnelAnswer } from '../ops/funnel-insights.js';
import { trendsAnswer } from '../ops/insights.js';
import { pathAnswer } from '../ops/path-insights.js';
import { lifecycleAnswer, retentionAnswer, stickinessAnswer } from '../ops/person-insights.js';
import type { WorkerRuntime } from '../runtime.js';
import { registerQueryKind, type QueryContext } from './runners.js';

type Answer = (rt: WorkerRuntime, team: number, p: FilterParams, now: number, url: string) => Promise<Record<string, unknown>>;

function kind(toParams: (q: Record<string, unknown>) => FilterParams, answer: Answer) {
  return async (rt: WorkerRuntime, query: Record<string, unknown>, ctx: QueryContext) => {
    const p = toParams(query).withActions(actionLookup(rt, ctx.team));
    const body = await answer(rt, ctx.team, p, ctx.now, ctx.url);
    const tz = String(body.timezone ?? 'UTC');
    const range = resolveDateRange({ dateFrom: p.string('date_from'), dateTo: p.string('date_to'), explicitDate: p.bool('explicit_date') }, intervalOf(p), tz, ctx.now, null);
    const { result, ...rest } = body;
    return { results: result, ...rest, timezone: tz, resolved_date_range: { date_from: localIso(range.from, tz), date_to: localIso(range.to, tz) } };
  };
}

registerQueryKind('TrendsQuery', kind(trendsParams, trendsAnswer));
registerQueryKind('LifecycleQuery', kind(lifecycleParams, (rt, team, p, now) => lifecycleAnswer(rt, team, p, now)));
registerQueryKind('StickinessQuery', kind(stickinessParams, (rt, team, p, now) => stickinessAnswer(rt, team, p, now)));
registerQueryKind('FunnelsQuery', kind(funnelsParams, (rt, team, p, now) => funnelAnswer(rt, team, p, now)));
registerQueryKind('RetentionQuery', kind(retentionParams, (rt, team, p, now) => retentionAnswer(rt, team, p, now)));
registerQueryKind('PathsQuery', kind(pathsParams, (rt, team, p, now) => pathAnswer(rt, team, p, now)));
