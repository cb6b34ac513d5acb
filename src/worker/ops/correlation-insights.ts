/**
 * `/insights/funnel/correlation/` and `/persons/funnel/correlation/` (GET and POST): analytics.md §3.4-§3.5.
 * `events` correlates other event names with converting; `properties` the persons' current properties
 * (`funnel_correlation_names`, `$all` for every key). `event_with_properties` is refused for now. With
 * `QUILL_ANALYTICS=clickhouse` the insight's events are gathered on ClickHouse
 * (src/worker/analytics/correlation-clickhouse.ts), and so are the persons behind an entry.
 */
import { correlate, type CorrelationCounts } from '../../domain/analytics/correlation.js';
import { invalidInput } from '../../domain/analytics/errors.js';
import type { FilterParams } from '../../domain/analytics/filter-params.js';
import { clickHouseFunnelGap } from '../../domain/analytics/clickhouse/funnel-sql.js';
import { funnelMatchers, funnelsQueryOf, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { propertyText } from '../../domain/analytics/property-filters.js';
import { actorPage } from '../analytics/actors.js';
import { runCorrelation, type CorrelationRun } from '../analytics/correlation.js';
import { runCorrelationOnClickHouse } from '../analytics/correlation-clickhouse.js';
import { runOnChosenExecutor } from '../analytics/executor-choice.js';
import { queryContext } from '../analytics/query-context.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { answering, cached, encodeParams, normalisedKey, paramsOf } from './insights.js';
import type { OpHandler } from './types.js';
import { projectIdOf } from './types.js';

type CorrelationType = 'events' | 'properties';

function typeOf(p: FilterParams): CorrelationType {
  const type = p.string('funnel_correlation_type') ?? 'events';
  if (type === 'event_with_properties') invalidInput('funnel_correlation_type', 'event_with_properties correlation is not supported yet.');
  if (type !== 'events' && type !== 'properties') invalidInput('funnel_correlation_type', `Unknown funnel_correlation_type "${type}".`);
  return type;
}

function stringList(p: FilterParams, name: string): string[] {
  return p.list(name).filter((v): v is string => typeof v === 'string');
}

/** (key::value) of the persons' current properties, counted by converted / not. */
function propertyCounts(rt: WorkerRuntime, run: CorrelationRun, names: string[], exclude: string[]): Map<string, CorrelationCounts> {
  rt.persons.env.resetReadTxn();
  const all = names.includes('$all');
  const skip = new Set(exclude);
  const out = new Map<string, CorrelationCounts>();
  for (const [pid, converted] of run.partial.persons) {
    const row = run.person(pid);
    if (!row) continue;
    for (const key of all ? Object.keys(row.properties) : names) {
      if (skip.has(key) || !Object.hasOwn(row.properties, key)) continue;
      const name = `${key}::${propertyText(row.properties[key])}`;
      const c = out.get(name) ?? { success: 0, failure: 0 };
      if (converted) c.success++;
      else c.failure++;
      out.set(name, c);
    }
  }
  return out;
}

export const correlation: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  const q = funnelsQueryOf(p);
  if (q.steps.length < 2) invalidInput('events', 'Correlation needs a funnel of two steps or more.');
  const type = typeOf(p);
  const names = stringList(p, 'funnel_correlation_names');
  if (type === 'properties' && names.length === 0) invalidInput('funnel_correlation_names', 'Property correlation needs funnel_correlation_names.', 'required');
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const key = normalisedKey('correlation', p, [Math.floor(now / 3_600_000)]);
  const body = await cached(rt, team, key, p.bool('refresh'), async () => {
    const exclude = stringList(p, 'funnel_correlation_exclude_event_names');
    const personsOf = type === 'properties' ? '' : null;
    const { run, where } = await runOnChosenExecutor<CorrelationRun>(rt, () => correlationGap(rt, team, q, now),
      () => runCorrelationOnClickHouse(rt, team, q, now, exclude, personsOf), () => runCorrelation(rt, team, q, now, exclude, personsOf));
    const candidates = type === 'events'
      ? new Map([...run.partial.events].map(([name, [success, failure]]) => [name, { success, failure }]))
      : propertyCounts(rt, run, names, stringList(p, 'funnel_correlation_exclude_names'));
    const { entries, skewed } = correlate(candidates, run.partial.success, run.partial.failure);
    const base = Object.fromEntries(p.entries().filter(([k]) => k !== 'refresh'));
    const url = (name: string, converted: boolean) => {
      const person = type === 'events'
        ? { funnel_correlation_person_entity: { id: name, type: 'events' } }
        : { funnel_correlation_property_values: [{ key: name.split('::')[0], value: name.split('::').slice(1).join('::'), type: 'person', operator: 'exact' }] };
      return `/api/projects/${team}/persons/funnel/correlation/?${encodeParams({ ...base, ...person, funnel_correlation_person_converted: converted })}`;
    };
    return {
      result: {
        events: entries.map((e) => ({
          event: { event: e.name, properties: {}, elements: [] },
          success_count: e.success_count, success_people_url: url(e.name, true), failure_count: e.failure_count,
          failure_people_url: url(e.name, false), odds_ratio: e.odds_ratio, correlation_type: e.correlation_type,
        })),
        skewed,
      },
      ...where,
    };
  });
  return json(200, body);
});

