/**
 * The experiments API (PostHog's fields): list, create, retrieve, PATCH/PUT (including the soft delete), the refused
 * hard delete, and the results. An experiment runs on a multivariate flag with a `control` variant: creating one
 * with a flag key no flag has creates that flag (control plus the test variants of `parameters`).
 *
 * `status` is derived: draft without `start_date`, running with it, stopped once `end_date` is set.
 */
import { analyzeMetric, ExperimentInputError, sampleRatioMismatch as analyzeSrm, type AnalysisResult, type SplitEntry } from '../../domain/experiments/index.js';
import type { Experiment, FeatureFlag } from '../../domain/model.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import { experimentData, MAX_MATCHERS, type ExperimentData, type ExposureSpec, type MetricSpec, type VariantData } from '../analytics/experiments.js';
import { paginate } from '../pagination.js';
import { replicate } from '../replication.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { userOf, userRefById } from './accounts.js';
import { activityEndpoints, changesBetween, logActivity } from './activity-log.js';
import { canEditFlag } from './flag-permissions.js';
import { answering, cached } from './insights.js';
import { bodyOf, intParam, nowIso, principalOf, projectIdOf, type OpHandler } from './types.js';

const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
const CONCLUSIONS = ['won', 'lost', 'inconclusive', 'stopped_early', 'invalid'] as const;
const DEFAULT_VARIANTS = [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }];

type Variant = { key: string; rollout_percentage: number };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (attr: string, detail: string) => Errors.validation(attr, 'invalid_input', detail);

export function statusOf(e: Experiment): 'draft' | 'running' | 'stopped' {
  return e.start_date === null ? 'draft' : e.end_date === null ? 'running' : 'stopped';
}

/** Ids of the live experiments on a flag (the flag's `experiment_set`). */
export function experimentSetOf(meta: MetaStore, flag: FeatureFlag): number[] {
  return meta.experimentsOf(flag.project_id).filter((e) => !e.deleted && e.feature_flag_id === flag.id).map((e) => e.id);
}

export function experimentOf(meta: MetaStore, projectId: number, id: number): Experiment {
  const e = meta.experiments.get([projectId, id]);
  if (!e) throw Errors.notFound();
  return e;
}

function variantsOfFlag(flag: FeatureFlag): Variant[] | null {
  const mv = flag.filters.multivariate;
  if (!isRecord(mv) || !Array.isArray(mv.variants)) return null;
  return mv.variants.filter(isRecord).map((v) => ({ key: String(v.key), rollout_percentage: Number(v.rollout_percentage ?? 0) }));
}

function serializeExperiment(meta: MetaStore, e: Experiment): Record<string, unknown> {
  const flag = meta.flags.get([e.project_id, e.feature_flag_id]);
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    start_date: e.start_date,
    end_date: e.end_date,
    feature_flag_key: e.feature_flag_key,
    feature_flag: flag ? {
      id: flag.id, team_id: flag.project_id, name: flag.name, key: flag.key, filters: flag.filters, deleted: flag.deleted,
      active: flag.active, ensure_experience_continuity: flag.ensure_experience_continuity,
    } : null,
    holdout: null,
    exposure_cohort: null,
    parameters: e.parameters,
    secondary_metrics: [],
    saved_metrics: [],
    filters: {},
    archived: e.archived,
    deleted: e.deleted,
    created_by: userRefById(meta, e.created_by),
    created_at: e.created_at,
    updated_at: e.updated_at,
    type: 'product',
    exposure_criteria: e.exposure_criteria,
    metrics: e.metrics,
    metrics_secondary: e.metrics_secondary,
    stats_config: e.stats_config,
    conclusion: e.conclusion,
    conclusion_comment: e.conclusion_comment,
    status: statusOf(e),
  };
}

// --- validation ---

function text(v: unknown, attr: string, required: boolean): string {
  if (v === undefined || v === null) {
    if (required) throw Errors.required(attr);
    return '';
  }
  if (typeof v !== 'string') throw invalid(attr, 'Not a valid string.');
  if (required && v.trim() === '') throw Errors.validation(attr, 'blank', 'This field may not be blank.');
  if (v.length > 400 && attr === 'name') throw Errors.validation(attr, 'max_length', 'Ensure this field has no more than 400 characters.');
  return v;
}

