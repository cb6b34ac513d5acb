import { mergeProperties } from '../merge-properties.js';
import { estimatedSize } from './event-shape.js';
import type { NormalizedEvent, PersonProfileMode, PersonUpdates } from './types.js';

/**
 * §2.6 properties lifted onto the person: `$set[key] = value` and `$set_once["$initial_" + key without "$"]`.
 * (web, mobile, campaign lists of the fact sheet.)
 */
const INITIAL_KEYS: readonly string[] = [
  '$browser', '$browser_version', '$device_type', '$current_url', '$pathname', '$os', '$os_version',
  '$referring_domain', '$referrer',
  '$app_build', '$app_name', '$app_namespace', '$app_version',
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_name', 'utm_term',
  'gclid', 'gad_source', 'gbraid', 'wbraid', 'fbclid', 'msclkid',
];
/** Precomputed `$initial_*` names, index-aligned with INITIAL_KEYS. */
const INITIAL_NAMES = INITIAL_KEYS.map((k) => '$initial_' + (k.charCodeAt(0) === 0x24 ? k.slice(1) : k));
/** Events that never lift initial properties (recordings and performance events describe no person). */
const NO_INITIAL_EVENTS = new Set(['$snapshot', '$performance_event']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The person operations an event carries: its `$set`, `$set_once`, `$unset`, plus the §2.6 initial/UTM
 * injection. Explicit values in the event's own `$set` / `$set_once` win over injected ones; `$os_name` stands in
 * for a missing `$os`; server SDKs (`$is_server: true`) do not lift `$os`/`$os_version`.
 * The returned objects are fresh; the event is not modified.
 */
export function personUpdatesOf(ev: NormalizedEvent): PersonUpdates {
  const props = ev.properties;
  const explicitSet = isPlainObject(props['$set']) ? props['$set'] : null;
  const explicitSetOnce = isPlainObject(props['$set_once']) ? props['$set_once'] : null;

  const set: Record<string, unknown> = {};
  const setOnce: Record<string, unknown> = {};

  if (!NO_INITIAL_EVENTS.has(ev.event)) {
    const isServer = props['$is_server'] === true;
    for (let i = 0; i < INITIAL_KEYS.length; i++) {
      const key = INITIAL_KEYS[i]!;
      let value = props[key];
      if (key === '$os' || key === '$os_version') {
        if (isServer) continue;
        if (key === '$os' && value === undefined) value = props['$os_name'];
      }
      if (value === undefined) continue;
      set[key] = value;
      setOnce[INITIAL_NAMES[i]!] = value;
    }
  }
  // Explicit values are copied after the injected ones so they win on clashes.
  if (explicitSet !== null) copyInto(set, explicitSet);
  if (explicitSetOnce !== null) copyInto(setOnce, explicitSetOnce);

  return { set, setOnce, unset: unsetKeysOf(props['$unset']) };
}

/**
 * JSON.parse creates an own `__proto__` key when a body contains one; assigning it would swap the target's
 * prototype instead of storing a property, so such keys are ignored throughout person updates.
 */
const PROTO = '__proto__';

// Own-property tests: a person property named like an Object.prototype member ("toString") is still absent.
function hasOwn(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

function copyInto(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const key in source) if (key !== PROTO) target[key] = source[key];
}

/** `$unset`: a list of keys, or an object whose keys are used (a lone string is taken as one key). */
function unsetKeysOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((k): k is string => typeof k === 'string');
  if (isPlainObject(v)) return Object.keys(v);
  if (typeof v === 'string' && v.length > 0) return [v];
  return [];
}

/**
 * A person's properties at most (about their JSON size): PostHog's persons table refuses more than 655,360 bytes
 * (`check_properties_size`) and its ingestion rejects an update that would pass it, with the warning
 * `person_properties_size_violation`; the event itself is kept. Every later event of the person stores a snapshot
 * of these properties, so they bound what each of its events costs too.
 */
export const MAX_PERSON_PROPERTIES_SIZE = 655_360;

