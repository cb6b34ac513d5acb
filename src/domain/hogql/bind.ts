/**
 * Binding: a resolved expression (src/domain/hogql/plan.ts) becomes a tree of typed nodes with each function's
 * implementation chosen for its argument types, constants folded and `x IN (constants)` turned into a set lookup.
 * Done once per query on each worker that evaluates it (implementations are closures: they do not travel).
 */
import type { FilterNode } from '../analytics/property-filters.js';
import { propertyText } from '../analytics/property-filters.js';
import { hogqlError } from './errors.js';
import { FUNCTIONS, type Impl } from './functions.js';
import type { ColumnRef, RExpr } from './plan.js';
import { dateOf, dateTimeOf, isNumeric, numberOf, textOf, truth, type Type, type Value, type ValueContext } from './values.js';

export type Bound =
  | { k: 'const'; type: Type; value: Value }
  | { k: 'col'; type: Type; ref: ColumnRef }
  | { k: 'fn'; type: Type; name: string; args: Bound[]; impl: Impl; handlesNulls: boolean; slots: boolean }
  | { k: 'inSet'; type: 'Bool'; arg: Bound; keys: Set<string | number | boolean>; key: (v: Value) => string | number | boolean | null; negate: boolean }
  | { k: 'filter'; type: 'Bool'; node: FilterNode };

/** Calls a bound function on argument values (null arguments give null unless the function handles them). */
export function callFn(b: Extract<Bound, { k: 'fn' }>, values: Value[]): Value {
  if (!b.handlesNulls) for (const v of values) if (v === null) return null;
  return b.impl(values);
}

export function bind(e: RExpr, ctx: ValueContext): Bound {
  switch (e.k) {
    case 'const':
      return { k: 'const', type: e.type, value: e.value };
    case 'col':
      return { k: 'col', type: e.type, ref: e.ref };
    case 'filter':
      return { k: 'filter', type: 'Bool', node: e.node };
    case 'subquery':
      throw new Error('a subquery reached binding before it was run');
    case 'call':
      return bindCall(e, ctx);
  }
}

function bindCall(e: Extract<RExpr, { k: 'call' }>, ctx: ValueContext): Bound {
  const args = e.args.map((a) => bind(a, ctx));
  if ((e.name === 'in' || e.name === 'notIn') && args[1]!.k === 'const') {
    const rhs = e.args[1]!;
    return inSet(args[0]!, args[1] as Extract<Bound, { k: 'const' }>, rhs.k === 'const' ? rhs.elem : undefined, e.name === 'notIn', ctx);
  }
  if (e.name === '$personField') return personField(args, ctx);
  if (e.name === '$groupField') return groupField(args, ctx);
  const def = FUNCTIONS[e.name];
  if (!def) return hogqlError(`Unknown function ${e.name}().`);
  if (args.length < def.min || args.length > def.max) {
    hogqlError(`${e.name}() takes ${def.min === def.max ? def.min : `${def.min} to ${def.max}`} argument${def.max === 1 ? '' : 's'}, ${args.length} given.`);
  }
  const types = args.map((a) => a.type);
  const b: Bound = { k: 'fn', type: def.type(types), name: e.name, args, impl: def.make(types, ctx), handlesNulls: def.nulls === 'handle', slots: def.slots === true };
  return fold(b);
}

/** A call of constants is computed once, now. */
function fold(b: Extract<Bound, { k: 'fn' }>): Bound {
  if (!b.args.every((a) => a.k === 'const')) return b;
  return { k: 'const', type: b.type, value: callFn(b, b.args.map((a) => (a as { value: Value }).value)) };
}

/** How a value of type `valueType` is keyed when compared in the domain of `domain` (IN sets). */
function domainKey(domain: Type, valueType: Type | undefined, ctx: ValueContext): (v: Value) => string | number | boolean | null {
  const typeOf = (v: Value): Type => valueType ?? (typeof v === 'number' ? 'Float' : typeof v === 'boolean' ? 'Bool' : typeof v === 'string' ? 'String' : 'JSON');
  switch (domain) {
    case 'DateTime':
      return (v) => dateTimeOf(v, typeOf(v), ctx);
    case 'Date':
      return (v) => dateOf(v, typeOf(v), ctx);
    case 'Person':
      return (v) => (v === null ? null : typeOf(v) === 'Person' ? (v as number) : ctx.personOfUuid(propertyText(v)) ?? -1);
    case 'Bool':
      return (v) => truth(v);
    default:
      if (isNumeric(domain)) return (v) => numberOf(v, typeOf(v));
      return (v) => (v === null ? null : typeof v === 'string' ? v : textOf(v, typeOf(v), ctx));
  }
}

