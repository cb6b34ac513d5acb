/**
 * Trends (analytics.md §1) as ClickHouse SQL, for `QUILL_ANALYTICS=clickhouse`: the same TrendsQuery the local
 * engine runs (src/domain/analytics/query.ts), one query per series. Pure: SQL text and parameters out.
 *
 * The SQL is not written here: each series is a small HogQL query over `events` (placeholders for every value,
 * property keys as escaped identifiers) printed by src/domain/hogql/clickhouse-printer.ts, so the team guard, the
 * parameters and Quill's property semantics are the printer's, not a second copy of them. Buckets are the local
 * engine's own bucket starts (`timestamp < start_k+1` → k), so weeks, months, hours and the project's time zone
 * (daylight saving included) are exactly Quill's, not ClickHouse's toStartOf… rules.
 */
import { printClickHouse, type PrintedClickHouse } from '../../hogql/clickhouse-printer.js';
import { elementConditionGap } from './element-conditions-sql.js';
import { hadActor } from './person-events.js';
import { parseQuery } from '../../hogql/parser.js';
import { isFilterGroup, type FilterNode } from '../property-filters.js';
import type { MathKind, SeriesNode, TrendsQuery } from '../query.js';

export interface TrendsSqlOptions {
  team: number;
  database: string;
  timeZone: string;
  now: number;
  /** Where events' current persons are looked up (ClickHousePrintOptions.personLookup). */
  personLookup?: 'overrides' | 'every_distinct_id';
  /** The dynamic cohorts the query's filters may name, as trees (ClickHousePrintOptions.cohorts). */
  cohorts?: ReadonlyMap<number, FilterNode | null>;
  /** The static cohorts they may name, as their members' uuids (ClickHousePrintOptions.staticCohorts). */
  staticCohorts?: ReadonlyMap<number, readonly string[] | null>;
}

/**
 * Maths computed on ClickHouse, each as a HogQL aggregate of one event's `x` (its numeric property). The printer
 * prints `uniq` as uniqExact and quantiles as quantileExactInclusive: exact, as the local engine counts.
 */
const AGGREGATES: Readonly<Partial<Record<MathKind, string>>> = {
  total: 'count()',
  dau: 'uniq(person_id)',
  // Distinct non-empty texts of the session id, as the local engine counts them (missing or '' is no session).
  unique_session: "uniq(nullIf(toString(properties.`$session_id`), ''))",
  sum: 'sum(toFloat(x))',
  avg: 'avg(toFloat(x))',
  min: 'min(toFloat(x))',
  max: 'max(toFloat(x))',
  median: 'median(toFloat(x))',
  p75: 'quantile(0.75)(toFloat(x))',
  p90: 'quantile(0.9)(toFloat(x))',
  p95: 'quantile(0.95)(toFloat(x))',
  p99: 'quantile(0.99)(toFloat(x))',
};

/** Per-actor maths: an aggregate of `c`, each person's event count in a bucket (persons with no event not counted). */
const PER_ACTOR: Readonly<Partial<Record<MathKind, string>>> = {
  avg_count_per_actor: 'avg(c)',
  min_count_per_actor: 'min(c)',
  max_count_per_actor: 'max(c)',
  median_count_per_actor: 'median(c)',
  p75_count_per_actor: 'quantile(0.75)(c)',
  p90_count_per_actor: 'quantile(0.9)(c)',
  p95_count_per_actor: 'quantile(0.95)(c)',
  p99_count_per_actor: 'quantile(0.99)(c)',
};

/** Rolling active users: the persons active in the trailing days of each point (src/worker/analytics/trends.ts). */
export const ROLLING_ACTIVE: ReadonlySet<MathKind> = new Set(['weekly_active', 'monthly_active']);

/** The HogQL aggregate of a series' math over its events (`x` its numeric property), undefined when it has none. */
function aggregateFor(s: SeriesNode): string | undefined {
  // Distinct non-empty texts of the group key, as unique sessions (the index is a validated 0-4, not user text).
  if (s.math === 'unique_group') return `uniq(nullIf(toString(properties.\`$group_${Number(s.mathGroupTypeIndex)}\`), ''))`;
  return AGGREGATES[s.math];
}

/** Whether ClickHouse computes a math (the rolling and per-actor ones by their own query shapes). */
function computesMath(s: SeriesNode): boolean {
  return aggregateFor(s) !== undefined || PER_ACTOR[s.math] !== undefined || ROLLING_ACTIVE.has(s.math);
}

/** Filter operators the printer's filter code reads as Quill's engine does. */
const OPERATORS = new Set([
  'is_set', 'is_not_set', 'exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'is_date_exact', 'is_date_after', 'is_date_before',
]);

/**
 * Why a trends query cannot run on ClickHouse yet (null: it can). What is not built yet is answered by the local
 * engine rather than approximated: a fallback costs time, a wrong number costs trust.
 */
