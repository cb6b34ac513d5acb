/**
 * What the suites comparing two executors (or an executor and a reference) share: an insight's query string, and
 * numbers compared within a relative 1e-9, since two engines add the same numbers in different orders (persons by
 * uuid on ClickHouse, by shard locally) and the last digits of a sum or an average may differ.
 */

/** An insight's query string: `refresh=true` (no cached answer) and each parameter, objects as JSON. */
export function insightQuery(params: Record<string, unknown>): string {
  return Object.entries({ refresh: true, ...params })
    .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
}

/** Whether two numbers agree to a relative 1e-9. */
export function nearlyEqual(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** `actual` with each number replaced by `expected`'s where they agree to 1e-9 relative (then `t.same` compares the rest). */
export function aligned(actual: unknown, expected: unknown): unknown {
  if (typeof actual === 'number' && typeof expected === 'number') return nearlyEqual(actual, expected) ? expected : actual;
  if (Array.isArray(actual) && Array.isArray(expected)) return actual.map((v, i) => aligned(v, expected[i]));
  if (actual !== null && typeof actual === 'object' && expected !== null && typeof expected === 'object') {
    return Object.fromEntries(Object.entries(actual).map(([k, v]) => [k, aligned(v, (expected as Record<string, unknown>)[k])]));
  }
  return actual;
}
