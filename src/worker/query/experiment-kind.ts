/**
 * `ExperimentQuery` (PostHog's query kind for one metric of an experiment): `{kind, experiment_id, metric?}`, where
 * `metric` is an `ExperimentMetric` (default: the experiment's first primary metric). Answered by the same scan and
 * statistics as `GET experiments/:id/results/` (src/worker/ops/experiments.ts): per variant the exposures and the
 * metric's sums or step counts, and the comparison with control (`baseline`, `variant_results`, `guard`, `srm`).
 */
import { invalidInput } from '../../domain/analytics/errors.js';
import { ApiError } from '../../protocol/errors.js';
import { analyseExperimentMetric, resultsScopeOf } from '../ops/experiments.js';
import { registerQueryKind } from './runners.js';

registerQueryKind('ExperimentQuery', async (rt, query, ctx) => {
  const id = query.experiment_id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return invalidInput('experiment_id', 'ExperimentQuery needs an experiment_id.');
  rt.meta.env.resetReadTxn();
  const experiment = rt.meta.experiments.get([ctx.team, id]);
  if (!experiment || experiment.deleted) return invalidInput('experiment_id', `Experiment ${id} does not exist.`);
  const metric = query.metric ?? experiment.metrics[0];
  if (metric === undefined) return invalidInput('metric', 'The experiment has no metric: give one in the query.');
  try {
    const scope = await resultsScopeOf(rt, ctx.team, experiment, ctx.now);
    return { kind: 'ExperimentQuery', experiment_id: id, ...(await analyseExperimentMetric(rt, scope, metric, 'metric')) };
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return invalidInput(error.attr, error.detail, error.code);
    throw error;
  }
}, (rt, team, query) => {
  // The stored experiment (dates, exposure rule, method) and its flag's split decide the answer too.
  if (typeof query.experiment_id !== 'number') return null;
  rt.meta.env.resetReadTxn();
  const e = rt.meta.experiments.get([team, query.experiment_id]);
  const flag = e ? rt.meta.flags.get([team, e.feature_flag_id]) : undefined;
  return e ? [e.updated_at, e.deleted, flag?.version ?? null] : null;
});
