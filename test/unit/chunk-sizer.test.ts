/** The apply's chunk sizer (src/worker/ingest/chunk-sizer.ts): chunks capped by their measured cost per event. */
import t from 'tap';
import { ChunkSizer } from '../../src/worker/ingest/chunk-sizer.js';

t.test('the cap follows the cost per event towards the time target', async (t) => {
  const sizer = new ChunkSizer(500, 8000, 0.25);
  t.equal(sizer.cap, 8000, 'unmeasured: the largest chunk');
  sizer.observe(8000, 0.2);
  t.equal(sizer.cap, 8000, '25 µs an event: 8,000 fit in 0.25 s');
  sizer.observe(8000, 1.6);
  t.equal(sizer.cap, 2222, 'costlier (200 µs, averaged with 25 µs): the cap shrinks to what fits');
  sizer.observe(2222, 0.25 * 2222 / 2222);
  t.ok(sizer.cap < 8000 && sizer.cap > 1000, `it settles between (${sizer.cap})`);
  for (let i = 0; i < 20; i++) sizer.observe(4000, 0.04);
  t.equal(sizer.cap, 8000, 'cheap again: back to the largest chunk');
  for (let i = 0; i < 20; i++) sizer.observe(600, 6);
  t.equal(sizer.cap, 500, 'never under the floor');
});

t.test('chunks under the floor are not counted', async (t) => {
  const sizer = new ChunkSizer(500, 8000, 0.25);
  sizer.observe(25, 0.2);
  sizer.observe(0, 0);
  t.equal(sizer.cap, 8000, 'a small chunk\'s fixed cost is not a cost per event');
});
