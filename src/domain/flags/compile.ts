/**
 * Compiling stored flags into the form the evaluator reads: everything that can be parsed, resolved or
 * precomputed once per (project, revision) is done here, so evaluation does no parsing and little allocation.
 */
import { compileCohorts, expandCohortIds } from './cohorts.js';
import { buildDependencyGraph, type DependencyGraph } from './dependencies.js';
import { conditionsOf, effectiveFilters } from './filters.js';
import { compileProperty, groupTypeName, type PropertyEnv } from './properties.js';
import { makeReason } from './reasons.js';
import {
  Source,
  type CohortRecord,
  type CompileOptions,
  type CompiledCohorts,
  type CompiledCondition,
  type CompiledFlag,
  type CompiledFlagSet,
  type CompiledProperty,
  type CompiledVariant,
  type FlagRecord,
  type GroupTypeMapping,
} from './types.js';
import { intOf, isRecord } from './values.js';

/** Cheap property tests first; flag dependencies and cohorts (recursive) last. AND semantics make order free. */
function propertyCost(p: CompiledProperty): number {
  if (p.source === Source.Cohort) return 2;
  if (p.source === Source.Flag) return 1;
  return 0;
}

function rolloutOf(value: unknown): number {
  if (value === null || value === undefined) return 100;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : 100;
}

function compileConditionWith(
  raw: unknown,
  index: number,
  flagAggregation: number | null,
  variantKeys: ReadonlySet<string>,
  base: Omit<PropertyEnv, 'aggregation'>,
  cohorts: CompiledCohorts,
): CompiledCondition {
  const c = isRecord(raw) ? raw : {};
  // Mixed targeting: a condition-level index (even an explicit null) overrides the flag's aggregation.
  const aggregation = Object.hasOwn(c, 'aggregation_group_type_index')
    ? intOf(c.aggregation_group_type_index)
    : flagAggregation;
  const env: PropertyEnv = { ...base, aggregation };
  const rawProps = Array.isArray(c.properties) ? c.properties : [];
  const properties = rawProps
    .map((p) => compileProperty(p, env))
    .map((p, i) => ({ p, i }))
    .sort((a, b) => propertyCost(a.p) - propertyCost(b.p) || a.i - b.i)
    .map(({ p }) => p);
  const variant = typeof c.variant === 'string' && variantKeys.has(c.variant) ? c.variant : null;
  return {
    index,
    properties,
    rollout: rolloutOf(c.rollout_percentage),
    variant,
    aggregation,
    groupTypeName: groupTypeName(base.groupTypes, aggregation),
    cohorts,
  };
}

function normaliseRuntime(value: unknown): 'client' | 'server' | 'all' {
  return value === 'client' || value === 'server' ? value : 'all';
}

function compileVariants(filters: Record<string, unknown>): CompiledVariant[] {
  const mv = filters.multivariate;
  if (!isRecord(mv) || !Array.isArray(mv.variants)) return [];
  const out: CompiledVariant[] = [];
  let cumulative = 0;
  for (const v of mv.variants) {
    if (!isRecord(v) || typeof v.key !== 'string') continue;
    const pct = typeof v.rollout_percentage === 'number' ? v.rollout_percentage : Number(v.rollout_percentage);
    // Running sum in stored order, as the reference engines do; bounds are compared with `<`.
    cumulative += Number.isFinite(pct) ? pct / 100 : 0;
    out.push({ key: v.key, upper: cumulative });
  }
  return out;
}

function reasonsFor(count: number): CompiledFlag['reasons'] {
  const range = Array.from({ length: count }, (_, i) => i);
  return {
    match: range.map((i) => makeReason('condition_match', i)),
    outOfRollout: range.map((i) => makeReason('out_of_rollout_bound', i)),
    noMatch: range.map((i) => makeReason('no_condition_match', i)),
    noGroupType: range.map((i) => makeReason('no_group_type', i)),
  };
}

