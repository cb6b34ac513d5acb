/**
 * `/insights/funnel/` (GET and POST) and `/persons/funnel/` (GET and POST): analytics.md §2.4-§2.5, computed by
 * src/worker/analytics/funnels.ts, cached like trends.
 */
import { funnelMatchers, funnelsQueryOf, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import { bucketDay, bucketLabel, parseDate } from '../../domain/analytics/date-range.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { actorPage } from '../analytics/actors.js';
import { clickHouseFunnelGap } from '../../domain/analytics/clickhouse/funnel-sql.js';
import { binOf, convertBins } from '../../domain/analytics/funnel.js';
import { rankedValueStats, runFunnel, stepsSummary, timeToConvertOf, type TimeToConvert, type FunnelRun, type StepsSummary, type ValueStats } from '../analytics/funnels.js';
import { runFunnelOnClickHouse, type StepPersons } from '../analytics/funnels-clickhouse.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { queryContext } from '../analytics/query-context.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';
import { answering, cached, encodeParams, entityId, normalisedKey, pagedActors, paramsOf } from './insights.js';

function baseParams(p: FilterParams): Record<string, unknown> {
  const skip = new Set(['refresh', 'personal_api_key', 'limit', 'offset', 'funnel_step', 'funnel_custom_steps', 'funnel_step_breakdown']);
  return Object.fromEntries(p.entries().filter(([k]) => !skip.has(k)));
}

const round2 = (x: number) => Math.round(x * 100) / 100;
function stepsJson(team: number, q: FunnelsQuery, p: FilterParams, s: StepsSummary, value: string | null): object[] {
  const n = q.steps.length;
  const base = baseParams(p);
  const url = (step: number) => `/api/projects/${team}/persons/funnel/?${encodeParams({ ...base, funnel_step: step, ...(value !== null ? { funnel_step_breakdown: [value] } : {}) })}`;
  return q.steps.map((step, i) => {
    // The API cumulates from the last step back: count_i = persons who reached at least i + 1 steps.
    let count = 0;
    for (let k = i + 1; k <= n; k++) count += s.reached[k]!;
    const out: Record<string, unknown> = {
      action_id: q.order === 'unordered' ? null : entityId(step),
      name: q.order === 'unordered' ? `Completed ${i + 1} step${i === 0 ? '' : 's'}` : step.name,
      custom_name: step.customName, order: i, people: [], count, type: step.kind,
      average_conversion_time: i === 0 ? null : s.averages[i - 1]!,
      median_conversion_time: i === 0 ? null : s.medians[i - 1]!,
      converted_people_url: url(i + 1),
      dropped_people_url: i === 0 ? null : url(-(i + 1)),
    };
    if (value !== null) Object.assign(out, { breakdown: [value], breakdown_value: [value] });
    return out;
  });
}

function trendsJson(q: FunnelsQuery, s: ValueStats, periods: number[], tz: string, value: string | null): object {
  const data = periods.map((_, i) => (s.periodFrom[i] ? round2((s.periodTo[i]! / s.periodFrom[i]!) * 100) : 0));
  const out: Record<string, unknown> = {
    count: periods.length, data, days: periods.map((b) => bucketDay(b, q.interval, tz)), labels: periods.map((b) => bucketLabel(b, q.interval, tz)),
  };
  if (value !== null) out.breakdown_value = [value];
  return out;
}

/** §2.4 time to convert: bins of the persons' conversion times. */
function timeToConvertJson(q: FunnelsQuery, times: number[]): TimeToConvert {
  let least = Infinity;
  let most = -Infinity;
  let sum = 0;
  for (const t of times) {
    least = Math.min(least, t);
    most = Math.max(most, t);
    sum += t;
  }
  const bins = convertBins(q.binCount, times.length, least, most);
  if (bins === null) return { bins: [], average_conversion_time: null };
  const counts = new Array<number>(bins.count + 1).fill(0);
  for (const t of times) counts[binOf(bins, t)]!++;
  return timeToConvertOf(bins, counts, sum / times.length);
}

export const funnel: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  const q = funnelsQueryOf(p);
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  if (q.steps.length === 0) return json(200, { result: [], timezone: 'UTC', is_cached: false, last_refresh: new Date().toISOString() });
  // The project's time zone and test-account filters shape the answer: part of the key, as for trends.
  const key = normalisedKey('funnel', p, [queryContext(rt, team, now, []).fingerprint, Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => funnelAnswer(rt, team, p, now));
  return json(200, body);
});

