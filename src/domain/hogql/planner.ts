/**
 * From a parsed HogQL query to a plan (src/domain/hogql/plan.ts): names resolved against the tables, placeholders
 * replaced, aggregates extracted, and as much as possible pushed into the events scan that runs on every shard.
 *
 * Tables: `events` (the scan layout: `event`, `timestamp`, `distinct_id`, `elements_chain`, `person_id`,
 * `properties.<key>`, and the event's person as it was then, `person.properties.<key>` and `person.created_at`:
 * persons on events), `persons` (current rows), `person_distinct_ids`, `groups`, subqueries and `WITH` names.
 *
 * Two shapes of plan:
 *   - a SELECT over events alone (joins to `persons` on the person id, or to `person_distinct_ids` on the distinct
 *     id, read the current person of each event by lookup, so they count as "alone") runs its WHERE, GROUP BY and
 *     aggregates on every shard, and its ORDER BY + LIMIT too when it does not aggregate; the coordinator merges
 *     the partial states or rows and finishes (HAVING, ORDER BY, LIMIT, the final projection);
 *   - anything else (other joins, subqueries in FROM, other tables) materialises its inputs as relations (an events
 *     input with the conditions that concern it alone applied on the shards, and only the columns the query reads)
 *     and runs the rest in memory on the coordinating worker.
 */
import { parseFilters, type FilterGroup, type FilterNode } from '../analytics/property-filters.js';
import { aggregateOf } from './aggregate-functions.js';
import { conjuncts, type Expr, type Join, type Query, type Select, type TableRef } from './ast.js';
import { GROUP_FIELDS, PERSON_FIELDS } from './bind.js';
import { hogqlError, unsupported } from './errors.js';
import { filtersDateBound } from './filters-date.js';
import { FUNCTIONS, REFUSED_FUNCTIONS, scalarFunction } from './functions.js';
import { eventColumnType, mapRExpr, type AggSpec, type ColumnInfo, type ColumnRef, type EventColumn, type Plan, type RExpr, type SortSpec } from './plan.js';
import { printExpr } from './print.js';
import { dateTimeOf, type Type, type Value, type ValueContext } from './values.js';

export interface PlanOptions {
  team: number;
  timeZone: string;
  now: number;
  /** The request's `filters` (what `{filters}` stands for). */
  filters: Record<string, unknown> | null;
  /** The request's `values` (what other `{placeholders}` stand for). */
  values: Record<string, unknown>;
  testAccountFilters: FilterGroup | null;
}

export interface Planned {
  plan: Plan;
  /** Property filter trees the plan evaluates (their cohorts must be sent to the shards). */
  filterTrees: FilterNode[];
}

export function planQuery(q: Query, opts: PlanOptions): Planned {
  const planner = new Planner(opts);
  return { plan: planner.query(q, new Map()), filterTrees: planner.filterTrees };
}

const TABLE_HINT = 'Quill answers events, persons, person_distinct_ids and groups.';
const COMPARISONS = new Set(['equals', 'notEquals', 'less', 'greater', 'lessOrEquals', 'greaterOrEquals']);

/** A FROM item as names resolve against it. */
interface Source {
  s: number;
  name: string;
  kind: 'events' | 'rel' | 'lookup';
  /** Relation sources: their plan and columns. */
  plan: Plan | null;
  columns: ColumnInfo[];
  resolve(chain: string[]): RExpr | null;
  star(): string[][];
  /** Events sources: conditions run on the shards, and the columns read (materialised in a join). */
  pushed: RExpr[];
  leaves: RExpr[];
}

interface Scope {
  sources: Source[];
  aliases: Map<string, Expr>;
  expanding: Set<string>;
  ctes: Map<string, Query>;
  /** Where aggregates of this clause go; null where they are not allowed. */
  aggs: AggSpec[] | null;
  clause: string;
  inAggregate: boolean;
}

const ev = (col: EventColumn, s: number): RExpr => ({ k: 'col', ref: { k: 'ev', col, s }, type: eventColumnType(col) });
const str = (value: string): RExpr => ({ k: 'const', value, type: 'String' });
const get = (e: RExpr, keys: string[]): RExpr => keys.reduce<RExpr>((acc, key) => ({ k: 'call', name: '$get', args: [acc, str(key)] }), e);
const callR = (name: string, ...args: RExpr[]): RExpr => ({ k: 'call', name, args });
const TRUE: RExpr = { k: 'const', value: true, type: 'Bool' };

function literalType(v: unknown): Type {
  if (v === null) return 'Null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'Int' : 'Float';
  if (typeof v === 'boolean') return 'Bool';
  if (typeof v === 'string') return 'String';
  return 'JSON';
}

const exprKey = (e: RExpr) => JSON.stringify(e);

/** The type of a resolved expression. */
export function typeOf(e: RExpr): Type {
  switch (e.k) {
    case 'const':
    case 'col':
      return e.type;
    case 'filter':
      return 'Bool';
    case 'subquery':
      return e.scalar ? e.plan.columns[0]?.type ?? 'Null' : 'Array';
    case 'call': {
      if (e.name === 'in' || e.name === 'notIn') return 'Bool';
      if (e.name === '$personField') return PERSON_FIELDS[(e.args[1] as { value: string }).value] ?? 'JSON';
      if (e.name === '$groupField') return GROUP_FIELDS[(e.args[2] as { value: string }).value] ?? 'JSON';
      return FUNCTIONS[e.name]!.type(e.args.map(typeOf));
    }
  }
}

/** Refs of an expression, for deciding where it can run. */
function refsOf(e: RExpr, out: { ev: Set<number>; src: Set<number>; agg: boolean; other: boolean } = { ev: new Set(), src: new Set(), agg: false, other: false }) {
  mapRExpr(e, (x) => {
    if (x.k === 'col') {
      if (x.ref.k === 'ev') out.ev.add(x.ref.s ?? -1);
      else if (x.ref.k === 'src') out.src.add(x.ref.s);
      else if (x.ref.k === 'agg') out.agg = true;
      else out.other = true;
    }
    if (x.k === 'filter') out.ev.add(x.s ?? -1);
    return x;
  });
  return out;
}

/** Sources an expression reads (events columns and relation columns alike). */
function sourcesOf(e: RExpr): Set<number> {
  const r = refsOf(e);
  return new Set([...r.ev, ...r.src]);
}

