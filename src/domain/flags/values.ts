/**
 * Value conversions shared by the operators, mirroring how the Rust service reads serde_json values.
 */

/**
 * PostHog's `to_string_representation`: strings as-is, everything else as compact JSON text. serde_json (without
 * `preserve_order`) prints object keys sorted, so we sort too. Integral floats print as "5" here where Rust would
 * print "5.0" — JS cannot tell them apart after JSON.parse.
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

const UPPER_ASCII = /[A-Z]/g;

/**
 * ASCII-only lowercase (Rust `to_ascii_lowercase`), used by the substring operators: non-ASCII letters keep
 * their case, so `"É"` does not contain `"é"`.
 */
export function asciiLower(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return s.replace(UPPER_ASCII, (ch) => String.fromCharCode(ch.charCodeAt(0) | 0x20));
  }
  return s.toLowerCase();
}

// Rust's `str::parse::<f64>`: no surrounding whitespace, no hex, optional sign, "inf"/"infinity"/"nan" in any case.
const F64_TEXT = /^[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** Rust `to_f64_representation`: numbers as-is, other values through their text; NaN when not numeric. */
export function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  const text = textOf(value);
  if (!F64_TEXT.test(text)) return NaN;
  const lower = text.toLowerCase();
  if (lower.endsWith('nan')) return NaN;
  if (lower.endsWith('inf') || lower.endsWith('infinity')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

/** Truthiness used by `exact` when the filter value is boolean-like (flags.md §3.3). */
export function isTruthyValue(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.length === 4 && value.toLowerCase() === 'true';
  if (Array.isArray(value)) {
    for (const item of value) if (!isTruthyValue(item)) return false;
    return true;
  }
  return false;
}

/** A bool, "true"/"false" in any case, or a list made only of such (an empty list counts). */
export function isBooleanLike(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    return lower === 'true' || lower === 'false';
  }
  if (Array.isArray(value)) {
    for (const item of value) if (!isBooleanLike(item)) return false;
    return true;
  }
  return false;
}

/** Integer-looking string or number -> number, else null (cohort ids, flag ids, group type indexes). */
export function intOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isInteger(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
