/** The apply's chunk limit (src/worker/ingest/chunk-limit.ts): which rule sizes the next chunk, and when the apply counts as behind. */
import t from 'tap';
import { ChunkSizer } from '../../src/worker/ingest/chunk-sizer.js';
import { Lag, chunkLimit, type Pace } from '../../src/worker/ingest/chunk-limit.js';

const pace = (p: Partial<Pace>): Pace => ({ interactive: false, contended: false, busy: false, quiet: false, ...p });

/** A sizer that has learned `microseconds` a event. */
function sizerAt(microseconds: number): ChunkSizer {
  const sizer = new ChunkSizer();
  sizer.observe(1000, (microseconds * 1000) / 1e6);
  return sizer;
}

t.test('a saturating load with flags keeps chunks at 25 events unless the apply is behind a load it can follow', async (t) => {
  const sizer = sizerAt(60);
  const saturated = pace({ interactive: true, contended: true, busy: true });
  t.equal(chunkLimit(saturated, 10_000, sizer, false), 25, 'acknowledgements and flags first');
  t.equal(chunkLimit(saturated, 10_000, sizer, true), 266, 'behind: sized for 16 ms of callback at 60 µs an event');
  t.equal(chunkLimit(pace({ interactive: true }), 10_000, sizer, false), 66, 'CPUs free, flags arriving: 4 ms');
  t.equal(chunkLimit(pace({ busy: true }), 10_000, sizer, false), 100, 'ingestion only: 100');
  t.equal(chunkLimit(pace({}), 10_000, sizer, false), 2000, 'nothing arriving: a full chunk, within 0.25 s');
});

t.test('a catch-up chunk wins over the behind rule when requests are rare', async (t) => {
  const sizer = sizerAt(25);
  t.equal(chunkLimit(pace({ quiet: true }), 100_000, sizer, true), 8000);
  t.equal(chunkLimit(pace({ quiet: true }), 100_000, sizerAt(100), true), 2500, 'within the 0.25 s callback bound');
});

t.test('behind: the oldest event waited 250 ms and the backlog is not an overload', async (t) => {
  const lag = new Lag();
  t.equal(lag.behind(5_000, null), false, 'nothing waits');
  t.equal(lag.behind(5_000, 100), false, 'a fresh backlog');
  t.equal(lag.behind(5_000, 300), true, 'an old one');
  t.equal(lag.behind(60_000, 300), false, 'an overload: acknowledgements first');
  t.equal(lag.behind(20_000, 300), false, 'still one until the backlog is under a quarter of the bound');
  t.equal(lag.behind(12_000, 300), true, 'then behind again');
});