class Planner {
  readonly filterTrees: FilterNode[] = [];
  /** The WITH queries being planned where they are used. */
  private readonly expanding = new Set<Query>();
  private readonly valueCtx: ValueContext;

  constructor(private readonly opts: PlanOptions) {
    const none = (): never => {
      throw new Error('internal: persons are not read while planning');
    };
    this.valueCtx = { timeZone: opts.timeZone, now: opts.now, personUuid: none, personOfUuid: none, person: none, group: none };
  }

  query(q: Query, ctes: Map<string, Query>): Plan {
    return q.k === 'union' ? this.union(q.selects, ctes) : this.select(q, ctes);
  }

  private union(selects: Query[], ctes: Map<string, Query>): Plan {
    const inputs = selects.map((s) => this.query(s, ctes));
    const width = inputs[0]!.columns.length;
    if (inputs.some((p) => p.columns.length !== width)) hogqlError('The queries of a UNION ALL must return the same number of columns.');
    const types = inputs[0]!.columns.map((c, i) => (inputs.every((p) => p.columns[i]!.type === c.type) ? c.type : 'String'));
    const columns = inputs[0]!.columns.map((c, i) => ({ name: c.name, type: types[i]! }));
    const aligned = inputs.map((p): Plan => {
      if (p.columns.every((c, i) => c.type === types[i])) return p;
      const exprs = p.columns.map((c, i): RExpr => {
        const col: RExpr = { k: 'col', ref: { k: 'rel', i }, type: c.type };
        return c.type === types[i] ? col : callR('toString', col);
      });
      return { k: 'project', input: p, exprs, columns };
    });
    return { k: 'union', inputs: aligned, columns };
  }

  // ---- FROM

  private source(ref: TableRef, s: number, ctes: Map<string, Query>): Source {
    const base = { s, pushed: [] as RExpr[], leaves: [] as RExpr[] };
    if (ref.query || (ref.table !== undefined && ctes.has(ref.table))) {
      const cte = ref.query ? undefined : ctes.get(ref.table!)!;
      // A WITH name reached again while planning itself would recurse without end.
      if (cte && this.expanding.has(cte)) hogqlError(`WITH ${ref.table} refers to itself: recursive WITH is not supported.`);
      if (cte) this.expanding.add(cte);
      let plan: Plan;
      try {
        plan = this.query(ref.query ?? cte!, ctes);
      } finally {
        if (cte) this.expanding.delete(cte);
      }
      const name = ref.alias ?? ref.table ?? '';
      return { ...base, name, kind: 'rel', plan, columns: plan.columns, resolve: relationResolver(plan.columns, s), star: () => plan.columns.map((c) => [c.name]) };
    }
    const table = ref.table!;
    const name = ref.alias ?? table;
    switch (table) {
      case 'events':
        return { ...base, name, kind: 'events', plan: null, columns: [], resolve: (chain) => this.eventField(chain, s), star: () => EVENT_STAR.map((c) => [c]) };
      case 'persons': {
        const columns: ColumnInfo[] = [
          { name: 'id', type: 'Person' }, { name: 'created_at', type: 'DateTime' }, { name: 'properties', type: 'JSON' },
          { name: 'is_identified', type: 'Bool' }, { name: 'team_id', type: 'Int' },
        ];
        const plan: Plan = { k: 'table', table: 'persons', columns };
        return { ...base, name, kind: 'rel', plan, columns, resolve: relationResolver(columns, s), star: () => [['id'], ['created_at'], ['properties'], ['is_identified']] };
      }
      case 'person_distinct_ids': {
        const columns: ColumnInfo[] = [{ name: 'distinct_id', type: 'String' }, { name: 'person_id', type: 'Person' }, { name: 'team_id', type: 'Int' }];
        const plan: Plan = { k: 'table', table: 'person_distinct_ids', columns };
        const cols = relationResolver(columns, s);
        const pid: RExpr = { k: 'col', ref: { k: 'src', s, i: 1 }, type: 'Person' };
        return {
          ...base, name, kind: 'rel', plan, columns,
          resolve: (chain) => (chain[0] === 'person' ? personLookup(chain.slice(1), pid, 'person_distinct_ids.person') : cols(chain)),
          star: () => [['distinct_id'], ['person_id']],
        };
      }
      case 'groups': {
        const columns: ColumnInfo[] = [
          { name: 'index', type: 'Int' }, { name: 'key', type: 'String' }, { name: 'created_at', type: 'DateTime' },
          { name: 'properties', type: 'JSON' }, { name: 'team_id', type: 'Int' },
        ];
        const plan: Plan = { k: 'table', table: 'groups', columns };
        return { ...base, name, kind: 'rel', plan, columns, resolve: relationResolver(columns, s), star: () => [['index'], ['key'], ['created_at'], ['properties']] };
      }
      default:
        if (UNSUPPORTED_TABLES.has(table)) unsupported(`The table ${table}`, TABLE_HINT);
        return hogqlError(`Unknown table "${table}". ${TABLE_HINT}`);
    }
  }

  /** A field of the events table (null when the name is not one of its fields). */
  private eventField(chain: string[], s: number): RExpr | null {
    const [head, ...rest] = chain;
    const plain = (col: EventColumn): RExpr => {
      if (rest.length > 0) hogqlError(`${head} has no field ${rest.join('.')}.`);
      return ev(col, s);
    };
    switch (head) {
      case 'uuid':
      case 'event':
      case 'timestamp':
      case 'distinct_id':
      case 'elements_chain':
      case 'person_id':
        return plain({ c: head });
      case 'properties':
        return rest.length === 0 ? ev({ c: 'properties' }, s) : get(ev({ c: 'prop', key: rest[0]! }, s), rest.slice(1));
      case 'person':
      case 'poe':
        return this.eventPerson(rest, s, head);
      case 'pdi':
        if (rest[0] === 'person_id') return plain({ c: 'person_id' });
        if (rest[0] === 'distinct_id') return plain({ c: 'distinct_id' });
        if (rest[0] === 'person') return personLookup(rest.slice(1), ev({ c: 'person_id' }, s), 'pdi.person');
        return hogqlError(`Unknown field pdi.${rest.join('.')}.`);
      case '$session_id':
      case '$window_id':
        return plain({ c: 'prop', key: head });
      case 'team_id':
        if (rest.length > 0) hogqlError(`team_id has no field ${rest.join('.')}.`);
        return { k: 'const', value: this.opts.team, type: 'Int' };
      default: {
        if (head === undefined) return null;
        if (/^\$group_[0-4]$/.test(head)) return plain({ c: 'prop', key: head });
        const group = /^group_([0-4])$/.exec(head);
        if (group) return groupLookup(Number(group[1]), ev({ c: 'prop', key: `$group_${group[1]}` }, s), rest);
        if (head === 'created_at') unsupported('events.created_at', 'Events keep no ingestion time; use timestamp.');
        if (head === 'session' || head === 'elements_chain_href' || head === 'elements_chain_texts' || head === 'elements_chain_ids' || head === 'elements_chain_elements' || head === 'override' || head === '$ai_trace_id') {
          unsupported(`events.${head}`);
        }
        return null;
      }
    }
  }

