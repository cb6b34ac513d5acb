/**
 * The syntax tree of a HogQL query (PostHog's SQL dialect over ClickHouse): what src/domain/hogql/parser.ts
 * produces and the planner reads. Operators are function calls under ClickHouse's names (`a = b` is
 * `equals(a, b)`, `a AND b` is `and(a, b)`, `INTERVAL 7 DAY` is `toIntervalDay(7)`), so every later stage deals
 * with one kind of node for all of them, as ClickHouse's own analyzer does. Plain data: a tree travels between
 * threads as it is.
 */
import type { FilterNode } from '../analytics/property-filters.js';

export type Literal = number | string | boolean | null;

export type Expr =
  | { k: 'const'; value: Literal }
  /** A name: `event`, `e.timestamp`, `properties.$browser`, `person.properties.plan`. */
  | { k: 'field'; chain: string[] }
  /** A function or operator; `params` are the first parentheses of a parametric aggregate (`quantile(0.9)(x)`). */
  | { k: 'call'; name: string; args: Expr[]; params?: Expr[]; distinct?: boolean }
  /** `*` (in `count(*)` and select lists), or `alias.*`. */
  | { k: 'star'; table?: string }
  /** `expr AS name` in a select list. */
  | { k: 'alias'; expr: Expr; alias: string }
  /** `{name}`: replaced before planning (`{filters}`, values of the request). */
  | { k: 'placeholder'; chain: string[] }
  /** `x IN (SELECT …)` and scalar subqueries. */
  | { k: 'subquery'; query: Query }
  /** A property filter tree (what `{filters}` turns into). */
  | { k: 'filter'; node: FilterNode };

export interface OrderItem {
  expr: Expr;
  desc: boolean;
  /** NULLS FIRST (the default, as in ClickHouse, is NULLS LAST in both directions). */
  nullsFirst?: boolean;
}

export interface TableRef {
  /** A table name (`events`, `persons`, `person_distinct_ids`, `groups`, or a CTE name) or a subquery. */
  table?: string;
  query?: Query;
  alias?: string;
}

export type JoinKind = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS';

export interface Join {
  kind: JoinKind;
  ref: TableRef;
  on: Expr | null;
}

export interface Select {
  k: 'select';
  /** `WITH name AS (SELECT …)`: named subqueries visible to this query and its subqueries. */
  ctes: { name: string; query: Query }[];
  distinct: boolean;
  columns: Expr[];
  from: TableRef | null;
  joins: Join[];
  where: Expr | null;
  groupBy: Expr[];
  having: Expr | null;
  orderBy: OrderItem[];
  limit: Expr | null;
  offset: Expr | null;
}

/** `SELECT … UNION ALL SELECT …`. */
export interface Union {
  k: 'union';
  selects: Query[];
}

export type Query = Select | Union;

export const call = (name: string, ...args: Expr[]): Expr => ({ k: 'call', name, args });
/** A call of a list of arguments of any length (spread into `call`, a list of 500,000 would overflow the stack). */
export const callOf = (name: string, args: Expr[]): Expr => ({ k: 'call', name, args });
export const constant = (value: Literal): Expr => ({ k: 'const', value });
export const field = (...chain: string[]): Expr => ({ k: 'field', chain });

/** The conjuncts of an `and(...)` tree (a single expression is its own only conjunct). */
export function conjuncts(e: Expr | null): Expr[] {
  if (e === null) return [];
  if (e.k === 'call' && e.name === 'and') return e.args.flatMap(conjuncts);
  return [e];
}

export function andOf(parts: Expr[]): Expr | null {
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : { k: 'call', name: 'and', args: parts };
}

/** Calls `fn` on every node of an expression, subqueries not entered. */
export function walk(e: Expr, fn: (e: Expr) => void): void {
  fn(e);
  switch (e.k) {
    case 'call':
      for (const a of e.args) walk(a, fn);
      for (const p of e.params ?? []) walk(p, fn);
      break;
    case 'alias':
      walk(e.expr, fn);
      break;
    default:
  }
}

/** Rebuilds an expression bottom-up through `fn` (which may return the node unchanged). */
export function mapExpr(e: Expr, fn: (e: Expr) => Expr): Expr {
  let next: Expr = e;
  if (e.k === 'call') next = { ...e, args: e.args.map((a) => mapExpr(a, fn)), ...(e.params ? { params: e.params.map((p) => mapExpr(p, fn)) } : {}) };
  else if (e.k === 'alias') next = { ...e, expr: mapExpr(e.expr, fn) };
  return fn(next);
}
