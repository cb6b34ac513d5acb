/**
 * The JSON text of a `/decide/` or `/flags/` answer's flag members (flags.md §5.4), written directly.
 *
 * Serialising the answer was the largest single cost of a flags request (about a sixth of the worker's time with
 * 50 flags, measured with `--cpu-prof` under `npm run bench`): every flag repeats its key, metadata and reason.
 * Those parts only change when the flag set is recompiled, so their JSON is cached per compiled flag and per
 * (frozen, shared) reason object, and the answer is concatenated from the cached pieces.
 */
import type { CompiledFlag, FlagReason, FlagResult } from '../../domain/flags/index.js';

/** Shapes of the flag members: decide v1 keys, decide v2 enabled values, decide v3 / flags v1, flags v2 details. */
export type FlagsShape = 'keys' | 'enabled_values' | 'all_values' | 'details';

interface FlagFragments {
  /** The key as a JSON string. */
  key: string;
  /** `{"id":…,"version":…,"description":…,"payload":` — the metadata up to its payload. */
  metadataHead: string;
}

const flagFragments = new WeakMap<CompiledFlag, FlagFragments>();
const reasonJson = new WeakMap<FlagReason, string>();

function fragmentsOf(flag: CompiledFlag): FlagFragments {
  let f = flagFragments.get(flag);
  if (!f) {
    f = {
      key: JSON.stringify(flag.key),
      metadataHead: `{"id":${JSON.stringify(flag.id)},"version":${JSON.stringify(flag.version)},"description":${JSON.stringify(flag.name || null)},"payload":`,
    };
    flagFragments.set(flag, f);
  }
  return f;
}

function reasonText(reason: FlagReason): string {
  let text = reasonJson.get(reason);
  if (text === undefined) {
    text = JSON.stringify(reason);
    // Reasons are frozen and shared; a fresh object (not cacheable) is still serialised correctly.
    if (Object.isFrozen(reason)) reasonJson.set(reason, text);
  }
  return text;
}

/** A payload as it appears in the answer; `undefined` means "no payload" (written as null or left out). */
function payloadText(r: FlagResult): string | undefined {
  if (!r.enabled || r.payload === null || r.payload === undefined) return undefined;
  return JSON.stringify(r.payload);
}

function detailText(r: FlagResult, f: FlagFragments, payload: string | undefined): string {
  const variant = r.variant === null ? 'null' : JSON.stringify(r.variant);
  const failed = r.failed ? ',"failed":true' : '';
  return `{"key":${f.key},"enabled":${r.enabled},"variant":${variant},"reason":${reasonText(r.reason)},"metadata":${f.metadataHead}${payload ?? 'null'}}${failed}}`;
}

/**
 * The flag members of an answer as JSON object members without the surrounding braces, e.g.
 * `"featureFlags":{…},"featureFlagPayloads":{…},"errorsWhileComputingFlags":false`.
 */
export function flagMembersJson(results: readonly FlagResult[], shape: FlagsShape): string {
  switch (shape) {
    case 'keys': {
      const keys: string[] = [];
      for (const r of results) if (r.enabled) keys.push(fragmentsOf(r.flag).key);
      return `"featureFlags":[${keys.join(',')}]`;
    }
    case 'enabled_values': {
      const values: string[] = [];
      for (const r of results) if (r.enabled) values.push(`${fragmentsOf(r.flag).key}:${JSON.stringify(r.value)}`);
      return `"featureFlags":{${values.join(',')}}`;
    }
    case 'all_values':
    case 'details': {
      const values: string[] = [];
      const payloads: string[] = [];
      const details: string[] = [];
      let failed = false;
      for (const r of results) {
        const f = fragmentsOf(r.flag);
        const payload = payloadText(r);
        values.push(`${f.key}:${JSON.stringify(r.value)}`);
        if (payload !== undefined) payloads.push(`${f.key}:${payload}`);
        if (shape === 'details') details.push(`${f.key}:${detailText(r, f, payload)}`);
        if (r.failed) failed = true;
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