  /** `person.…` of an event: the person as it was at the event (persons on events), or its current row. */
  private eventPerson(rest: string[], s: number, via: string): RExpr {
    const [field, ...more] = rest;
    switch (field) {
      case undefined:
        return unsupported(`${via} as a value`, `Read its fields, e.g. ${via}.properties.email.`);
      case 'id':
        return ev({ c: 'person_id' }, s);
      case 'properties':
        return more.length === 0 ? ev({ c: 'person_properties' }, s) : get(ev({ c: 'pprop', key: more[0]! }, s), more.slice(1));
      case 'created_at':
        return ev({ c: 'person_created_at' }, s);
      case 'is_identified':
        return callR('$personField', ev({ c: 'person_id' }, s), str('is_identified'));
      default:
        return hogqlError(`Unknown field ${via}.${rest.join('.')}.`);
    }
  }

  // ---- SELECT

  private select(sel: Select, outerCtes: Map<string, Query>): Plan {
    const ctes = new Map(outerCtes);
    for (const c of sel.ctes) ctes.set(c.name, c.query);
    const sources: Source[] = [];
    const joins: { kind: 'INNER' | 'LEFT' | 'CROSS'; s: number; on: Expr | null }[] = [];
    /** Conditions of lookup joins, checked like WHERE conditions. */
    const lookupWhere: RExpr[] = [];
    const lookupWhereAst: Expr[] = [];
    if (sel.from) sources.push(this.source(sel.from, 0, ctes));
    const scopeOf = (clause: string, aggs: AggSpec[] | null, aliases: Map<string, Expr>): Scope => ({ sources, aliases, expanding: new Set(), ctes, aggs, clause, inAggregate: false });
    for (const j of sel.joins) {
      if (j.kind === 'RIGHT' || j.kind === 'FULL') unsupported(`${j.kind} JOIN`, 'Use a LEFT JOIN with the tables the other way round.');
      const right = this.source(j.ref, sources.length, ctes);
      const lookup = this.lookupJoin(j, right, sources, scopeOf('JOIN … ON', null, new Map()));
      if (lookup) {
        sources.push(lookup.source);
        lookupWhere.push(...lookup.where);
        lookupWhereAst.push(...lookup.whereAst);
        continue;
      }
      sources.push(right);
      joins.push({ kind: j.kind as 'INNER' | 'LEFT' | 'CROSS', s: right.s, on: j.on });
    }

    // The select list, with `*` expanded and aliases named.
    const aliases = new Map<string, Expr>();
    const items: { expr: Expr; name: string }[] = [];
    for (const col of sel.columns) {
      if (col.k === 'star') {
        const from = col.table ? sources.filter((s) => s.name === col.table) : sources;
        if (from.length === 0) hogqlError(col.table ? `Unknown table ${col.table} in ${col.table}.*.` : 'SELECT * needs a FROM clause.');
        for (const src of from) for (const chain of src.star()) items.push({ expr: { k: 'field', chain: sources.length > 1 ? [src.name, ...chain] : chain }, name: chain.join('.') });
      } else if (col.k === 'alias') {
        if (aliases.has(col.alias)) hogqlError(`The alias ${col.alias} is used twice.`);
        aliases.set(col.alias, col.expr);
        items.push({ expr: col.expr, name: col.alias });
      } else items.push({ expr: col, name: printExpr(col) });
    }

    const aggs: AggSpec[] = [];
    const selectR = items.map((it) => this.resolve(it.expr, scopeOf('SELECT', aggs, aliases)));
    const positional = (e: Expr, clause: string): RExpr | null => {
      if (e.k !== 'const' || typeof e.value !== 'number') return null;
      const k = e.value;
      if (!Number.isInteger(k) || k < 1 || k > selectR.length) hogqlError(`${clause} ${k} is not a column of the select list (1 to ${selectR.length}).`);
      return selectR[k - 1]!;
    };
    const whereR = [
      ...lookupWhere,
      ...[...lookupWhereAst, ...conjuncts(sel.where)].flatMap((w) => splitAnd(this.resolve(w, scopeOf('WHERE', null, aliases)))),
    ];
    const groupR = sel.groupBy.map((g) => positional(g, 'GROUP BY') ?? this.resolve(g, scopeOf('GROUP BY', null, aliases)));
    const havingR = sel.having ? this.resolve(sel.having, scopeOf('HAVING', aggs, aliases)) : null;
    const orderR: SortSpec[] = sel.orderBy.map((o) => ({
      expr: positional(o.expr, 'ORDER BY') ?? this.resolve(o.expr, scopeOf('ORDER BY', aggs, aliases)),
      desc: o.desc,
      nullsFirst: o.nullsFirst === true,
    }));
    const limit = sel.limit ? this.count(sel.limit, 'LIMIT') : null;
    const offset = sel.offset ? this.count(sel.offset, 'OFFSET') : 0;
    const onR = joins.map((j) => (j.on ? splitAnd(this.resolve(j.on, { ...scopeOf('JOIN … ON', null, aliases), sources: sources.filter((s) => s.s <= j.s) })) : []));

    const aggregating = groupR.length > 0 || aggs.length > 0;
    const names = items.map((it) => it.name);
    const shape: Shape = { names, selectR, groupR, havingR, orderR, aggs, aggregating, distinct: sel.distinct, limit, offset };

    const materialised = sources.filter((s) => s.kind !== 'lookup');
    if (materialised.length === 1 && materialised[0]!.kind === 'events') return this.eventsSelect(whereR, shape);
    if (materialised.length === 0) {
      if (sources.length > 0) throw new Error('internal: lookup source without events');
      const input: Plan = { k: 'values', rows: [[]], columns: [] };
      return this.finish(whereR.length > 0 ? { k: 'filter', input, pred: andR(whereR), columns: [] } : input, shape, (e) => e);
    }
    return this.generalSelect(materialised, joins, onR, whereR, shape);
  }