interface FlagCompileEnv {
  readonly groupTypes: GroupTypeMapping;
  readonly timeZone: string | null;
  readonly graph: DependencyGraph;
  readonly cohorts: CompiledCohorts;
}

function compileFlag(record: FlagRecord, filters: Record<string, unknown>, index: number, env: FlagCompileEnv) {
  const aggregation = intOf(filters.aggregation_group_type_index);
  const variants = compileVariants(filters);
  const variantKeys = new Set(variants.map((v) => v.key));
  const base = { groupTypes: env.groupTypes, timeZone: env.timeZone, resolveFlag: env.graph.resolve };
  const conditions = conditionsOf(filters).map((c, i) =>
    compileConditionWith(c, i, aggregation, variantKeys, base, env.cohorts),
  );

  const payloads = new Map<string, unknown>();
  if (isRecord(filters.payloads)) for (const [k, v] of Object.entries(filters.payloads)) payloads.set(k, v);

  const enrollmentKey = filters.feature_enrollment === true ? `$feature_enrollment/${record.key}` : null;
  let superCondition: CompiledCondition | null = null;
  let superKeys: string[] = [];
  const superGroups = filters.super_groups;
  // `feature_enrollment` replaced `super_groups`; when both are stored (backfilled flags) only the marker counts.
  if (enrollmentKey === null && Array.isArray(superGroups) && isRecord(superGroups[0])) {
    const first = superGroups[0];
    const props = Array.isArray(first.properties) ? first.properties : [];
    if (props.length > 0) {
      const personLevel = { ...first, aggregation_group_type_index: null };
      superCondition = compileConditionWith(personLevel, 0, null, new Set(), base, env.cohorts);
      superKeys = props.map((p) => (isRecord(p) && typeof p.key === 'string' ? p.key : '')).filter((k) => k !== '');
    }
  }

  let holdout: CompiledFlag['holdout'] = null;
  const h = filters.holdout;
  if (isRecord(h) && h.id !== null && h.id !== undefined && h.exclusion_percentage !== null) {
    const pct = Number(h.exclusion_percentage);
    // A non-numeric percentage is treated as "no holdout" (the server would reject it), never as "everyone".
    if (Number.isFinite(pct)) {
      holdout = { variant: `holdout-${String(h.id)}`, percentage: Math.min(100, Math.max(0, pct)) };
    }
  }
  let legacyHoldout: CompiledFlag['legacyHoldout'] = null;
  const hg = filters.holdout_groups;
  if (holdout === null && Array.isArray(hg) && isRecord(hg[0])) {
    const g = hg[0];
    // Rust only supports property-less holdout groups; one with properties never holds anyone out.
    const hasProps = Array.isArray(g.properties) && g.properties.length > 0;
    if (!hasProps) {
      const pct = g.rollout_percentage;
      legacyHoldout = {
        percentage: typeof pct === 'number' ? pct : null,
        variant: typeof g.variant === 'string' ? g.variant : null,
      };
    }
  }

  const bucketing = record.bucketing_identifier ?? filters.bucketing_identifier;
  const contexts = record.evaluation_contexts ?? record.evaluation_tags ?? [];

  const flag: CompiledFlag = {
    id: record.id,
    key: record.key,
    name: record.name,
    version: record.version,
    active: record.active,
    deleted: record.deleted,
    hasExperiment: record.has_experiment === true,
    ensureExperienceContinuity: record.ensure_experience_continuity === true,
    runtime: normaliseRuntime(record.evaluation_runtime),
    evaluationContexts: Array.isArray(contexts) ? contexts.filter((c): c is string => typeof c === 'string') : [],
    record,
    index,
    hashPrefix: `${record.key}.`,
    aggregation,
    groupTypeName: groupTypeName(env.groupTypes, aggregation),
    conditions,
    variants,
    payloads,
    earlyExit: filters.early_exit === true,
    bucketByDevice: bucketing === 'device_id',
    enrollmentKey,
    superCondition,
    superKeys,
    holdout,
    legacyHoldout,
    dependencies: env.graph.deps[index] ?? [],
    missingDependency: env.graph.broken[index] ?? false,
    reasons: reasonsFor(conditions.length),
  };
  return flag;
}

