import { elementsChainFromElements } from './elements-chain.js';
import { shapeViolation } from './event-shape.js';
import { resolveEventTime, toIso } from './timestamp.js';
import type { NormalizeContext, NormalizeOutcome, NormalizedEvent } from './types.js';
import { isUuid, uuidv7 } from './uuid.js';

/** §1.5: event names and distinct ids are cut to 200 characters. */
export const MAX_ID_LENGTH = 200;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Cut to `max` Unicode code points (Python's `s[:200]`, which is what Django did), never splitting a surrogate
 * pair. Strings of at most `max` UTF-16 units are returned untouched without scanning.
 */
export function truncateCodePoints(s: string, max: number): string {
  if (s.length <= max) return s;
  let units = 0;
  for (let points = 0; points < max && units < s.length; points++) {
    const c = s.charCodeAt(units);
    const pair = c >= 0xd800 && c <= 0xdbff && units + 1 < s.length && (s.charCodeAt(units + 1) & 0xfc00) === 0xdc00;
    units += pair ? 2 : 1;
  }
  return s.slice(0, units);
}

/** Non-strings are stringified: numbers/booleans as text, containers as JSON. null/undefined/'' → null. */
function stringify(v: unknown): string | null {
  if (typeof v === 'string') return v.length > 0 ? v : null;
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  const json = JSON.stringify(v);
  return typeof json === 'string' && json.length > 0 ? json : null;
}

/** §1.5 source order: top-level `$distinct_id` → `properties.distinct_id` → top-level `distinct_id`; first non-empty. */
function distinctIdOf(raw: Record<string, unknown>, props: Record<string, unknown>): string | null {
  return stringify(raw['$distinct_id']) ?? stringify(props['distinct_id']) ?? stringify(raw['distinct_id']);
}

/** The distinct id `normalizeEvent` gives a raw event (null if it has none), without normalising the rest. */
export function rawDistinctId(raw: unknown): string | null {
  if (!isPlainObject(raw)) return null;
  const rawProps = raw['properties'];
  const id = distinctIdOf(raw, isPlainObject(rawProps) ? rawProps : {});
  return id === null ? null : truncateCodePoints(id, MAX_ID_LENGTH);
}

/** Merge a top-level `$set`/`$set_once` into the properties' one; top-level wins. Reuses objects when possible. */
function mergeTopLevel(props: Record<string, unknown>, key: '$set' | '$set_once', top: unknown): void {
  if (!isPlainObject(top)) return;
  const inner = props[key];
  props[key] = isPlainObject(inner) ? { ...inner, ...top } : top;
}

/**
 * Validate and normalise one raw event (§1.5–1.8, §1.11 minus the store-dependent `$groups` mapping).
 *
 * Ownership: `raw` must be a freshly parsed value owned by the caller; its `properties` object is reused as the
 * normalised event's properties and modified in place (no clone per event). Skips never throw.
 */
export function normalizeEvent(raw: unknown, ctx: NormalizeContext): NormalizeOutcome {
  if (!isPlainObject(raw)) return { ok: false, reason: 'not_an_object' };
  // First: nothing below may walk, copy or store an event past the bounds (src/domain/ingest/event-shape.ts).
  const violation = shapeViolation(raw);
  if (violation !== null) return { ok: false, reason: violation };

  const rawProps = raw['properties'];
  const props: Record<string, unknown> = isPlainObject(rawProps) ? rawProps : {};

  const name = ctx.engage === true ? '$identify' : stringify(raw['event']);
  if (name === null) return { ok: false, reason: 'missing_event_name' };

  const distinctId = distinctIdOf(raw, props);
  if (distinctId === null) return { ok: false, reason: 'missing_distinct_id' };

  // §1.6: a usable client uuid is kept (lower-cased, so equal ids compare equal); anything else is replaced, never
  // failing the request. The nil uuid is replaced too: clients that send it for every event would collide.
  const clientUuid = raw['uuid'];
  let uuid = typeof clientUuid === 'string' && isUuid(clientUuid) ? clientUuid.toLowerCase() : NIL_UUID;
  if (uuid === NIL_UUID) uuid = uuidv7(ctx.now);

  const time = resolveEventTime(
    { timestamp: raw['timestamp'], offset: raw['offset'], ignoreSentAt: Boolean(props['$ignore_sent_at']) },
    ctx.now,
    ctx.sentAt,
  );

  if (raw['$set'] !== undefined) mergeTopLevel(props, '$set', raw['$set']);
  if (raw['$set_once'] !== undefined) mergeTopLevel(props, '$set_once', raw['$set_once']);

  if (!props['$ip'] && ctx.ip) props['$ip'] = ctx.ip;

  // §1.11 / §5.6: a sent `$elements_chain` string wins over `$elements`; both leave the properties because the
  // chain is stored in its own field.
  let chain = '';
  const sentChain = props['$elements_chain'];
  if (sentChain !== undefined) {
    if (typeof sentChain === 'string') chain = sentChain;
    delete props['$elements_chain'];
  }
  const elements = props['$elements'];
  if (elements !== undefined) {
    if (chain === '') chain = elementsChainFromElements(elements);
    delete props['$elements'];
  }

  const event: NormalizedEvent = {
    uuid,
    event: truncateCodePoints(name, MAX_ID_LENGTH),
    distinct_id: truncateCodePoints(distinctId, MAX_ID_LENGTH),
    properties: props,
    timestamp: toIso(time.ms),
    elements_chain: chain,
  };
  return { ok: true, event };
}
