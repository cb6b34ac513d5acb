// Which worker the front sends a request to (src/front/worker-pool.ts leastBusy): ingestion goes to the worker with
// the fewest requests unanswered; any other request to the one with the fewest *other* requests unanswered, since
// ingestion requests mostly wait for fdatasync while an unanswered flag request means the thread is taken.
import t from 'tap';
import { leastBusy } from '../../src/front/worker-pool.js';

t.test('ingestion: fewest requests unanswered, round-robin among equals', async (t) => {
  const workers = [{ load: 3, interactive: 0 }, { load: 1, interactive: 1 }];
  t.equal(leastBusy(workers, 0, false), 1);
  const equal = [{ load: 2, interactive: 0 }, { load: 2, interactive: 0 }];
  t.equal(leastBusy(equal, 0, false), 0);
  t.equal(leastBusy(equal, 1, false), 1);
});

t.test('other requests: fewest other requests unanswered first, then fewest in all', async (t) => {
  // Worker 0 waits on 30 ingestion requests (fdatasync) but answers flags; worker 1 sits on an unanswered flag request.
  const workers = [{ load: 30, interactive: 0 }, { load: 1, interactive: 1 }];
  t.equal(leastBusy(workers, 1, true), 0, 'the worker with no flag request pending');
  t.equal(leastBusy(workers, 0, false), 1, 'ingestion still goes by the total');
  t.equal(leastBusy([{ load: 9, interactive: 2 }, { load: 4, interactive: 2 }], 0, true), 1, 'ties broken by the total');
  t.equal(leastBusy([{ load: 4, interactive: 2 }, { load: 4, interactive: 2 }], 1, true), 1, 'then round-robin');
});

t.test('crash-loop back-off: the third crash within a minute waits 1 s, then doubling up to 30 s', async (t) => {
  const { CrashLoop } = await import('../../src/front/worker-pool.js');
  const loop = new CrashLoop();
  t.same([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => loop.noteCrash(1_000 + i * 1000)), [0, 0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  t.equal(loop.noteCrash(200_000), 0, 'after a quiet minute the count starts again');
  t.equal(loop.recent(200_000), 1);
});
