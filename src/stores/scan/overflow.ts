/**
 * Properties kept outside the block's property columns.
 *
 * A block gives a property its own column (`p:<key>`, `pp:<key>`) only while it has fewer than
 * MAX_PROPERTY_COLUMNS of that kind, the key is at most MAX_COLUMN_KEY characters, and the event has not already
 * opened NEW_COLUMNS_PER_EVENT columns: the rest of a row's properties go, as one object, into the row's overflow
 * column (`properties_overflow`, `person_properties_overflow`), as its JSON text: an object of a hundred keys no
 * other row has costs several times its text as a JavaScript object, and is read back only by the rare query that
 * asks for one of its keys. So one event with 60,000 names, or 10,000 events
 * with 100 names no other event has, cost the block what they sent (one object per row, in one column), not a
 * column per name with every later row paying for it — PostHog's ClickHouse keeps every property in one JSON
 * column for the same reason, and materialises only the common ones.
 *
 * Readers do not have to know: a block's `dict('p:key')` for a key without a column is derived from the overflow
 * column (`propertyColumnOf`), and whole-row readers merge the row's overflow object (`overflowObjectAt`). A key is
 * usually either a column or in the overflow within one block; when both hold values (a key that overflowed for a
 * wide event and got a column later), the derived column merges them.
 */
import type { BlockView, DictColumn } from './column-block.js';

/** Column name prefixes of the event's properties and of its person's. */
export const EVENT_PROP = 'p:';
export const PERSON_PROP = 'pp:';

/** Property columns of one kind (event, person) a block opens at most. posthog-js sends 60-100 names an event. */
export const MAX_PROPERTY_COLUMNS = 1_000;
/** Property columns one event may open: the first wide event of a block must not take every column. */
export const NEW_COLUMNS_PER_EVENT = 256;
/**
 * Longer keys never get a column: a column's name is part of an LMDB key (at most 1,978 bytes), and PostHog makes
 * no property definition for a name over 200 bytes either.
 */
export const MAX_COLUMN_KEY = 200;

/** The overflow column of the event properties and of the person properties. */
export const OVERFLOW = { event: 'properties_overflow', person: 'person_properties_overflow' } as const;

/** Sets an own property, also when the key is `__proto__` (a plain assignment would set the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** An overflow value as the object it holds (the text is parsed), or null for anything else. */
export function overflowObject(value: unknown): Record<string, unknown> | null {
  if (typeof value === 'string') {
    try {
      const o = JSON.parse(value) as unknown;
      return o !== null && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Derived columns of one overflow column, by key (a derived column is computed once per overflow column read). */
const derived = new WeakMap<DictColumn, Map<string, DictColumn | null>>();

/**
 * The column of property `key` derived from an overflow column: codes into the distinct values `key` takes in the
 * overflow objects; null when no row's overflow has the key. `real` is the block's own column of the key, if any:
 * its rows win, the overflow fills the others.
 */
export function propertyColumnOf(overflow: DictColumn, key: string, real: DictColumn | null): DictColumn | null {
  let byKey = derived.get(overflow);
  if (!byKey) derived.set(overflow, (byKey = new Map()));
  const cacheKey = real ? `\u0001${key}` : key;
  if (byKey.has(cacheKey)) return byKey.get(cacheKey)!;
  const column = derive(overflow, key, real);
  byKey.set(cacheKey, column);
  return column;
}

function derive(overflow: DictColumn, key: string, real: DictColumn | null): DictColumn | null {
  // Code of `key`'s value in each distinct overflow object (0: absent), numbered after the real column's values.
  const values: unknown[] = real ? [...real.values] : [];
  const primitives = new Map<unknown, number>();
  const objects = new Map<string, number>();
  const codeOfObject = new Uint32Array(overflow.values.length + 1);
  let any = false;
  overflow.values.forEach((text, i) => {
    const o = overflowObject(text);
    if (o === null || !Object.prototype.hasOwnProperty.call(o, key)) return;
    const value = o[key];
    if (value === undefined) return;
    let code: number | undefined;
    if (value === null || typeof value !== 'object') {
      code = primitives.get(value);
      if (code === undefined) primitives.set(value, (code = values.push(value)));
    } else {
      const text = JSON.stringify(value);
      code = objects.get(text);
      if (code === undefined) objects.set(text, (code = values.push(value)));
    }
    codeOfObject[i + 1] = code;
    any = true;
  });
  if (!any) return real;
  const n = overflow.codes.length;
  const codes = new Uint32Array(n);
  for (let row = 0; row < n; row++) {
    const own = real ? real.codes[row]! : 0;
    codes[row] = own !== 0 ? own : codeOfObject[overflow.codes[row]!]!;
  }
  return { codes, values };
}

/** The overflow object of a row (null: none), to merge into the row's properties read from its columns. */
export function overflowObjectAt(overflow: DictColumn | null, row: number): Record<string, unknown> | null {
  if (!overflow) return null;
  const code = overflow.codes[row] ?? 0;
  return code === 0 ? null : overflowObject(overflow.values[code - 1]);
}

/**
 * The keys the overflow objects hold (the property names of a block beyond its columns) with their distinct
 * objects' codes, at most `maxKeys` keys of at most MAX_COLUMN_KEY characters (what a definition may name): for
 * listing property names without deriving a column per key.
 */
export function overflowKeys(overflow: DictColumn | null, maxKeys: number): Map<string, { values: unknown[]; codes: number[] }> {
  const keys = new Map<string, { values: unknown[]; codes: number[] }>();
  if (!overflow) return keys;
  overflow.values.forEach((text, i) => {
    const o = overflowObject(text);
    if (o === null) return;
    for (const k in o) {
      let entry = keys.get(k);
      if (!entry) {
        if (keys.size >= maxKeys || k.length > MAX_COLUMN_KEY) continue;
        keys.set(k, (entry = { values: [], codes: [] }));
      }
      entry.values.push(o[k]);
      entry.codes.push(i + 1);
    }
  });
  return keys;
}

/**
 * What every block view answers for `dict(name)`: its own column, and for a property name the values the rows'
 * overflow objects hold for it too. One place, so no view forgets the overflow.
 */
export function withOverflow(view: BlockView, name: string, own: DictColumn | null): DictColumn | null {
  const kind = name.startsWith(EVENT_PROP) ? 'event' : name.startsWith(PERSON_PROP) ? 'person' : null;
  if (kind === null) return own;
  const overflow = view.dict(OVERFLOW[kind]);
  if (!overflow) return own;
  return propertyColumnOf(overflow, name.slice(kind === 'event' ? EVENT_PROP.length : PERSON_PROP.length), own);
}
