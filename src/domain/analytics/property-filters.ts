/**
 * Property filters of the analyses (analytics.md §0.3): parsing every accepted form into one tree, and deciding
 * one leaf for one property value. The scan evaluates a leaf once per distinct value of a block's column, so
 * matching is a plain function of (present, value).
 *
 * Semantics are those of PostHog's analytics queries, not of flag evaluation: `exact` compares the value's text
 * case-sensitively (flags compare case-insensitively), `"true"`/`"false"` filter values also match booleans, the
 * negated operators match events without the key, numeric operators read the value as a float (non-numbers never
 * match) and an invalid regex matches nothing.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { invalidInput } from './errors.js';
import { compileRegex } from '../patterns/regex.js';
import { filterDateBound, propertyInstant } from './property-date.js';

/**
 * `event_name` is internal (never parsed from a request): the event's name, as an action step's event condition
 * (src/domain/analytics/action-filter.ts), so an action is a filter tree like any other.
 */
export type LeafType = 'event' | 'person' | 'element' | 'group' | 'cohort' | 'event_name';

export interface FilterLeaf {
  type: LeafType;
  key: string;
  operator: string;
  value: unknown;
  /** Group filters: which group type's properties. */
  groupTypeIndex: number | null;
  negation: boolean;
}

export interface FilterGroup {
  and: boolean;
  children: FilterNode[];
}

export type FilterNode = FilterGroup | FilterLeaf;

export const isFilterGroup = (n: FilterNode): n is FilterGroup => (n as FilterGroup).children !== undefined;

export const OPERATORS: ReadonlySet<string> = new Set([
  'exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'is_set', 'is_not_set', 'is_date_exact', 'is_date_after', 'is_date_before',
]);

const ELEMENT_KEYS: ReadonlySet<string> = new Set(['tag_name', 'text', 'href', 'selector']);
const UNSUPPORTED_TYPES: Readonly<Record<string, string>> = {
  recording: 'Recording filters are not supported: Quill does not store session recordings.',
  behavioral: 'Behavioral filters are not supported yet.',
  session: 'Session property filters are not supported yet.',
  hogql: 'HogQL filters are not supported.',
  data_warehouse: 'Data warehouse filters are not supported.',
};
const MAX_DEPTH = 16;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The filter tree of a `properties` value (already JSON-decoded, or its JSON text): a flat list (AND), a group
 * `{type: AND|OR, values}` (nested groups allowed; one group's values are all groups or all filters), a single
 * filter, or the old `{"key__operator": value}` dict. Null when it filters nothing. Errors name `attr`.
 */
export function parseFilters(raw: unknown, attr = 'properties'): FilterGroup | null {
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') return null;
    try {
      value = JSON.parse(value);
    } catch {
      invalidInput(attr, 'Properties must be JSON: a list of property filters or a property group.');
    }
  }
  if (value === null || value === undefined) return null;
  // Groups are bounded below (MAX_DEPTH); filter values are not, and their text is taken by JSON.stringify, which
  // recurses. A request body is bounded already (src/front/body-check.ts), JSON text in a parameter or in a string is not.
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) invalidInput(attr, `Properties nest deeper than ${MAX_JSON_DEPTH} levels.`);
  let root: Record<string, unknown>;
  if (Array.isArray(value)) root = { type: 'AND', values: value };
  else if (isObject(value) && Array.isArray(value.values)) root = value;
  else if (isObject(value) && 'key' in value) root = { type: 'AND', values: [value] };
  else if (isObject(value)) root = { type: 'AND', values: Object.entries(value).map(([k, v]) => legacyDictFilter(k, v)) };
  else return invalidInput(attr, 'Properties must be a list of property filters or a property group.');
  const tree = groupOf(root, attr, 0);
  return hasLeaves(tree) ? tree : null;
}

function legacyDictFilter(name: string, value: unknown): Record<string, unknown> {
  const at = name.lastIndexOf('__');
  const op = at > 0 ? name.slice(at + 2) : '';
  if (at > 0 && OPERATORS.has(op)) return { key: name.slice(0, at), operator: op, value, type: 'event' };
  return { key: name, operator: 'exact', value, type: 'event' };
}

