/**
 * Retention (`/insights/retention/`, `/persons/retention/`), lifecycle and stickiness (`/insights/trend/` with
 * `insight=LIFECYCLE` / `STICKINESS`, `/persons/lifecycle/`, `/persons/stickiness/`): analytics.md §4-§6, computed
 * by src/worker/analytics/person-analyses.ts, answered in the shapes of the spec, cached like trends.
 */
import { hasMember, membersOf } from '../../domain/analytics/aggregates.js';
import { bucketDay, bucketLabel } from '../../domain/analytics/date-range.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../domain/analytics/legacy-filters.js';
import type { TrendsQuery } from '../../domain/analytics/query.js';
import { LIFECYCLE_STATUSES, lifecycleSet, type LifecycleStatus } from '../../domain/analytics/lifecycle.js';
import { retentionQueryOf } from '../../domain/analytics/retention.js';
import { stickinessLabel } from '../../domain/analytics/stickiness.js';
import { localIso } from '../../domain/analytics/time-zone.js';
import { Errors } from '../../protocol/errors.js';
import type { Reply, TaskItem } from '../../protocol/worker-messages.js';
import { clickHouseLifecycleGap } from '../../domain/analytics/clickhouse/lifecycle-sql.js';
import { clickHouseRetentionGap } from '../../domain/analytics/clickhouse/retention-sql.js';
import { clickHouseStickinessGap } from '../../domain/analytics/clickhouse/stickiness-sql.js';
import { actorPage } from '../analytics/actors.js';
import { lifecyclePeriodOf, runLifecycle, runRetention, runStickiness, type LifecycleRun, type RetentionRun } from '../analytics/person-analyses.js';
import { runLifecycleActorsOnClickHouse, runLifecycleOnClickHouse } from '../analytics/lifecycle-clickhouse.js';
import { runRetentionActorsOnClickHouse, runRetentionOnClickHouse } from '../analytics/retention-clickhouse.js';
import { queryContext, type QueryContext } from '../analytics/query-context.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { runStickinessActorsOnClickHouse, runStickinessOnClickHouse } from '../analytics/stickiness-clickhouse.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { answering, cached, encodeParams, entityId, filterEcho, normalisedKey, paramsOf, pickSeries } from './insights.js';
import { viewOf } from './persons/person-view.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';

const PAGE = 100;

/** `/api/projects/:id/persons/<kind>/?<params>`: the persons behind a number (project-scoped, unlike 2023's /api/person/). */
function personsUrl(team: number, kind: string, params: Record<string, unknown>): string {
  return `/api/projects/${team}/persons/${kind}/?${encodeParams(params)}`;
}

function baseParams(p: FilterParams, drop: string[] = []): Record<string, unknown> {
  const skip = new Set(['refresh', 'personal_api_key', 'limit', 'offset', ...drop]);
  return Object.fromEntries(p.entries().filter(([k]) => !skip.has(k)));
}

function nextUrl(url: string, p: FilterParams, raw: number, offset: number, limit: number): string | null {
  if (raw <= offset + limit) return null;
  return `${url}?${encodeParams({ ...baseParams(p), limit, offset: offset + limit })}`;
}

/** A persons answer: the body of a legacy `persons/*` endpoint for the parameters `p`. */
export type ActorsAnswer = (rt: WorkerRuntime, team: number, p: FilterParams, now: number, url: string) => Promise<Record<string, unknown>>;

/** The endpoint of an actors answer: the request's parameters, answered as JSON. */
export function actorsEndpoint(answer: ActorsAnswer): OpHandler {
  return (item, rt) => answering(async () => json(200, await answer(rt, projectIdOf(item), paramsOf(item, rt), item.meta.now, item.meta.url)));
}

// ---------------------------------------------------------------------------------------------------- retention

export const retention: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  retentionQueryOf(p); // bad parameters answer 400 before any wait
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const key = normalisedKey('retention', p, [Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => retentionAnswer(rt, team, p, now));
  return json(200, body);
});

/** The retention answer (§4.4) to `p`, computed now. */
export async function retentionAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number): Promise<Record<string, unknown>> {
  const q = retentionQueryOf(p);
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<Pick<RetentionRun, 'ctx' | 'window' | 'matrix' | 'byValue'>>(rt,
    () => clickHouseRetentionGap(q, [q.properties, q.target.properties, q.returning.properties, testAccounts()]),
    () => runRetentionOnClickHouse(rt, team, q, now), () => runRetention(rt, team, q, now));
  {
    const tz = run.ctx.timeZone;
    const base = baseParams(p);
    let result: unknown[];
    if (run.byValue) {
      result = run.byValue.map(({ value, counts }) => ({
        values: counts.map((count, k) => ({ count, people: [], people_url: personsUrl(team, 'retention', { ...base, breakdown_values: [value], selected_interval: k }) })),
        label: value, breakdown_values: [value],
        people_url: personsUrl(team, 'retention', { ...base, breakdown_values: [value] }),
      }));
    } else {
      result = run.matrix.map((row, i) => ({
        values: row.map((count, k) => ({ count, people: [], people_url: personsUrl(team, 'retention', { ...base, breakdown_values: [i], selected_interval: k }) })),
        label: `${q.period} ${i}`,
        date: localIso(run.window.starts[i]!, tz),
        people_url: personsUrl(team, 'retention', { ...base, display: 'ActionsTable', breakdown_values: [i] }),
      }));
    }
    return { result, timezone: tz, ...where };
  }
}