export function clickHouseTrendsGap(q: TrendsQuery, filters: readonly (FilterNode | null)[]): string | null {
  const gap = eventSeriesGap(q, filters);
  if (gap !== null) return gap;
  for (const s of q.series) if (!computesMath(s)) return `math ${s.math} is not computed on ClickHouse yet`;
  const groupBreakdown = q.breakdown?.type === 'group' && q.breakdown.groupTypeIndex !== null;
  // A cohort breakdown is a series per cohort, each filtered by its cohort's leaf (printed like a cohort filter).
  const cohortBreakdown = q.breakdown?.type === 'cohort';
  if (q.breakdown && !propertyBreakdown(q.breakdown.type) && !groupBreakdown && !cohortBreakdown) return `${q.breakdown.type} breakdowns are not computed on ClickHouse yet`;
  return null;
}

/**
 * Whose property a breakdown reads on ClickHouse: the event's (properties) or the person's as it was at the event
 * (person_properties, the snapshot the event was applied with: src/stores/persons/event-snapshots.ts), the column
 * the local engine's scans read for each; in trends, also the event's group of type N as it is now (`group_N`: the
 * groups table's latest row for its `$group_N`, as the local engine reads it). A cohort breakdown reads no property:
 * it is a series per cohort (src/worker/analytics/trends-clickhouse.ts).
 */
export type PropertyOwner = 'event' | 'person' | `group_${number}`;

/** Whether a breakdown type is a property breakdown ClickHouse computes (event or person property). */
export function propertyBreakdown(type: string): type is PropertyOwner {
  return type === 'event' || type === 'person';
}

/** Whose property a property breakdown of this type (and group type index, for groups) reads. */
export function ownerOf(type: string, groupTypeIndex: number | null = null): PropertyOwner {
  return type === 'person' ? 'person' : type === 'group' && groupTypeIndex !== null ? `group_${groupTypeIndex}` : 'event';
}

/**
 * What every series query on ClickHouse (trends, stickiness, lifecycle) needs: filters it reads as the local engine
 * does (null: they are). An action series is a filter tree of its steps (src/domain/analytics/action-filter.ts) in
 * the series' properties, so an action is computed when its steps' conditions are.
 */
export function eventSeriesGap(q: TrendsQuery, filters: readonly (FilterNode | null)[]): string | null {
  for (const f of filters) {
    const gap = f ? filterGap(f) : null;
    if (gap) return gap;
  }
  return null;
}

/** Why a filter (the tree of a query's event filters) cannot be applied on ClickHouse yet (null: it can). */
export function filterGap(node: FilterNode): string | null {
  if (isFilterGroup(node)) {
    for (const c of node.children) {
      const gap = filterGap(c);
      if (gap) return gap;
    }
    return null;
  }
  if (node.type === 'event_name') return node.operator === 'exact' ? null : `the event name operator ${node.operator} is not computed on ClickHouse yet`;
  // Conditions on the autocapture chain (an action step's selector, tag, href, text): printed over elements_chain
  // as the local engine parses and matches it (element-conditions-sql.ts), but for the sub-cases it names.
  if (node.type === 'element') return elementConditionGap(node);
  // Person properties are read at the event (person_properties): the export writes the snapshot each event was
  // applied with (src/stores/persons/event-snapshots.ts), the one the local engine's column blocks keep, so a later
  // $set or a merge changes neither engine's answer.
  // Group properties are the event's group as held now (the groups table's latest row), as the local engine reads them.
  // A dynamic cohort is its tree of person property filters, printed in its place, and a static one its members'
  // uuids; one past the bound of members a query carries (or one the query's context does not hold) is found out
  // while printing, and answered by the local engine (NotPrintable).
  if (node.type === 'cohort') return null;
  if (node.type !== 'event' && node.type !== 'person' && node.type !== 'group') return `${node.type} filters are not computed on ClickHouse yet`;
  if (!OPERATORS.has(node.operator)) return `the filter operator ${node.operator} is not computed on ClickHouse yet`;
  return null;
}

