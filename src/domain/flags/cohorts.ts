/**
 * Cohort definitions compiled into property trees (flags.md §3.6).
 *
 * Shape: `filters.properties = {type: 'AND'|'OR', values: [...]}` where each value is a nested group or a leaf
 * filter. A leaf's result is `matches XOR negation`. Group semantics follow the Rust service and posthog-node:
 * an empty group object `{}` matches; an AND group with no values matches; an OR group with no values does not;
 * `type: 'property'` (older serialisations) reads as AND. Deleted cohorts are left out (references to them never
 * match); static cohorts have no tree, their membership comes from `EvaluationContext.staticCohortIds`.
 */
import { compileProperty, type PropertyEnv } from './properties.js';
import {
  Source,
  type CohortNode,
  type CohortRecord,
  type CompiledCohort,
  type CompiledCohorts,
  type CompiledProperty,
  type GroupTypeMapping,
} from './types.js';
import { isRecord } from './values.js';

export function compileCohorts(
  cohorts: readonly CohortRecord[],
  groupTypes: GroupTypeMapping,
  options: { timeZone?: string | null; resolveFlag?: (ref: unknown) => number } = {},
): CompiledCohorts {
  const env: PropertyEnv = {
    groupTypes,
    timeZone: options.timeZone ?? null,
    aggregation: null,
    resolveFlag: options.resolveFlag ?? (() => -1),
  };
  const byId = new Map<number, CompiledCohort>();
  let index = 0;
  for (const c of cohorts) {
    if (c.deleted || byId.has(c.id)) continue;
    const tree = c.is_static ? null : compileCohortTree(c.filters, env);
    byId.set(c.id, { id: c.id, name: c.name, isStatic: c.is_static, tree, index: index++ });
  }
  return { byId, count: index, timeZone: env.timeZone };
}

/** The root group of a dynamic cohort, or null when the definition is unusable. */
export function compileCohortTree(filters: unknown, env: PropertyEnv): CohortNode | null {
  if (!isRecord(filters)) return null;
  const root = filters.properties;
  if (!isRecord(root)) return null;
  return compileGroup(root, env);
}

const EMPTY_GROUP: CohortNode = Object.freeze({ and: true, children: Object.freeze([]) as readonly never[] });

function compileGroup(group: Record<string, unknown>, env: PropertyEnv): CohortNode | null {
  if (Object.keys(group).length === 0) return EMPTY_GROUP;
  const type = group.type;
  const and = type === 'AND' || type === 'property';
  if (!and && type !== 'OR') return null;
  const values = Array.isArray(group.values) ? group.values : [];
  const children: (CohortNode | CompiledProperty)[] = [];
  for (const v of values) {
    if (isRecord(v) && Array.isArray(v.values)) {
      // An unusable nested group makes the whole tree unusable rather than silently changing its meaning.
      const child = compileGroup(v, env);
      if (child === null) return null;
      children.push(child);
    } else {
      children.push(compileProperty(v, env));
    }
  }
  return { and, children };
}

export function isCohortNode(x: CohortNode | CompiledProperty): x is CohortNode {
  return (x as CohortNode).children !== undefined;
}

/** Ids of cohorts referenced from `tree` (direct children only; callers recurse through `byId`). */
export function cohortReferences(tree: CohortNode | null, out: number[] = []): number[] {
  if (tree === null) return out;
  for (const child of tree.children) {
    if (isCohortNode(child)) cohortReferences(child, out);
    else if (child.source === Source.Cohort && !Number.isNaN(child.cohortId)) out.push(child.cohortId);
  }
  return out;
}

/** The referenced cohort ids plus everything they reference in turn (deleted/missing ids included). */
export function expandCohortIds(ids: Iterable<number>, cohorts: CompiledCohorts): Set<number> {
  const seen = new Set<number>();
  const stack = [...ids];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const c = cohorts.byId.get(id);
    if (c) stack.push(...cohortReferences(c.tree));
  }
  return seen;
}
