/**
 * What the jobs of alerts and subscriptions need, as a small context the scheduler hands them: the metadata store,
 * the logger and settings, the sender, and the insights port (src/worker/notifications/insight-port.ts), through
 * which alone they compute anything, so that this directory knows nothing of the worker runtime.
 */
import type { Config } from '../../config/schema.js';
import type { Insight, ShareTarget } from '../../domain/model.js';
import { targetKey } from '../../domain/sharing.js';
import type { Logger } from '../../observability/logger.js';
import type { MetaStore } from '../../stores/meta/meta-store.js';
import type { Send } from './sender.js';

type Json = Record<string, unknown>;

/** Saved insights' queries and their answers. */
export interface InsightPort {
  /** The query a saved insight runs (its own, or the one its legacy filters stand for); null when none. */
  queryOf(insight: Insight): Json | null;
  /**
   * The answer to `query` in the project, computed now (not from a cache) under the query budget and the worker's
   * analysis gate. Throws Postponed when it cannot run now, an Error with a message for a user otherwise.
   */
  compute(projectId: number, query: Json): Promise<Json>;
}

/** The computation could not run now (too many analyses waiting, the node closing): the job runs again later. */
export class Postponed extends Error {}

export interface JobCounters {
  alert_checks: number;
  alert_checks_errored: number;
  subscription_reports: number;
  deliveries_ok: number;
  deliveries_failed: number;
}

export interface JobContext {
  readonly meta: MetaStore;
  readonly log: Logger;
  readonly config: Readonly<Config>;
  readonly insights: InsightPort;
  readonly send: Send;
  readonly counters: JobCounters;
  /** Aborted when the node closes: deliveries in flight stop, and none start. */
  readonly signal: AbortSignal;
  now(): number;
}

/** Where people open Quill: QUILL_PUBLIC_URL, else the address it listens on. */
export function publicBase(config: Readonly<Config>): string {
  return config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
}

/** The access token of a target's enabled share link, or null. */
export function shareTokenOf(meta: MetaStore, projectId: number, target: ShareTarget): string | null {
  const c = meta.sharing.get([projectId, targetKey(target)]);
  return c && c.enabled ? c.access_token : null;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** Chains are kept to a few entries on their record: older ones go. */
export const MAX_KEPT = 10;
