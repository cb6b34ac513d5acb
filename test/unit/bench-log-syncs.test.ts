import t from 'tap';
import { sumSyncs, syncSummary } from '../../bench/lib/log-syncs.js';

// The benchmarks turn two /_stats snapshots of the ingest logs' sync histograms into one round's summary.

const boundsMs = [1, 10, 50, 100];
const shard = (syncs: number, syncMs: number, counts: number[]) => ({ log: { syncs, syncMs, syncLatency: { boundsMs, counts } } });

t.test('shards are summed bucket by bucket; a server without histograms gives null', async (t) => {
  t.same(sumSyncs([shard(3, 6, [1, 2, 0, 0, 0]), shard(2, 200, [0, 0, 1, 0, 1])]), { syncs: 5, syncMs: 206, boundsMs, counts: [1, 2, 1, 0, 1] });
  t.equal(sumSyncs([shard(1, 1, [1, 0, 0, 0, 0]), { log: { syncs: 1, syncMs: 1 } }]), null);
});

t.test('a summary covers only what happened between the snapshots', async (t) => {
  const before = sumSyncs([shard(100, 50, [100, 0, 0, 0, 0])])!;
  // 100 more syncs: 97 quick, 2 between 50 and 100 ms, 1 beyond the last bound.
  const after = sumSyncs([shard(200, 50 + 97 * 0.5 + 2 * 70 + 300, [197, 0, 0, 2, 1])])!;
  t.same(syncSummary(before, after), {
    syncs: 100,
    avg_ms: 4.89,
    p50_at_most_ms: 1,
    p99_at_most_ms: 100,
    over_50_ms: 3,
    histogram: { le_1: 97, le_100: 2, gt_100: 1 },
  });
});

t.test('the 99th percentile can fall beyond the last bound (null), and an idle stretch has no averages', async (t) => {
  const before = sumSyncs([shard(0, 0, [0, 0, 0, 0, 0])])!;
  const after = sumSyncs([shard(10, 5000, [5, 0, 0, 0, 5])])!;
  const s = syncSummary(before, after);
  t.equal(s.p50_at_most_ms, 1);
  t.equal(s.p99_at_most_ms, null, 'above every bound');
  t.equal(s.over_50_ms, 5);
  t.same(syncSummary(before, before), { syncs: 0, avg_ms: null, p50_at_most_ms: null, p99_at_most_ms: null, over_50_ms: 0, histogram: {} });
});