/** The funnel answer (§2.4) to `p`, computed now. */
export async function funnelAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number): Promise<Record<string, unknown>> {
  const q = funnelsQueryOf(p);
  if (q.steps.length === 0) return { result: [], timezone: 'UTC' };
  {
    const { run, where } = await runOnChosenExecutor<FunnelRun>(rt, () => funnelGap(rt, team, q, now),
      () => runFunnelOnClickHouse(rt, team, q, now), () => runFunnel(rt, team, q, now));
    const tz = run.ctx.timeZone;
    const values = q.breakdown ? rankedValueStats(run.partial, q.breakdown.limit) : [['', run.partial.get('') ?? emptyFor(q)] as [string, ValueStats]];
    let result: unknown;
    if (q.viz === 'trends') result = values.map(([v, s]) => trendsJson(q, s, run.periods, tz, q.breakdown ? v : null));
    else if (q.viz === 'time_to_convert') result = run.times ?? timeToConvertJson(q, values.flatMap(([, s]) => s.toConvert));
    else {
      // Folded inside ClickHouse, the sums arrive ranked; a funnel no one entered has no row.
      const steps = run.folded ?? values.map(([v, s]) => stepsSummary(v, s));
      if (q.breakdown) result = steps.map((s) => stepsJson(team, q, p, s, s.value));
      else result = stepsJson(team, q, p, steps[0] ?? stepsSummary('', emptyFor(q)), null);
    }
    return { result, timezone: tz, ...where };
  }
}

/** Why the funnel (and so the persons of its steps) cannot run on ClickHouse (null: it can). */
function funnelGap(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number): string | null {
  const testAccounts = q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null;
  return clickHouseFunnelGap(q, [q.properties, ...funnelMatchers(q).map((m) => m.filter), testAccounts]);
}

function emptyFor(q: FunnelsQuery): ValueStats {
  const n = q.steps.length;
  return { reached: new Array<number>(n + 1).fill(0), averages: Array.from({ length: n - 1 }, () => []), medians: Array.from({ length: n - 1 }, () => []), toConvert: [], persons: Array.from({ length: n + 1 }, () => []), periodFrom: [], periodTo: [], periodPersons: null };
}

/**
 * The numbers of steps whose persons `/persons/funnel/` lists: `funnel_custom_steps` as given, else from
 * `funnel_step` (k: reached k steps or more; -k: dropped off before step k, so reached k - 1).
 */
function stepLevels(p: FilterParams, n: number): number[] {
  const custom = p.json('funnel_custom_steps');
  if (Array.isArray(custom) && custom.length > 0) return custom.map(Number).filter((k) => Number.isInteger(k));
  const step = p.int('funnel_step', 1, -n, n);
  if (step === 0 || step === -1) invalidInput('funnel_step', 'funnel_step must be a step number (1 = entered) or minus the step dropped before (-2 or less).');
  return step > 0 ? Array.from({ length: n - step + 1 }, (_, i) => step + i) : [-step - 1];
}

/** Persons of the funnel (§2.5): by `funnel_step`, `funnel_custom_steps`, or an entrance period with drop_off. */
export async function personsFunnelAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number, endpoint: string): Promise<Record<string, unknown>> {
  const q = funnelsQueryOf(p);
  const n = q.steps.length;
  const limit = p.int('limit', 100, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  const breakdownParam = p.json('funnel_step_breakdown');
  const wantedValue = breakdownParam === undefined || breakdownParam === null || breakdownParam === ''
    ? null : String(Array.isArray(breakdownParam) ? breakdownParam[0] : breakdownParam);
  const value = q.breakdown ? wantedValue : null;
  let wanted: StepPersons;
  if (q.viz === 'trends') {
    // Funnel trends: the persons who converted, or dropped off, in one entrance period.
    const startParam = p.string('entrance_period_start');
    if (startParam === null) invalidInput('entrance_period_start', 'entrance_period_start is required for funnel trends persons.', 'required');
    if (!p.has('drop_off')) invalidInput('drop_off', 'drop_off is required for funnel trends persons.', 'required');
    wanted = { periodStart: startParam, dropOff: p.bool('drop_off'), value };
  } else wanted = { levels: stepLevels(p, n), value };
  await rt.ingest.appliedEverywhere();
  const { run, where } = await runOnChosenExecutor<FunnelRun>(rt, () => funnelGap(rt, team, q, now),
    () => runFunnelOnClickHouse(rt, team, q, now, wanted), () => runFunnel(rt, team, q, now, true));
  const stats = [...run.partial].filter(([v]) => wantedValue === null || v === wantedValue).map(([, s]) => s);
  const ids = new Set<number>();
  if ('periodStart' in wanted) {
    const start = parseDate(wanted.periodStart, now, run.ctx.timeZone, 'entrance_period_start').ms;
    const period = run.periods.indexOf(start);
    const dropOff = wanted.dropOff;
    for (const s of stats) {
      const pp = s.periodPersons?.[period];
      if (!pp) continue;
      const reachedTo = new Set(pp.to);
      for (const id of dropOff ? pp.from.filter((x) => !reachedTo.has(x)) : pp.to) ids.add(id);
    }
  } else {
    for (const s of stats) for (const k of wanted.levels) for (const id of s.persons?.[k] ?? []) ids.add(id);
  }
  const values = new Map<number, number | null>([...ids].map((id) => [id, null]));
  const page = actorPage(rt, team, values, { offset, limit, search: p.string('search'), ranked: false });
  return { ...pagedActors(endpoint, p, page, offset, limit), ...where };
}

export const personsFunnel: OpHandler = (item, rt) => answering(async () =>
  json(200, await personsFunnelAnswer(rt, projectIdOf(item), paramsOf(item, rt), item.meta.now, item.meta.url)));

