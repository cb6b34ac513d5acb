/**
 * Which executor answers an analysis (`QUILL_ANALYTICS`): the local engine, or ClickHouse when it computes the
 * question (what it does not compute yet is answered locally, and the answer says why: a slower right answer
 * rather than a fast wrong one). The answer's extra fields say which: `clickhouse: {fallback}` and, from
 * ClickHouse, `clickhouse_export: {caught_up}`.
 */
import { NotPrintable } from '../../domain/hogql/errors.js';
import type { WorkerRuntime } from '../runtime.js';

/** Thrown by a ClickHouse executor that finds, once asked, that the local engine must answer (the reason says why). */
export class AnsweredLocally extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export async function runOnChosenExecutor<R>(
  rt: WorkerRuntime,
  /** Why ClickHouse cannot answer (null: it can). */
  gap: () => string | null,
  /**
   * `gatheredParts`: how many parts a sequence analysis brought its events back in (gathered-events.ts), said in the
   * answer when more than one (each part read the events again: it is why such an answer took longer).
   * `bytesReceived` (funnels, correlation, paths): the bytes of ClickHouse's answers, said with whether the analysis was folded inside
   * ClickHouse or gathered and folded here.
   */
  onClickHouse: () => Promise<R & { caughtUp: boolean; gatheredParts?: number; foldedInClickHouse?: boolean; bytesReceived?: number }>,
  local: () => Promise<R>,
): Promise<{ run: R; where: Record<string, unknown> }> {
  if (rt.config.analytics !== 'clickhouse') return { run: await local(), where: {} };
  const reason = gap();
  if (reason !== null) return { run: await local(), where: { clickhouse: { fallback: reason } } };
  try {
    const run = await onClickHouse();
    const clickhouse: Record<string, unknown> = (run.gatheredParts ?? 1) <= 1 ? { fallback: null } : { fallback: null, gathered_parts: run.gatheredParts };
    // Where the analysis was folded (inside ClickHouse, or by Quill from gathered events) and what came back for it.
    if (run.bytesReceived !== undefined) Object.assign(clickhouse, { folded_in_clickhouse: run.foldedInClickHouse === true, bytes_received: run.bytesReceived });
    return { run, where: { clickhouse, clickhouse_export: { caught_up: run.caughtUp } } };
  } catch (error) {
    if (!(error instanceof AnsweredLocally) && !(error instanceof NotPrintable)) throw error;
    return { run: await local(), where: { clickhouse: { fallback: error.reason } } };
  }
}
