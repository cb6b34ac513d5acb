/**
 * Runs a HogQL plan (src/domain/hogql/plan.ts) on the worker that received the query. Events scans go to every
 * worker (src/worker/query/hogql-scan.ts) and their answers are merged here: partial GROUP BY states merge (counts
 * add, person sets OR…), sorted rows merge and are cut to the limit. The tables of the persons environment are
 * read here. What remains (HAVING, joins, subqueries, projections, ORDER BY, LIMIT) runs over in-memory relations
 * in chunks, yielding between them, so a large relation does not hold the thread.
 */
import { AGGREGATES } from '../../domain/hogql/aggregate-functions.js';
import { bind } from '../../domain/hogql/bind.js';
import { hogqlError } from '../../domain/hogql/errors.js';
import { compareKeys, GroupTable, mergeGroups, type Groups } from '../../domain/hogql/grouping.js';
import { mapPlanExprs, mapRExpr, type Plan, type RExpr } from '../../domain/hogql/plan.js';
import { mask, vec, type Batch, type Vec, type VecCache } from '../../domain/hogql/vectors.js';
import { dateTimeOf, isNumeric, keyText, textOf, type Type, type Value, type ValueContext } from '../../domain/hogql/values.js';
import type { FilterNode } from '../../domain/analytics/property-filters.js';
import { all } from '../../stores/lmdb-env.js';
import type { PersonRow } from '../../stores/persons/person-store.js';
import type { ScanContext } from '../analytics/scatter.js';
import type { WorkerRuntime } from '../runtime.js';
import { bindAgg, personWords, scanEverywhere, sortValue, type ScanLimits } from './hogql-scan.js';
import { Slicer } from '../analytics/slices.js';

export interface ExecEnv {
  rt: WorkerRuntime;
  team: number;
  scan: ScanContext;
  values: ValueContext;
  limits: ScanLimits;
}

const CHUNK = 8192;

/** Rows of a plan's result (values in the engine's form; src/domain/hogql/values.ts `outputValue` shows them). */
export async function execute(plan: Plan, env: ExecEnv): Promise<Value[][]> {
  const ready = await runSubqueries(plan, env);
  return run(ready, env, new Slicer());
}

/** A chunk of an in-memory relation as a batch. */
class MemoryBatch implements Batch {
  readonly timeRange = null;
  selected = null;

  scratch(n: number): Int32Array {
    return new Int32Array(n);
  }

  constructor(private readonly rows: Value[][], readonly n = rows.length) {}

  column(ref: RExprRef): Vec {
    if (ref.k !== 'rel') throw new Error(`internal: an in-memory relation has no ${ref.k} columns`);
    const i = ref.i;
    const rows = this.rows;
    return { at: (r) => rows[r]![i]! };
  }

  filterMask(_node: FilterNode): Uint8Array {
    throw new Error('internal: a property filter reached an in-memory relation');
  }
}

type RExprRef = Extract<RExpr, { k: 'col' }>['ref'];

/** Calls `fn` with each chunk of `rows` as a batch. */
async function chunks(rows: Value[][], slicer: Slicer, fn: (batch: MemoryBatch, offset: number) => void): Promise<void> {
  for (let at = 0; at < rows.length; at += CHUNK) {
    fn(new MemoryBatch(rows.slice(at, at + CHUNK)), at);
    await slicer.pace();
  }
}

