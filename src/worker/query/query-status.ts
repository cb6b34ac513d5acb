/**
 * Asynchronous queries (`refresh: "async"`…): their status records, kept in the metadata environment so that
 * whichever worker a later `GET /query/:id/` or `DELETE` reaches can read or cancel it. The query itself runs on
 * the worker that accepted it, which writes the record when it finishes (unless it was cancelled meanwhile).
 */
import { randomUUID } from 'node:crypto';
import type { WorkerRuntime } from '../runtime.js';

export interface QueryStatus {
  id: string;
  team_id: number;
  query_async: true;
  complete: boolean;
  error: boolean;
  error_message: string | null;
  results: unknown;
  start_time: string;
  end_time: string | null;
  expiration_time: string;
  cancelled?: boolean;
}

const KEEP_MS = 30 * 60_000;

function table(rt: WorkerRuntime) {
  return rt.meta.env.openDB<QueryStatus, [number, string]>('query_statuses', { encoder: { useRecords: false } } as object);
}

export async function startStatus(rt: WorkerRuntime, team: number): Promise<QueryStatus> {
  const now = Date.now();
  const status: QueryStatus = {
    id: randomUUID(), team_id: team, query_async: true, complete: false, error: false, error_message: null, results: null,
    start_time: new Date(now).toISOString(), end_time: null, expiration_time: new Date(now + KEEP_MS).toISOString(),
  };
  await rt.meta.write(() => {
    const t = table(rt);
    // Drop expired records of the project while here.
    for (const { key, value } of t.getRange({ start: [team, ''], end: [team, '\uffff'] } as never) as Iterable<{ key: [number, string]; value: QueryStatus }>) {
      if (Date.parse(value.expiration_time) < now) t.remove(key);
    }
    t.put([team, status.id], status);
  });
  return status;
}

/** Ids are uuids this module made; a longer one from a URL is no status (and must not reach an LMDB key). */
const MAX_ID = 64;

export function readStatus(rt: WorkerRuntime, team: number, id: string): QueryStatus | undefined {
  if (id.length > MAX_ID) return undefined;
  rt.meta.env.resetReadTxn();
  return table(rt).get([team, id]);
}

/** Records the outcome, unless the query was cancelled. */
export async function finishStatus(rt: WorkerRuntime, team: number, id: string, outcome: { results: unknown } | { error: string }): Promise<void> {
  await rt.meta.write(() => {
    const t = table(rt);
    const current = t.get([team, id]);
    if (!current || current.cancelled) return;
    t.put([team, id], {
      ...current, complete: true, end_time: new Date().toISOString(),
      ...('error' in outcome ? { error: true, error_message: outcome.error } : { results: outcome.results }),
    });
  });
}

export async function cancelStatus(rt: WorkerRuntime, team: number, id: string): Promise<boolean> {
  if (id.length > MAX_ID) return false;
  return rt.meta.write(() => {
    const t = table(rt);
    const current = t.get([team, id]);
    if (!current) return false;
    t.put([team, id], { ...current, cancelled: true, complete: true, end_time: new Date().toISOString() });
    return true;
  });
}