function hasLeaves(n: FilterNode): boolean {
  return isFilterGroup(n) ? n.children.some(hasLeaves) : true;
}

function groupOf(node: Record<string, unknown>, attr: string, depth: number): FilterGroup {
  if (depth > MAX_DEPTH) invalidInput(attr, 'Property groups are nested too deeply.');
  const type = node.type === 'property' ? 'AND' : node.type ?? 'AND';
  if (type !== 'AND' && type !== 'OR') invalidInput(attr, 'A property group needs "type": "AND" or "OR".');
  const children: FilterNode[] = [];
  for (const child of node.values as unknown[]) {
    if (!isObject(child)) invalidInput(attr, 'Every property filter must be an object.');
    children.push(Array.isArray(child.values) ? groupOf(child, attr, depth + 1) : leafOf(child, attr));
  }
  return { and: type === 'AND', children };
}

function leafOf(f: Record<string, unknown>, attr: string): FilterLeaf {
  let type = f.type ?? 'event';
  if (type === 'static-cohort' || type === 'precalculated-cohort') type = 'cohort';
  if (typeof type !== 'string') return invalidInput(attr, 'A property filter "type" must be a string.');
  if (UNSUPPORTED_TYPES[type]) invalidInput(attr, UNSUPPORTED_TYPES[type]!);
  if (type !== 'event' && type !== 'person' && type !== 'element' && type !== 'group' && type !== 'cohort') {
    invalidInput(attr, `Unknown property filter type "${type}".`);
  }
  const operator = f.operator === undefined || f.operator === null ? (type === 'cohort' ? 'in' : 'exact') : f.operator;
  if (typeof operator !== 'string') return invalidInput(attr, 'A property filter "operator" must be a string.');
  let groupTypeIndex: number | null = null;
  if (type === 'cohort') {
    const id = Number(f.value);
    if (!Number.isInteger(id)) invalidInput(attr, 'A cohort filter needs the cohort id as its value.');
    if (operator !== 'in' && operator !== 'not_in' && operator !== 'exact') invalidInput(attr, `Unknown cohort operator "${operator}".`);
    return { type, key: 'id', operator: operator === 'not_in' ? 'not_in' : 'in', value: id, groupTypeIndex, negation: f.negation === true };
  }
  if (typeof f.key !== 'string' || f.key === '') invalidInput(attr, 'Every property filter needs a "key".', 'required');
  if (f.key.length > MAX_KEY_LENGTH) invalidInput(attr, `A property filter's key is longer than ${MAX_KEY_LENGTH.toLocaleString('en-US')} characters.`);
  if (Array.isArray(f.value) && f.value.length > MAX_FILTER_VALUES) {
    invalidInput(attr, `A property filter lists more than ${MAX_FILTER_VALUES.toLocaleString('en-US')} values; a cohort holds longer lists.`);
  }
  if (!OPERATORS.has(operator)) invalidInput(attr, `Unknown operator "${operator}".`);
  if (type === 'element' && !ELEMENT_KEYS.has(f.key)) invalidInput(attr, 'Element filters take the keys tag_name, text, href or selector.');
  if (type === 'group') {
    const index = Number(f.group_type_index);
    if (!Number.isInteger(index) || index < 0 || index > 4) invalidInput(attr, 'A group filter needs a group_type_index from 0 to 4.');
    groupTypeIndex = index;
  }
  if (operator !== 'is_set' && operator !== 'is_not_set' && f.value === undefined) invalidInput(attr, `The filter on "${f.key}" needs a value.`, 'required');
  if ((operator === 'regex' || operator === 'not_regex') && typeof f.value !== 'string') invalidInput(attr, 'A regex filter needs a string value.');
  return { type, key: f.key, operator, value: f.value ?? null, groupTypeIndex, negation: f.negation === true };
}

/**
 * Bounds on one filter, so that compiling it stays small work on a thread that owes flag answers: a list of
 * 200,000 values took ~0.3 s of one worker's loop to take in (hashing, copying to the other workers, per-block
 * compilation), and a 1 MB key ~0.07 s. Longer lists belong in a (static) cohort.
 */