function dateOrNull(v: unknown, attr: string): string | null {
  if (v === null) return null;
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) throw invalid(attr, 'Datetime has wrong format.');
  return new Date(Date.parse(v)).toISOString();
}

function eventsNode(v: unknown, attr: string): { event: string | null; properties: unknown } {
  if (!isRecord(v) || (v.kind !== 'EventsNode' && v.kind !== undefined)) throw invalid(attr, 'Expected an EventsNode: {"kind": "EventsNode", "event": …}.');
  if (v.event !== undefined && v.event !== null && typeof v.event !== 'string') throw invalid(attr, 'The event must be a string (null: any event).');
  if (v.properties !== undefined && v.properties !== null && !Array.isArray(v.properties) && !isRecord(v.properties)) throw invalid(attr, 'Properties must be a list of property filters.');
  return { event: (v.event as string | null | undefined) ?? null, properties: v.properties ?? null };
}

/** A metric as PostHog's ExperimentMetric states it, checked; returns the scan's form. */
function metricSpecOf(m: unknown, attr: string): MetricSpec {
  if (!isRecord(m) || m.kind !== 'ExperimentMetric') throw invalid(attr, 'Each metric must be {"kind": "ExperimentMetric", "metric_type": "mean" | "funnel", …}.');
  if (m.metric_type === 'mean') {
    const source = eventsNode(m.source, attr);
    const raw = isRecord(m.source) ? m.source : {};
    const math = raw.math ?? 'total';
    if (math !== 'total' && math !== 'sum' && math !== 'avg') throw invalid(attr, `Unsupported math "${String(math)}": use total, sum or avg.`);
    const mathProperty = raw.math_property ?? null;
    if (math !== 'total' && (typeof mathProperty !== 'string' || mathProperty === '')) throw invalid(attr, `math "${math}" needs a math_property.`);
    return { type: 'mean', ...source, math, mathProperty: mathProperty as string | null };
  }
  if (m.metric_type === 'funnel') {
    if (!Array.isArray(m.series) || m.series.length === 0) throw invalid(attr, 'A funnel metric needs a non-empty series of EventsNode steps.');
    return { type: 'funnel', steps: m.series.map((s) => eventsNode(s, attr)) };
  }
  throw invalid(attr, 'metric_type must be "mean" or "funnel".');
}

function metricsOf(v: unknown, attr: string): Record<string, unknown>[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid(attr, 'Expected a list of metrics.');
  for (const m of v) metricSpecOf(m, attr);
  return v as Record<string, unknown>[];
}

function exposureCriteriaOf(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw invalid('exposure_criteria', 'Expected a dictionary of items.');
  if (v.multiple_variant_handling !== undefined && v.multiple_variant_handling !== null && v.multiple_variant_handling !== 'exclude' && v.multiple_variant_handling !== 'first_seen') {
    throw invalid('exposure_criteria', 'multiple_variant_handling must be "exclude" or "first_seen".');
  }
  if (v.exposure_config !== undefined && v.exposure_config !== null) {
    const c = v.exposure_config;
    if (!isRecord(c) || typeof c.event !== 'string' || c.event === '') throw invalid('exposure_criteria', 'exposure_config needs an event.');
    if (c.properties !== undefined && c.properties !== null && !Array.isArray(c.properties)) throw invalid('exposure_criteria', 'exposure_config.properties must be a list of property filters.');
  }
  return v;
}

function statsConfigOf(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return { method: 'bayesian' };
  if (!isRecord(v)) throw invalid('stats_config', 'Expected a dictionary of items.');
  const method = v.method ?? 'bayesian';
  if (method !== 'bayesian' && method !== 'frequentist') throw invalid('stats_config', 'method must be "bayesian" or "frequentist".');
  if (v.cuped !== undefined && v.cuped !== null) {
    const days = isRecord(v.cuped) ? v.cuped.lookback_days : undefined;
    if (typeof days !== 'number' || !(days > 0 && days <= 365)) throw invalid('stats_config', 'cuped needs lookback_days, a number of days from 0 (excluded) to 365.');
  }
  return { ...v, method };
}

function conclusionOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string' || !(CONCLUSIONS as readonly string[]).includes(v)) throw Errors.validation('conclusion', 'invalid_choice', `"${String(v)}" is not a valid choice.`);
  return v;
}

