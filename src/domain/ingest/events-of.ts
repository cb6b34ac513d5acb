/**
 * §1.3 body shapes → raw event list:
 * - bare array → its items;
 * - object with an array `batch` → the batch items (an empty batch gives [] — the spec-era 200 `{status: 1}`
 *   with nothing ingested);
 * - object with `batch` of another non-null type → [] (malformed batch: acceptEvents refuses the request);
 * - any other object → itself, as one event;
 * - scalars → [].
 * Items are returned as-is; normalizeEvent rejects the ones that are not objects.
 */
export function eventsOf(payload: unknown): unknown[] {
  if (Array.isArray(payload)) return payload;
  if (payload === null || typeof payload !== 'object') return [];
  const batch = (payload as Record<string, unknown>)['batch'];
  if (Array.isArray(batch)) return batch;
  if (batch !== undefined && batch !== null) return [];
  return [payload];
}
