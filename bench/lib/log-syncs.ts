/**
 * The ingest logs' fdatasync latency over a stretch of a benchmark, from two `GET /_stats` snapshots (each shard's
 * `log.syncLatency` histogram is a set of counters since start). An acknowledgement waits for its group's sync, so
 * when a round's p99 is far above its p90 this says whether the disk was behind it: a few syncs in the 50+ ms
 * buckets mean another writer (the apply's LMDB flushes, another process) held the disk.
 */

export interface SyncSnapshot {
  syncs: number;
  syncMs: number;
  boundsMs: number[];
  counts: number[];
}

export interface SyncSummary {
  syncs: number;
  avg_ms: number | null;
  /** Upper bounds of the buckets holding the median and the 99th percentile sync (null: above the last bound). */
  p50_at_most_ms: number | null;
  p99_at_most_ms: number | null;
  /** Syncs that took more than 50 ms. */
  over_50_ms: number;
  /** `le_<bound ms>` (or `gt_<last bound>`) -> syncs, only the buckets that were used, shortest first. */
  histogram: Record<string, number>;
}

interface ShardLog {
  log?: { syncs?: number; syncMs?: number; syncLatency?: { boundsMs?: number[]; counts?: number[] } };
}

/** Sums the shards' sync counters; null when the server does not report a histogram. */
export function sumSyncs(shards: readonly ShardLog[]): SyncSnapshot | null {
  let out: SyncSnapshot | null = null;
  for (const { log } of shards) {
    const h = log?.syncLatency;
    if (!h?.boundsMs || !h.counts) return null;
    out ??= { syncs: 0, syncMs: 0, boundsMs: h.boundsMs, counts: new Array<number>(h.counts.length).fill(0) };
    out.syncs += log!.syncs ?? 0;
    out.syncMs += log!.syncMs ?? 0;
    h.counts.forEach((n, i) => (out!.counts[i] = (out!.counts[i] ?? 0) + n));
  }
  return out;
}

/** What happened between two snapshots. */
export function syncSummary(before: SyncSnapshot, after: SyncSnapshot): SyncSummary {
  const counts = after.counts.map((n, i) => n - (before.counts[i] ?? 0));
  const syncs = after.syncs - before.syncs;
  const bound = (i: number) => after.boundsMs[i] ?? null;
  // Non-numeric keys keep the buckets in order when the object is printed.
  const label = (i: number) => (i < after.boundsMs.length ? `le_${after.boundsMs[i]}` : `gt_${after.boundsMs.at(-1)}`);
  const quantileBucket = (q: number): number => {
    const rank = Math.ceil(q * syncs);
    let seen = 0;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i]!;
      if (seen >= rank) return i;
    }
    return counts.length - 1;
  };
  const histogram: Record<string, number> = {};
  counts.forEach((n, i) => {
    if (n > 0) histogram[label(i)] = n;
  });
  const firstOver50 = after.boundsMs.findIndex((b) => b > 50);
  return {
    syncs,
    avg_ms: syncs > 0 ? Math.round(((after.syncMs - before.syncMs) / syncs) * 100) / 100 : null,
    p50_at_most_ms: syncs > 0 ? bound(quantileBucket(0.5)) : null,
    p99_at_most_ms: syncs > 0 ? bound(quantileBucket(0.99)) : null,
    over_50_ms: firstOver50 < 0 ? 0 : counts.slice(firstOver50).reduce((a, b) => a + b, 0),
    histogram,
  };
}

/** The logs' syncs since `before` was taken, if the server reports them (null before or now: no summary). */
export async function syncsSince(probe: { logSyncs(): Promise<SyncSnapshot | null> }, before: SyncSnapshot | null): Promise<SyncSummary | null> {
  const after = before ? await probe.logSyncs() : null;
  return before && after ? syncSummary(before, after) : null;
}