function parametersOf(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) throw invalid('parameters', 'Expected a dictionary of items.');
  if (v.feature_flag_variants !== undefined && v.feature_flag_variants !== null) {
    const list = v.feature_flag_variants;
    if (!Array.isArray(list) || list.length < 2) throw invalid('parameters', 'feature_flag_variants must list at least two variants.');
    const keys = new Set<string>();
    let total = 0;
    for (const item of list) {
      if (!isRecord(item) || typeof item.key !== 'string' || !KEY_PATTERN.test(item.key)) throw invalid('parameters', 'Each variant needs a key of letters, numbers, hyphens (-) and underscores (_).');
      if (keys.has(item.key)) throw invalid('parameters', `Variant "${item.key}" is listed twice.`);
      keys.add(item.key);
      const pct = item.rollout_percentage;
      if (pct !== undefined && (typeof pct !== 'number' || !(pct >= 0 && pct <= 100))) throw invalid('parameters', 'rollout_percentage must be a number from 0 to 100.');
      total += typeof pct === 'number' ? pct : 0;
    }
    if (!keys.has('control')) throw invalid('parameters', 'Feature flag variants must contain a control variant.');
    if (list.some((i) => (i as Record<string, unknown>).rollout_percentage !== undefined) && Math.abs(total - 100) > 1e-9) {
      throw invalid('parameters', 'Variant rollout percentages must add up to 100.');
    }
  }
  if (v.minimum_detectable_effect !== undefined && v.minimum_detectable_effect !== null && typeof v.minimum_detectable_effect !== 'number') {
    throw invalid('parameters', 'minimum_detectable_effect must be a number.');
  }
  const planned = v.recommended_sample_size;
  if (planned !== undefined && planned !== null && (typeof planned !== 'number' || !(planned >= 0) || !Number.isFinite(planned))) {
    throw invalid('parameters', 'recommended_sample_size must be a number of exposures, 0 or more.');
  }
  return v;
}

/** The variants a new flag gets: the parameters' (even split when no percentage is given), else control/test 50/50. */
function variantsForNewFlag(parameters: Record<string, unknown>): Variant[] {
  const list = parameters.feature_flag_variants as Record<string, unknown>[] | undefined;
  if (!list) return DEFAULT_VARIANTS;
  if (list.every((v) => typeof v.rollout_percentage === 'number')) return list.map((v) => ({ key: v.key as string, rollout_percentage: v.rollout_percentage as number }));
  // An even split in whole percentages, the remainder to the first variants.
  const base = Math.floor(100 / list.length);
  return list.map((v, i) => ({ key: v.key as string, rollout_percentage: base + (i < 100 - base * list.length ? 1 : 0) }));
}

function checkExperimentFlag(flag: FeatureFlag): void {
  const variants = variantsOfFlag(flag);
  if (variants === null || variants.length < 2) throw invalid('feature_flag_key', 'Feature flag is not eligible for experiments: it must be multivariate.');
  if (!variants.some((v) => v.key === 'control')) throw invalid('feature_flag_key', 'Feature flag must have a variant with the key "control".');
}

// --- handlers ---

export const listExperiments: OpHandler = (item, rt) => {
  const projectId = projectIdOf(item);
  const q = item.meta.query;
  let list = rt.meta.experimentsOf(projectId).filter((e) => !e.deleted);
  if (q.archived !== undefined) list = list.filter((e) => String(e.archived) === q.archived.toLowerCase());
  if (q.status !== undefined && q.status !== 'all') list = list.filter((e) => statusOf(e) === q.status);
  if (q.search) list = list.filter((e) => e.name.toLowerCase().includes(q.search!.toLowerCase()));
  list.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id - a.id);
  return json(200, paginate(list.map((e) => serializeExperiment(rt.meta, e)), item.meta));
};

export const retrieveExperiment: OpHandler = (item, rt) =>
  json(200, serializeExperiment(rt.meta, experimentOf(rt.meta, projectIdOf(item), intParam(item, 'id'))));

