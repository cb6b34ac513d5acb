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
 * Actors of an insight (`source`) are InsightActorsQuery's work, not this one's.
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
  if (q.source !== undefined && q.source !== null) invalidInput('source', 'ActorsQuery with a source (the actors of an insight) is not supported yet.');
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

registerQueryKind('ActorsQuery', (rt, query, ctx) => runActorsQuery(rt, query, ctx));
