/**
 * Flag evaluation for one person (flags.md §4): the hot path of /flags/ and /decide/.
 *
 * One `Run` per request holds the memo of evaluated flags (dependencies are evaluated lazily, at most once) and
 * of dynamic-cohort membership. Per flag: missing dependency -> group key -> enrollment / super condition ->
 * holdout -> release conditions in stored order (first match wins), keeping the best-scored reason otherwise.
 */
import { isCohortNode } from './cohorts.js';
import { bucketHash, HOLDOUT_PREFIX, VARIANT_SALT } from './hash.js';
import { matchOperator } from './operators.js';
import {
  REASON_FLAG_DISABLED,
  REASON_HOLDOUT,
  REASON_MISSING_DEPENDENCY,
  REASON_NO_CONDITION_MATCH,
  REASON_NO_GROUP_TYPE,
  REASON_SCORE,
  REASON_SUPER_CONDITION,
} from './reasons.js';
import {
  Source,
  type CohortNode,
  type CompiledCohorts,
  type CompiledCondition,
  type CompiledFlag,
  type CompiledFlagSet,
  type CompiledProperty,
  type EvaluateOptions,
  type EvaluationContext,
  type FlagReason,
  type FlagResult,
} from './types.js';

const MISSING: unique symbol = Symbol('missing');
type Lookup = unknown | typeof MISSING;

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

function lookup(props: Record<string, unknown>, key: string, protoKey: boolean): Lookup {
  const v = protoKey ? (Object.hasOwn(props, key) ? props[key] : undefined) : props[key];
  return v === undefined ? MISSING : v;
}

/** A person property: the request's value if it has the key, else the stored one (see EvaluationContext). */
function personLookup(ctx: EvaluationContext, key: string, protoKey: boolean): Lookup {
  const v = lookup(ctx.personProperties, key, protoKey);
  const stored = ctx.storedPersonProperties;
  if (v !== MISSING || stored === null || stored === undefined) return v;
  // A key the request holds with no value hides the stored one, as an object spread of both would.
  if (Object.hasOwn(ctx.personProperties, key)) return MISSING;
  return lookup(stored, key, protoKey);
}

function ownString(map: Record<string, unknown>, key: string): string | null {
  if (!Object.hasOwn(map, key)) return null;
  const v = map[key];
  // Group keys may arrive as numbers; PostHog stringifies them.
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null;
}

// Cohort memo states (0 = not evaluated yet).
const IN = 1;
const OUT = 2;
const BUSY = 3;

class Run {
  readonly nowMs: number;
  readonly timeZone: string | null;
  readonly results: (FlagResult | undefined)[];
  readonly busy: Uint8Array;
  hidden: Uint8Array | null = null;
  private cohortMemo: Uint8Array | null = null;
  private device: string | null | undefined = undefined;

  constructor(
    readonly set: CompiledFlagSet | null,
    readonly ctx: EvaluationContext,
    readonly cohorts: CompiledCohorts,
  ) {
    this.nowMs = ctx.now.getTime();
    this.timeZone = cohorts.timeZone;
    const n = set === null ? 0 : set.flags.length;
    this.results = new Array<FlagResult | undefined>(n);
    this.busy = new Uint8Array(n);
  }

  resultOf(index: number): FlagResult | undefined {
    const cached = this.results[index];
    if (cached !== undefined) return cached;
    // Re-entry means a cycle the compile-time check could not see (through a cohort's flag filter).
    if (this.busy[index] === 1) return undefined;
    this.busy[index] = 1;
    const r = this.evaluate(this.set!.flags[index]!);
    this.busy[index] = 0;
    this.results[index] = r;
    return r;
  }

  /** Value of a dependency: inactive or filtered-out flags read as false (flags.md §1.4, §3.7). */
  private flagValue(index: number): boolean | string {
    const flag = this.set?.flags[index];
    if (flag === undefined || !flag.active) return false;
    if (this.hidden !== null && this.hidden[index] === 1) return false;
    return this.resultOf(index)?.value ?? false;
  }

  private deviceId(): string | null {
    if (this.device !== undefined) return this.device;
    let id: unknown = this.ctx.deviceId;
    if (typeof id !== 'string' || id === '') {
      const found = personLookup(this.ctx, '$device_id', false);
      const prop = found === MISSING ? undefined : found;
      id = typeof prop === 'number' ? String(prop) : prop;
    }
    this.device = typeof id === 'string' && id !== '' ? id : null;
    return this.device;
  }