export const createExperiment: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  const body = bodyOf(item);
  const name = text(body.name, 'name', true);
  const description = text(body.description, 'description', false);
  const key = text(body.feature_flag_key, 'feature_flag_key', true);
  if (!KEY_PATTERN.test(key)) throw Errors.validation('feature_flag_key', 'invalid_key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.');
  const parameters = parametersOf(body.parameters);
  const metrics = metricsOf(body.metrics, 'metrics');
  const metricsSecondary = metricsOf(body.metrics_secondary, 'metrics_secondary');
  const exposureCriteria = exposureCriteriaOf(body.exposure_criteria);
  const statsConfig = statsConfigOf(body.stats_config);
  const startDate = body.start_date === undefined ? null : dateOrNull(body.start_date, 'start_date');
  const endDate = body.end_date === undefined ? null : dateOrNull(body.end_date, 'end_date');
  const conclusion = conclusionOf(body.conclusion);
  if (startDate !== null && endDate !== null && endDate < startDate) throw invalid('end_date', 'The end date must be after the start date.');
  const now = nowIso();
  const experiment = await rt.meta.write(() => {
    let flag = rt.meta.flagsOf(projectId).find((f) => f.key === key && !f.deleted);
    if (flag) {
      checkExperimentFlag(flag);
      // An experiment takes over its flag's rollout: only a user who may change the flag may run one on it.
      if (!canEditFlag(rt.meta, user, flag)) throw Errors.permissionDenied("You don't have edit permissions for this experiment's feature flag.");
    }
    else {
      // A soft-deleted flag holding the key gives it up, as the flags API does.
      for (const old of rt.meta.flagsOf(projectId)) if (old.key === key) rt.meta.flags.remove([projectId, old.id]);
      const record: FeatureFlag = {
        id: rt.meta.nextId('feature_flag'), project_id: projectId, key, name: `Feature flag for experiment ${name}`,
        filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: variantsForNewFlag(parameters) } },
        deleted: false, active: true, created_by: user.id, created_at: now, updated_at: now, ensure_experience_continuity: false,
        rollback_conditions: null, performed_rollback: false, rollout_percentage: null, version: 1, evaluation_runtime: null,
        tags: [], is_remote_configuration: false,
      };
      rt.meta.flags.put([projectId, record.id], record);
      logActivity(rt.meta, {
        project_id: projectId, user_id: user.id, activity: 'created', scope: 'FeatureFlag', item_id: String(record.id),
        detail: { changes: null, merge: null, trigger: null, name: record.key, short_id: null, type: null },
      });
      flag = record;
    }
    const record: Experiment = {
      id: rt.meta.nextId('experiment'), project_id: projectId, name, description, feature_flag_id: flag.id, feature_flag_key: key,
      parameters, metrics, metrics_secondary: metricsSecondary, exposure_criteria: exposureCriteria, start_date: startDate,
      end_date: endDate, conclusion, conclusion_comment: typeof body.conclusion_comment === 'string' ? body.conclusion_comment : null,
      stats_config: statsConfig, archived: body.archived === true, deleted: false, created_by: user.id, created_at: now, updated_at: now,
    };
    rt.meta.experiments.put([projectId, record.id], record);
    logActivity(rt.meta, {
      project_id: projectId, user_id: user.id, activity: 'created', scope: 'Experiment', item_id: String(record.id),
      detail: { changes: null, merge: null, trigger: null, name: record.name, short_id: null, type: null },
    });
    return record;
  });
  await replicate(rt, { projectId });
  return json(201, serializeExperiment(rt.meta, experiment));
};

/** The fields whose changes the activity log records. */
const LOGGED_FIELDS = ['name', 'description', 'parameters', 'metrics', 'metrics_secondary', 'exposure_criteria', 'stats_config',
  'start_date', 'end_date', 'conclusion', 'conclusion_comment', 'archived', 'deleted'] as const;