/** Cohort ids referenced by a flag's conditions (and its super condition). */
function referencedCohorts(flag: CompiledFlag): number[] {
  const out: number[] = [];
  const scan = (c: CompiledCondition | null) => {
    if (c === null) return;
    for (const p of c.properties) if (p.source === Source.Cohort && !Number.isNaN(p.cohortId)) out.push(p.cohortId);
  };
  flag.conditions.forEach(scan);
  scan(flag.superCondition);
  return out;
}

/**
 * Compiles a project's flags once per revision. Deleted flags are dropped (dependencies on them are missing);
 * inactive flags are kept because dependencies read them as `false`.
 */
export function compileFlagSet(
  flags: readonly FlagRecord[],
  cohorts: readonly CohortRecord[],
  groupTypes: GroupTypeMapping,
  options: CompileOptions = {},
): CompiledFlagSet {
  const timeZone = options.timezone ?? null;
  const live = flags.filter((f) => !f.deleted);
  const filters = live.map((f) => effectiveFilters(f.filters, f.rollout_percentage ?? null));
  const graph = buildDependencyGraph(live.map((f, i) => ({ id: f.id, key: f.key, filters: filters[i]! })));
  const compiledCohorts = compileCohorts(cohorts, groupTypes, { timeZone, resolveFlag: graph.resolve });
  const env: FlagCompileEnv = { groupTypes, timeZone, graph, cohorts: compiledCohorts };
  const compiled = live.map((f, i) => compileFlag(f, filters[i]!, i, env));

  const active = compiled.filter((f) => f.active);
  const hasGroupFlags = active.some((f) => f.aggregation !== null || f.conditions.some((c) => c.aggregation !== null));
  const continuityFlagKeys = active.filter((f) => f.ensureExperienceContinuity).map((f) => f.key);
  const allCohortIds = expandCohortIds(active.flatMap(referencedCohorts), compiledCohorts);
  const staticCohortIds = [...allCohortIds]
    .filter((id) => compiledCohorts.byId.get(id)?.isStatic === true)
    .sort((a, b) => a - b);

  const byKey = new Map<string, CompiledFlag>();
  for (const f of compiled) if (!byKey.has(f.key)) byKey.set(f.key, f);

  return {
    flags: compiled,
    byKey,
    hasGroupFlags,
    continuityFlagKeys,
    usesStaticCohorts: staticCohortIds.length > 0,
    staticCohortIds,
    cohorts: compiledCohorts,
    groupTypes,
    timeZone,
  };
}

/**
 * Compiles one release condition (an element of `filters.groups`) on its own, for `user_blast_radius` and
 * similar property-only checks. `aggregation` overrides the condition's own `aggregation_group_type_index`.
 * Flag-dependency filters cannot be resolved without a flag set and never match here.
 */
export function compileCondition(
  condition: unknown,
  cohorts: readonly CohortRecord[],
  groupTypes: GroupTypeMapping,
  options: CompileOptions & { aggregation?: number | null } = {},
): CompiledCondition {
  const timeZone = options.timezone ?? null;
  const compiledCohorts = compileCohorts(cohorts, groupTypes, { timeZone });
  const c = isRecord(condition) ? condition : {};
  const withAggregation =
    options.aggregation !== undefined ? { ...c, aggregation_group_type_index: options.aggregation } : c;
  const base = { groupTypes, timeZone, resolveFlag: () => -1 };
  const variantKeys = new Set<string>(typeof c.variant === 'string' ? [c.variant] : []);
  return compileConditionWith(withAggregation, 0, null, variantKeys, base, compiledCohorts);
}

