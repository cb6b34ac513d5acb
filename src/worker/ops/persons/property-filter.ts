/**
 * The `properties` filter of GET /persons/ (ingestion-and-api.md §5.2): a JSON list of property filters (AND) or a
 * property group `{type: 'AND'|'OR', values: [...]}` with nested groups. Only person-property filters apply
 * (`type: person`, or no type); event, element, cohort and other filters are left out, and groups left empty by
 * that are dropped.
 *
 * Matching reuses the flag engine: the pruned group is compiled as the definition of an anonymous dynamic cohort,
 * so nested AND/OR groups, every operator and `negation` behave exactly as they do in flags and cohorts.
 */
import {
  compileCohorts, matchesCohort, validateFlagFilters, type EvaluationContext,
} from '../../../domain/flags/index.js';
import { invalidProperties as invalid, isObject, propertyGroupParam } from '../property-filter-param.js';

export type PersonMatcher = (ctx: EvaluationContext) => boolean;

interface Group {
  type: 'AND' | 'OR';
  values: (Group | Record<string, unknown>)[];
}

/** Id of the anonymous cohort the filter compiles into; real cohort ids are positive. */
const FILTER_COHORT_ID = -1;




/** A matcher for the raw query value, or null when it filters nothing. Throws a 400 (attr `properties`). */
export function personPropertyMatcher(raw: string | undefined): PersonMatcher | null {
  const root = propertyGroupParam(raw);
  if (root === null) return null;
  const leaves: Record<string, unknown>[] = [];
  const group = prune(root, leaves);
  if (group === null) return null;

  // The flag API's checks (known operators, regexes that compile, parseable dates, values present) apply here too.
  const error = validateFlagFilters({ groups: [{ properties: leaves }] }, { existingCohortIds: new Set(), groupTypes: {} });
  if (error) invalid(error.detail, error.code);

  const compiled = compileCohorts(
    [{ id: FILTER_COHORT_ID, name: 'persons filter', deleted: false, is_static: false, filters: { properties: group } }],
    {},
  );
  return (ctx) => matchesCohort(compiled, FILTER_COHORT_ID, ctx);
}

/** Keeps person filters (typed `person`), collecting them in `leaves`; null when nothing is left. */
function prune(node: Record<string, unknown>, leaves: Record<string, unknown>[]): Group | null {
  const type = node.type;
  if (type !== 'AND' && type !== 'OR') invalid('A property group needs "type": "AND" or "OR".');
  if (!Array.isArray(node.values)) invalid('A property group needs a list of "values".');
  const values: Group['values'] = [];
  for (const child of node.values) {
    if (!isObject(child)) invalid('Every property filter must be an object.');
    if (Array.isArray(child.values)) {
      const sub = prune(child, leaves);
      if (sub !== null) values.push(sub);
      continue;
    }
    if (child.type !== undefined && child.type !== null && child.type !== 'person') continue;
    const leaf = { ...child, type: 'person' };
    leaves.push(leaf);
    values.push(leaf);
  }
  return values.length > 0 ? { type, values } : null;
}
