/**
 * DELETE /persons/:id/?delete_events: the person's events live in shards owned by every worker, so the worker
 * serving the request asks each worker (itself included) to remove, from its own shards, every event of the
 * person's distinct ids. Each shard's removal is a series of bounded transactions of its events environment
 * (BLOCKS_PER_STEP blocks rewritten each, as retention does): a crash part way leaves the rest of the person's
 * events in place, and repeating the request removes them.
 */
import type { PeerHandler, WorkerRuntime } from '../../runtime.js';
import { COL } from '../../../stores/scan/block-builder.js';
import type { BlockView } from '../../../stores/scan/column-block.js';

export const DELETE_PERSON_EVENTS = 'persons.delete_events';

/** Blocks rewritten per transaction: a block holds up to SEAL_EVENTS events, each rewrite a few large writes. */
const BLOCKS_PER_STEP = 4;

interface DeletePersonEvents {
  kind: typeof DELETE_PERSON_EVENTS;
  team: number;
  distinctIds: string[];
  [k: string]: unknown;
}

/** Removes the events on every worker; resolves with how many were removed. */
export async function deleteEventsOf(rt: WorkerRuntime, team: number, distinctIds: string[]): Promise<number> {
  if (distinctIds.length === 0) return 0;
  const msg: DeletePersonEvents = { kind: DELETE_PERSON_EVENTS, team, distinctIds };
  const counts = await rt.peers.all<number>(msg);
  // The ClickHouse export deletes them there too, after every event logged until now was exported.
  if (rt.persons.exporting) await rt.persons.write(() => rt.persons.mirrorDeletion({ kind: 'person_events', team, distinctIds, at: Date.now() }));
  return counts.reduce((a, b) => a + b, 0);
}

export const deletePersonEventsHandler: PeerHandler = async (rt, msg) => {
  const { team, distinctIds } = msg as DeletePersonEvents;
  let removed = 0;
  for (const shard of rt.ingest.shards.values()) {
    const store = shard.events;
    const ids = new Set(distinctIds);
    for (let more = true; more; ) {
      const step = await store.write(() => store.removeWhereStep(team, (block) => rowsOfDistinctIds(block, ids), BLOCKS_PER_STEP));
      removed += step.removed;
      more = step.more;
    }
  }
  return removed;
};

/** The rows of a scan-layout block whose distinct id is in `ids` (null when none is). */
function rowsOfDistinctIds(block: BlockView, ids: ReadonlySet<string>): Uint8Array | null {
  const col = block.dict(COL.distinctId);
  if (!col) return null;
  const hit = col.values.map((v) => ids.has(v as string));
  if (!hit.includes(true)) return null;
  const rows = new Uint8Array(block.n);
  for (let i = 0; i < block.n; i++) {
    const c = col.codes[i]!;
    if (c !== 0 && hit[c - 1]) rows[i] = 1;
  }
  return rows;
}