export const MAX_FILTER_VALUES = 10_000;
export const MAX_KEY_LENGTH = 65_536;

/** The text PostHog compares a property by: strings as they are, anything else as JSON. */
export function propertyText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
}

/** `toFloat64OrNull` of a property: numbers, and strings that are entirely a number. */
export function propertyNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const t = value.trim();
  if (t === '' || !/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}

/** A leaf compiled for repeated matching: `(present, value) → boolean` (negation applied by the caller). */
export type ValueMatcher = (present: boolean, value: unknown) => boolean;

function filterTexts(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const v of list) {
    const text = propertyText(v);
    out.push(text);
  }
  return out;
}

/**
 * Compiles a leaf's operator and value. `dateOfFilter` turns the filter's date value into an instant (relative
 * dates such as `-7d` need the project's time zone and the query's now, which the caller has), `dateOfValue` a
 * property's value (property-date.ts: a date without offset is wall-clock time in the project's time zone).
 */
export function compileMatcher(
  leaf: FilterLeaf,
  dateOfFilter: (v: unknown) => number = (v) => filterDateBound(v, Date.now(), 'UTC'),
  dateOfValue: (v: unknown) => number = (v) => propertyInstant(v, 'UTC'),
): ValueMatcher {
  const op = leaf.operator;
  switch (op) {
    case 'is_set':
      return (present) => present;
    case 'is_not_set':
      return (present) => !present;
    case 'exact':
    case 'is_not': {
      const texts = new Set(filterTexts(leaf.value));
      const positive = (present: boolean, v: unknown) => present && texts.has(propertyText(v));
      return op === 'exact' ? positive : (present, v) => !positive(present, v);
    }
    case 'icontains':
    case 'not_icontains': {
      const needle = propertyText(leaf.value).toLowerCase();
      const positive = (present: boolean, v: unknown) => present && propertyText(v).toLowerCase().includes(needle);
      return op === 'icontains' ? positive : (present, v) => !positive(present, v);
    }
    case 'regex':
    case 'not_regex': {
      const r = compileRegex(String(leaf.value), 'clickhouse');
      if (r === null) return () => false;
      const positive = (present: boolean, v: unknown) => present && r.test(propertyText(v));
      return op === 'regex' ? positive : (present, v) => !positive(present, v);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const bound = propertyNumber(leaf.value);
      if (bound === null) return () => false;
      return (present, v) => {
        if (!present) return false;
        const n = propertyNumber(v);
        if (n === null) return false;
        return op === 'gt' ? n > bound : op === 'gte' ? n >= bound : op === 'lt' ? n < bound : n <= bound;
      };
    }
    case 'is_date_exact':
    case 'is_date_after':
    case 'is_date_before': {
      const bound = dateOfFilter(leaf.value);
      if (Number.isNaN(bound)) return () => false;
      return (present, v) => {
        if (!present) return false;
        const t = dateOfValue(v);
        if (Number.isNaN(t)) return false;
        if (op === 'is_date_after') return t > bound;
        if (op === 'is_date_before') return t < bound;
        return Math.floor(t / 1000) === Math.floor(bound / 1000);
      };
    }
    default:
      return () => false;
  }
}

/** Every leaf of a tree (for validation and for telling which columns a query reads). */
export function leavesOf(node: FilterNode | null, out: FilterLeaf[] = []): FilterLeaf[] {
  if (node === null) return out;
  if (isFilterGroup(node)) for (const c of node.children) leavesOf(c, out);
  else out.push(node);
  return out;
}

/** AND of several optional trees. */
/** "The person is in cohort `id`" as a filter leaf: a cohort breakdown's value, one series per cohort. */
export function cohortLeaf(id: number): FilterLeaf {
  return { type: 'cohort', key: 'id', operator: 'in', value: id, groupTypeIndex: null, negation: false };
}

export function andFilters(...trees: (FilterNode | null)[]): FilterGroup | null {
  const children = trees.filter((t): t is FilterNode => t !== null);
  return children.length === 0 ? null : { and: true, children };
}