  /** Hashed identifier for person-aggregated conditions; null when device bucketing has no device id. */
  private personIdentifier(flag: CompiledFlag): string | null {
    if (flag.bucketByDevice) return this.deviceId();
    if (flag.ensureExperienceContinuity) {
      // Read path of experience continuity (flags.md §7.3): stored override, else $anon_distinct_id.
      const override = ownString(this.ctx.hashKeyOverrides, flag.key);
      if (override !== null) return override;
      const anon = this.ctx.anonDistinctId;
      if (typeof anon === 'string' && anon !== '') return anon;
    }
    return this.ctx.distinctId;
  }

  /** Group key for a group type name; null when the type is unknown or the request has no (usable) key. */
  private groupKey(name: string | null | undefined): string | null {
    if (typeof name !== 'string') return null;
    const key = ownString(this.ctx.groups, name);
    // An empty group key is what Rust gets for a missing group, and it reports no_group_type for it.
    return key === null || key === '' ? null : key;
  }

  private make(
    flag: CompiledFlag,
    enabled: boolean,
    variant: string | null,
    reason: FlagReason,
    payload: unknown,
  ): FlagResult {
    return {
      key: flag.key,
      enabled,
      variant,
      value: variant ?? enabled,
      reason,
      payload: enabled && payload !== undefined ? payload : null,
      flag,
    };
  }

  private variantFor(flag: CompiledFlag, identifier: string): string | null {
    const variants = flag.variants;
    if (variants.length === 0) return null;
    const h = bucketHash(flag.hashPrefix, identifier, VARIANT_SALT);
    for (let i = 0; i < variants.length; i++) if (h < variants[i]!.upper) return variants[i]!.key;
    return null;
  }

  evaluate(flag: CompiledFlag): FlagResult {
    if (!flag.active) return this.make(flag, false, null, REASON_FLAG_DISABLED, null);
    if (flag.missingDependency) return this.make(flag, false, null, REASON_MISSING_DEPENDENCY, null);

    let flagGroupKey: string | null = null;
    if (flag.aggregation !== null) {
      flagGroupKey = this.groupKey(flag.groupTypeName);
      if (flagGroupKey === null) {
        // Rust skips every condition and reports the last one it skipped.
        const n = flag.conditions.length;
        return this.make(flag, false, null, n > 0 ? flag.reasons.noGroupType[n - 1]! : REASON_NO_GROUP_TYPE, null);
      }
    }
    const primary = flagGroupKey ?? this.personIdentifier(flag);

    // Early access: enrollment is always read from person properties, even on group flags (flags.md §7.2).
    if (flag.enrollmentKey !== null) {
      const v = personLookup(this.ctx, flag.enrollmentKey, false);
      if (v !== MISSING) {
        const on = v === true || v === 'true';
        return this.make(flag, on, null, REASON_SUPER_CONDITION, flag.payloads.get('true'));
      }
    } else if (flag.superCondition !== null && this.hasAnyPersonProperty(flag.superKeys)) {
      const sc = flag.superCondition;
      const on =
        this.conditionMatches(sc) &&
        (sc.rollout === 100 || (primary !== null && bucketHash(flag.hashPrefix, primary) <= sc.rollout / 100));
      return this.make(flag, on, null, REASON_SUPER_CONDITION, flag.payloads.get('true'));
    }

    if (flag.holdout !== null || flag.legacyHoldout !== null) {
      const held = this.holdout(flag, flagGroupKey, primary);
      if (held !== null) return this.make(flag, true, held, REASON_HOLDOUT, flag.payloads.get(held));
    }

    const conditions = flag.conditions;
    let best: FlagReason = conditions.length === 0 ? REASON_NO_CONDITION_MATCH : REASON_NO_GROUP_TYPE;
    let bestScore = REASON_SCORE[best.code];
    // One rollout hash per identifier: conditions of a flag usually share it.
    let hashedId: string | null = null;
    let hash = 0;

    for (let i = 0; i < conditions.length; i++) {
      const cond = conditions[i]!;
      let id: string | null;
      let skipped: FlagReason | null = null;
      if (cond.aggregation === null) {
        id = flag.aggregation === null ? primary : this.personIdentifier(flag);
        // Device bucketing without a device id: Rust skips person conditions as out of rollout.
        if (id === null) skipped = flag.reasons.outOfRollout[i]!;
      } else {
        id = cond.aggregation === flag.aggregation ? flagGroupKey : this.groupKey(cond.groupTypeName);
        if (id === null) skipped = flag.reasons.noGroupType[i]!;
      }
      if (skipped === null && !this.conditionMatches(cond)) skipped = flag.reasons.noMatch[i]!;
      if (skipped === null && cond.rollout !== 100) {
        if (id !== hashedId) {
          hashedId = id;
          hash = bucketHash(flag.hashPrefix, id!);
        }
        if (hash > cond.rollout / 100) {
          if (flag.earlyExit) return this.make(flag, false, null, flag.reasons.outOfRollout[i]!, null);
          skipped = flag.reasons.outOfRollout[i]!;
        }
      }
      if (skipped !== null) {
        const score = REASON_SCORE[skipped.code];
        if (score >= bestScore) {
          best = skipped;
          bestScore = score;
        }
        continue;
      }
      const variant = cond.variant ?? this.variantFor(flag, id!);
      return this.make(flag, true, variant, flag.reasons.match[i]!, flag.payloads.get(variant ?? 'true'));
    }
    return this.make(flag, false, null, best, null);
  }