  /**
   * `events JOIN persons ON person_id = persons.id` (or `person_distinct_ids` on the distinct id): the joined row is
   * the current row of the event's person, read by lookup wherever the event is evaluated.
   */
  private lookupJoin(j: Join, right: Source, left: Source[], scope: Scope): { source: Source; where: RExpr[]; whereAst: Expr[] } | null {
    const table = j.ref.table;
    if (j.ref.query || !j.on || j.kind === 'CROSS' || (table !== 'persons' && table !== 'person_distinct_ids') || scope.ctes.has(table)) return null;
    const parts = conjuncts(j.on);
    const candidates = [...left, right];
    // The key is the first column of both: persons.id, person_distinct_ids.distinct_id.
    const keyColumn = 0;
    const wanted: EventColumn['c'] = table === 'persons' ? 'person_id' : 'distinct_id';
    for (let p = 0; p < parts.length; p++) {
      const e = parts[p]!;
      if (e.k !== 'call' || e.name !== 'equals') continue;
      let sides: RExpr[];
      try {
        sides = e.args.map((a) => this.resolve(a, { ...scope, sources: candidates }));
      } catch {
        continue;
      }
      const evSide = sides.find((x) => x.k === 'col' && x.ref.k === 'ev' && x.ref.col.c === wanted);
      const keySide = sides.find((x) => x.k === 'col' && x.ref.k === 'src' && x.ref.s === right.s && x.ref.i === keyColumn);
      if (!evSide || !keySide) continue;
      const rest = parts.filter((_, i) => i !== p);
      if (j.kind === 'LEFT' && rest.length > 0) return null;
      const s = (evSide as { ref: { s?: number } }).ref.s!;
      const pid = ev({ c: 'person_id' }, s);
      const resolve = table === 'persons'
        ? (chain: string[]) => (chain[0] === 'id' ? pid : chain[0] === 'team_id' ? ({ k: 'const', value: this.opts.team, type: 'Int' } as RExpr) : PERSON_FIELDS[chain[0]!] && chain[0] !== 'exists' ? personLookup(chain, pid, right.name) : null)
        : (chain: string[]) => {
          if (chain[0] === 'distinct_id') return ev({ c: 'distinct_id' }, s);
          if (chain[0] === 'person_id') return pid;
          if (chain[0] === 'person') return personLookup(chain.slice(1), pid, `${right.name}.person`);
          return chain[0] === 'team_id' ? ({ k: 'const', value: this.opts.team, type: 'Int' } as RExpr) : null;
        };
      const star = table === 'persons' ? [['id'], ['created_at'], ['properties'], ['is_identified']] : [['distinct_id'], ['person_id']];
      const source: Source = { s: right.s, name: right.name, kind: 'lookup', plan: null, columns: [], pushed: [], leaves: [], resolve, star: () => star };
      const where = j.kind === 'INNER' ? [callR('$personField', pid, str('exists'))] : [];
      return { source, where, whereAst: j.kind === 'INNER' ? rest : [] };
    }
    return null;
  }

  /** A SELECT over events alone: WHERE, GROUP BY and aggregates (or ORDER BY + LIMIT) run on the shards. */
  private eventsSelect(whereR: RExpr[], shape: Shape): Plan {
    const where = whereR.length === 0 ? null : stripSources(andR(whereR));
    const { from, to } = this.timeBounds(whereR);
    const strip = (e: RExpr) => stripSources(e);
    if (shape.aggregating || shape.distinct) {
      const keys = (shape.aggregating ? shape.groupR : shape.selectR).map(strip);
      const aggs = shape.aggs.map((a) => ({ ...a, args: a.args.map(strip), cond: a.cond && strip(a.cond) }));
      const columns = [...keys.map((k, i) => ({ name: `$key${i}`, type: typeOf(k) })), ...aggs.map((a, i) => ({ name: `$agg${i}`, type: aggType(a) }))];
      const scan: Plan = { k: 'scan', scan: { from, to, where, aggregate: { keys, aggs }, rows: null }, columns };
      return this.finishAggregated(scan, shape.aggregating ? shape : { ...shape, groupR: shape.selectR, aggregating: true, distinct: false }, strip);
    }
    const { exprs, order, hidden } = projection(shape.selectR.map(strip), shape.orderR.map((o) => ({ ...o, expr: strip(o.expr) })));
    const columns = exprs.map((e, i) => ({ name: shape.names[i] ?? `$order${i}`, type: typeOf(e) }));
    const scan: Plan = {
      k: 'scan',
      scan: { from, to, where, aggregate: null, rows: { columns: exprs, order: order.map((o) => ({ ...o, expr: exprs[(o.expr as { ref: { i: number } }).ref.i]! })), limit: shape.limit === null ? null : shape.limit + shape.offset } },
      columns,
    };
    return this.sortLimit(scan, order, shape, hidden);
  }

