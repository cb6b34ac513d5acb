/**
 * Public types of the flag engine: stored records in, compiled sets and results out.
 * Semantics follow PostHog's current ("rust") server behaviour, as our flags fact sheet describes it.
 */
import type { LinearRegex } from '../patterns/regex.js';

/** Stored flag record (the subset evaluation needs). `filters` is PostHog's filters object, as stored. */
export interface FlagRecord {
  id: number;
  key: string;
  name: string;
  active: boolean;
  deleted: boolean;
  filters: Record<string, unknown>;
  ensure_experience_continuity: boolean;
  version: number;
  evaluation_runtime?: string | null;
  evaluation_contexts?: string[] | null;
  /** Legacy name of `evaluation_contexts`, read when the newer field is absent. */
  evaluation_tags?: string[] | null;
  bucketing_identifier?: string | null;
  has_experiment?: boolean;
  /** Legacy model column, only used for filters stored without `groups` (flags.md §1.1). */
  rollout_percentage?: number | null;
  /** Passed through to the definitions payload when present. */
  has_encrypted_payloads?: boolean;
  /** Remote-configuration flags are left out of the definitions payload (they are still evaluated by /flags/). */
  is_remote_configuration?: boolean | null;
}

export interface CohortRecord {
  id: number;
  name: string;
  deleted: boolean;
  is_static: boolean;
  /** PostHog shape: `{properties: {type: 'AND'|'OR', values: [...]}}`. */
  filters: Record<string, unknown>;
}

/** Group type index (as a string) -> group type name, e.g. `{"0": "company"}`. */
export type GroupTypeMapping = Record<string, string>;

export interface EvaluationContext {
  distinctId: string;
  /**
   * The person properties to evaluate against; the engine adds `distinct_id`. When `storedPersonProperties` is
   * given, these are the request's and win over the stored ones key by key.
   */
  personProperties: Record<string, unknown>;
  /**
   * The stored person's properties, read for keys `personProperties` does not have. Kept apart instead of merged
   * into one object by the caller: in V8 a spread copy of a 20-property object is cheap (~0.1 µs) but adding the
   * request's keys (`distinct_id`) to the copy takes a slow path (~3 µs), a tenth of a worker's time per request.
   */
  storedPersonProperties?: Record<string, unknown> | null;
  /** Group type NAME -> group key (numbers already stringified). */
  groups: Record<string, string>;
  /** Group type name -> merged group properties; the engine adds `$group_key`. */
  groupProperties: Record<string, Record<string, unknown>>;
  /** Flag key -> stored hash key (experience continuity). */
  hashKeyOverrides: Record<string, string>;
  /** Request `$anon_distinct_id`: fallback hash key for continuity flags, as in the Rust service. */
  anonDistinctId?: string | null;
  /** Request `device_id`/`$device_id`; when absent the engine falls back to `personProperties.$device_id`. */
  deviceId?: string | null;
  /** Static cohorts the person belongs to. */
  staticCohortIds: ReadonlySet<number>;
  /** Person `created_at` (ISO string) for `person_metadata` filters. */
  personCreatedAt?: string | null;
  now: Date;
}

export type ReasonCode =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'super_condition_value'
  | 'holdout_condition_value'
  | 'flag_disabled'
  | 'missing_dependency';

export interface FlagReason {
  readonly code: ReasonCode;
  readonly condition_index: number | null;
  readonly description: string;
}

export interface FlagResult {
  key: string;
  enabled: boolean;
  variant: string | null;
  /** `variant ?? enabled`. */
  value: boolean | string;
  /** Shared, frozen objects: do not mutate. */
  reason: FlagReason;
  /** Stored payload of the matched value (usually a JSON string), null if none or not enabled. */
  payload: unknown | null;
  failed?: boolean;
  /** The compiled flag (id, version, name, hasExperiment, record) for response metadata. */
  flag: CompiledFlag;
}

