/**
 * The `properties` filter of GET /events/ (analytics.md §0.3): a JSON list of property filters (AND), a property
 * group `{type: 'AND'|'OR', values: [...]}` (nested groups allowed), or one filter object.
 *
 * Supported filter types: `event` (the default: the event's own properties), `person` (the current properties of
 * the event's person, followed through merges) and `cohort` (membership of that person). Other types (element,
 * group, session, behavioral...) are refused with a 400 rather than ignored: dropping a filter would silently
 * return rows the caller excluded.
 *
 * The serving worker validates the filter and turns it into a plain tree; every worker compiles that tree for its
 * own shards. Each leaf reuses the flag engine (one single-property condition evaluated with
 * `matchesConditionProperties`), so operators, list values, regexes, dates and missing-key rules are exactly
 * those of flags and cohorts; the tree walk and `negation` are done here.
 */
import {
  compileCondition, matchesConditionProperties, validateFlagFilters, type CohortRecord, type CompiledCondition,
  type EvaluationContext,
} from '../../../domain/flags/index.js';
import { invalidProperties as invalid, isObject, propertyGroupParam } from '../property-filter-param.js';

export type FilterScope = 'event' | 'person' | 'cohort';

export interface FilterLeaf {
  scope: FilterScope;
  negation: boolean;
  /** The caller's filter object, as the flag engine reads it (`key`, `value`, `operator`). */
  filter: Record<string, unknown>;
}

export interface FilterGroup {
  and: boolean;
  children: FilterNode[];
}

export type FilterNode = FilterGroup | FilterLeaf;

const isGroup = (n: FilterNode): n is FilterGroup => (n as FilterGroup).children !== undefined;



/**
 * Parses and validates the raw query value. Returns null when it filters nothing. Throws a 400 (attr
 * `properties`) for malformed JSON, unknown shapes, unsupported types and what the flag API would refuse
 * (unknown operators, bad regexes, unknown cohorts).
 */
export function parsePropertyFilter(raw: string | undefined, cohorts: readonly CohortRecord[]): FilterGroup | null {
  const root = propertyGroupParam(raw);
  if (root === null) return null;

  const leaves: FilterLeaf[] = [];
  const tree = groupOf(root, leaves, 0);
  if (leaves.length === 0) return null;

  const asEngineFilters = leaves.map(engineFilter);
  const error = validateFlagFilters({ groups: [{ properties: asEngineFilters }] }, {
    existingCohortIds: new Set(cohorts.filter((c) => !c.deleted).map((c) => c.id)),
    isStaticCohort: (id) => cohorts.some((c) => c.id === id && c.is_static),
    groupTypes: {},
  });
  if (error) invalid(error.detail, error.code);
  return tree;
}

const MAX_DEPTH = 16;

function groupOf(node: Record<string, unknown>, leaves: FilterLeaf[], depth: number): FilterGroup {
  if (depth > MAX_DEPTH) invalid('Property groups are nested too deeply.');
  const type = node.type;
  if (type !== 'AND' && type !== 'OR') invalid('A property group needs "type": "AND" or "OR".');
  const children: FilterNode[] = [];
  for (const child of node.values as unknown[]) {
    if (!isObject(child)) invalid('Every property filter must be an object.');
    if (Array.isArray(child.values)) {
      children.push(groupOf(child, leaves, depth + 1));
      continue;
    }
    const leaf = leafOf(child);
    leaves.push(leaf);
    children.push(leaf);
  }
  return { and: type === 'AND', children };
}

function leafOf(filter: Record<string, unknown>): FilterLeaf {
  const type = filter.type ?? 'event';
  if (type !== 'event' && type !== 'person' && type !== 'cohort') {
    invalid(`Property filters of type "${String(type)}" are not supported on events (use event, person or cohort).`);
  }
  if (type !== 'cohort' && (typeof filter.key !== 'string' || filter.key === '')) {
    invalid('Every property filter needs a "key".', 'required');
  }
  return { scope: type, negation: filter.negation === true, filter };
}

/** The leaf as the flag engine's condition reads it: event properties are presented as the "person" properties. */
function engineFilter(leaf: FilterLeaf): Record<string, unknown> {
  const { negation: _negation, ...rest } = leaf.filter;
  return { ...rest, type: leaf.scope === 'cohort' ? 'cohort' : 'person' };
}

/** What a compiled filter reads from one stored event; the person parts are looked up only when a leaf needs them. */
export interface FilterSubject {
  distinctId: string;
  eventProperties(): Record<string, unknown>;
  person(): { properties: Record<string, unknown>; staticCohortIds: ReadonlySet<number>; createdAt: string } | null;
  now: Date;
}

export type EventMatcher = (subject: FilterSubject) => boolean;

interface CompiledLeaf {
  scope: FilterScope;
  negation: boolean;
  condition: CompiledCondition;
}
interface CompiledGroup {
  and: boolean;
  children: (CompiledGroup | CompiledLeaf)[];
}

/** Compiles a validated tree (in the worker that scans the shards). */
export function compilePropertyFilter(tree: FilterGroup, cohorts: readonly CohortRecord[]): EventMatcher {
  const compiled = compileNode(tree, cohorts) as CompiledGroup;
  return (subject) => matchGroup(compiled, subject);
}

/** Whether any leaf reads the person (so scans can skip person lookups otherwise). */
export function needsPerson(tree: FilterNode | null): boolean {
  if (tree === null) return false;
  return isGroup(tree) ? tree.children.some(needsPerson) : tree.scope !== 'event';
}

function compileNode(node: FilterNode, cohorts: readonly CohortRecord[]): CompiledGroup | CompiledLeaf {
  if (isGroup(node)) return { and: node.and, children: node.children.map((c) => compileNode(c, cohorts)) };
  const condition = compileCondition(
    { properties: [engineFilter(node)], rollout_percentage: 100 },
    node.scope === 'cohort' ? cohorts : [],
    {},
  );
  return { scope: node.scope, negation: node.negation, condition };
}

const NO_COHORTS: ReadonlySet<number> = new Set();

function matchGroup(g: CompiledGroup, s: FilterSubject): boolean {
  // PostHog: an AND group without values matches, an OR group without values does not.
  if (g.and) {
    for (const c of g.children) if (!matchChild(c, s)) return false;
    return true;
  }
  for (const c of g.children) if (matchChild(c, s)) return true;
  return false;
}

function matchChild(c: CompiledGroup | CompiledLeaf, s: FilterSubject): boolean {
  if ('children' in c) return matchGroup(c, s);
  return matchLeaf(c, s) !== c.negation;
}

function matchLeaf(leaf: CompiledLeaf, s: FilterSubject): boolean {
  const person = leaf.scope === 'event' ? null : s.person();
  const ctx: EvaluationContext = {
    distinctId: s.distinctId,
    personProperties: leaf.scope === 'event' ? s.eventProperties() : (person?.properties ?? {}),
    groups: {},
    groupProperties: {},
    hashKeyOverrides: {},
    staticCohortIds: person?.staticCohortIds ?? NO_COHORTS,
    personCreatedAt: person?.createdAt ?? null,
    now: s.now,
  };
  return matchesConditionProperties(leaf.condition, ctx);
}

/** Whether any leaf is a cohort filter (then the project's cohorts travel with the scan). */
export function usesCohorts(tree: FilterNode | null): boolean {
  if (tree === null) return false;
  return isGroup(tree) ? tree.children.some(usesCohorts) : tree.scope === 'cohort';
}