  /** The holdout variant the person is held out into, or null (flags.md §2.6). */
  private holdout(flag: CompiledFlag, flagGroupKey: string | null, primary: string | null): string | null {
    // The holdout hash ignores continuity overrides: it is shared by every flag of an experiment.
    const id = flagGroupKey ?? (flag.bucketByDevice ? this.deviceId() : this.ctx.distinctId);
    if (id === null) return null;
    if (flag.holdout !== null) {
      const pct = flag.holdout.percentage;
      if (pct < 100 && bucketHash(HOLDOUT_PREFIX, id) > pct / 100) return null;
      return flag.holdout.variant;
    }
    const legacy = flag.legacyHoldout!;
    if (legacy.percentage !== null && bucketHash(HOLDOUT_PREFIX, id) > legacy.percentage / 100) return null;
    return legacy.variant ?? (primary !== null ? this.variantFor(flag, primary) : null) ?? 'holdout';
  }

  private hasAnyPersonProperty(keys: readonly string[]): boolean {
    for (const k of keys) if (personLookup(this.ctx, k, true) !== MISSING) return true;
    return false;
  }

  conditionMatches(cond: CompiledCondition): boolean {
    const props = cond.properties;
    for (let i = 0; i < props.length; i++) if (!this.matchProperty(props[i]!)) return false;
    return true;
  }

  matchProperty(p: CompiledProperty): boolean {
    const ctx = this.ctx;
    switch (p.source) {
      case Source.Person: {
        let v = personLookup(ctx, p.key, p.protoKey);
        // The engine adds distinct_id to the person properties; explicit values win.
        if (v === MISSING && p.key === 'distinct_id') v = ctx.distinctId;
        return matchOperator(p.operator, v !== MISSING, v, this.nowMs, this.timeZone);
      }
      case Source.Group: {
        const name = p.groupTypeName;
        if (typeof name !== 'string') return matchOperator(p.operator, false, undefined, this.nowMs, this.timeZone);
        const props = Object.hasOwn(ctx.groupProperties, name) ? (ctx.groupProperties[name] ?? EMPTY) : EMPTY;
        let v = lookup(props, p.key, p.protoKey);
        if (v === MISSING && p.key === '$group_key') {
          const key = ownString(ctx.groups, name);
          if (key !== null) v = key;
        }
        return matchOperator(p.operator, v !== MISSING, v, this.nowMs, this.timeZone);
      }
      case Source.PersonMetadata: {
        const created = p.key === 'created_at' ? ctx.personCreatedAt : null;
        const present = typeof created === 'string';
        return matchOperator(p.operator, present, created, this.nowMs, this.timeZone);
      }
      case Source.Cohort: {
        const member = this.cohortMember(p.cohortId);
        // A missing or deleted cohort never matches, whichever the operator.
        if (member === null) return false;
        return p.notIn ? !member : member;
      }
      case Source.Flag:
        return this.dependencyMatches(p);
      default:
        return false;
    }
  }

  private dependencyMatches(p: CompiledProperty): boolean {
    if (p.dependencyIndex < 0) return false;
    const v = this.flagValue(p.dependencyIndex);
    const expected = p.expected;
    if (expected === true) return v === true || (typeof v === 'string' && v !== '');
    if (expected === false) return v === false;
    if (typeof expected === 'string') return v === expected;
    return false;
  }

