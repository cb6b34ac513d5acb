/**
 * The worker that owns a shard: shards are dealt round-robin over workers. The shard count is fixed when the data
 * directory is created (the worker count then); a later start with another worker count deals the same shards.
 */
export function ownerOf(shard: number, workerCount: number): number {
  return shard % workerCount;
}