export const updateExperiment: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const id = intParam(item, 'id');
  const body = bodyOf(item);
  const user = userOf(rt.meta, principalOf(item).userId);
  if (body.feature_flag_key !== undefined) {
    const before = experimentOf(rt.meta, projectId, id);
    if (body.feature_flag_key !== before.feature_flag_key) throw invalid('feature_flag_key', "Can't update the feature flag of an experiment.");
  }
  const experiment = await rt.meta.write(() => {
    const before = experimentOf(rt.meta, projectId, id);
    const flag = rt.meta.flags.get([projectId, before.feature_flag_id]);
    if (flag && !canEditFlag(rt.meta, user, flag)) throw Errors.permissionDenied("You don't have edit permissions for this experiment's feature flag.");
    const next: Experiment = { ...before };
    if (body.name !== undefined) next.name = text(body.name, 'name', true);
    if (body.description !== undefined) next.description = text(body.description, 'description', false);
    if (body.parameters !== undefined) next.parameters = parametersOf(body.parameters);
    if (body.metrics !== undefined) next.metrics = metricsOf(body.metrics, 'metrics');
    if (body.metrics_secondary !== undefined) next.metrics_secondary = metricsOf(body.metrics_secondary, 'metrics_secondary');
    if (body.exposure_criteria !== undefined) next.exposure_criteria = exposureCriteriaOf(body.exposure_criteria);
    if (body.stats_config !== undefined) next.stats_config = statsConfigOf(body.stats_config);
    if (body.start_date !== undefined) next.start_date = dateOrNull(body.start_date, 'start_date');
    if (body.end_date !== undefined) next.end_date = dateOrNull(body.end_date, 'end_date');
    if (body.conclusion !== undefined) next.conclusion = conclusionOf(body.conclusion);
    if (body.conclusion_comment !== undefined) next.conclusion_comment = typeof body.conclusion_comment === 'string' ? body.conclusion_comment : null;
    if (body.archived !== undefined) next.archived = Boolean(body.archived);
    if (body.deleted !== undefined) next.deleted = Boolean(body.deleted);
    if (next.start_date !== null && next.end_date !== null && next.end_date < next.start_date) throw invalid('end_date', 'The end date must be after the start date.');
    const changes = changesBetween('Experiment', before as unknown as Record<string, unknown>, next as unknown as Record<string, unknown>, LOGGED_FIELDS);
    if (changes.length === 0) return before;
    next.updated_at = nowIso();
    rt.meta.experiments.put([projectId, id], next);
    logActivity(rt.meta, {
      project_id: projectId, user_id: user.id, activity: !before.deleted && next.deleted ? 'deleted' : 'updated', scope: 'Experiment',
      item_id: String(id), detail: { changes, merge: null, trigger: null, name: next.name, short_id: null, type: null },
    });
    return next;
  });
  // The flag's experiment_set changes with a (un)delete.
  if (body.deleted !== undefined) await replicate(rt, { projectId });
  return json(200, serializeExperiment(rt.meta, experiment));
};

const experimentActivityEndpoints = activityEndpoints('Experiment', (rt, projectId, id) => experimentOf(rt.meta, projectId, id));
export const experimentActivity = experimentActivityEndpoints.item;
export const allExperimentsActivity = experimentActivityEndpoints.all;

/** Hard delete is not allowed, as for flags and cohorts: PATCH `deleted: true` soft-deletes. */
export const deleteExperiment: OpHandler = (item, rt) => {
  experimentOf(rt.meta, projectIdOf(item), intParam(item, 'id'));
  throw new ApiError(405, 'invalid_request', 'method_not_allowed',
    'Hard delete of an experiment is not allowed. Use PATCH with {"deleted": true} to delete it.');
};

// --- results ---

function exposureSpecOf(criteria: Record<string, unknown>): ExposureSpec {
  const config = isRecord(criteria.exposure_config) ? criteria.exposure_config : null;
  return {
    event: config ? (config.event as string) : null,
    properties: config?.properties ?? null,
    multipleVariantHandling: criteria.multiple_variant_handling === 'first_seen' ? 'first_seen' : 'exclude',
    filterTestAccounts: criteria.filterTestAccounts === true,
  };
}

