/**
 * Which operations are analyses (they pass the per-worker gate, src/worker/query-gate.ts) and the time budget a
 * request asks for. Every private operation has a budget; these are the ones whose work grows with the data.
 */
import { Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';

const ANALYSES: ReadonlySet<string> = new Set([
  'insights.trend', 'insights.retention', 'insights.funnel', 'insights.path', 'insights.correlation',
  'persons.trends', 'persons.funnel', 'persons.path', 'persons.retention', 'persons.lifecycle', 'persons.stickiness',
  'persons.correlation', 'persons.properties_timeline', 'query.run',
  // Saved insights and dashboards compute their answers when nothing fresh is cached.
  'insights.retrieve', 'insights.list', 'dashboards.retrieve',
  // Lists that scan events or evaluate cohorts over every person.
  'events.list', 'events.values', 'cohorts.persons',
  // An experiment's results scan its exposures and metrics.
  'experiments.results',
]);

export function isAnalysis(op: string): boolean {
  return ANALYSES.has(op);
}

/**
 * `?timeout=<seconds>` lowers the budget for one request (a dashboard that would rather show a tile late than
 * wait); it never raises it past QUILL_QUERY_TIMEOUT_S.
 */
export function requestedTimeoutS(item: TaskItem, maxS: number): number {
  const raw = item.meta.query.timeout;
  if (raw === undefined || raw === '') return maxS;
  const asked = Number(raw);
  if (!Number.isFinite(asked) || asked <= 0) throw Errors.validation('timeout', 'invalid_input', 'timeout must be a positive number of seconds.');
  return Math.min(asked, maxS);
}