  /** Everything else: inputs materialised (events conditions pushed to the shards), joined and finished in memory. */
  private generalSelect(sources: Source[], joins: { kind: 'INNER' | 'LEFT' | 'CROSS'; s: number }[], onR: RExpr[][], whereR: RExpr[], shape: Shape): Plan {
    const rightOfLeft = new Set(joins.filter((j) => j.kind === 'LEFT').map((j) => j.s));
    const bySource = new Map(sources.map((s) => [s.s, s]));
    // WHERE conditions on one input alone run where that input is read (not for the right side of a LEFT JOIN).
    const where: RExpr[] = [];
    for (const w of whereR) {
      const from = sourcesOf(w);
      const only = from.size === 1 ? bySource.get([...from][0]!) : undefined;
      if (only && !rightOfLeft.has(only.s) && refsOf(w).agg === false) this.pushTo(only, w);
      else where.push(w);
    }
    const joinSpecs = joins.map((j, n) => {
      const leftKeys: RExpr[] = [];
      const rightKeys: RExpr[] = [];
      const residual: RExpr[] = [];
      for (const c of onR[n]!) {
        const from = sourcesOf(c);
        if (from.size === 1 && from.has(j.s)) {
          this.pushTo(bySource.get(j.s)!, c);
          continue;
        }
        if (c.k === 'call' && c.name === 'equals') {
          const [a, b] = c.args as [RExpr, RExpr];
          const fa = sourcesOf(a);
          const fb = sourcesOf(b);
          const leftOnly = (f: Set<number>) => f.size > 0 && [...f].every((s) => s < j.s);
          const rightOnly = (f: Set<number>) => f.size === 1 && f.has(j.s);
          if (leftOnly(fa) && rightOnly(fb)) {
            leftKeys.push(a);
            rightKeys.push(b);
            continue;
          }
          if (rightOnly(fa) && leftOnly(fb)) {
            leftKeys.push(b);
            rightKeys.push(a);
            continue;
          }
        }
        if (j.kind === 'INNER' && ![...from].includes(j.s)) where.push(c);
        else residual.push(c);
      }
      if (j.kind !== 'CROSS' && leftKeys.length === 0) unsupported('A JOIN without an equality between the two sides (a = b) in ON', 'Add one, or use CROSS JOIN.');
      return { ...j, leftKeys, rightKeys, residual };
    });

    // Every events column still read is materialised as a column of its input.
    const all: RExpr[] = [...where, ...shape.selectR, ...shape.groupR, ...(shape.havingR ? [shape.havingR] : []), ...shape.orderR.map((o) => o.expr),
      ...shape.aggs.flatMap((a) => [...a.args, ...(a.cond ? [a.cond] : [])]), ...joinSpecs.flatMap((j) => [...j.leftKeys, ...j.rightKeys, ...j.residual])];
    for (const e of all) {
      mapRExpr(e, (x) => {
        if (x.k === 'filter') unsupported('{filters} over an events table joined to another input this way', 'Put {filters} in a subquery over events.');
        if (x.k === 'col' && x.ref.k === 'ev') {
          const src = bySource.get(x.ref.s!)!;
          const leaf = stripSources(x);
          if (!src.leaves.some((l) => exprKey(l) === exprKey(leaf))) src.leaves.push(leaf);
        }
        return x;
      });
    }
    for (const src of sources) {
      if (src.kind !== 'events') continue;
      const { from, to } = this.timeBounds(src.pushed);
      src.columns = src.leaves.map((l, i) => ({ name: `$e${i}`, type: typeOf(l) }));
      src.plan = { k: 'scan', scan: { from, to, where: src.pushed.length === 0 ? null : stripSources(andR(src.pushed)), aggregate: null, rows: { columns: src.leaves, order: [], limit: null } }, columns: src.columns };
    }
    const offsets = new Map<number, number>();
    let width = 0;
    for (const src of sources) {
      offsets.set(src.s, width);
      width += src.columns.length;
    }
    const remap = (e: RExpr, only?: number): RExpr => mapRExpr(e, (x) => {
      if (x.k !== 'col') return x;
      const base = (s: number) => (only === undefined ? offsets.get(s)! : s === only ? 0 : hogqlError('internal: a join key reads the other side'));
      if (x.ref.k === 'ev') {
        const src = bySource.get(x.ref.s!)!;
        const leaf = exprKey(stripSources(x));
        return { ...x, ref: { k: 'rel', i: base(src.s) + src.leaves.findIndex((l) => exprKey(l) === leaf) } };
      }
      if (x.ref.k === 'src') return { ...x, ref: { k: 'rel', i: base(x.ref.s) + x.ref.i } };
      return x;
    });
    let input: Plan = sources[0]!.plan!;
    let columns = [...sources[0]!.columns];
    for (const j of joinSpecs) {
      const right = bySource.get(j.s)!;
      columns = [...columns, ...right.columns];
      input = {
        k: 'join', kind: j.kind, left: input, right: right.plan!, leftKeys: j.leftKeys.map((e) => remap(e)), rightKeys: j.rightKeys.map((e) => remap(e, j.s)),
        residual: j.residual.length === 0 ? null : remap(andR(j.residual)), columns,
      };
    }
    if (where.length > 0) input = { k: 'filter', input, pred: remap(andR(where)), columns };
    const remapped: Shape = {
      ...shape,
      selectR: shape.selectR.map((e) => remap(e)),
      groupR: shape.groupR.map((e) => remap(e)),
      havingR: shape.havingR && remap(shape.havingR),
      orderR: shape.orderR.map((o) => ({ ...o, expr: remap(o.expr) })),
      aggs: shape.aggs.map((a) => ({ ...a, args: a.args.map((e) => remap(e)), cond: a.cond && remap(a.cond) })),
    };
    return this.finish(input, remapped, (e) => e);
  }

  private pushTo(src: Source, e: RExpr): void {
    if (src.kind === 'events') src.pushed.push(e);
    else {
      const width = src.columns.length;
      const pred = mapRExpr(e, (x) => (x.k === 'col' && x.ref.k === 'src' ? { ...x, ref: { k: 'rel', i: x.ref.i } } : x));
      src.plan = { k: 'filter', input: src.plan!, pred, columns: src.columns };
      if (src.columns.length !== width) throw new Error('internal');
    }
  }

  /** The rest of a SELECT over an input relation: aggregation, HAVING, projection, DISTINCT, ORDER BY, LIMIT. */
  private finish(input: Plan, shape: Shape, strip: (e: RExpr) => RExpr): Plan {
    if (shape.aggregating) {
      const columns = [...shape.groupR.map((k, i) => ({ name: `$key${i}`, type: typeOf(k) })), ...shape.aggs.map((a, i) => ({ name: `$agg${i}`, type: aggType(a) }))];
      return this.finishAggregated({ k: 'aggregate', input, keys: shape.groupR, aggs: shape.aggs, columns }, shape, strip);
    }
    const { exprs, order, hidden } = projection(shape.selectR, shape.orderR);
    const columns = exprs.map((e, i) => ({ name: shape.names[i] ?? `$order${i}`, type: typeOf(e) }));
    let plan: Plan = { k: 'project', input, exprs, columns };
    if (shape.distinct) {
      if (hidden > 0) hogqlError('With SELECT DISTINCT, ORDER BY can only use columns of the select list.');
      plan = { k: 'distinct', input: plan, columns };
    }
    return this.sortLimit(plan, order, shape, hidden);
  }