function variantResultsOf(data: VariantData[], analysis: AnalysisResult | null, funnel: boolean): { baseline: unknown; variant_results: unknown[] } {
  const stats = (d: VariantData) => (funnel
    ? { key: d.key, exposures: d.exposures, number_of_samples: d.exposures, step_counts: d.step_counts, success_count: d.step_counts!.at(-1) ?? 0, failure_count: d.exposures - (d.step_counts!.at(-1) ?? 0) }
    : { key: d.key, exposures: d.exposures, number_of_samples: d.number_of_samples, sum: d.sum, sum_squares: d.sum_squares, ...(d.covariate ? { covariate: d.covariate } : {}) });
  const control = data.find((d) => d.key === 'control')!;
  const others = data.filter((d) => d.key !== 'control');
  return {
    baseline: { ...stats(control), ...(analysis?.baseline_probability_best !== null && analysis ? { probability_best: analysis.baseline_probability_best } : {}) },
    variant_results: others.map((d) => {
      const r = analysis?.variant_results?.find((x) => x.key === d.key) ?? null;
      return { ...stats(d), ...(r ?? {}) };
    }),
  };
}

/** What every metric of one experiment's results shares: the flag's split, the window, the exposure rule. */
interface ResultsScope {
  experiment: Experiment;
  keys: string[];
  split: SplitEntry[];
  from: number;
  to: number;
  now: number;
  method: 'bayesian' | 'frequentist';
  exposure: ExposureSpec;
  /** `parameters.recommended_sample_size` (exposures over all variants, as PostHog's progress reads it), if > 0. */
  planned: number | undefined;
  /** `stats_config.cuped.lookback_days` in ms (Quill's option; mean metrics), 0 without. */
  cupedLookbackMs: number;
  /** The flag's version: its split decides the answer too (the results cache key). */
  flagVersion: number;
}

/**
 * The scope of an experiment's results; throws a validation error (attr named) for a draft or a flag without a
 * control variant. Waits until every acknowledged event is applied (reads after writes).
 */
export async function resultsScopeOf(rt: WorkerRuntime, projectId: number, experiment: Experiment, now: number): Promise<ResultsScope> {
  const flag = rt.meta.flags.get([projectId, experiment.feature_flag_id]);
  const variants = flag ? variantsOfFlag(flag) : null;
  if (!variants || !variants.some((v) => v.key === 'control')) throw invalid('feature_flag', "The experiment's flag has no control variant.");
  if (experiment.start_date === null) throw invalid('start_date', 'The experiment has not started: set start_date to compute results.');
  const keys = variants.map((v) => v.key);
  if (keys.length + 1 > MAX_MATCHERS) throw invalid('feature_flag', 'Too many variants.');
  const from = Date.parse(experiment.start_date);
  const to = experiment.end_date === null ? now : Math.min(now, Date.parse(experiment.end_date));
  await rt.ingest.appliedEverywhere();
  rt.persons.env.resetReadTxn();
  return {
    experiment, keys, from, to, now,
    split: variants.map((v) => ({ key: v.key, rollout_percentage: v.rollout_percentage })),
    flagVersion: flag!.version,
    method: experiment.stats_config.method === 'frequentist' ? 'frequentist' : 'bayesian',
    exposure: exposureSpecOf(experiment.exposure_criteria),
    planned: typeof experiment.parameters.recommended_sample_size === 'number' && experiment.parameters.recommended_sample_size > 0
      ? experiment.parameters.recommended_sample_size : undefined,
    cupedLookbackMs: isRecord(experiment.stats_config.cuped) && typeof experiment.stats_config.cuped.lookback_days === 'number'
      ? experiment.stats_config.cuped.lookback_days * 86_400_000 : 0,
  };
}

/** One metric: its per-variant data from the scan, then the statistics (`error` when they cannot describe it). */
export async function analyseExperimentMetric(rt: WorkerRuntime, scope: ResultsScope, m: unknown, attr: string): Promise<Record<string, unknown>> {
  return (await metricResult(rt, scope, m, attr)).result;
}