export interface EvaluateOptions {
  /** `flag_keys_to_evaluate`: only these flags are returned (dependencies are still evaluated). null = all. */
  flagKeys?: readonly string[] | null;
  /** Request `evaluation_runtime`: `client`, `server` or `all`/null (no filtering). */
  runtime?: string | null;
  /** Request `evaluation_contexts`: when non-empty, only flags without contexts or sharing one are returned. */
  evaluationContexts?: readonly string[] | null;
}

export interface CompileOptions {
  /**
   * IANA time zone of the team. Naive date strings in `is_date_*` filters and property values are read in it
   * (explicit offsets are honoured), as the Rust service does. Default UTC.
   */
  timezone?: string | null;
}

// ---------------------------------------------------------------------------------------------------------------
// Compiled forms. Fields are read by evaluate.ts; treat them as opaque elsewhere except the documented ones.

/** Where a property filter reads its value from. */
export const Source = {
  Person: 0,
  Group: 1,
  Cohort: 2,
  Flag: 3,
  PersonMetadata: 4,
  /** Unsupported property type (event, element, behavioral...): never matches. */
  Unsupported: 5,
} as const;
export type Source = (typeof Source)[keyof typeof Source];

/** A compiled operator test; see operators.ts. */
export interface CompiledOperator {
  readonly op: number;
  readonly valueNull: boolean;
  // Pre-parsed forms of the filter value, filled according to `op`.
  readonly text: string;
  /** `text` is pure ASCII, so a string can only equal it case-insensitively if it has the same length. */
  readonly asciiText: boolean;
  readonly boolLike: boolean;
  readonly truthy: boolean;
  readonly textSet: ReadonlySet<string> | null;
  readonly texts: readonly string[] | null;
  readonly num: number;
  readonly num2: number;
  readonly regex: LinearRegex | null;
  /** Case-insensitive search equivalent to the ASCII-folded text test (only built for ASCII needles). */
  readonly ci: RegExp | null;
  readonly date: DateFilter | null;
  readonly semver: SemverRange | null;
}

/** `is_date_*` filter value: an absolute instant, or a relative offset resolved against `ctx.now`. */
export interface DateFilter {
  readonly absoluteMs: number;
  readonly relative: { readonly amount: number; readonly unit: 'h' | 'd' | 'w' | 'm' | 'y' } | null;
}

/** Half-open version range `[lower, upper)`; an exact comparison uses `exact` instead. */
export interface SemverRange {
  readonly lower: readonly [number, number, number];
  readonly upper: readonly [number, number, number] | null;
}

export interface CompiledProperty {
  readonly key: string;
  readonly source: Source;
  /** Group type index for `Source.Group`; null means "the condition's own aggregation". */
  readonly groupTypeIndex: number | null;
  /** Resolved group type name for `groupTypeIndex` (undefined: unknown index). */
  readonly groupTypeName: string | null | undefined;
  readonly negation: boolean;
  /** The key shadows an Object.prototype member, so lookups must use hasOwn. */
  readonly protoKey: boolean;
  readonly operator: CompiledOperator;
  /** Cohort filters: cohort id and whether the operator is `not_in`. */
  readonly cohortId: number;
  readonly notIn: boolean;
  /** Flag dependency filters: index into the compiled set's flags (-1 unresolved) and expected value. */
  readonly dependencyIndex: number;
  readonly dependencyRef: string;
  readonly expected: boolean | string | null;
}

/** A cohort's property tree, compiled. */
export interface CohortNode {
  readonly and: boolean;
  readonly children: readonly (CohortNode | CompiledProperty)[];
}

export interface CompiledCohort {
  readonly id: number;
  readonly name: string;
  readonly isStatic: boolean;
  /** null: no usable definition (never matches). */
  readonly tree: CohortNode | null;
  /** Dense index used for per-request memoisation. */
  readonly index: number;
}

export interface CompiledCohorts {
  readonly byId: ReadonlyMap<number, CompiledCohort>;
  readonly count: number;
  /** Team time zone used for naive dates in cohort filters (null = UTC). */
  readonly timeZone: string | null;
}

