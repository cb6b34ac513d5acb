/**
 * A property's type as PostHog's property definitions name it, inferred from values seen for it (the distinct
 * values of a block's dictionary column, or persons' current properties). PostHog decides the type once, from the
 * first value ingestion sees; here it is decided from a sample of the values, so a property whose values disagree
 * is `String`, the type every filter operator accepts.
 */
export const PROPERTY_TYPES = ['String', 'Numeric', 'Boolean', 'DateTime'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** Values looked at per sample: enough to catch a mixed property, bounded for a column of 30,000 distinct values. */
export const TYPE_SAMPLE = 64;

// ISO 8601 date or date-time (what SDKs send for dates): 2024-01-31, 2024-01-31T12:00:00Z, …+02:00, with fractions.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function typeOfValue(v: unknown): PropertyType | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return 'Numeric';
  if (typeof v === 'boolean') return 'Boolean';
  if (typeof v === 'string' && ISO_DATE.test(v) && !Number.isNaN(Date.parse(v))) return 'DateTime';
  return 'String';
}

/**
 * The type of a property from some of its values: the one type every non-null value has, `String` when they
 * disagree, null when no value is non-null (nothing to tell). Looks at most at `TYPE_SAMPLE` values.
 */
export function inferPropertyType(values: readonly unknown[]): PropertyType | null {
  let found: PropertyType | null = null;
  const end = Math.min(values.length, TYPE_SAMPLE);
  for (let i = 0; i < end; i++) {
    const t = typeOfValue(values[i]);
    if (t === null) continue;
    if (found !== null && found !== t) return 'String';
    found = t;
  }
  return found;
}

/** Two inferences of the same property (from different blocks or shards) combined the same way. */
export function combinePropertyTypes(a: PropertyType | null, b: PropertyType | null): PropertyType | null {
  if (a === null) return b;
  if (b === null || a === b) return a;
  return 'String';
}
