/**
 * Which shard owns the events of (project, distinct id): its apply loop processes them (persons, then events) and
 * its event store keeps them, so all events of one distinct id are applied in order by one thread, as a log
 * partitioned by distinct id would. Stable forever for a data directory: the shard count is fixed when the
 * directory is created, and this function must never change (FNV-1a, 32 bit, over UTF-16 units).
 */
export function shardOf(team: number, distinctId: string, shardCount: number): number {
  let h = 0x811c9dc5;
  const key = `${team}:${distinctId}`;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shardCount;
}

/** The worker that owns a shard: shards are dealt round-robin over workers. */
export function ownerOf(shard: number, workerCount: number): number {
  return shard % workerCount;
}
