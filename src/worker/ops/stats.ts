/**
 * `GET /_stats` (personal API key): ingestion counters of every shard, for operators and the benchmarks, which
 * use it to tell when everything acknowledged has been applied. `backlog` is the number of events logged (and
 * acknowledged) but not yet applied; the other counters are totals since the server started.
 */
import { json } from '../reply.js';
import type { OpHandler } from './types.js';
import { principalOf } from './types.js';

export const ingestionStats: OpHandler = async (item, rt) => {
  principalOf(item);
  const perWorker = await rt.peers.all<unknown[]>({ kind: 'stats' });
  return json(200, { workers: rt.workerCount, shards: perWorker.flat() });
};