/** §4.5: the persons of one cohort with their appearances, most appearances first. */
export const personsRetentionAnswer: ActorsAnswer = async (rt, team, p, now, url) => {
  const q = retentionQueryOf(p);
  if (q.breakdown) invalidInput('breakdowns', 'The persons of a breakdown row are not supported yet.');
  const limit = p.int('limit', PAGE, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  const cohortParam = p.json('breakdown_values');
  const cohort = Array.isArray(cohortParam) && cohortParam.length > 0 ? Number(cohortParam[0]) : p.int('selected_interval', 0, 0);
  if (!Number.isInteger(cohort) || cohort < 0 || cohort >= q.totalIntervals) invalidInput('breakdown_values', `The cohort must be between 0 and ${q.totalIntervals - 1}.`);
  await rt.ingest.appliedEverywhere();
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<{ members: number[]; appearances: Map<number, number[]> }>(rt,
    () => clickHouseRetentionGap(q, [q.properties, q.target.properties, q.returning.properties, testAccounts()]),
    () => runRetentionActorsOnClickHouse(rt, team, q, cohort, now),
    async () => {
      const local = await runRetention(rt, team, q, now);
      const members = membersOf(local.target[cohort] ?? null);
      const appearances = new Map<number, number[]>();
      for (const pid of members) {
        appearances.set(pid, Array.from({ length: q.totalIntervals - cohort }, (_, k) => (k === 0 || hasMember(local.returning[cohort + k] ?? null, pid) ? 1 : 0)));
      }
      return { members, appearances };
    });
  const { members, appearances } = run;
  const values = new Map<number, number | null>(members.map((pid) => [pid, appearances.get(pid)!.reduce((a, b) => a + b, 0)]));
  const page = actorPage(rt, team, values, { offset, limit, search: p.string('search') });
  return {
    result: page.people.map((person) => ({ person: { ...person, value_at_data_point: null }, appearances: appearances.get(personId(rt, team, person.uuid))! })),
    next: nextUrl(url, p, page.raw, offset, limit),
    missing_persons: page.missing,
    ...where,
  };
};
export const personsRetention = actorsEndpoint(personsRetentionAnswer);

function personId(rt: WorkerRuntime, team: number, uuid: string): number {
  return rt.persons.personByUuid(team, uuid)!.id;
}

// ---------------------------------------------------------------------------------------------------- lifecycle

export async function lifecycleInsight(item: TaskItem, rt: WorkerRuntime, team: number, p: FilterParams): Promise<Reply> {
  const q = trendsQueryOf(p);
  if (q.series.length !== 1) invalidInput('events', 'A lifecycle takes exactly one event.');
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const key = normalisedKey('lifecycle', p, [Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => lifecycleAnswer(rt, team, p, now));
  return json(200, body);
}

/** The lifecycle answer (§5.3) to `p`, computed now. */
export async function lifecycleAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number): Promise<Record<string, unknown>> {
  const q = trendsQueryOf(p);
  if (q.series.length !== 1) invalidInput('events', 'A lifecycle takes exactly one event.');
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<Pick<LifecycleRun, 'ctx' | 'starts' | 'counts'>>(rt,
    () => clickHouseLifecycleGap(q, [q.properties, ...q.series.map((s) => s.properties), testAccounts()]),
    () => runLifecycleOnClickHouse(rt, team, q, now), () => runLifecycle(rt, team, q, now));
  {
    const s = q.series[0]!;
    const tz = run.ctx.timeZone;
    const echo = filterEcho(q, p);
    const result = LIFECYCLE_STATUSES.map((status) => {
      const data = run.counts[status];
      return {
        action: { ...s.echo }, label: `${s.customName ?? s.name} - ${status}`, status, count: data.reduce((a, b) => a + b, 0), data,
        days: run.starts.map((b) => bucketDay(b, q.interval, tz)), labels: run.starts.map((b) => bucketLabel(b, q.interval, tz)),
        persons_urls: run.starts.map((b) => ({ url: personsUrl(team, 'lifecycle', { ...baseParams(p), target_date: localIso(b, tz), lifecycle_type: status }) })),
        filter: echo,
      };
    });
    return { result, timezone: tz, next: null, ...where };
  }
}

/** §5.4: the persons of one status in one period, in the legacy person shape. */
export const personsLifecycleAnswer: ActorsAnswer = async (rt, team, p, now, url) => {
  const targetDate = p.string('target_date');
  const type = p.string('lifecycle_type');
  if (targetDate === null) missingParameter('target_date', 'Must include specified date');
  if (type === null) missingParameter('lifecycle_type', 'Must include lifecycle type');
  if (!(LIFECYCLE_STATUSES as readonly string[]).includes(type)) invalidInput('lifecycle_type', `Unknown lifecycle_type "${type}": use new, returning, resurrecting or dormant.`);
  const q = trendsQueryOf(p);
  if (q.series.length !== 1) invalidInput('events', 'A lifecycle takes exactly one event.');
  const limit = p.int('limit', PAGE, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  await rt.ingest.appliedEverywhere();
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<{ ids: number[] }>(rt,
    () => clickHouseLifecycleGap(q, [q.properties, ...q.series.map((s) => s.properties), testAccounts()]),
    () => runLifecycleActorsOnClickHouse(rt, team, q, targetDate, type as LifecycleStatus, now),
    async () => {
      const local = await runLifecycle(rt, team, q, now);
      const period = lifecyclePeriodOf(local.starts, local.range, targetDate, now, local.ctx.timeZone);
      return { ids: period < 0 ? [] : membersOf(lifecycleSet(type as LifecycleStatus, local.active, local.created, period)) };
    });
  const page = legacyPersons(rt, team, run.ids, offset, limit);
  return { results: [{ people: page.people, count: page.people.length }], next: nextUrl(url, p, run.ids.length, offset, limit), ...where };
};
export const personsLifecycle = actorsEndpoint(personsLifecycleAnswer);

function missingParameter(attr: string, detail: string): never {
  throw Errors.missingParameter(attr, detail);
}

function legacyPersons(rt: WorkerRuntime, team: number, ids: number[], offset: number, limit: number) {
  rt.persons.env.resetReadTxn();
  const people = [];
  for (const id of ids.slice(offset, offset + limit)) {
    const row = rt.persons.person(team, id);
    if (row) people.push(viewOf(row));
  }
  return { people };
}

// --------------------------------------------------------------------------------------------------- stickiness

export async function stickinessInsight(item: TaskItem, rt: WorkerRuntime, team: number, p: FilterParams): Promise<Reply> {
  trendsQueryOf(p); // bad parameters answer 400 before any wait
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const key = normalisedKey('stickiness', p, [Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), () => stickinessAnswer(rt, team, p, now));
  return json(200, body);
}

/** The stickiness answer (§6.3) to `p`, computed now. */
export async function stickinessAnswer(rt: WorkerRuntime, team: number, p: FilterParams, now: number): Promise<Record<string, unknown>> {
  const q = trendsQueryOf(p);
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<{ ctx: QueryContext; series: { index: number; data: number[]; compareLabel?: 'current' | 'previous' }[] }>(rt,
    () => clickHouseStickinessGap(q, [q.properties, ...q.series.map((s) => s.properties), testAccounts()]),
    () => runStickinessOnClickHouse(rt, team, q, now), () => runStickiness(rt, team, q, now));
  {
    const echo = filterEcho(q, p);
    const result = run.series.map((r) => {
      const s = q.series[r.index]!;
      const out: Record<string, unknown> = {
        action: { ...s.echo }, label: s.customName ?? s.name, count: r.data.reduce((a, b) => a + b, 0), data: r.data,
        labels: r.data.map((_, k) => stickinessLabel(k + 1, q.interval)), days: r.data.map((_, k) => k + 1), filter: echo,
        persons_urls: r.data.map((_, k) => {
          const filter = { stickiness_days: k + 1, entity_id: entityId(s), entity_type: s.kind, entity_math: s.math, entity_order: s.order === -1 ? s.index : s.order };
          return { filter, url: personsUrl(team, 'stickiness', { ...baseParams(p), ...filter }) };
        }),
      };
      if (r.compareLabel) Object.assign(out, { compare: true, compare_label: r.compareLabel });
      return out;
    });
    return { result, timezone: run.ctx.timeZone, next: null, ...where };
  }
}

/** §6.4: the persons active in exactly `stickiness_days` intervals. */
export const personsStickinessAnswer: ActorsAnswer = async (rt, team, p, now, url) => {
  const days = p.int('stickiness_days', 0, 1);
  if (days === 0) invalidInput('stickiness_days', 'stickiness_days is required.', 'required');
  const q = trendsQueryOf(p);
  const series = pickSeries(q, p);
  const limit = p.int('limit', PAGE, 1, 10_000);
  const offset = p.int('offset', 0, 0);
  await rt.ingest.appliedEverywhere();
  const one: TrendsQuery = { ...q, series: [{ ...series, index: 0 }], compare: false };
  const testAccounts = () => (q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null);
  const { run, where } = await runOnChosenExecutor<{ values: Map<number, number | null> }>(rt,
    () => clickHouseStickinessGap(one, [one.properties, series.properties, testAccounts()]),
    () => runStickinessActorsOnClickHouse(rt, team, one, days, now),
    async () => {
      const counts = (await runStickiness(rt, team, one, now)).series[0]!.counts;
      const values = new Map<number, number | null>();
      for (let pid = 1; pid < counts.length; pid++) if (counts[pid] === days) values.set(pid, null);
      return { values };
    });
  const page = actorPage(rt, team, run.values, { offset, limit, search: p.string('search'), ranked: false });
  return { results: [{ people: page.people, count: page.people.length }], next: nextUrl(url, p, page.raw, offset, limit), ...where };
};
export const personsStickiness = actorsEndpoint(personsStickinessAnswer);
