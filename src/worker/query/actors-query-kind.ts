/**
 * `ActorsQuery` without a source: PostHog's table of persons (its schema's `ActorsQuery`), a HogQL SELECT over
 * `persons` answered by the HogQL engine as PostHog's runner builds it:
 *   - `select` (default `person`, `id`, `person.$delete`): `person` is the person as an object (`id` its uuid,
 *     `properties`, `is_identified`, `created_at`, `distinct_ids`), `person.$delete` a constant 1, anything else a
 *     HogQL expression over `persons`; with an aggregate among them, the others become the GROUP BY;
 *   - `search`: the email or name property, the uuid or a distinct id containing the text (case-insensitively);
 *   - `properties` and `fixedProperties`: person property filters;
 *   - `orderBy` (`person` orders by the email), by default as PostHog (`created_at` newest first when selected);
 *   - `limit` (default 100) and `offset`, with `hasMore`.
 * With a `source` (an InsightActorsQuery: the persons modal of an insight) the rows are that query's actors, paged
 * and searched by this one, with the columns of `select` taken from each actor (insightActorsTable).
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { isFilterGroup, parseFilters, type FilterNode } from '../../domain/analytics/property-filters.js';
import { andOf, call, constant, field, type Expr, type OrderItem, type Select } from '../../domain/hogql/ast.js';
import { unsupported } from '../../domain/hogql/errors.js';
import { parseExpression } from '../../domain/hogql/parser.js';
import { printQuery } from '../../domain/hogql/print.js';
import { typeName } from '../../domain/hogql/values.js';
import type { WorkerRuntime } from '../runtime.js';
import { runQueryAst } from './hogql-kind.js';
import { runInsightActors } from './insight-actors-kind.js';
import { registerQueryKind, type QueryContext } from './runners.js';
import { expressionTexts, hasAggregate, pageOf, tableOrder, unaliased } from './table-query.js';

const DEFAULT_SELECT = ['person', 'id', 'person.$delete'];

/** A person property filter tree over `persons` (its leaves decided by `$propertyFilter`). */
function personFilter(node: FilterNode): Expr {
  if (isFilterGroup(node)) {
    const parts = node.children.map(personFilter);
    return parts.length === 1 ? parts[0]! : call(node.and ? 'and' : 'or', ...parts);
  }
  if (node.type !== 'person') unsupported(`A ${node.type} filter in an ActorsQuery`, 'Only person property filters apply to persons.');
  return call('$propertyFilter', field('properties', node.key), constant(JSON.stringify(node)));
}

function searchCondition(text: string): Expr {
  const like = constant(`%${text.replace(/[\\%_]/g, '\\$&')}%`);
  return call('or',
    call('ilike', call('toString', field('properties', 'email')), like),
    call('ilike', call('toString', field('properties', 'name')), like),
    call('ilike', call('toString', field('id')), like),
    call('in', field('id'), { k: 'subquery', query: { k: 'select', ctes: [], distinct: false, columns: [field('person_id')], from: { table: 'person_distinct_ids' }, joins: [], where: call('ilike', field('distinct_id'), like), groupBy: [], having: null, orderBy: [], limit: null, offset: null } }));
}