/** Why ClickHouse cannot compute the correlation of `q` (null: it can). */
function correlationGap(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number): string | null {
  const testAccounts = q.filterTestAccounts ? queryContext(rt, team, now, []).testAccountFilters : null;
  // Correlation reads no breakdown: the funnel's own does not keep it from ClickHouse.
  return clickHouseFunnelGap({ ...q, breakdown: null }, [q.properties, ...funnelMatchers(q).map((m) => m.filter), testAccounts]);
}

export const personsCorrelation: OpHandler = (item, rt) => answering(async () => {
  const team = projectIdOf(item);
  const p = paramsOf(item, rt);
  const q = funnelsQueryOf(p);
  const entity = p.json('funnel_correlation_person_entity');
  const propertyValues = p.json('funnel_correlation_property_values');
  let event: string | null = null;
  if (entity && typeof entity === 'object' && !Array.isArray(entity) && typeof (entity as { id?: unknown }).id === 'string') event = (entity as { id: string }).id;
  else if (!Array.isArray(propertyValues)) invalidInput('funnel_correlation_person_entity', 'Give funnel_correlation_person_entity or funnel_correlation_property_values.', 'required');
  const limit = p.int('funnel_correlation_person_limit', 100, 1, 10_000);
  const offset = p.int('funnel_correlation_person_offset', 0, 0);
  const convertedParam = p.has('funnel_correlation_person_converted') ? p.bool('funnel_correlation_person_converted') : null;
  await rt.ingest.appliedEverywhere();
  const now = item.meta.now;
  const { run, where } = await runOnChosenExecutor<CorrelationRun>(rt, () => correlationGap(rt, team, q, now),
    () => runCorrelationOnClickHouse(rt, team, q, now, [], event ?? '', true), () => runCorrelation(rt, team, q, now, [], event ?? ''));
  let persons = run.partial.persons.filter(([, converted]) => convertedParam === null || converted === convertedParam);
  if (event === null) {
    rt.persons.env.resetReadTxn();
    const wanted = (propertyValues as { key?: unknown; value?: unknown }[]).map((v) => [String(v.key), String(v.value)] as const);
    persons = persons.filter(([pid]) => {
      const row = rt.persons.person(team, pid);
      return row !== undefined && wanted.every(([k, v]) => Object.hasOwn(row.properties, k) && propertyText(row.properties[k]) === v);
    });
  }
  const values = new Map<number, number | null>(persons.map(([pid]) => [pid, null]));
  const page = actorPage(rt, team, values, { offset, limit, search: p.string('search'), ranked: false });
  const url = `${item.meta.url}?`;
  const base = Object.fromEntries(p.entries().filter(([k]) => k !== 'funnel_correlation_person_offset'));
  return json(200, {
    results: [{ people: page.people, count: page.people.length }],
    next: page.raw > offset + limit ? `${url}${encodeParams({ ...base, funnel_correlation_person_offset: offset + limit })}` : null,
    initial: `${url}${encodeParams({ ...base, funnel_correlation_person_offset: 0 })}`,
    missing_persons: page.missing,
    is_cached: false,
    last_refresh: new Date().toISOString(),
    ...where,
  });
});
