/**
 * The insights port of the scheduler (./context.ts) on a worker's runtime: saved insights' queries as the
 * insights API reads them, computed by `answerQuery` in force mode (a check must see the events up to now, not a
 * cached answer) inside the worker's analysis gate and under the query budget, as a request's analysis is.
 */
import { ApiError } from '../../protocol/errors.js';
import { answerQuery, runnableQuery } from '../ops/query.js';
import { queryOfInsight } from '../ops/saved-insights.js';
import { QueriesAbandonedError, budgetFor, withBudget } from '../query-budget.js';
import { answerFor } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { Postponed, type InsightPort } from './context.js';

export function insightPortOf(rt: WorkerRuntime): InsightPort {
  return {
    queryOf: queryOfInsight,
    async compute(projectId, query) {
      try {
        return await rt.queries.run(() => withBudget(budgetFor(rt.config.queryTimeoutS, rt.config.queryMemoryMb), async () => {
          const answer = await answerQuery(rt, runnableQuery(query), { team: projectId, now: Date.now(), url: '' }, 'force');
          return answer!.value;
        }));
      } catch (error) {
        if (error instanceof QueriesAbandonedError || (error instanceof ApiError && error.status === 429)) throw new Postponed('the query gate is full or the node is closing');
        const answer = answerFor(error);
        if (answer) throw new Error(answer.detail);
        rt.log.error({ event: 'alert_query_failed', err: error }, `computing an insight for an alert or subscription failed: ${(error as Error)?.stack ?? error}`);
        throw new Error('The insight could not be computed (see the server log).');
      }
    },
  };
}
