/**
 * The local-evaluation definitions payload (`/flags/definitions`, `/api/feature_flag/local_evaluation`;
 * flags.md §6): what SDKs such as posthog-node download to evaluate flags themselves.
 */
import { buildDependencyGraph, type DependencyGraph } from './dependencies.js';
import { conditionsOf, effectiveFilters } from './filters.js';
import type { CohortRecord, FlagRecord, GroupTypeMapping } from './types.js';
import { intOf, isRecord } from './values.js';

export interface LocalEvaluationFlag {
  id: number;
  team_id: number;
  name: string;
  key: string;
  filters: Record<string, unknown>;
  deleted: boolean;
  active: boolean;
  ensure_experience_continuity: boolean;
  has_encrypted_payloads: boolean;
  version: number;
  evaluation_runtime: string;
  evaluation_contexts: string[];
  /** Legacy name of `evaluation_contexts`; older posthog-node releases read only this one. */
  evaluation_tags: string[];
  bucketing_identifier?: string;
  has_experiment?: boolean;
}

export interface LocalEvaluationPayload {
  flags: LocalEvaluationFlag[];
  group_type_mapping: GroupTypeMapping;
  cohorts: Record<string, unknown>;
}

type Json = Record<string, unknown>;

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Cohort ids a property list references (cohort filters only). */
function cohortIdsOfConditions(filters: Json): number[] {
  const out: number[] = [];
  for (const c of conditionsOf(filters)) {
    if (!isRecord(c) || !Array.isArray(c.properties)) continue;
    for (const p of c.properties) {
      if (isRecord(p) && p.type === 'cohort') {
        const id = intOf(p.value);
        if (id !== null) out.push(id);
      }
    }
  }
  return out;
}

function cohortTree(c: CohortRecord): Json | null {
  const props = isRecord(c.filters) ? c.filters.properties : null;
  return isRecord(props) ? props : null;
}

/** Leaves of a cohort tree, depth first. */
function leaves(node: unknown, out: Json[] = []): Json[] {
  if (!isRecord(node)) return out;
  if (Array.isArray(node.values)) for (const v of node.values) leaves(v, out);
  else out.push(node);
  return out;
}

/** A cohort id plus every cohort it references, transitively (only ones that exist and are not deleted). */
function withNestedCohorts(ids: number[], byId: ReadonlyMap<number, CohortRecord>): number[] {
  const seen = new Set<number>();
  const order: number[] = [];
  const stack = [...ids];
  while (stack.length > 0) {
    const id = stack.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const c = byId.get(id);
    if (!c) continue;
    order.push(id);
    if (c.is_static) continue;
    for (const leaf of leaves(cohortTree(c))) {
      if (leaf.type === 'cohort') {
        const nested = intOf(leaf.value);
        if (nested !== null) stack.push(nested);
      }
    }
  }
  return order;
}

/** Rewrites flag-dependency filters: key -> flag key when resolvable, plus the `dependency_chain`. */
function annotateDependencies(filters: Json, graph: DependencyGraph, keys: readonly string[]): void {
  for (const c of conditionsOf(filters)) {
    if (!isRecord(c) || !Array.isArray(c.properties)) continue;
    for (const p of c.properties) {
      if (!isRecord(p) || p.type !== 'flag') continue;
      const target = graph.resolve(p.key);
      if (target !== -1) p.key = keys[target];
      p.dependency_chain = graph.chain(target);
    }
  }
}

// --- Cohort inlining for clients that do not ask for cohorts (the older Django behaviour). -------------------

/** Collapses groups that hold a single value, keeping the structure PostHog's `clear_excess_levels` keeps. */
function clearExcessLevels(node: unknown, skip = false): unknown {
  if (!isRecord(node) || !Array.isArray(node.values)) return node;
  if (node.values.length === 1) {
    if (!skip) return clearExcessLevels(node.values[0], true);
    return { ...node, values: [clearExcessLevels(node.values[0])] };
  }
  return { ...node, values: node.values.map((v) => clearExcessLevels(v, true)) };
}

const isGroup = (x: unknown): x is Json & { values: unknown[] } => isRecord(x) && Array.isArray(x.values);

/**
 * Expands a flag's single, person-property-only cohort into plain conditions so that SDKs without cohort
 * support can evaluate it; anything more complex is returned unchanged (the SDK then asks the server).
 * As in PostHog, expanded conditions are appended after the flag's other conditions.
 */