export interface CompiledCondition {
  readonly index: number;
  /** Properties, cheapest first (person/group, then flags, then cohorts); AND semantics, so order is free. */
  readonly properties: readonly CompiledProperty[];
  /** Rollout percentage; 100 when null/absent. */
  readonly rollout: number;
  /** Valid variant override (names an existing variant) or null. */
  readonly variant: string | null;
  /** Effective aggregation: null for persons, else the group type index. */
  readonly aggregation: number | null;
  /** Name of the aggregation's group type; undefined when the index is unknown. */
  readonly groupTypeName: string | null | undefined;
  /** Cohorts used for matching, kept for `matchesConditionProperties`. */
  readonly cohorts: CompiledCohorts;
}

export interface CompiledVariant {
  readonly key: string;
  /** Cumulative upper bound (sum of rollout_percentage / 100 up to and including this variant). */
  readonly upper: number;
}

export interface CompiledFlag {
  readonly id: number;
  readonly key: string;
  readonly name: string;
  readonly version: number;
  readonly active: boolean;
  readonly deleted: boolean;
  readonly hasExperiment: boolean;
  readonly ensureExperienceContinuity: boolean;
  /** Normalised `evaluation_runtime`: client, server or all. */
  readonly runtime: 'client' | 'server' | 'all';
  readonly evaluationContexts: readonly string[];
  readonly record: FlagRecord;
  /** Position in `CompiledFlagSet.flags`. */
  readonly index: number;
  /** `<key>.`: the rollout/variant hash prefix. */
  readonly hashPrefix: string;
  readonly aggregation: number | null;
  readonly groupTypeName: string | null | undefined;
  readonly conditions: readonly CompiledCondition[];
  readonly variants: readonly CompiledVariant[];
  /** Payloads keyed by `"true"`, variant key or `holdout-<id>` (stored form). */
  readonly payloads: ReadonlyMap<string, unknown>;
  readonly earlyExit: boolean;
  readonly bucketByDevice: boolean;
  /** `$feature_enrollment/<key>` when `filters.feature_enrollment` is true. */
  readonly enrollmentKey: string | null;
  /** Legacy `super_groups[0]` and the property keys whose presence activates it. */
  readonly superCondition: CompiledCondition | null;
  readonly superKeys: readonly string[];
  /** New-style holdout (`filters.holdout`). */
  readonly holdout: { readonly variant: string; readonly percentage: number } | null;
  /** Legacy `holdout_groups[0]`. */
  readonly legacyHoldout: { readonly percentage: number | null; readonly variant: string | null } | null;
  /** Direct dependencies (indices into the set), and whether the dependency graph is broken for this flag. */
  readonly dependencies: readonly number[];
  readonly missingDependency: boolean;
  /** Per-condition shared reason objects (no allocation per evaluation). */
  readonly reasons: {
    readonly match: readonly FlagReason[];
    readonly outOfRollout: readonly FlagReason[];
    readonly noMatch: readonly FlagReason[];
    readonly noGroupType: readonly FlagReason[];
  };
}

export interface CompiledFlagSet {
  /** Every non-deleted flag (active or not), in stored order. */
  readonly flags: readonly CompiledFlag[];
  readonly byKey: ReadonlyMap<string, CompiledFlag>;
  /** Some active flag aggregates by group (flag-level or condition-level): load group properties. */
  readonly hasGroupFlags: boolean;
  /** Keys of active flags with experience continuity (the override write path needs them). */
  readonly continuityFlagKeys: readonly string[];
  /** Some active flag references a static cohort (directly or through nested cohorts). */
  readonly usesStaticCohorts: boolean;
  /** Ids of the static cohorts referenced by active flags. */
  readonly staticCohortIds: readonly number[];
  readonly cohorts: CompiledCohorts;
  readonly groupTypes: GroupTypeMapping;
  /** Team time zone used for naive dates (null = UTC). */
  readonly timeZone: string | null;
}
