/**
 * The JSON text of a `/decide/` or `/flags/` answer's flag members (flags.md §5.4), written directly.
 *
 * Serialising the answer cost as much as evaluating it (50 flags: 29 µs to evaluate, 31 µs to write the v2
 * answer; `node dist/bench/flag-eval.bench.js`). Every part of a flag's entry is a function of the flag and its
 * outcome — the reason (a frozen object shared per flag and condition), whether it is enabled, and the variant —
 * so each flag keeps the finished JSON fragments of the outcomes it has produced, and an answer is a join of
 * cached strings. A flag set is recompiled on every change, which drops its flags and their caches with it.
 */
import type { CompiledFlag, FlagReason, FlagResult } from '../../domain/flags/index.js';

/** Shapes of the flag members: decide v1 keys, decide v2 enabled values, decide v3 / flags v1, flags v2 details. */
export type FlagsShape = 'keys' | 'enabled_values' | 'all_values' | 'details';

/** The finished fragments of one outcome of one flag. */
interface OutcomeJson {
  enabled: boolean;
  variant: string | null;
  failed: boolean;
  /** `"key":value` for `featureFlags`. */
  value: string;
  /** `"key":payload` for `featureFlagPayloads`, or null when the outcome has no payload. */
  payload: string | null;
  /** `"key":{key, enabled, variant, reason, metadata}` for v2 `flags`. */
  detail: string;
}

/** Per flag: outcomes seen so far, by reason (few per flag: a handful of reasons times its variants). */
const outcomeCache = new WeakMap<CompiledFlag, Map<FlagReason, OutcomeJson[]>>();
const keyJson = new WeakMap<CompiledFlag, string>();

function keyOf(flag: CompiledFlag): string {
  let k = keyJson.get(flag);
  if (k === undefined) keyJson.set(flag, (k = JSON.stringify(flag.key)));
  return k;
}

/**
 * A concatenated string is a tree of pieces in V8 until something flattens it, and joining such trees copies
 * them piece by piece on every answer (measured: 21 µs instead of 3 µs to join 50 cached entries). Cached
 * fragments are therefore stored flat; a number conversion is the cheapest operation that flattens in place.
 */
function flat(s: string): string {
  Number(s);
  return s;
}

function buildOutcome(r: FlagResult): OutcomeJson {
  const key = keyOf(r.flag);
  const payload = !r.enabled || r.payload === null || r.payload === undefined ? null : JSON.stringify(r.payload);
  const flag = r.flag;
  const metadata = `{"id":${JSON.stringify(flag.id)},"version":${JSON.stringify(flag.version)},"description":${JSON.stringify(flag.name || null)},"payload":${payload ?? 'null'}}`;
  const variant = r.variant === null ? 'null' : JSON.stringify(r.variant);
  const failed = r.failed === true;
  return {
    enabled: r.enabled,
    variant: r.variant,
    failed,
    value: flat(`${key}:${JSON.stringify(r.value)}`),
    payload: payload === null ? null : flat(`${key}:${payload}`),
    detail: flat(`${key}:{"key":${key},"enabled":${r.enabled},"variant":${variant},"reason":${JSON.stringify(r.reason)},"metadata":${metadata}${failed ? ',"failed":true' : ''}}`),
  };
}

/** The fragments of a result, from the flag's cache when its reason is a shared (frozen) one. */
function outcomeOf(r: FlagResult): OutcomeJson {
  if (!Object.isFrozen(r.reason)) return buildOutcome(r);
  let byReason = outcomeCache.get(r.flag);
  if (byReason === undefined) outcomeCache.set(r.flag, (byReason = new Map()));
  let seen = byReason.get(r.reason);
  if (seen === undefined) byReason.set(r.reason, (seen = []));
  const failed = r.failed === true;
  for (let i = 0; i < seen.length; i++) {
    const o = seen[i]!;
    if (o.enabled === r.enabled && o.variant === r.variant && o.failed === failed) return o;
  }
  const built = buildOutcome(r);
  seen.push(built);
  return built;
}

/**
 * The flag members of an answer as JSON object members without the surrounding braces, e.g.
 * `"featureFlags":{…},"featureFlagPayloads":{…},"errorsWhileComputingFlags":false`.
 */
export function flagMembersJson(results: readonly FlagResult[], shape: FlagsShape): string {
  switch (shape) {
    case 'keys': {
      const keys: string[] = [];
      for (const r of results) if (r.enabled) keys.push(keyOf(r.flag));
      return `"featureFlags":[${keys.join(',')}]`;
    }
    case 'enabled_values': {
      const values: string[] = [];
      for (const r of results) if (r.enabled) values.push(outcomeOf(r).value);
      return `"featureFlags":{${values.join(',')}}`;
    }
    case 'all_values':
    case 'details': {
      const values: string[] = [];
      const payloads: string[] = [];
      const details: string[] = [];
      let failed = false;
      for (const r of results) {
        const o = outcomeOf(r);
        values.push(o.value);
        if (o.payload !== null) payloads.push(o.payload);
        if (shape === 'details') details.push(o.detail);
        if (o.failed) failed = true;
      }
      const common = `"featureFlags":{${values.join(',')}},"featureFlagPayloads":{${payloads.join(',')}},"errorsWhileComputingFlags":${failed}`;
      return shape === 'details' ? `"flags":{${details.join(',')}},${common}` : common;
    }
  }
}

/** Joins JSON object member lists (each without braces, possibly empty) into one object. */
export function objectJson(...members: string[]): string {
  return `{${members.filter((m) => m !== '').join(',')}}`;
}

/** The members of a plain object as JSON text without the surrounding braces. */
export function membersOf(value: Record<string, unknown>): string {
  const text = JSON.stringify(value);
  return text.length <= 2 ? '' : text.slice(1, -1);
}