  /** After grouping (the input's columns are the keys, then the aggregates): HAVING and the rest. */
  private finishAggregated(grouped: Plan, shape: Shape, strip: (e: RExpr) => RExpr): Plan {
    const keys = new Map(shape.groupR.map((k, i) => [exprKey(strip(k)), i]));
    const nKeys = shape.groupR.length;
    const rewrite = (e: RExpr): RExpr => {
      const at = keys.get(exprKey(strip(e)));
      if (at !== undefined) return { k: 'col', ref: { k: 'rel', i: at }, type: typeOf(e) };
      if (e.k === 'col') {
        if (e.ref.k === 'agg') return { ...e, ref: { k: 'rel', i: nKeys + e.ref.i } };
        if (e.ref.k === 'ev' || e.ref.k === 'src' || e.ref.k === 'rel') hogqlError(`The column ${describe(e)} is neither in GROUP BY nor inside an aggregate function.`);
      }
      if (e.k === 'filter') hogqlError('{filters} is neither in GROUP BY nor inside an aggregate function.');
      if (e.k === 'call') return { ...e, args: e.args.map(rewrite) };
      return e;
    };
    let plan = grouped;
    if (shape.havingR) plan = { k: 'filter', input: plan, pred: rewrite(shape.havingR), columns: plan.columns };
    const { exprs, order, hidden } = projection(shape.selectR.map(rewrite), shape.orderR.map((o) => ({ ...o, expr: rewrite(o.expr) })));
    const columns = exprs.map((e, i) => ({ name: shape.names[i] ?? `$order${i}`, type: typeOf(e) }));
    plan = { k: 'project', input: plan, exprs, columns };
    if (shape.distinct) {
      if (hidden > 0) hogqlError('With SELECT DISTINCT, ORDER BY can only use columns of the select list.');
      plan = { k: 'distinct', input: plan, columns };
    }
    return this.sortLimit(plan, order, shape, hidden);
  }

  private sortLimit(plan: Plan, order: SortSpec[], shape: Shape, hidden: number): Plan {
    let out = plan;
    if (order.length > 0) out = { k: 'sort', input: out, order, columns: out.columns };
    if (shape.limit !== null || shape.offset > 0) out = { k: 'limit', input: out, limit: shape.limit, offset: shape.offset, columns: out.columns };
    if (hidden > 0) {
      const visible = out.columns.slice(0, out.columns.length - hidden);
      out = { k: 'project', input: out, exprs: visible.map((c, i) => ({ k: 'col', ref: { k: 'rel', i }, type: c.type })), columns: visible };
    }
    return out;
  }

  /** The time bounds WHERE conditions on the timestamp imply (blocks outside them are not read). */
  private timeBounds(conds: RExpr[]): { from: number; to: number } {
    let from = -Infinity;
    let to = Infinity;
    for (const c of conds) {
      if (c.k !== 'call' || !COMPARISONS.has(c.name) || c.args.length !== 2) continue;
      let [a, b] = c.args as [RExpr, RExpr];
      let op = c.name;
      if (b.k === 'col' && a.k === 'const') {
        [a, b] = [b, a];
        op = { less: 'greater', greater: 'less', lessOrEquals: 'greaterOrEquals', greaterOrEquals: 'lessOrEquals' }[op] ?? op;
      }
      if (a.k !== 'col' || a.ref.k !== 'ev' || a.ref.col.c !== 'timestamp' || b.k !== 'const') continue;
      const t = dateTimeOf(b.value, b.type, this.valueCtx);
      if (t === null) continue;
      if (op === 'greater' || op === 'greaterOrEquals' || op === 'equals') from = Math.max(from, t);
      if (op === 'less' || op === 'lessOrEquals' || op === 'equals') to = Math.min(to, t);
    }
    return { from, to };
  }

