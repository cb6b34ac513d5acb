/**
 * A property cohort's definition as the API accepts it (flags.md §3.6): `filters.properties` is a group
 * `{type: 'AND'|'OR', values: [...]}` whose values are nested groups or leaves; a leaf is a person-property filter
 * (optionally `negation: true`) or a reference to another cohort `{type: 'cohort', key: 'id', value: <id>}`.
 * The legacy form `groups: [{properties: [...]}, ...]` (an OR of ANDs) is converted to it.
 *
 * Quill evaluates cohorts from person properties only, like the flag service does, so behavioral (event-based)
 * filters are refused rather than silently never matching.
 */
import { validateFlagFilters } from '../../../domain/flags/index.js';
import type { Cohort } from '../../../domain/model.js';
import { ApiError, Errors } from '../../../protocol/errors.js';

const BEHAVIORAL_TYPES = new Set(['behavioral', 'event', 'element', 'action', 'events', 'actions']);
/** Keys of a legacy group that describe event behaviour ("performed event X in the last N days"). */
const LEGACY_BEHAVIORAL_KEYS = ['action_id', 'event_id', 'days', 'count', 'count_operator', 'start_date', 'end_date'];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface Definition {
  filters: Record<string, unknown>;
  /** The legacy form as sent, kept for clients that read it back; [] when `filters` was sent. */
  groups: unknown[];
}

function invalid(detail: string, code = 'invalid_input'): never {
  throw Errors.validation('filters', code, detail);
}

function behavioral(): never {
  throw Errors.validation('filters', 'behavioral_cohort_found',
    'Behavioral filters (events and actions) are not supported in cohorts: use person properties or other cohorts.');
}

/** `filters` wins over `groups`, as in PostHog; `existing` is kept when the body has neither. */
export function definitionOf(body: Record<string, unknown>, existing: Definition | null): Definition {
  if (body.filters !== undefined && body.filters !== null) {
    if (!isObject(body.filters)) throw Errors.validation('filters', 'invalid_input', 'Expected a dictionary of items.');
    const root = body.filters.properties;
    // A bare list of filters (the flag-condition habit) reads as an AND group.
    const filters = Array.isArray(root) ? { ...body.filters, properties: { type: 'AND', values: root } } : body.filters;
    return { filters, groups: [] };
  }
  if (body.groups !== undefined && body.groups !== null) return fromLegacyGroups(body.groups);
  return existing ?? { filters: {}, groups: [] };
}

function fromLegacyGroups(groups: unknown): Definition {
  if (!Array.isArray(groups)) throw Errors.validation('groups', 'invalid_input', 'Expected a list of items.');
  const values = groups.map((g) => {
    if (!isObject(g)) throw Errors.validation('groups', 'invalid_input', 'Every group must be an object.');
    if (LEGACY_BEHAVIORAL_KEYS.some((k) => g[k] !== undefined && g[k] !== null)) behavioral();
    const props = g.properties ?? [];
    if (!Array.isArray(props)) throw Errors.validation('groups', 'invalid_input', 'A group\'s properties must be a list.');
    return { type: 'AND', values: props };
  });
  return { filters: { properties: { type: 'OR', values } }, groups };
}

/** Cohort ids a definition references directly. */
export function referencedCohortIds(filters: Record<string, unknown>): number[] {
  const out: number[] = [];
  const walk = (node: unknown): void => {
    if (!isObject(node)) return;
    if (Array.isArray(node.values)) node.values.forEach(walk);
    else if (node.type === 'cohort') {
      const id = Number(node.value);
      if (Number.isInteger(id)) out.push(id);
    }
  };
  walk(filters.properties);
  return out;
}

/**
 * Checks the definition's shape, leaf types, operators and values, and that referenced cohorts exist (not
 * deleted, same project) without leading back to `selfId`. Throws a 400 with attr `filters`.
 */
export function validateDefinition(filters: Record<string, unknown>, cohorts: readonly Cohort[], selfId: number | null): void {
  const root = filters.properties;
  // No group, or the empty group `{}` (which matches every person), has nothing to check.
  if (root === undefined || (isObject(root) && Object.keys(root).length === 0)) return;
  const leaves: Record<string, unknown>[] = [];
  collectLeaves(root, leaves);

  const live = new Map(cohorts.filter((c) => !c.deleted).map((c) => [c.id, c]));
  const error = validateFlagFilters(
    { groups: [{ properties: leaves }] },
    { existingCohortIds: new Set(live.keys()), isStaticCohort: (id) => live.get(id)?.is_static === true, groupTypes: {} },
  );
  if (error) throw new ApiError(400, 'validation_error', error.code, error.detail, 'filters');

  if (selfId === null) return;
  // A cycle would make membership undefined; the engine reads it as "not a member", the API refuses it.
  const seen = new Set<number>();
  const stack = referencedCohortIds(filters);
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === selfId) invalid('A cohort cannot refer to itself, directly or through other cohorts.');
    if (seen.has(id)) continue;
    seen.add(id);
    const c = live.get(id);
    if (c && !c.is_static) stack.push(...referencedCohortIds(c.filters));
  }
}

function collectLeaves(node: unknown, leaves: Record<string, unknown>[]): void {
  if (!isObject(node)) invalid('Every value of a property group must be an object.');
  const type = node.type;
  if (Array.isArray(node.values)) {
    if (type !== 'AND' && type !== 'OR') invalid('A property group needs "type": "AND" or "OR".');
    for (const child of node.values) collectLeaves(child, leaves);
    return;
  }
  if (type === 'AND' || type === 'OR') invalid('A property group needs a list of "values".');
  if (typeof type === 'string' && BEHAVIORAL_TYPES.has(type)) behavioral();
  if (type !== undefined && type !== null && type !== 'person' && type !== 'cohort') {
    invalid(`Cohort filters can use person properties and other cohorts only, not "${String(type)}".`);
  }
  if (node.negation !== undefined && typeof node.negation !== 'boolean') invalid('negation must be true or false.');
  leaves.push(node);
}