async function metricResult(rt: WorkerRuntime, scope: ResultsScope, m: unknown, attr: string): Promise<{ result: Record<string, unknown>; data: ExperimentData }> {
  const spec = metricSpecOf(m, attr);
  if (spec.type === 'funnel' && scope.keys.length + spec.steps.length > MAX_MATCHERS) throw invalid(attr, "Too many funnel steps for this flag's variants.");
  const e = scope.experiment;
  const data = await experimentData(rt, e.project_id, e.feature_flag_key, scope.keys, scope.exposure, spec, scope.from, scope.to, scope.now, scope.cupedLookbackMs);
  let analysis: AnalysisResult | null = null;
  let error: string | null = null;
  try {
    analysis = analyzeMetric({
      metric: spec.type === 'mean'
        ? { type: 'mean', variants: data.variants.map((d) => ({ key: d.key, exposures: d.exposures, number_of_samples: d.number_of_samples, sum: d.sum, sum_squares: d.sum_squares, ...(d.covariate ? { covariate: d.covariate } : {}) })) }
        : { type: 'funnel', variants: data.variants.map((d) => ({ key: d.key, exposures: d.exposures, step_counts: d.step_counts! })) },
      method: scope.method, split: scope.split,
      ...(scope.planned !== undefined ? { planned_sample_size: scope.planned } : {}),
    });
  } catch (err) {
    if (!(err instanceof ExperimentInputError)) throw err;
    error = err.message;
  }
  const result = {
    metric: m, metric_type: spec.type, method: scope.method,
    ...variantResultsOf(data.variants, analysis, spec.type === 'funnel'),
    significant: analysis?.variant_results?.some((r) => r.significant) ?? false,
    guard: analysis?.guard ?? null,
    srm: analysis?.srm ?? null,
    // With a planned sample size: whether this look comes early, and the always-valid (sequential) intervals.
    peeking: analysis?.peeking ?? null,
    sequential: analysis?.sequential ?? null,
    // With stats_config.cuped on a mean metric: θ, the covariate's mean and the variance reduction per variant.
    cuped: analysis?.cuped ?? null,
    excluded_multiple_variants: data.excluded_multiple_variants,
    error,
  };
  return { result, data };
}

export const experimentResults: OpHandler = async (item, rt) => {
  const projectId = projectIdOf(item);
  const experiment = experimentOf(rt.meta, projectId, intParam(item, 'id'));
  const scope = await resultsScopeOf(rt, projectId, experiment, Date.now());
  // Through the worker's result cache, like every analysis: fresh until an event of the project is applied, the
  // experiment or its flag changes, or the hour turns (an open experiment's window ends now); `refresh=true` recomputes.
  const key = JSON.stringify(['experiment_results', experiment.id, experiment.updated_at, scope.flagVersion, Math.floor(scope.now / 3_600_000)]);
  const refresh = ['true', '1', 'force_blocking'].includes(String(item.meta.query.refresh ?? '').toLowerCase());
  return answering(async () => json(200, await cached(rt, projectId, key, refresh, async () => {
    // Every metric's scan finds the same exposures (the same rule over the same window): the first one's are kept;
    // without a metric, the exposure scan runs alone.
    let exposures: ExperimentData | null = null;
    const run = async (list: Record<string, unknown>[], attr: string) => {
      const out = [];
      for (const [index, m] of list.entries()) {
        const { result, data } = await metricResult(rt, scope, m, attr);
        exposures ??= data;
        out.push({ index, ...result });
      }
      return out;
    };
    const primary = await run(experiment.metrics, 'metrics');
    const secondary = await run(experiment.metrics_secondary, 'metrics_secondary');
    exposures ??= await experimentData(rt, projectId, experiment.feature_flag_key, scope.keys, scope.exposure, null, scope.from, scope.to, scope.now);
    const counts = exposures.variants.map((v) => ({ key: v.key, exposures: v.exposures }));
    let srm: unknown = null;
    try {
      srm = analyzeSrm(counts, scope.split);
    } catch (e) {
      if (!(e instanceof ExperimentInputError)) throw e;
    }
    return {
      experiment_id: experiment.id,
      feature_flag_key: experiment.feature_flag_key,
      status: statusOf(experiment),
      date_range: { date_from: new Date(scope.from).toISOString(), date_to: new Date(scope.to).toISOString() },
      stats_method: scope.method,
      exposures: Object.fromEntries(counts.map((c) => [c.key, c.exposures])),
      // First exposures per day of the window (UTC days from start_date), per variant: the console draws them.
      exposures_timeline: {
        days: exposures.exposuresByDay[0]?.map((_, d) => new Date(scope.from + d * 86_400_000).toISOString()) ?? [],
        counts: Object.fromEntries(scope.keys.map((k, v) => [k, exposures!.exposuresByDay[v] ?? []])),
      },
      excluded_multiple_variants: exposures.excluded_multiple_variants,
      srm,
      metrics: primary,
      metrics_secondary: secondary,
    };
  })));
};