async function runActorsQuery(rt: WorkerRuntime, q: Record<string, unknown>, ctx: QueryContext): Promise<Record<string, unknown>> {
  if (q.source !== undefined && q.source !== null) return insightActorsTable(rt, q, ctx);
  const selected = expressionTexts(q.select, 'select');
  const raws = selected.length === 0 ? DEFAULT_SELECT : selected;
  const columns = raws.map((raw) => (raw === 'person' ? field('id') : raw === 'person.$delete' ? constant(1) : parseExpression(raw)));
  const aggregated = columns.some((c) => hasAggregate(unaliased(c)));
  const conditions: Expr[] = [];
  for (const [attr, raw] of [['properties', q.properties], ['fixedProperties', q.fixedProperties]] as const) {
    const tree = parseFilters(raw ?? null, attr);
    if (tree) conditions.push(personFilter(tree));
  }
  if (typeof q.search === 'string' && q.search !== '') conditions.push(searchCondition(q.search));
  const orderRaw = expressionTexts(q.orderBy, 'orderBy');
  const byPerson = orderRaw.length === 1 && ['person', 'person ASC', 'person DESC'].includes(orderRaw[0]!);
  const orderBy: OrderItem[] = byPerson ? [{ expr: field('properties', 'email'), desc: orderRaw[0] === 'person DESC' }] : tableOrder(orderRaw, raws, columns, 'created_at');
  const { limit, offset } = pageOf(q);
  const select: Select = {
    k: 'select', ctes: [], distinct: false, columns, from: { table: 'persons' }, joins: [],
    where: andOf(conditions.filter((c) => !hasAggregate(c))),
    groupBy: aggregated ? columns.filter((c) => !hasAggregate(unaliased(c)) && c.k !== 'const').map(unaliased) : [],
    having: andOf(conditions.filter(hasAggregate)),
    orderBy, limit: constant(limit + 1), offset: offset > 0 ? constant(offset) : null,
  };
  const ran = await runQueryAst(rt, select, ctx, { filters: null, values: {} });
  const rows = ran.rows.slice(0, limit);
  const personAt = raws.indexOf('person');
  let missing: number | null = null;
  if (personAt >= 0) {
    rt.persons.env.resetReadTxn();
    missing = 0;
    for (const row of rows) {
      const uuid = row[personAt];
      const person = typeof uuid === 'string' ? rt.persons.personByUuid(ctx.team, uuid) : undefined;
      if (!person) missing++;
      row[personAt] = person
        ? { id: person.uuid, properties: person.properties, is_identified: person.is_identified, created_at: person.created_at, distinct_ids: person.distinct_ids }
        : { id: uuid };
    }
  }
  return {
    results: rows,
    columns: raws,
    types: ran.columns.map((c) => typeName(c.type, ran.timeZone)),
    hogql: printQuery(select),
    hasMore: ran.rows.length > limit,
    limit,
    offset,
    missing_actors_count: missing,
    timings: ran.timings,
    modifiers: {},
  };
}

/** The columns an ActorsQuery over an insight's actors can select, read from the actor row `[person, value?]`. */
const ACTOR_COLUMNS: Record<string, { type: string; of: (row: unknown[]) => unknown }> = {
  person: { type: 'Person', of: (r) => r[0] },
  actor: { type: 'Person', of: (r) => r[0] },
  id: { type: 'String', of: (r) => (r[0] as Record<string, unknown>).uuid ?? (r[0] as Record<string, unknown>).id },
  distinct_id: { type: 'String', of: (r) => ((r[0] as Record<string, unknown>).distinct_ids as string[] | undefined)?.[0] ?? null },
  created_at: { type: 'DateTime', of: (r) => (r[0] as Record<string, unknown>).created_at },
  event_count: { type: 'UInt64', of: (r) => (typeof r[1] === 'number' ? r[1] : null) },
  appearances: { type: 'Array(UInt8)', of: (r) => (Array.isArray(r[1]) ? r[1] : null) },
  'person.$delete': { type: 'UInt8', of: () => 1 },
};

async function insightActorsTable(rt: WorkerRuntime, q: Record<string, unknown>, ctx: QueryContext): Promise<Record<string, unknown>> {
  const source = q.source as Record<string, unknown>;
  if (typeof source !== 'object' || source.kind !== 'InsightActorsQuery') invalidInput('source', 'The source of an ActorsQuery is an InsightActorsQuery.');
  const selected = expressionTexts(q.select, 'select');
  const raws = selected.length === 0 ? ['actor'] : selected;
  for (const raw of raws) if (!ACTOR_COLUMNS[raw]) invalidInput('select', `"${raw}" is not a column of an insight's actors; choose from ${Object.keys(ACTOR_COLUMNS).join(', ')}.`);
  const { limit, offset } = pageOf(q);
  const inner = await runInsightActors(rt, source, ctx, { limit, offset, search: typeof q.search === 'string' && q.search !== '' ? q.search : null });
  return {
    ...inner,
    results: (inner.results as unknown[][]).map((row) => raws.map((raw) => ACTOR_COLUMNS[raw]!.of(row))),
    columns: raws,
    types: raws.map((raw) => ACTOR_COLUMNS[raw]!.type),
  };
}

registerQueryKind('ActorsQuery', (rt, query, ctx) => runActorsQuery(rt, query, ctx));