  /** Person's membership of a cohort; null when the cohort does not exist (or was deleted). */
  cohortMember(id: number): boolean | null {
    const c = this.cohorts.byId.get(id);
    if (c === undefined) return null;
    if (c.isStatic) return this.ctx.staticCohortIds.has(id);
    let memo = this.cohortMemo;
    if (memo === null) memo = this.cohortMemo = new Uint8Array(this.cohorts.count);
    const state = memo[c.index];
    if (state === IN) return true;
    if (state === OUT || state === BUSY) return false; // BUSY: a cohort cycle reads as "not a member"
    memo[c.index] = BUSY;
    const member = c.tree !== null && this.matchNode(c.tree);
    memo[c.index] = member ? IN : OUT;
    return member;
  }

  private matchNode(node: CohortNode): boolean {
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      const r = isCohortNode(child) ? this.matchNode(child) : this.matchProperty(child) !== child.negation;
      if (node.and) {
        if (!r) return false;
      } else if (r) return true;
    }
    return node.and;
  }
}

function runtimeFilter(value: string | null | undefined): 'client' | 'server' | null {
  return value === 'client' || value === 'server' ? value : null;
}

/**
 * Evaluates the active, non-deleted flags of a set for one person, in stored order. Inactive and deleted flags
 * are omitted, as are flags removed by `flagKeys`, the runtime filter or the evaluation-context filter; the last
 * two still answer `false` to dependants (flags.md §1.4).
 */
export function evaluateFlags(set: CompiledFlagSet, ctx: EvaluationContext, opts: EvaluateOptions = {}): FlagResult[] {
  const run = new Run(set, ctx, set.cohorts);
  const flags = set.flags;
  const runtime = runtimeFilter(opts.runtime);
  const requested = opts.evaluationContexts;
  const contexts = requested && requested.length > 0 ? new Set(requested) : null;
  if (runtime !== null || contexts !== null) {
    const hidden = new Uint8Array(flags.length);
    for (let i = 0; i < flags.length; i++) {
      const f = flags[i]!;
      const runtimeOk = runtime === null || f.runtime === 'all' || f.runtime === runtime;
      const contextOk =
        contexts === null || f.evaluationContexts.length === 0 || f.evaluationContexts.some((c) => contexts.has(c));
      hidden[i] = runtimeOk && contextOk ? 0 : 1;
    }
    run.hidden = hidden;
  }
  const keys = opts.flagKeys === null || opts.flagKeys === undefined ? null : new Set(opts.flagKeys);

  const out: FlagResult[] = [];
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!;
    if (!f.active) continue;
    if (run.hidden !== null && run.hidden[i] === 1) continue;
    if (keys !== null && !keys.has(f.key)) continue;
    const r = run.resultOf(i);
    if (r !== undefined) out.push(r);
  }
  return out;
}

/**
 * Evaluates one flag (and, lazily, what it depends on). Unknown or deleted keys give null; an inactive flag gives
 * `false` with reason `flag_disabled`.
 */
export function evaluateFlag(set: CompiledFlagSet, key: string, ctx: EvaluationContext): FlagResult | null {
  const flag = set.byKey.get(key);
  if (flag === undefined) return null;
  return new Run(set, ctx, set.cohorts).resultOf(flag.index) ?? null;
}

/**
 * Property stage of one condition (no rollout, no hashing), e.g. for `user_blast_radius`. Group-aggregated
 * conditions read `ctx.groupProperties`; flag-dependency filters never match without a flag set.
 */
export function matchesConditionProperties(c: CompiledCondition, ctx: EvaluationContext): boolean {
  return new Run(null, ctx, c.cohorts).conditionMatches(c);
}

/** Whether the person described by `ctx` belongs to a cohort (static: `ctx.staticCohortIds`). */
export function matchesCohort(
  source: CompiledFlagSet | CompiledCohorts,
  cohortId: number,
  ctx: EvaluationContext,
): boolean {
  const isSet = (s: CompiledFlagSet | CompiledCohorts): s is CompiledFlagSet => 'flags' in s;
  const run = isSet(source) ? new Run(source, ctx, source.cohorts) : new Run(null, ctx, source);
  return run.cohortMember(cohortId) ?? false;
}