  private count(e: Expr, clause: string): number {
    const v = e.k === 'const' ? e.value : e.k === 'placeholder' ? this.placeholderValue(e.chain) : undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) hogqlError(`${clause} must be a whole number (got ${printExpr(e)}).`);
    return v;
  }

  // ---- expressions

  private resolve(e: Expr, sc: Scope): RExpr {
    switch (e.k) {
      case 'const':
        return { k: 'const', value: e.value, type: literalType(e.value) };
      case 'field':
        return this.field(e.chain, sc);
      case 'call':
        return this.call(e, sc);
      case 'star':
        return hogqlError('* can only be used in count(*) or in the select list.');
      case 'alias':
        return unsupported('An alias inside an expression', 'Alias select columns only.');
      case 'placeholder':
        return this.placeholder(e.chain, sc);
      case 'subquery':
        return this.subquery(e.query, sc, true);
      case 'filter': {
        // Property filters built by a query kind (EventsQuery `properties`): over the events read.
        const events = sc.sources.find((s) => s.kind === 'events');
        if (!events) hogqlError('Property filters need a SELECT from the events table.');
        this.filterTrees.push(e.node);
        return { k: 'filter', node: e.node, s: events.s };
      }
    }
  }

  private subquery(q: Query, sc: Scope, scalar: boolean): RExpr {
    const plan = this.query(q, sc.ctes);
    if (plan.columns.length !== 1 && scalar) hogqlError('A subquery used as a value must return one column.');
    return { k: 'subquery', plan, scalar };
  }

  private field(chain: string[], sc: Scope): RExpr {
    const [head] = chain;
    if (chain.length === 1 && sc.aliases.has(head!) && !sc.expanding.has(head!)) {
      sc.expanding.add(head!);
      try {
        return this.resolve(sc.aliases.get(head!)!, sc);
      } finally {
        sc.expanding.delete(head!);
      }
    }
    const named = sc.sources.filter((s) => s.name === head);
    if (named.length > 1) hogqlError(`The table name ${head} is used twice: give each an alias.`);
    if (named.length === 1) {
      if (chain.length === 1) {
        const only = sc.sources.filter((s) => s.resolve(chain) !== null);
        if (only.length === 1) return only[0]!.resolve(chain)!;
        return unsupported(`The table ${head} as a value`, `Select its columns, e.g. ${head}.*.`);
      }
      const r = named[0]!.resolve(chain.slice(1));
      if (r === null) hogqlError(`Unknown field ${chain.slice(1).join('.')} of ${head}.`);
      return r;
    }
    const found = sc.sources.map((s) => s.resolve(chain)).filter((r): r is RExpr => r !== null);
    if (found.length === 1) return found[0]!;
    if (found.length > 1) hogqlError(`The field ${chain.join('.')} is ambiguous: it exists in ${sc.sources.filter((s) => s.resolve(chain) !== null).map((s) => s.name).join(' and ')}. Qualify it with the table's alias.`);
    if (sc.sources.length === 0) hogqlError(`Unknown field ${chain.join('.')}: the query has no FROM clause.`);
    return hogqlError(`Unknown field ${chain.join('.')}.`);
  }

  private call(e: Extract<Expr, { k: 'call' }>, sc: Scope): RExpr {
    const agg = aggregateOf(e.name, e.distinct === true);
    if (agg) {
      if (sc.aggs === null) hogqlError(`Aggregate functions such as ${e.name}() are not allowed in ${sc.clause}.`);
      if (sc.inAggregate) hogqlError(`An aggregate function (${e.name}()) inside another aggregate function.`);
      const inner: Scope = { ...sc, inAggregate: true };
      const raw = e.args.filter((a) => a.k !== 'star');
      if (raw.length !== e.args.length && (agg.def !== aggregateOf('count', false)!.def || e.args.length !== 1)) hogqlError(`${e.name}(*) is not valid: only count(*).`);
      let args = raw.map((a) => this.resolve(a, inner));
      let cond: RExpr | null = null;
      if (agg.conditional) {
        if (args.length === 0) hogqlError(`${e.name}() needs a condition as its last argument.`);
        cond = args[args.length - 1]!;
        args = args.slice(0, -1);
      }
      const [min, max] = agg.def.args;
      if (args.length < min || args.length > max) hogqlError(`${e.name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, ${args.length} given.`);
      const params = (e.params ?? []).map((p) => {
        const r = this.resolve(p, { ...sc, aggs: null });
        if (r.k !== 'const') hogqlError(`The parameters of ${e.name}() must be constants.`);
        return r.value;
      });
      if (params.length < agg.def.params[0] || params.length > agg.def.params[1]) hogqlError(`${e.name}() takes ${agg.def.params[1] === 0 ? 'no parameters' : `at most ${agg.def.params[1]} parameter`}, ${params.length} given.`);
      const spec: AggSpec = { name: agg.name, args, params, cond };
      const key = JSON.stringify(spec);
      let i = sc.aggs.findIndex((a) => JSON.stringify(a) === key);
      if (i < 0) i = sc.aggs.push(spec) - 1;
      return { k: 'col', ref: { k: 'agg', i }, type: aggType(spec) };
    }
    const name = scalarFunction(e.name);
    if (!name) {
      const refused = REFUSED_FUNCTIONS[e.name] ?? REFUSED_FUNCTIONS[Object.keys(REFUSED_FUNCTIONS).find((k) => k.toLowerCase() === e.name.toLowerCase()) ?? ''];
      if (refused) unsupported(refused);
      return hogqlError(`Unknown function ${e.name}().`);
    }
    if (e.distinct) hogqlError(`DISTINCT is only valid inside aggregate functions, not ${e.name}().`);
    if (e.params) hogqlError(`${e.name}() is not a parametric aggregate function.`);
    if (e.args.some((a) => a.k === 'star')) hogqlError(`* is not a valid argument of ${e.name}().`);
    // A comparison with an absent `{filters.dateRange.…}` bound is dropped, as PostHog does.
    if (COMPARISONS.has(name) && e.args.some((a) => a.k === 'placeholder' && a.chain[0] === 'filters' && a.chain.length === 3 && this.dateBound(a.chain[2]!) === null)) return TRUE;
    const def = FUNCTIONS[name]!;
    if ((name === 'in' || name === 'notIn') && e.args[1]?.k === 'subquery') {
      return callR(name, this.resolve(e.args[0]!, sc), this.subquery(e.args[1].query, sc, false));
    }
    const args = e.args.map((a) => this.resolve(a, sc));
    if (args.length < def.min || args.length > def.max) {
      hogqlError(`${e.name}() takes ${def.min === def.max ? def.min : def.max > 64 ? `at least ${def.min}` : `${def.min} to ${def.max}`} argument${def.max === 1 ? '' : 's'}, ${args.length} given.`);
    }
    return shortcut(name, args) ?? { k: 'call', name, args };
  }

  private placeholder(chain: string[], sc: Scope): RExpr {
    if (chain[0] === 'filters') {
      if (chain.length === 1) return this.filtersExpr(sc);
      if (chain.length === 3 && chain[1] === 'dateRange' && (chain[2] === 'from' || chain[2] === 'to')) {
        const t = this.dateBound(chain[2]);
        if (t === null) hogqlError(`{filters.dateRange.${chain[2]}} has no value (the request's filters set no date range) and is not used in a comparison.`);
        return { k: 'const', value: t, type: 'DateTime' };
      }
      return hogqlError(`Unsupported filters placeholder {${chain.join('.')}}. Supported: {filters}, {filters.dateRange.from}, {filters.dateRange.to}.`);
    }
    const v = this.placeholderValue(chain);
    if (Array.isArray(v)) {
      const items = v.map((x) => ({ k: 'const', value: x as Value, type: literalType(x) }) as RExpr);
      return { k: 'call', name: 'tuple', args: items };
    }
    if (v !== null && typeof v === 'object') hogqlError(`The value of {${chain.join('.')}} must be a string, number, boolean, null or list.`);
    return { k: 'const', value: v as Value, type: literalType(v) };
  }

  private placeholderValue(chain: string[]): unknown {
    const name = chain.join('.');
    if (!Object.hasOwn(this.opts.values, name)) hogqlError(`The placeholder {${name}} has no value: pass it in the query's "values".`);
    return this.opts.values[name];
  }

  /** `filters.dateRange.date_from` / `date_to` as an instant, or null when absent. */
  private dateBound(which: string): number | null {
    return filtersDateBound(this.opts.filters, which, this.opts.now, this.opts.timeZone);
  }

  /** `{filters}`: the request's property filters, date range and test-account filters, over the events read. */
  private filtersExpr(sc: Scope): RExpr {
    const events = sc.sources.find((s) => s.kind === 'events');
    if (!events) hogqlError("Cannot use the {filters} placeholder in a SELECT that does not select from the events table.");
    const f = this.opts.filters;
    if (!f || Object.keys(f).length === 0) return TRUE;
    const parts: RExpr[] = [];
    const tree = parseFilters(f.properties ?? null, 'filters');
    if (tree) {
      this.filterTrees.push(tree);
      parts.push({ k: 'filter', node: tree, s: events.s });
    }
    const timestamp = events.resolve(['timestamp'])!;
    const to = this.dateBound('to');
    if (to !== null) parts.push(callR('less', timestamp, { k: 'const', value: to, type: 'DateTime' }));
    const from = this.dateBound('from');
    if (from !== null) parts.push(callR('greaterOrEquals', timestamp, { k: 'const', value: from, type: 'DateTime' }));
    if (f.filterTestAccounts === true && this.opts.testAccountFilters) {
      this.filterTrees.push(this.opts.testAccountFilters);
      parts.push({ k: 'filter', node: this.opts.testAccountFilters, s: events.s });
    }
    return parts.length === 0 ? TRUE : andR(parts);
  }
}

