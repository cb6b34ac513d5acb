/**
 * Replication of metadata into every worker's memory. A worker that changed flags, cohorts, group types or
 * projects calls `replicate` after its write is committed and before it answers; every worker (itself included)
 * drops the affected cache entries and acknowledges. So a flag change is what /flags/ answers on every worker as
 * soon as the API call has returned.
 *
 * Once every worker has acknowledged, the project's flag version in shared memory is bumped: the front's flag
 * streams (src/front/flag-streams.ts) read it to learn of the change. One atomic add per metadata write; nothing is
 * sent to the front, and nothing happens at all when no stream is open.
 */
import type { PeerHandler, WorkerRuntime } from './runtime.js';

export interface ReloadMessage {
  kind: 'reload';
  projectId: number | null;
  projects: boolean;
  [k: string]: unknown;
}

export async function replicate(rt: WorkerRuntime, what: { projectId?: number | null; projects?: boolean }): Promise<void> {
  const msg: ReloadMessage = { kind: 'reload', projectId: what.projectId ?? null, projects: what.projects ?? false };
  await rt.peers.all(msg);
  if (msg.projectId !== null) rt.shared.flagsChanged(msg.projectId);
}

export const reloadHandler: PeerHandler = async (rt, msg) => {
  const m = msg as ReloadMessage;
  // This thread's LMDB read snapshot may predate the other thread's commit; renew it before re-reading.
  rt.meta.env.resetReadTxn();
  rt.cache.invalidate({ projectId: m.projectId, projects: m.projects });
  return true;
};