function inlineSingleCohort(filters: Json, byId: ReadonlyMap<number, CohortRecord>): unknown[] {
  const conditions = conditionsOf(filters);
  if (withNestedCohorts(cohortIdsOfConditions(filters), byId).length !== 1) return conditions;

  let cohort: CohortRecord | null = null;
  let rollout: unknown = null;
  const parsed: unknown[] = [];
  for (const condition of conditions) {
    if (!isRecord(condition)) return conditions;
    if (condition.variant) return conditions;
    const props = Array.isArray(condition.properties) ? condition.properties : [];
    const cohortProp = props.find((p) => isRecord(p) && p.type === 'cohort');
    if (cohortProp === undefined) {
      parsed.push(condition);
      continue;
    }
    if (props.length > 1) return conditions;
    const found = byId.get(intOf((cohortProp as Json).value) ?? NaN);
    if (!found) return conditions;
    cohort = found;
    rollout = condition.rollout_percentage ?? null;
  }
  if (cohort === null || cohort.is_static) return conditions;
  const tree = cohortTree(cohort);
  const flat = leaves(tree);
  if (flat.length === 0 || !flat.every((p) => p.type === 'person') || flat.some((p) => p.negation === true)) {
    return conditions;
  }

  const target = clearExcessLevels(tree);
  if (!isGroup(target)) {
    parsed.push({ properties: [target], rollout_percentage: rollout });
  } else if (!isGroup(target.values[0])) {
    const values = target.values as unknown[];
    if (target.type === 'AND') parsed.push({ properties: values, rollout_percentage: rollout });
    else for (const v of values) parsed.push({ properties: [v], rollout_percentage: rollout });
  } else {
    // Only an OR of ANDs maps onto conditions.
    if (target.type === 'AND') return conditions;
    for (const group of target.values as unknown[]) {
      if (!isGroup(group) || group.values.length === 0 || isGroup(group.values[0])) return conditions;
      if (group.type === 'OR' && group.values.length > 1) return conditions;
      parsed.push({ properties: group.values, rollout_percentage: rollout });
    }
  }
  return parsed;
}

/**
 * Builds the definitions payload: every non-deleted flag (active or not, remote-configuration flags excluded)
 * with effective filters, flag-dependency filters normalised to flag keys with their `dependency_chain`, the
 * group type mapping and — with `sendCohorts` — the dynamic cohorts those flags reference, nested references
 * included (static cohorts are left out: SDKs must ask the server for them).
 */
export function buildLocalEvaluationPayload(
  flags: readonly FlagRecord[],
  cohorts: readonly CohortRecord[],
  groupTypes: GroupTypeMapping,
  teamId: number,
  opts: { sendCohorts: boolean },
): LocalEvaluationPayload {
  const live = flags.filter((f) => !f.deleted && f.is_remote_configuration !== true);
  const filters = live.map((f) => clone(effectiveFilters(f.filters, f.rollout_percentage ?? null)));
  const graph = buildDependencyGraph(live.map((f, i) => ({ id: f.id, key: f.key, filters: filters[i]! })));
  const keys = live.map((f) => f.key);
  const cohortsById = new Map<number, CohortRecord>();
  for (const c of cohorts) if (!c.deleted) cohortsById.set(c.id, c);

  const outCohorts: Record<string, unknown> = {};
  const outFlags = live.map((f, i): LocalEvaluationFlag => {
    const fl = filters[i]!;
    if (opts.sendCohorts) {
      for (const id of withNestedCohorts(cohortIdsOfConditions(fl), cohortsById)) {
        const c = cohortsById.get(id)!;
        const tree = cohortTree(c);
        if (!c.is_static && tree !== null && !(String(id) in outCohorts)) outCohorts[String(id)] = clone(tree);
      }
    } else {
      fl.groups = inlineSingleCohort(fl, cohortsById);
    }
    annotateDependencies(fl, graph, keys);
    const contexts = f.evaluation_contexts ?? f.evaluation_tags ?? [];
    const entry: LocalEvaluationFlag = {
      id: f.id,
      team_id: teamId,
      name: f.name,
      key: f.key,
      filters: fl,
      deleted: f.deleted,
      active: f.active,
      ensure_experience_continuity: f.ensure_experience_continuity,
      has_encrypted_payloads: f.has_encrypted_payloads === true,
      version: f.version,
      evaluation_runtime: f.evaluation_runtime ?? 'all',
      evaluation_contexts: [...contexts],
      evaluation_tags: [...contexts],
    };
    if (f.bucketing_identifier) entry.bucketing_identifier = f.bucketing_identifier;
    if (f.has_experiment !== undefined) entry.has_experiment = f.has_experiment;
    return entry;
  });

  return { flags: outFlags, group_type_mapping: { ...groupTypes }, cohorts: outCohorts };
}