/** A HogQL identifier for any text (a property key), backquoted with its quotes and backslashes escaped. */
export function hogqlIdentifier(name: string): string {
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/** Which rows one series query returns: per bucket (and breakdown value), or event counts per breakdown value. */
export type SeriesSqlShape =
  | {
    kind: 'buckets';
    breakdown: { property: string; of: PropertyOwner; only: string[] } | null;
    /** Unique users counted in the first bucket each is seen in (cumulative unique users: a running sum of these). */
    firstSeen?: boolean;
  }
  | { kind: 'breakdown_counts'; property: string; of: PropertyOwner };

/**
 * One series over buckets `starts` (epoch ms, ascending; events in [from, to], `to` inclusive). Columns: for
 * `buckets`, [breakdown value if any] bucket index, value; for `breakdown_counts`, breakdown value, event count.
 * A breakdown value is the property's text ('' when missing), as the local engine keys it.
 */
export function trendsSeriesSql(
  s: SeriesNode, filter: FilterNode | null, starts: readonly number[], from: number, to: number, shape: SeriesSqlShape, opts: TrendsSqlOptions,
): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(from), to: new Date(to) };
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}'];
  if (s.event !== null) {
    values.event = s.event;
    where.push('event = {event}');
  }
  // Unique users count persons: an event ingested without a person counts for none, as on the local engine. The
  // breakdown values are ranked by event count whatever the math, those events included, as there too.
  if (shape.kind === 'buckets' && (s.math === 'dau' || PER_ACTOR[s.math] !== undefined)) where.push(hadActor(values));
  const breakdownOf = shape.kind === 'buckets' ? shape.breakdown : shape;
  const breakdown = breakdownOf === null ? null : breakdownValue(breakdownOf.property, values, 'null', 'breakdown_key', breakdownOf.of);
  const select: string[] = [];
  const groupBy: string[] = [];
  if (breakdown !== null) {
    select.push(`${breakdown} AS breakdown`);
    groupBy.push('breakdown');
  }
  if (shape.kind === 'breakdown_counts') {
    select.push('count() AS value');
  } else {
    select.push(`${bucketExpr(starts, values)} AS bucket`);
    groupBy.push('bucket');
    if (PER_ACTOR[s.math] !== undefined) {
      // Each person's events per bucket (and breakdown value) here, the math over those counts around it.
      select.push('person_id', 'count() AS c');
      groupBy.push('person_id');
    } else {
      const aggregate = aggregateFor(s);
      if (aggregate === undefined) throw new Error(`internal: math ${s.math} on ClickHouse`);
      select.push(`${aggregate.replace('(x)', `(properties.${hogqlIdentifier(s.mathProperty ?? '')})`)} AS value`);
    }
    if (shape.breakdown !== null) {
      values.only = shape.breakdown.only;
      where.push(shape.breakdown.only.length === 0 ? 'false' : `${breakdown} IN {only}`);
    }
  }
  const perActor = shape.kind === 'buckets' ? PER_ACTOR[s.math] : undefined;
  let text = `SELECT ${select.join(', ')} FROM events WHERE ${where.join(' AND ')} GROUP BY ${groupBy.join(', ')}`;
  if (perActor !== undefined) {
    const keys = breakdown !== null ? 'breakdown, ' : '';
    text = `SELECT ${keys}bucket, ${perActor} AS value FROM (${text}) GROUP BY ${keys}bucket`;
  }
  if (shape.kind === 'buckets' && shape.firstSeen === true) {
    // Per person (and breakdown value) the first bucket, then persons per first bucket.
    const keys = breakdown !== null ? 'breakdown, ' : '';
    const firsts = `SELECT ${breakdown !== null ? `${breakdown} AS breakdown, ` : ''}person_id, min(${bucketExpr(starts, values)}) AS bucket FROM events WHERE ${where.join(' AND ')} GROUP BY ${keys}person_id`;
    text = `SELECT ${keys}bucket, count() AS value FROM (${firsts}) GROUP BY ${keys}bucket`;
  }
  const columns = [
    ...(breakdown !== null ? [{ name: 'breakdown', type: 'String' as const }] : []),
    ...(shape.kind === 'buckets' ? [{ name: 'bucket', type: 'Int' as const }] : []),
    { name: 'value', type: 'Float' as const },
  ];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter });
}

/**
 * The persons behind one trends point (`/persons/trends/`): rows (person_id, events), each person with an event of
 * series `s` in [from, to] passing `filter` (the point's breakdown value is a filter leaf of it, as the local engine
 * makes it), and how many, the local engine's `actor_counts`. Whatever the series' math, a point's persons are
 * valued by their event count, as locally. Events ingested without a person belong to no one.
 */
export function trendsActorsSql(s: SeriesNode, filter: FilterNode | null, from: number, to: number, opts: TrendsSqlOptions): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(from), to: new Date(to) };
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}', hadActor(values)];
  if (s.event !== null) {
    values.event = s.event;
    where.push('event = {event}');
  }
  const text = `SELECT person_id, count() AS value FROM events WHERE ${where.join(' AND ')} GROUP BY person_id`;
  const columns = [{ name: 'person_id', type: 'Person' as const }, { name: 'value', type: 'Int' as const }];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter });
}

