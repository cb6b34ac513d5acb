/**
 * The plan of a HogQL query, as the planner (src/domain/hogql/planner.ts) makes it and the executor
 * (src/worker/query/hogql-exec.ts) runs it. Expressions here are resolved: every name is a column of an events scan
 * or of the input relation, every function known. Plain data, so the part of a plan that runs on every shard
 * (an events scan with its filter, grouping and aggregates) is sent to them as it is.
 */
import type { FilterNode } from '../analytics/property-filters.js';
import type { Type, Value } from './values.js';

/** A column of the events scan layout (src/stores/scan). */
export type EventColumn =
  | { c: 'uuid' }
  | { c: 'timestamp' }
  | { c: 'event' }
  | { c: 'distinct_id' }
  | { c: 'elements_chain' }
  /** The person the event counts for now (its ingestion-time person resolved through merges). */
  | { c: 'person_id' }
  /** The person's created_at as it was at the event (persons on events). */
  | { c: 'person_created_at' }
  | { c: 'prop'; key: string }
  /** A person property as it was right after the event (persons on events). */
  | { c: 'pprop'; key: string }
  | { c: 'properties' }
  | { c: 'person_properties' };

/**
 * A column an expression reads: of the events scan (`ev`) or of the input relation (`rel`). `src` (a column of one
 * FROM item), `agg` (an aggregate's result) and the `s` of `ev` (which FROM item) exist only while planning.
 */
export type ColumnRef = { k: 'ev'; col: EventColumn; s?: number } | { k: 'rel'; i: number } | { k: 'src'; s: number; i: number } | { k: 'agg'; i: number };

export type RExpr =
  | { k: 'const'; value: Value; type: Type; elem?: Type }
  | { k: 'col'; ref: ColumnRef; type: Type }
  | { k: 'call'; name: string; args: RExpr[] }
  /** A property filter tree (`{filters}`): evaluated over events only. */
  | { k: 'filter'; node: FilterNode; s?: number }
  /** A subquery whose values are needed (`x IN (SELECT …)`, or a scalar): run first, then replaced by a constant. */
  | { k: 'subquery'; plan: Plan; scalar: boolean };

export interface AggSpec {
  /** Canonical aggregate name (src/domain/hogql/aggregate-functions.ts). */
  name: string;
  args: RExpr[];
  params: Value[];
  /** The `-If` condition. */
  cond: RExpr | null;
}

export interface SortSpec {
  expr: RExpr;
  desc: boolean;
  nullsFirst: boolean;
}

export interface ColumnInfo {
  name: string;
  type: Type;
}

/** What an events scan computes on every shard: groups and their aggregate states, or rows. */
export interface EventsScan {
  /** Inclusive time bounds (epoch ms) the filter implies: blocks outside them are not read. */
  from: number;
  to: number;
  where: RExpr | null;
  aggregate: { keys: RExpr[]; aggs: AggSpec[] } | null;
  rows: { columns: RExpr[]; order: SortSpec[]; limit: number | null } | null;
}

export type Plan =
  | { k: 'scan'; scan: EventsScan; columns: ColumnInfo[] }
  | { k: 'table'; table: 'persons' | 'person_distinct_ids' | 'groups'; columns: ColumnInfo[] }
  | { k: 'values'; rows: Value[][]; columns: ColumnInfo[] }
  | { k: 'filter'; input: Plan; pred: RExpr; columns: ColumnInfo[] }
  | { k: 'aggregate'; input: Plan; keys: RExpr[]; aggs: AggSpec[]; columns: ColumnInfo[] }
  | { k: 'project'; input: Plan; exprs: RExpr[]; columns: ColumnInfo[] }
  | { k: 'sort'; input: Plan; order: SortSpec[]; columns: ColumnInfo[] }
  | { k: 'limit'; input: Plan; limit: number | null; offset: number; columns: ColumnInfo[] }
  | { k: 'distinct'; input: Plan; columns: ColumnInfo[] }
  | { k: 'join'; kind: 'INNER' | 'LEFT' | 'CROSS'; left: Plan; right: Plan; leftKeys: RExpr[]; rightKeys: RExpr[]; residual: RExpr | null; columns: ColumnInfo[] }
  | { k: 'union'; inputs: Plan[]; columns: ColumnInfo[] };

/** The type of every event column. */
export function eventColumnType(col: EventColumn): Type {
  switch (col.c) {
    case 'timestamp':
    case 'person_created_at':
      return 'DateTime';
    case 'uuid':
    case 'event':
    case 'distinct_id':
    case 'elements_chain':
      return 'String';
    case 'person_id':
      return 'Person';
    default:
      return 'JSON';
  }
}

/** Every RExpr of a plan node (not of its inputs), for rewriting passes. */
export function mapPlanExprs(p: Plan, fn: (e: RExpr) => RExpr): Plan {
  const agg = (a: AggSpec): AggSpec => ({ ...a, args: a.args.map(fn), cond: a.cond && fn(a.cond) });
  const sort = (s: SortSpec): SortSpec => ({ ...s, expr: fn(s.expr) });
  switch (p.k) {
    case 'scan': {
      const s = p.scan;
      return {
        ...p,
        scan: {
          ...s, where: s.where && fn(s.where),
          aggregate: s.aggregate && { keys: s.aggregate.keys.map(fn), aggs: s.aggregate.aggs.map(agg) },
          rows: s.rows && { ...s.rows, columns: s.rows.columns.map(fn), order: s.rows.order.map(sort) },
        },
      };
    }
    case 'filter':
      return { ...p, pred: fn(p.pred) };
    case 'aggregate':
      return { ...p, keys: p.keys.map(fn), aggs: p.aggs.map(agg) };
    case 'project':
      return { ...p, exprs: p.exprs.map(fn) };
    case 'sort':
      return { ...p, order: p.order.map(sort) };
    case 'join':
      return { ...p, leftKeys: p.leftKeys.map(fn), rightKeys: p.rightKeys.map(fn), residual: p.residual && fn(p.residual) };
    default:
      return p;
  }
}

/** Rebuilds an expression bottom-up through `fn`. */
export function mapRExpr(e: RExpr, fn: (e: RExpr) => RExpr): RExpr {
  if (e.k === 'call') return fn({ ...e, args: e.args.map((a) => mapRExpr(a, fn)) });
  return fn(e);
}
