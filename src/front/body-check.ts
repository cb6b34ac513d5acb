/**
 * Parsing and checking management-API JSON bodies on the front (cheap; keeps malformed requests away from the
 * workers). The first schema error becomes a DRF-style 400 with `attr` (nested paths joined with `__`).
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../domain/json-depth.js';
import { Errors, type ApiError } from '../protocol/errors.js';

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>();

function validatorOf(schema: TSchema) {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = Compile(schema)));
  return v;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * Empty body = `{}` (DRF treats a missing body as no fields). A body nested past MAX_JSON_DEPTH is refused here,
 * before anything recursive touches it (the front's msgpackr pack of the tick's batch overflowed at ~1,400 levels
 * and took the process down: src/domain/json-depth.ts).
 */
export function parseJsonBody(raw: Uint8Array): unknown {
  if (raw.length === 0) return {};
  const text = decoder.decode(raw);
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw Errors.parseError((error as Error).message);
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw Errors.tooDeep(MAX_JSON_DEPTH);
  return value;
}

const TYPE_MESSAGES: Record<string, string> = {
  boolean: 'Must be a valid boolean.',
  string: 'Not a valid string.',
  integer: 'A valid integer is required.',
  number: 'A valid number is required.',
  object: 'Expected a dictionary of items.',
  array: 'Expected a list of items.',
};

export function checkBody(schema: TSchema, body: unknown): ApiError | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return Errors.validation(null, 'invalid_input', 'Invalid data. Expected a dictionary.');
  }
  const v = validatorOf(schema);
  if (v.Check(body)) return null;
  const errors = [...v.Errors(body)];
  // Prefer a concrete error over the summary errors of unions ("must match a schema in anyOf").
  const first = errors.find((e) => e.keyword !== 'anyOf') ?? errors[0];
  if (!first) return Errors.validation(null, 'invalid_input', 'Invalid data.');
  const path = first.instancePath.split('/').filter(Boolean);
  if (first.keyword === 'required') {
    const missing = (first.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '';
    return Errors.required([...path, missing].join('__'));
  }
  const attr = path.join('__') || null;
  if (first.keyword === 'type') {
    const expected = String((first.params as { type?: unknown }).type ?? '');
    return Errors.validation(attr, 'invalid_input', TYPE_MESSAGES[expected] ?? `Invalid value: ${first.message}.`);
  }
  return Errors.validation(attr, 'invalid_input', `Invalid value: ${first.message}.`);
}