function inSet(arg: Bound, list: Extract<Bound, { k: 'const' }>, elem: Type | undefined, negate: boolean, ctx: ValueContext): Bound {
  const items: Value[] = Array.isArray(list.value) ? (list.value as Value[]) : [list.value];
  // A list of dates compared with a DateTime are instants; texts compared with numbers are numbers…
  const domain: Type = arg.type === 'Any' ? 'JSON' : arg.type;
  const rhsKey = domainKey(domain, list.type === 'Array' ? elem : list.type, ctx);
  const keys = new Set<string | number | boolean>();
  for (const item of items) {
    const k = item === null ? null : rhsKey(item);
    if (k !== null) keys.add(k);
  }
  const key = domainKey(domain, arg.type, ctx);
  const b: Bound = { k: 'inSet', type: 'Bool', arg, keys, key, negate };
  if (arg.k === 'const') return { k: 'const', type: 'Bool', value: inSetValue(b, arg.value) };
  return b;
}

export function inSetValue(b: Extract<Bound, { k: 'inSet' }>, v: Value): Value {
  if (v === null) return null;
  const k = b.key(v);
  if (k === null) return null;
  return b.keys.has(k) !== b.negate;
}

export const PERSON_FIELDS: Record<string, Type> = { properties: 'JSON', created_at: 'DateTime', is_identified: 'Bool', id: 'Person', exists: 'Bool' };

/** `$personField(person id, field[, property])`: the person's current row (`JOIN persons`, `pdi.person.…`). */
function personField(args: Bound[], ctx: ValueContext): Bound {
  const field = constText(args[1]);
  const key = args[2] ? constText(args[2]) : null;
  const type = PERSON_FIELDS[field];
  if (!type) hogqlError(`Unknown person field ${field}.`);
  const impl: Impl = (vs) => {
    const id = vs[0];
    if (field === 'exists') return id !== null && ctx.person(id as number) !== null;
    if (id === null) return null;
    const p = ctx.person(id as number);
    if (!p) return null;
    switch (field) {
      case 'properties':
        return key === null ? (p.properties as Value) : ((p.properties[key] ?? null) as Value);
      case 'created_at':
        return p.createdAt;
      case 'is_identified':
        return p.isIdentified;
      default:
        return id;
    }
  };
  return { k: 'fn', type, name: '$personField', args: [args[0]!], impl, handlesNulls: true, slots: false };
}

export const GROUP_FIELDS: Record<string, Type> = { properties: 'JSON', created_at: 'DateTime', key: 'String', index: 'Int' };

/** `$groupField(type index, group key, field[, property])`: a group's current row (`group_0.properties.name`). */
function groupField(args: Bound[], ctx: ValueContext): Bound {
  const index = Number((args[0] as { value?: Value }).value);
  const field = constText(args[2]);
  const key = args[3] ? constText(args[3]) : null;
  const type = GROUP_FIELDS[field];
  if (!type) hogqlError(`Unknown group field ${field}.`);
  const impl: Impl = (vs) => {
    const groupKey = vs[0];
    if (groupKey === null) return null;
    if (field === 'key') return propertyText(groupKey);
    if (field === 'index') return index;
    const g = ctx.group(index, propertyText(groupKey));
    if (!g) return null;
    if (field === 'created_at') return g.createdAt;
    return key === null ? (g.properties as Value) : ((g.properties[key] ?? null) as Value);
  };
  return { k: 'fn', type, name: '$groupField', args: [args[1]!], impl, handlesNulls: true, slots: false };
}

function constText(b: Bound | undefined): string {
  if (!b || b.k !== 'const' || typeof b.value !== 'string') throw new Error('internal: a field name must be a constant');
  return b.value;
}
