/**
 * The `properties` query parameter shared by GET /events/ and GET /persons/ (analytics.md §0.3): a JSON list of
 * property filters (an implicit AND), a property group `{type: 'AND'|'OR', values: [...]}`, or one filter object.
 * Every problem is a 400 with attr `properties`.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../domain/json-depth.js';
import { Errors } from '../../protocol/errors.js';

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function invalidProperties(detail: string, code = 'invalid_input'): never {
  throw Errors.validation('properties', code, detail);
}

/** The parameter as a root property group, or null when it is absent or blank. */
export function propertyGroupParam(raw: string | undefined): Record<string, unknown> | null {
  if (raw === undefined || raw.trim() === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    invalidProperties('Properties must be JSON: a list of property filters or a property group.');
  }
  // Filter groups are read recursively: bound them as every client JSON is bounded.
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) invalidProperties(`Properties nest deeper than ${MAX_JSON_DEPTH} levels.`);
  if (Array.isArray(parsed)) return { type: 'AND', values: parsed };
  if (isObject(parsed) && Array.isArray(parsed.values)) return parsed;
  if (isObject(parsed) && 'key' in parsed) return { type: 'AND', values: [parsed] };
  return invalidProperties('Properties must be a list of property filters or a property group.');
}