/**
 * The estimated size of properties objects seen before: persons are copied on write, so the object an update
 * starts from is usually the one the previous update made, and its size is known without walking it again.
 */
const sizes = new WeakMap<object, number>();

function sizeOf(props: Record<string, unknown>): number {
  let size = sizes.get(props);
  if (size === undefined) sizes.set(props, (size = estimatedSize(props)));
  return size;
}

/** What a key and its value add to an object's estimated size (0 for an absent value). */
function entrySize(key: string, value: unknown): number {
  return value === undefined ? 0 : key.length + 4 + estimatedSize(value);
}

/**
 * §2.5: apply `$set_once` (only absent keys) → `$set` (overwrite when the value differs) → `$unset`, in that order.
 * Copy-on-write: the input is never mutated; when nothing changes the same object is returned with
 * `changed: false`, so callers can skip the write. An update that would take the properties past
 * MAX_PERSON_PROPERTIES_SIZE is rejected whole (`rejected`: the properties stay as they were), as PostHog does.
 */
export function applyPersonUpdates(
  props: Record<string, unknown>,
  u: PersonUpdates,
): { properties: Record<string, unknown>; changed: boolean; rejected?: true } {
  let out = props;
  let changed = false;
  let delta = 0;
  const writable = (): Record<string, unknown> => {
    if (!changed) {
      // A plain spread is the cheapest copy when only existing keys change (see mergeProperties).
      out = addsKeys(props, u) ? mergeProperties(props) : { ...props };
      changed = true;
    }
    return out;
  };

  for (const key in u.setOnce) {
    if (key !== PROTO && (!hasOwn(out, key) || out[key] === undefined)) {
      delta += entrySize(key, u.setOnce[key]) - entrySize(key, out[key]);
      writable()[key] = u.setOnce[key];
    }
  }
  for (const key in u.set) {
    if (key === PROTO) continue;
    const value = u.set[key];
    if (!hasOwn(out, key) || !deepEqual(out[key], value)) {
      delta += entrySize(key, value) - entrySize(key, out[key]);
      writable()[key] = value;
    }
  }
  for (const key of u.unset) {
    if (hasOwn(out, key)) {
      delta -= entrySize(key, out[key]);
      delete writable()[key];
    }
  }
  if (!changed) return { properties: out, changed };
  const size = sizeOf(props) + delta;
  if (delta > 0 && size > MAX_PERSON_PROPERTIES_SIZE) return { properties: props, changed: false, rejected: true };
  sizes.set(out, size);
  return { properties: out, changed };
}

/** Whether `$set_once`/`$set` name a key `props` does not have yet. */
function addsKeys(props: Record<string, unknown>, u: PersonUpdates): boolean {
  for (const key in u.setOnce) if (key !== PROTO && !hasOwn(props, key)) return true;
  for (const key in u.set) if (key !== PROTO && !hasOwn(props, key)) return true;
  return false;
}

/** Structural equality for JSON values (what fast-deep-equal does for PostHog's "value differs" test). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  const aArr = Array.isArray(a);
  if (aArr !== Array.isArray(b)) return false;
  if (aArr) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!deepEqual(x[i], y[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(y, k) || !deepEqual(x[k], y[k])) return false;
  }
  return true;
}

/** Events that only make sense with person processing; with `$process_person_profile: false` they are dropped. */
const PERSON_ONLY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']);

/**
 * §2.9 `$process_person_profile`: only the boolean `false` disables person processing ('skip_person'), and for
 * the person-only events above that means the event is dropped ('drop_event', warning
 * `invalid_event_when_process_person_profile_is_false`). `true`, absent and non-boolean values (warning
 * `invalid_process_person_profile`) all mean 'process'.
 * Pure query: stripping `$set`/`$set_once`/`$unset` (skip) or the flag itself (true) is the caller's step.
 */
export function personProfileMode(ev: NormalizedEvent): PersonProfileMode {
  if (ev.properties['$process_person_profile'] !== false) return 'process';
  return PERSON_ONLY_EVENTS.has(ev.event) ? 'drop_event' : 'skip_person';
}
