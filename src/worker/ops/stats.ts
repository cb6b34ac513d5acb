/**
 * `GET /_stats` (personal API key): ingestion counters of every shard, for operators and the benchmarks, which
 * use it to tell when everything acknowledged has been applied. `backlog` is the number of events logged (and
 * acknowledged) but not yet applied; the other counters are totals since the server started.
 *
 * `dropped` totals, by reason, every event a client sent that was not stored: the reasons capture drops events for
 * (missing_distinct_id, missing_event_name, not_an_object, too_deep: src/domain/ingest/accept-events.ts), events
 * that only update a person sent with `$process_person_profile: false` (person_event_without_profile), and events
 * the apply loop could not apply and set aside (dead_letter; kept, per shard in `deadLetters` with their reasons).
 */
import { json } from '../reply.js';
import type { OpHandler } from './types.js';
import { principalOf } from './types.js';

interface ShardStats {
  droppedEvents: number;
  deadLetteredEvents: number;
}

interface WorkerStats {
  shards: ShardStats[];
  dropped: Record<string, number>;
}

export const ingestionStats: OpHandler = async (item, rt) => {
  principalOf(item);
  const perWorker = await rt.peers.all<WorkerStats>({ kind: 'stats' });
  const shards = perWorker.flatMap((w) => w.shards);
  const dropped: Record<string, number> = {};
  const add = (reason: string, n: number) => {
    if (n > 0) dropped[reason] = (dropped[reason] ?? 0) + n;
  };
  for (const w of perWorker) for (const [reason, n] of Object.entries(w.dropped)) add(reason, n);
  for (const s of shards) {
    add('person_event_without_profile', s.droppedEvents);
    add('dead_letter', s.deadLetteredEvents);
  }
  return json(200, { workers: rt.workerCount, shards, dropped });
};
