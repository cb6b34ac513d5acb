/**
 * The bounds on one captured event's shape, checked before the event is acknowledged and again, identically, when
 * its log record is applied (src/domain/ingest/normalize-event.ts calls this; the apply normalises every record
 * again). The project API key is public, so anyone can send any shape: every bound below is what one event may
 * cost the node at most, chosen from what PostHog accepts and what real SDK traffic needs. The list with the
 * reasons is in src/front/README.md ("Bounds on public input").
 *
 * One iterative walk measures everything (no recursion: the walk itself must not overflow on a deep value), and
 * stops at the first bound crossed, so an adversarial event costs no more than the part of it under the bounds.
 */

// Nesting: MAX_JSON_DEPTH levels, serde_json's default recursion limit (src/domain/json-depth.ts says why).
import { MAX_JSON_DEPTH } from '../json-depth.js';

/**
 * About the size of an event's JSON text, counting a character as one byte: PostHog's capture refuses an event
 * larger than its Kafka message limit (`kafka_producer_message_max_bytes`, 1,000,000 bytes) with a 413. posthog-js
 * autocapture events are 2-10 KB; recordings travel separately ($snapshot, their own bound).
 */
export const MAX_EVENT_SIZE = 1_000_000;

/**
 * Keys of one property map (the event's properties, `$set`, `$set_once`, `$groups`). PostHog has no count bound at
 * capture; its property-definitions service gives up on an event past 10,000 definitions (`too_many_properties`).
 * posthog-js sends 60-100 properties an event.
 */
export const MAX_PROPERTIES = 10_000;

/** Elements of one array anywhere in an event. posthog-js's largest, `$elements`, holds one entry per DOM ancestor. */
export const MAX_ARRAY_LENGTH = 10_000;

/**
 * A group's key and its type's name: PostHog's ingestion drops a `$groupidentify` whose key is longer
 * (`group_key_too_long`; its tables hold 400 characters). Both are parts of LMDB keys here (at most 1,978 bytes).
 */
export const MAX_GROUP_KEY = 400;

/** Why an event's shape is refused (the keys of `/_stats` `dropped`; PostHog's warning names where it has one). */
export type ShapeViolation = 'too_deep' | 'message_size_too_large' | 'too_many_properties' | 'array_too_long' | 'group_key_too_long';

/** The maps whose keys count against MAX_PROPERTIES besides the properties themselves. */
const PROPERTY_MAPS = ['$set', '$set_once', '$groups'] as const;

/** What a number, boolean or null adds to the estimate (their JSON text is rarely longer). */
const SCALAR_SIZE = 8;

function keyCount(o: object, stopAt: number): number {
  let n = 0;
  for (const _ in o) if (++n > stopAt) break;
  return n;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The first bound `raw` (one event as sent, with top-level `$set`/`$set_once` not yet merged) crosses, or null.
 * Deterministic: the same value always gives the same answer, so the apply's normalisation agrees with the
 * acknowledgement's.
 */
export function shapeViolation(raw: Record<string, unknown>): ShapeViolation | null {
  const props = raw['properties'];
  if (isPlainObject(props)) {
    if (keyCount(props, MAX_PROPERTIES) > MAX_PROPERTIES) return 'too_many_properties';
    for (const name of PROPERTY_MAPS) {
      const map = props[name];
      if (isPlainObject(map) && keyCount(map, MAX_PROPERTIES) > MAX_PROPERTIES) return 'too_many_properties';
    }
  }
  for (const name of PROPERTY_MAPS) {
    const map = raw[name];
    if (isPlainObject(map) && keyCount(map, MAX_PROPERTIES) > MAX_PROPERTIES) return 'too_many_properties';
  }
  const violation = walk(raw);
  return violation ?? (isPlainObject(props) && groupsTooLong(raw['event'], props) ? 'group_key_too_long' : null);
}

/** Text as a group key or type name is stored (numbers and other values as their JSON text). */
function textLength(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (v === null || v === undefined) return 0;
  return typeof v === 'object' ? (JSON.stringify(v)?.length ?? 0) : String(v).length;
}

/** Whether `$groups` or a `$groupidentify` names a group type or key past MAX_GROUP_KEY (after `walk`: bounded). */
function groupsTooLong(event: unknown, props: Record<string, unknown>): boolean {
  const groups = props['$groups'];
  if (isPlainObject(groups)) {
    for (const type in groups) if (type.length > MAX_GROUP_KEY || textLength(groups[type]) > MAX_GROUP_KEY) return true;
  }
  return event === '$groupidentify' && (textLength(props['$group_type']) > MAX_GROUP_KEY || textLength(props['$group_key']) > MAX_GROUP_KEY);
}

/** Depth, array lengths and the size estimate, in one pass. */
function walk(value: object): ShapeViolation | null {
  const pending: object[] = [value];
  const depths: number[] = [1];
  let size = 0;
  while (pending.length > 0) {
    const container = pending.pop()!;
    const depth = depths.pop()!;
    if (depth > MAX_JSON_DEPTH) return 'too_deep';
    size += 2;
    if (Array.isArray(container)) {
      if (container.length > MAX_ARRAY_LENGTH) return 'array_too_long';
      for (let i = 0; i < container.length; i++) {
        const child: unknown = container[i];
        size += 1;
        if (typeof child === 'string') size += child.length + 2;
        else if (child !== null && typeof child === 'object') {
          pending.push(child);
          depths.push(depth + 1);
        } else size += SCALAR_SIZE;
      }
    } else {
      for (const key in container) {
        const child: unknown = (container as Record<string, unknown>)[key];
        size += key.length + 4;
        if (typeof child === 'string') size += child.length + 2;
        else if (child !== null && typeof child === 'object') {
          pending.push(child);
          depths.push(depth + 1);
        } else size += SCALAR_SIZE;
      }
    }
    if (size > MAX_EVENT_SIZE) return 'message_size_too_large';
  }
  return null;
}

/**
 * About the JSON size of a value, as `walk` counts it (a character as one byte), without recursion. For the person
 * properties bound (src/domain/ingest/person-properties.ts), on values already within the event bounds.
 */
export function estimatedSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return SCALAR_SIZE;
  const pending: object[] = [value];
  let size = 0;
  while (pending.length > 0) {
    const container = pending.pop()!;
    size += 2;
    const add = (child: unknown) => {
      if (typeof child === 'string') size += child.length + 2;
      else if (child !== null && typeof child === 'object') pending.push(child);
      else size += SCALAR_SIZE;
    };
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        size += 1;
        add(container[i]);
      }
    } else {
      for (const key in container) {
        size += key.length + 4;
        add((container as Record<string, unknown>)[key]);
      }
    }
  }
  return size;
}