async function run(plan: Plan, env: ExecEnv, slicer: Slicer): Promise<Value[][]> {
  const values = env.values;
  switch (plan.k) {
    case 'scan':
      return scan(plan, env);
    case 'table':
      return table(plan.table, env, slicer);
    case 'values':
      return plan.rows;
    case 'filter': {
      const input = await run(plan.input, env, slicer);
      const pred = bind(plan.pred, values);
      const out: Value[][] = [];
      await chunks(input, slicer, (batch, at) => {
        const m = mask(pred, batch, values, new Map());
        for (let i = 0; i < m.length; i++) if (m[i] === 1) out.push(input[at + i]!);
      });
      return out;
    }
    case 'project': {
      const input = await run(plan.input, env, slicer);
      const exprs = plan.exprs.map((e) => bind(e, values));
      const out: Value[][] = [];
      await chunks(input, slicer, (batch) => {
        const cache: VecCache = new Map();
        const vs = exprs.map((e) => vec(e, batch, values, cache));
        for (let r = 0; r < batch.n; r++) out.push(vs.map((v) => v.at(r)));
      });
      return out;
    }
    case 'aggregate': {
      const input = await run(plan.input, env, slicer);
      const keys = plan.keys.map((k) => bind(k, values));
      const aggs = plan.aggs.map((a) => bindAgg(a, values));
      const t = new GroupTable(keys, aggs, personWords(env.scan.maxPersonId), env.limits.maxGroups);
      await chunks(input, slicer, (batch) => {
        const all = Int32Array.from({ length: batch.n }, (_, i) => i);
        t.add(batch, all, batch.n, values, new Map());
      });
      return groupRows(t.groups, plan.aggs, plan.keys.length, env);
    }
    case 'sort': {
      const input = await run(plan.input, env, slicer);
      const keys = plan.order.map((o) => bind(o.expr, values));
      const keyed: { keys: Value[]; row: Value[] }[] = [];
      await chunks(input, slicer, (batch, at) => {
        const cache: VecCache = new Map();
        const vs = keys.map((k) => vec(k, batch, values, cache));
        for (let r = 0; r < batch.n; r++) keyed.push({ keys: vs.map((v, i) => sortValue(v.at(r), keys[i]!.type, values)), row: input[at + r]! });
      });
      keyed.sort((a, b) => compareKeys(a.keys, b.keys, plan.order));
      return keyed.map((k) => k.row);
    }
    case 'limit': {
      const input = await run(plan.input, env, slicer);
      return input.slice(plan.offset, plan.limit === null ? undefined : plan.offset + plan.limit);
    }
    case 'distinct': {
      const input = await run(plan.input, env, slicer);
      const seen = new Set<string>();
      return input.filter((row) => {
        const key = row.map(keyText).join('\u0001');
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    case 'union': {
      const out: Value[][] = [];
      for (const input of plan.inputs) for (const row of await run(input, env, slicer)) out.push(row);
      return out;
    }
    case 'join':
      return join(plan, env, slicer);
  }
}

/** An events scan on every worker, merged. */
async function scan(plan: Extract<Plan, { k: 'scan' }>, env: ExecEnv): Promise<Value[][]> {
  const parts = await scanEverywhere(env.rt, plan.scan, env.scan, env.limits);
  for (const p of parts) if ('error' in p) hogqlError(p.error);
  const aggregate = plan.scan.aggregate;
  if (aggregate) {
    const defs = aggregate.aggs.map((a) => AGGREGATES[a.name]!);
    const groups: Groups = new Map();
    for (const p of parts) mergeGroups(groups, (p as { groups: Groups }).groups, defs);
    if (groups.size > env.limits.maxGroups) hogqlError(`The query makes more than ${env.limits.maxGroups.toLocaleString('en-US')} groups; group by fewer values or add conditions.`);
    return groupRows(groups, aggregate.aggs, aggregate.keys.length, env);
  }
  const spec = plan.scan.rows!;
  const rows = parts.flatMap((p) => (p as { rows: { keys: Value[]; row: Value[] }[] }).rows);
  if (spec.limit === null && rows.length > env.limits.maxRows) hogqlError(`The query reads more than ${env.limits.maxRows.toLocaleString('en-US')} events into memory; add conditions or a LIMIT.`);
  if (spec.order.length > 0) rows.sort((a, b) => compareKeys(a.keys, b.keys, spec.order));
  return (spec.limit === null ? rows : rows.slice(0, spec.limit)).map((r) => r.row);
}

/** Finished groups as rows: the keys, then each aggregate's value. A global aggregate of nothing is one row. */
function groupRows(groups: Groups, aggs: Extract<Plan, { k: 'aggregate' }>['aggs'], keyCount: number, env: ExecEnv): Value[][] {
  const defs = aggs.map((a) => AGGREGATES[a.name]!);
  if (keyCount === 0 && groups.size === 0) {
    const bound = aggs.map((a) => bindAgg(a, env.values));
    groups.set('', { key: [], states: bound.map((b) => b.def.init(b.args.map((x) => x.type), 0)) });
  }
  return [...groups.values()].map((g) => [...g.key, ...g.states.map((s, j) => defs[j]!.final(s, aggs[j]!.params))]);
}

/** Persons of a project read a page at a time, letting other work through between pages. */
async function* personPages(env: ExecEnv, slicer: Slicer): AsyncGenerator<PersonRow[]> {
  const { rt, team } = env;
  let from = 0;
  for (;;) {
    rt.persons.env.resetReadTxn();
    const page = all(rt.persons.persons.getRange({ start: [team, from], end: [team, Number.MAX_SAFE_INTEGER], limit: 5000 })).map((e) => e.value);
    if (page.length === 0) return;
    yield page;
    from = page[page.length - 1]!.id + 1;
    await slicer.pace();
  }
}

/** A table of the persons environment. */
async function table(name: 'persons' | 'person_distinct_ids' | 'groups', env: ExecEnv, slicer: Slicer): Promise<Value[][]> {
  const { rt, team } = env;
  const out: Value[][] = [];
  const created = (text: string) => Date.parse(text);
  const check = () => {
    if (out.length > env.limits.maxRows) hogqlError(`The ${name} table has more than ${env.limits.maxRows.toLocaleString('en-US')} rows to read into memory.`);
  };
  switch (name) {
    case 'persons':
      for await (const page of personPages(env, slicer)) {
        for (const p of page) out.push([p.id, created(p.created_at), p.properties as Value, p.is_identified, team]);
        check();
      }
      break;
    case 'person_distinct_ids':
      for await (const page of personPages(env, slicer)) {
        for (const p of page) for (const d of p.distinct_ids) out.push([d, p.id, team]);
        check();
      }
      break;
    case 'groups':
      rt.persons.env.resetReadTxn();
      for (let index = 0; index < 5; index++) for (const g of rt.persons.groupsOf(team, index)) out.push([index, g.key, created(g.created_at), g.properties as Value, team]);
      check();
  }
  return out;
}

/** How join keys of two types meet: as persons, instants, numbers or texts. */
function joinKey(left: Type, right: Type, values: ValueContext): [(v: Value) => string | null, (v: Value) => string | null] {
  const side = (t: Type, other: Type): ((v: Value) => string | null) => {
    if (t === 'Person' || other === 'Person') {
      return (v) => {
        if (v === null) return null;
        const id = t === 'Person' ? (v as number) : values.personOfUuid(textOf(v, t, values) ?? '');
        return id === null ? null : `p${id}`;
      };
    }
    if (t === 'DateTime' || other === 'DateTime' || t === 'Date' || other === 'Date') {
      return (v) => {
        const ms = dateTimeOf(v, t, values);
        return ms === null ? null : `t${ms}`;
      };
    }
    if (isNumeric(t) && isNumeric(other)) return (v) => (v === null ? null : keyText(v));
    return (v) => {
      const text = textOf(v, t, values);
      return text === null ? null : `s${text}`;
    };
  };
  return [side(left, right), side(right, left)];
}

async function join(plan: Extract<Plan, { k: 'join' }>, env: ExecEnv, slicer: Slicer): Promise<Value[][]> {
  const values = env.values;
  const left = await run(plan.left, env, slicer);
  const right = await run(plan.right, env, slicer);
  const rightWidth = plan.right.columns.length;
  const nulls = new Array<Value>(rightWidth).fill(null);
  const residual = plan.residual ? bind(plan.residual, values) : null;
  const out: Value[][] = [];
  const emit = (row: Value[]) => {
    out.push(row);
    if (out.length > env.limits.maxRows) hogqlError(`The join makes more than ${env.limits.maxRows.toLocaleString('en-US')} rows; add conditions.`);
  };
  // Candidates of each left row, then the residual condition over them.
  const finish = async (pairs: { l: number; row: Value[] }[], matched: Uint8Array | null) => {
    if (residual === null) for (const p of pairs) emit(p.row);
    else {
      await chunks(pairs.map((p) => p.row), slicer, (batch, at) => {
        const m = mask(residual, batch, values, new Map());
        for (let i = 0; i < m.length; i++) {
          if (m[i] !== 1) continue;
          emit(pairs[at + i]!.row);
          if (matched) matched[pairs[at + i]!.l] = 1;
        }
      });
    }
  };
  if (plan.kind === 'CROSS') {
    const pairs: { l: number; row: Value[] }[] = [];
    for (let l = 0; l < left.length; l++) {
      for (const r of right) {
        pairs.push({ l, row: [...left[l]!, ...r] });
        if (pairs.length > env.limits.maxRows) hogqlError(`The join makes more than ${env.limits.maxRows.toLocaleString('en-US')} rows; add conditions.`);
      }
    }
    await finish(pairs, null);
    return out;
  }
  const leftKeys = plan.leftKeys.map((k) => bind(k, values));
  const rightKeys = plan.rightKeys.map((k) => bind(k, values));
  const keyFns = leftKeys.map((lk, i) => joinKey(lk.type, rightKeys[i]!.type, values));
  const index = new Map<string, number[]>();
  await chunks(right, slicer, (batch, at) => {
    const cache: VecCache = new Map();
    const vs = rightKeys.map((k) => vec(k, batch, values, cache));
    for (let r = 0; r < batch.n; r++) {
      const parts = vs.map((v, i) => keyFns[i]![1](v.at(r)));
      if (parts.some((p) => p === null)) continue;
      const key = parts.join('\u0001');
      const list = index.get(key);
      if (list) list.push(at + r);
      else index.set(key, [at + r]);
    }
  });
  const pairs: { l: number; row: Value[] }[] = [];
  await chunks(left, slicer, (batch, at) => {
    const cache: VecCache = new Map();
    const vs = leftKeys.map((k) => vec(k, batch, values, cache));
    for (let r = 0; r < batch.n; r++) {
      const parts = vs.map((v, i) => keyFns[i]![0](v.at(r)));
      const hits = parts.some((p) => p === null) ? undefined : index.get(parts.join('\u0001'));
      for (const h of hits ?? []) pairs.push({ l: at + r, row: [...left[at + r]!, ...right[h]!] });
      if (pairs.length > env.limits.maxRows) hogqlError(`The join makes more than ${env.limits.maxRows.toLocaleString('en-US')} rows; add conditions.`);
    }
  });
  const matched = plan.kind === 'LEFT' ? new Uint8Array(left.length) : null;
  if (matched && residual === null) for (const p of pairs) matched[p.l] = 1;
  await finish(pairs, matched);
  if (matched) for (let l = 0; l < left.length; l++) if (matched[l] === 0) emit([...left[l]!, ...nulls]);
  return out;
}

/** Runs the subqueries of a plan (`IN (SELECT …)`, scalar subqueries) and puts their values in their place. */
async function runSubqueries(plan: Plan, env: ExecEnv): Promise<Plan> {
  const found: Extract<RExpr, { k: 'subquery' }>[] = [];
  mapPlan(plan, (node) => mapPlanExprs(node, (e) => mapRExpr(e, (x) => {
    if (x.k === 'subquery') found.push(x);
    return x;
  })));
  if (found.length === 0) return plan;
  const results = new Map<Extract<RExpr, { k: 'subquery' }>, RExpr>();
  for (const sq of found) {
    const rows = await execute(sq.plan, env);
    const type = sq.plan.columns[0]?.type ?? 'Null';
    results.set(sq, sq.scalar
      ? { k: 'const', value: rows[0]?.[0] ?? null, type }
      : { k: 'const', value: rows.map((r) => r[0]!), type: 'Array', elem: type });
  }
  return mapPlan(plan, (node) => mapPlanExprs(node, (e) => mapRExpr(e, (x) => (x.k === 'subquery' ? results.get(x) ?? x : x))));
}

/** Rebuilds a plan with `fn` applied to every node (inputs first). */
function mapPlan(p: Plan, fn: (p: Plan) => Plan): Plan {
  switch (p.k) {
    case 'filter':
    case 'aggregate':
    case 'project':
    case 'sort':
    case 'limit':
    case 'distinct':
      return fn({ ...p, input: mapPlan(p.input, fn) } as Plan);
    case 'join':
      return fn({ ...p, left: mapPlan(p.left, fn), right: mapPlan(p.right, fn) });
    case 'union':
      return fn({ ...p, inputs: p.inputs.map((i) => mapPlan(i, fn)) });
    default:
      return fn(p);
  }
}
