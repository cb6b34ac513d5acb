/**
 * Before a persons endpoint reads (or read-modify-writes) persons: wait until every event acknowledged so far is
 * applied on every shard, then drop this thread's LMDB read snapshot, which may predate the other threads'
 * commits. An API client then sees the persons its own captures created or merged.
 */
import type { WorkerRuntime } from '../../runtime.js';

export async function settledPersons(rt: WorkerRuntime): Promise<void> {
  await rt.ingest.appliedEverywhere();
  rt.persons.env.resetReadTxn();
}
