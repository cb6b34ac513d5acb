/**
 * The OpenFeature Remote Evaluation Protocol (OFREP, open-feature/protocol `service/openapi.yaml`) over Quill's own
 * evaluation: how an OFREP evaluation context becomes what `/flags/` takes, and how a flag result becomes an OFREP
 * evaluation. Pure: no I/O, no clock.
 *
 * Context: `targetingKey` is the distinct id; `groups` (type → key), `groupProperties` (or `group_properties`) and
 * `personProperties` (or `person_properties`) are read as `/flags/` reads them; every other attribute is a person
 * property (OpenFeature contexts are flat: `{targetingKey, email, plan}` targets on `email` and `plan`).
 *
 * Values (OFREP carries no type in the request, so the flag decides):
 * - a boolean flag: `true`/`false`;
 * - a multivariate flag: its variant's key (a string), also the `variant`; when it does not match or is disabled,
 *   no `value` (OFREP's "code default": the SDK keeps the default its caller gave, the reason says why);
 * - a remote-configuration flag (`is_remote_configuration`): its payload parsed as JSON, so numbers, objects,
 *   strings and booleans are all served; no `value` when it is off.
 * The payload of the outcome, as PostHog stores it (JSON text), is in `metadata.payload`, with the flag's `id`,
 * `version` and `description` (OFREP metadata holds only booleans, strings and numbers).
 */
import type { CompiledFlag, FlagResult } from './types.js';

/** OpenFeature's resolution reasons that Quill answers (https://openfeature.dev/specification/types#resolution-reason). */
export type OfrepReason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DISABLED' | 'DEFAULT';

/** OpenFeature's error codes as OFREP sends them. */
export type OfrepErrorCode = 'FLAG_NOT_FOUND' | 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL';

export interface OfrepSuccess {
  key: string;
  /** Absent: the SDK's code default applies. */
  value?: boolean | string | number | Record<string, unknown> | unknown[] | null;
  reason: OfrepReason;
  variant?: string;
  metadata: Record<string, string | number | boolean>;
}

export interface OfrepFailure {
  key: string;
  errorCode: OfrepErrorCode;
  errorDetails: string;
}

export type OfrepEvaluation = OfrepSuccess | OfrepFailure;

/** What `/flags/` would be asked, read from an OFREP request body. */
export interface OfrepRequest {
  distinctId: string;
  personProperties: Record<string, unknown>;
  groups: Record<string, unknown>;
  groupProperties: Record<string, unknown>;
}

export type OfrepContextOutcome = { ok: true; request: OfrepRequest } | { ok: false; errorCode: OfrepErrorCode; detail: string };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Context attributes with a meaning of their own; everything else is a person property. */
const RESERVED = new Set(['targetingKey', 'groups', 'groupProperties', 'group_properties', 'personProperties', 'person_properties']);

/** The request of an OFREP body (`{context: {...}}`, already parsed from JSON). */
export function ofrepRequestOf(body: unknown): OfrepContextOutcome {
  if (!isObject(body)) return { ok: false, errorCode: 'PARSE_ERROR', detail: 'The request body must be a JSON object: {"context": {...}}.' };
  const context = body.context ?? {};
  if (!isObject(context)) return { ok: false, errorCode: 'INVALID_CONTEXT', detail: 'context must be an object.' };
  const key = context.targetingKey;
  if (key === undefined || key === null || key === '') {
    return { ok: false, errorCode: 'TARGETING_KEY_MISSING', detail: 'The context has no targetingKey: Quill evaluates flags for a distinct id.' };
  }
  if (typeof key !== 'string') return { ok: false, errorCode: 'INVALID_CONTEXT', detail: 'targetingKey must be a string.' };
  for (const name of ['groups', 'groupProperties', 'group_properties', 'personProperties', 'person_properties']) {
    if (context[name] !== undefined && context[name] !== null && !isObject(context[name])) {
      return { ok: false, errorCode: 'INVALID_CONTEXT', detail: `${name} must be an object.` };
    }
  }
  const personProperties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) if (!RESERVED.has(name)) personProperties[name] = value;
  const explicit = (context.personProperties ?? context.person_properties) as Record<string, unknown> | undefined;
  if (explicit) Object.assign(personProperties, explicit);
  return {
    ok: true,
    request: {
      // PostHog cuts distinct ids at 200 characters (src/worker/ops/decide.ts does the same).
      distinctId: key.slice(0, 200),
      personProperties,
      groups: (context.groups as Record<string, unknown> | undefined) ?? {},
      groupProperties: (context.groupProperties ?? context.group_properties ?? {}) as Record<string, unknown>,
    },
  };
}

/** The OpenFeature reason of a PostHog reason (flags.md §7.1 lists PostHog's). */
export function ofrepReasonOf(r: FlagResult): OfrepReason {
  const flag = r.flag;
  switch (r.reason.code) {
    case 'flag_disabled':
      return 'DISABLED';
    case 'condition_match': {
      const cond = flag.conditions[r.reason.condition_index ?? 0];
      if (!cond) return 'TARGETING_MATCH';
      // A variant drawn by hash, or a condition rolled out to part of its audience: pseudorandom assignment.
      if ((flag.variants.length > 0 && cond.variant === null) || cond.rollout < 100) return 'SPLIT';
      return cond.properties.length > 0 ? 'TARGETING_MATCH' : 'STATIC';
    }
    case 'super_condition_value':
      return 'TARGETING_MATCH';
    case 'holdout_condition_value':
    case 'out_of_rollout_bound':
      return 'SPLIT';
    default:
      // no_condition_match, no_group_type: nothing matched, the flag's default (off) applies.
      return 'DEFAULT';
  }
}

/** A stored payload (usually JSON text) as a value: parsed when it is JSON, else the text itself. */
function payloadValue(payload: unknown): OfrepSuccess['value'] {
  if (typeof payload !== 'string') return payload as OfrepSuccess['value'];
  try {
    return JSON.parse(payload) as OfrepSuccess['value'];
  } catch {
    return payload;
  }
}

function metadataOf(flag: CompiledFlag, payload: unknown): Record<string, string | number | boolean> {
  const m: Record<string, string | number | boolean> = { id: flag.id, version: flag.version };
  if (flag.name) m.description = flag.name;
  if (payload !== null && payload !== undefined) m.payload = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return m;
}

/** One flag's OFREP evaluation. */
export function ofrepEvaluationOf(r: FlagResult): OfrepEvaluation {
  const flag = r.flag;
  if (r.reason.code === 'missing_dependency' || r.failed === true) {
    return { key: flag.key, errorCode: 'GENERAL', errorDetails: r.reason.code === 'missing_dependency' ? r.reason.description : 'The flag could not be evaluated.' };
  }
  const reason = ofrepReasonOf(r);
  const out: OfrepSuccess = { key: flag.key, reason, metadata: metadataOf(flag, r.payload) };
  if (flag.record.is_remote_configuration === true) {
    const payload = r.enabled ? flag.payloads.get('true') : undefined;
    if (payload !== undefined && payload !== null) out.value = payloadValue(payload);
    return out;
  }
  if (r.variant !== null) {
    out.value = r.variant;
    out.variant = r.variant;
  } else if (flag.variants.length === 0) {
    out.value = r.enabled;
  }
  // A multivariate flag that is off has no string to give: the caller's default applies.
  return out;
}
