/**
 * The kinds `POST /api/projects/:id/query/` answers (PostHog's query API: `{query: {kind, …}}`), each a runner
 * registered by name. A runner returns the kind's response body without the envelope fields the endpoint adds
 * (`is_cached`, `last_refresh`, `query_status`…); invalid input throws AnalyticsInputError (a 400).
 */
import type { WorkerRuntime } from '../runtime.js';

export interface QueryContext {
  team: number;
  now: number;
  /** Absolute URL of the query endpoint (for `next` links of table kinds). */
  url: string;
}

export type QueryRunner = (rt: WorkerRuntime, query: Record<string, unknown>, ctx: QueryContext) => Promise<Record<string, unknown>>;

/**
 * What else than the query and the events decides a kind's answer (e.g. the stored experiment an `ExperimentQuery`
 * names): part of the result cache's key, so editing it makes cached answers stale.
 */
export type QueryFingerprint = (rt: WorkerRuntime, team: number, query: Record<string, unknown>) => unknown;

const runners = new Map<string, QueryRunner>();
const fingerprints = new Map<string, QueryFingerprint>();

export function registerQueryKind(kind: string, runner: QueryRunner, fingerprint?: QueryFingerprint): void {
  runners.set(kind, runner);
  if (fingerprint) fingerprints.set(kind, fingerprint);
}

export function queryFingerprint(rt: WorkerRuntime, team: number, query: Record<string, unknown>): unknown {
  const f = fingerprints.get(String(query.kind));
  return f ? f(rt, team, query) : null;
}

export function queryRunner(kind: string): QueryRunner | undefined {
  return runners.get(kind);
}

export function queryKinds(): string[] {
  return [...runners.keys()].sort();
}