interface Shape {
  names: string[];
  selectR: RExpr[];
  groupR: RExpr[];
  havingR: RExpr | null;
  orderR: SortSpec[];
  aggs: AggSpec[];
  aggregating: boolean;
  distinct: boolean;
  limit: number | null;
  offset: number;
}

const EVENT_STAR = ['event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'person_id'];

const UNSUPPORTED_TABLES = new Set([
  'sessions', 'raw_sessions', 'session_replay_events', 'raw_session_replay_events', 'cohort_people', 'static_cohort_people', 'raw_persons',
  'raw_person_distinct_ids', 'raw_groups', 'log_entries', 'logs', 'numbers', 'person_overrides', 'raw_person_overrides', 'error_tracking_issue_fingerprint_overrides',
  'heatmaps', 'exchange_rate', 'system', 'query_log', 'document_embeddings', 'web_stats_daily', 'web_bounces_daily',
]);

/** Columns of a relation by name; deeper names read into JSON values. */
function relationResolver(columns: ColumnInfo[], s: number): (chain: string[]) => RExpr | null {
  return (chain) => {
    const i = columns.findIndex((c) => c.name === chain[0]);
    if (i < 0) return null;
    return get({ k: 'col', ref: { k: 'src', s, i }, type: columns[i]!.type }, chain.slice(1));
  };
}

/** A field of the current row of the person `pid` (`JOIN persons`, `pdi.person.…`). */
function personLookup(chain: string[], pid: RExpr, via: string): RExpr {
  const [field, key, ...deeper] = chain;
  if (field === 'id') return pid;
  if (field === 'properties') return key === undefined ? callR('$personField', pid, str('properties')) : get(callR('$personField', pid, str('properties'), str(key)), deeper);
  if (field === 'created_at' || field === 'is_identified') {
    if (key !== undefined) hogqlError(`${via}.${field} has no field ${chain.slice(1).join('.')}.`);
    return callR('$personField', pid, str(field));
  }
  return hogqlError(`Unknown field ${via}.${chain.join('.')}.`);
}

/** `group_0.properties.name` and friends: the current row of the event's group of one type. */
function groupLookup(index: number, key: RExpr, rest: string[]): RExpr {
  const [field, prop, ...deeper] = rest;
  const idx: RExpr = { k: 'const', value: index, type: 'Int' };
  if (field === 'key') return callR('$groupField', idx, key, str('key'));
  if (field === 'created_at') return callR('$groupField', idx, key, str('created_at'));
  if (field === 'properties') return prop === undefined ? callR('$groupField', idx, key, str('properties')) : get(callR('$groupField', idx, key, str('properties'), str(prop)), deeper);
  return hogqlError(`Unknown field group_${index}.${rest.join('.')}.`);
}

/** Shortcuts that let the scan read one property column rather than rebuild every event's properties. */
function shortcut(name: string, args: RExpr[]): RExpr | null {
  const [first, second, ...rest] = args;
  const whole = first?.k === 'col' && first.ref.k === 'ev' && (first.ref.col.c === 'properties' || first.ref.col.c === 'person_properties') ? first.ref : null;
  if (!whole || second?.k !== 'const' || typeof second.value !== 'string') return null;
  const column = ev(whole.col.c === 'properties' ? { c: 'prop', key: second.value } : { c: 'pprop', key: second.value }, whole.s!);
  if (name === 'arrayElement' || name === '$get') return get(column, rest.map((r) => String((r as { value?: unknown }).value)));
  if (name.startsWith('JSONExtract') || name === 'JSONHas') return rest.length === 0 ? callR(name, column) : callR(name, column, ...rest);
  return null;
}

function splitAnd(e: RExpr): RExpr[] {
  return e.k === 'call' && e.name === 'and' ? e.args.flatMap(splitAnd) : [e];
}

function andR(parts: RExpr[]): RExpr {
  return parts.length === 1 ? parts[0]! : callR('and', ...parts);
}

/** Drops the planning-only source numbers of events columns. */
function stripSources(e: RExpr): RExpr {
  return mapRExpr(e, (x) => {
    if (x.k === 'col' && x.ref.k === 'ev' && x.ref.s !== undefined) return { ...x, ref: { k: 'ev', col: x.ref.col } };
    if (x.k === 'filter' && x.s !== undefined) return { k: 'filter', node: x.node };
    return x;
  });
}

function aggType(a: AggSpec): Type {
  return aggregateOf(a.name, false)!.def.type(a.args.map(typeOf));
}

/** The select expressions plus those ORDER BY needs that are not among them (hidden, dropped at the end). */
function projection(select: RExpr[], order: SortSpec[]): { exprs: RExpr[]; order: SortSpec[]; hidden: number } {
  const exprs = [...select];
  const keys = exprs.map(exprKey);
  const sorted = order.map((o) => {
    let i = keys.indexOf(exprKey(o.expr));
    if (i < 0) {
      i = exprs.push(o.expr) - 1;
      keys.push(exprKey(o.expr));
    }
    return { ...o, expr: { k: 'col', ref: { k: 'rel', i }, type: typeOf(o.expr) } as RExpr };
  });
  return { exprs, order: sorted, hidden: exprs.length - select.length };
}

/** A column's name for messages. */
function describe(e: Extract<RExpr, { k: 'col' }>): string {
  const r: ColumnRef = e.ref;
  if (r.k === 'ev') {
    const c = r.col;
    if (c.c === 'prop') return `properties.${c.key}`;
    if (c.c === 'pprop') return `person.properties.${c.key}`;
    if (c.c === 'person_properties') return 'person.properties';
    if (c.c === 'person_created_at') return 'person.created_at';
    return c.c;
  }
  return r.k === 'agg' ? 'of an aggregate' : 'of the FROM clause';
}