/**
 * Rolling active users (weekly_active, monthly_active) over state buckets `stateStarts`: point k counts the persons
 * with an event in the state buckets `windows[k]` (contiguous, ascending; src/worker/analytics/trends.ts
 * seriesRange). One row per breakdown value (one row without): [breakdown,] then one column `v{k}` per point. HogQL
 * has no ARRAY JOIN to send a (person, bucket) row to every window holding it, so one row per person counts its
 * events in each point's window, and a point counts the persons with any: one scan, two aggregates per point. (A
 * distinct count per point over the distinct (person, bucket) pairs held both sets at once: past 1 GB for weekly
 * active users per day at 10M events.)
 */
export function rollingActiveSql(
  s: SeriesNode, filter: FilterNode | null, stateStarts: readonly number[], windows: readonly (readonly number[])[], from: number, to: number,
  breakdown: { property: string; of: PropertyOwner; only: string[] } | null, opts: TrendsSqlOptions,
): PrintedClickHouse {
  const values: Record<string, unknown> = { from: new Date(from), to: new Date(to) };
  const where = ['timestamp >= {from}', 'timestamp <= {to}', '{filters}', hadActor(values)];
  if (s.event !== null) {
    values.event = s.event;
    where.push('event = {event}');
  }
  const key = breakdown === null ? null : breakdownValue(breakdown.property, values, 'null', 'breakdown_key', breakdown.of);
  if (breakdown !== null) {
    values.only = breakdown.only;
    where.push(breakdown.only.length === 0 ? 'false' : `${key} IN {only}`);
  }
  const active = `SELECT ${key !== null ? `${key} AS breakdown, ` : ''}person_id, ${bucketExpr(stateStarts, values)} AS bucket FROM events WHERE ${where.join(' AND ')}`;
  const inWindow = windows.map((w, k) => (w.length === 0 ? `0 AS e${k}` : `countIf(bucket >= ${w[0]!} AND bucket <= ${w[w.length - 1]!}) AS e${k}`));
  const perPerson = `SELECT ${key !== null ? 'breakdown, ' : ''}person_id, ${inWindow.join(', ')} FROM (${active}) GROUP BY ${key !== null ? 'breakdown, ' : ''}person_id`;
  const points = windows.map((_, k) => `countIf(e${k} > 0) AS v${k}`);
  const text = `SELECT ${key !== null ? 'breakdown, ' : ''}${points.join(', ')} FROM (${perPerson})${key !== null ? ' GROUP BY breakdown' : ''}`;
  const columns = [
    ...(key !== null ? [{ name: 'breakdown', type: 'String' as const }] : []),
    ...windows.map((_, k) => ({ name: `v${k}`, type: 'Int' as const })),
  ];
  return printClickHouse(parseQuery(text), columns, { ...opts, values, filters: null, filterTree: filter });
}

/**
 * The breakdown value of an event as the local engine keys it (propertyText): '' when missing, a string as itself,
 * anything else as its JSON text. A JSON null is 'null' in trends and retention; the sequence analyses (funnels)
 * read it as missing, and pass `jsonNull: ''`. `properties.key` reads null and missing alike, so the raw JSON is
 * read instead. `key` names the placeholder of the property's name (a query reading two properties needs two);
 * `of`: the event's property, or the person's at the event.
 */
export function breakdownValue(
  property: string, values: Record<string, unknown>, jsonNull: 'null' | '' = 'null', key = 'breakdown_key', of: PropertyOwner = 'event',
): string {
  values[key] = property;
  // An event without a group (or of one never stored) has no group properties (NULL through the join): no value.
  const properties = of === 'event' ? 'properties' : of === 'person' ? 'person.properties' : `coalesce(${of}.properties, '')`;
  const raw = `JSONExtractRaw(${properties}, {${key}})`;
  // ClickHouse prints a number's exponent without JavaScript's '+' (1e21, not 1e+21).
  const number = `replaceRegexpOne(${raw}, 'e([0-9])', 'e+\\\\1')`;
  // The properties' JSON is parsed once, for the raw value: every test and the string's decoding read that small raw
  // text (a missing key's raw is ''). Three parses of it per event were most of a breakdown's cost at 10M events.
  return `multiIf(${raw} = '', '', ${raw} = 'null', '${jsonNull}', startsWith(${raw}, '"'), JSONExtractString(${raw}), match(${raw}, '^-?[0-9]'), ${number}, ${raw})`;
}

/**
 * The bucket index of an event: the last start at or before its timestamp (or the time `column` names); the starts
 * become parameters in `values`.
 */
export function bucketExpr(starts: readonly number[], values: Record<string, unknown>, column = 'timestamp'): string {
  if (starts.length <= 1) return '0';
  const arms: string[] = [];
  for (let k = 1; k < starts.length; k++) {
    values[`b${k}`] = new Date(starts[k]!);
    arms.push(`${column} < {b${k}}, ${k - 1}`);
  }
  return `multiIf(${arms.join(', ')}, ${starts.length - 1})`;
}
