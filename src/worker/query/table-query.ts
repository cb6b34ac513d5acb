/**
 * What the table kinds of the query API (EventsQuery, ActorsQuery) share: their lists of HogQL expressions, the
 * split of conditions into WHERE and HAVING, PostHog's default order, and the page (`limit`, default 100 and at
 * most 50,000, `offset`, and `hasMore` from one row more than the page).
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { aggregateOf } from '../../domain/hogql/aggregate-functions.js';
import { call, field, walk, type Expr, type OrderItem } from '../../domain/hogql/ast.js';
import { parseOrderExpression } from '../../domain/hogql/parser.js';
import { DEFAULT_ROWS, MAX_ROWS } from './hogql-kind.js';

/** A list of HogQL expression texts (`select`, `where`, `orderBy`). */
export function expressionTexts(value: unknown, attr: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) return invalidInput(attr, `${attr} must be a list of HogQL expressions (strings).`);
  return value as string[];
}

export function hasAggregate(e: Expr): boolean {
  let found = false;
  walk(e, (x) => {
    if (x.k === 'call' && aggregateOf(x.name, x.distinct === true)) found = true;
  });
  return found;
}

export const unaliased = (e: Expr): Expr => (e.k === 'alias' ? e.expr : e);

/**
 * The order PostHog gives a table kind: `orderBy` as written, else `count()` or the first aggregate descending,
 * else `newest` (descending) when that column is selected, else the first column ascending.
 */
export function tableOrder(orderBy: string[], raws: string[], columns: Expr[], newest: string): OrderItem[] {
  if (orderBy.length > 0) return orderBy.map((o) => parseOrderExpression(o));
  const aggregates = columns.filter((c) => hasAggregate(unaliased(c)));
  if (raws.includes('count()')) return [{ expr: call('count'), desc: true }];
  if (aggregates.length > 0) return [{ expr: unaliased(aggregates[0]!), desc: true }];
  if (raws.includes(newest)) return [{ expr: field(newest), desc: true }];
  return [{ expr: unaliased(columns[0]!), desc: false }];
}

/** The page a table kind asks for. */
export function pageOf(q: Record<string, unknown>): { limit: number; offset: number } {
  const limit = q.limit === undefined || q.limit === null ? DEFAULT_ROWS : Number(q.limit);
  const offset = q.offset === undefined || q.offset === null ? 0 : Number(q.offset);
  if (!Number.isInteger(limit) || limit < 1) invalidInput('limit', 'limit must be a positive whole number.');
  if (!Number.isInteger(offset) || offset < 0) invalidInput('offset', 'offset must be a whole number.');
  return { limit: Math.min(limit, MAX_ROWS), offset };
}
