/**
 * Reading the legacy filter parameters of the analysis endpoints (analytics.md §0.1): GET sends every key as a
 * query parameter, JSON-valued keys as URL-encoded JSON text; POST sends the same keys as a JSON body, merged over
 * the query string. Strings that are not JSON are kept as they are (`breakdown=$browser` works quoted or not).
 */
import type { ActionDefinition, ActionLookup } from './action-filter.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';
import { invalidInput } from './errors.js';

export class FilterParams {
  /** `actions`: the project's actions, for entities of type `actions` (the worker reads them; parsing stays pure). */
  constructor(private readonly values: Readonly<Record<string, unknown>>, private readonly actions: ActionLookup | null = null) {}

  /** Query string and body merged, the body winning. */
  static of(query: Readonly<Record<string, string>>, body: unknown, actions: ActionLookup | null = null): FilterParams {
    const merged: Record<string, unknown> = { ...query };
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) Object.assign(merged, body);
    return new FilterParams(merged, actions);
  }

  /** The same parameters, entities of type `actions` resolved with `actions`. */
  withActions(actions: ActionLookup): FilterParams {
    return new FilterParams(this.values, actions);
  }

  /** Other parameters with this project's actions (an entity of a funnel or a persons request). */
  derive(values: Readonly<Record<string, unknown>>): FilterParams {
    return new FilterParams(values, this.actions);
  }

  /** The action an entity names by id (an integer, or its text); 400 naming `attr` when the project has none such. */
  action(id: unknown, attr: string): ActionDefinition {
    const n = typeof id === 'number' ? id : typeof id === 'string' && /^\d+$/.test(id.trim()) ? Number(id) : NaN;
    if (!Number.isSafeInteger(n)) return invalidInput(attr, 'An action entity needs the action\'s id.');
    const found = this.actions?.(n);
    if (!found) return invalidInput(attr, `Action ${n} does not exist.`, 'does_not_exist');
    return found;
  }

  has(name: string): boolean {
    const v = this.values[name];
    return v !== undefined && v !== null && v !== '';
  }

  raw(name: string): unknown {
    return this.values[name];
  }

  /**
   * The value, JSON-decoded when it is a string holding JSON. JSON text in a query parameter, or in a string of a
   * body, is not reached by the bound on request bodies (src/front/body-check.ts) and what reads it recurses
   * (filter trees, JSON.stringify of filter values): it is bounded here the same way.
   */
  json(name: string): unknown {
    const v = this.values[name];
    if (typeof v !== 'string') return v;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      return v;
    }
    if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) invalidInput(name, `${name} nests deeper than ${MAX_JSON_DEPTH} levels.`);
    return parsed;
  }

  string(name: string): string | null {
    const v = this.values[name];
    if (v === undefined || v === null || v === '') return null;
    return typeof v === 'string' ? v : String(v);
  }

  bool(name: string, fallback = false): boolean {
    const v = this.values[name];
    if (v === undefined || v === null || v === '') return fallback;
    if (typeof v === 'boolean') return v;
    const s = String(v).toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
    return invalidInput(name, 'Must be a valid boolean.');
  }

  int(name: string, fallback: number, min = -Infinity, max = Infinity): number {
    const v = this.values[name];
    if (v === undefined || v === null || v === '') return fallback;
    const n = typeof v === 'number' ? v : Number(String(v).trim());
    if (!Number.isInteger(n)) return invalidInput(name, 'A valid integer is required.');
    if (n < min || n > max) return invalidInput(name, `Must be between ${min} and ${max}.`);
    return n;
  }

  /** A JSON list parameter (`[]` when absent). */
  list(name: string): unknown[] {
    const v = this.json(name);
    if (v === undefined || v === null || v === '') return [];
    if (!Array.isArray(v)) return invalidInput(name, 'Expected a list of items.');
    return v;
  }

  /** Every key, for the normalised cache key and for echoing the filter in answers. */
  entries(): [string, unknown][] {
    return Object.entries(this.values);
  }
}
