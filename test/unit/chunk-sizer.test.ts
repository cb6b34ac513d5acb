/** The apply's chunk sizer (src/worker/ingest/chunk-sizer.ts): chunks sized for a time target by their measured cost. */
import t from 'tap';
import { ChunkSizer } from '../../src/worker/ingest/chunk-sizer.js';

t.test('the size follows the cost per event towards the time target', async (t) => {
  const sizer = new ChunkSizer();
  t.equal(sizer.events(0.25, 500, 8000), 8000, 'unmeasured: the largest chunk');
  sizer.observe(8000, 0.2);
  t.equal(sizer.events(0.25, 500, 8000), 8000, '25 µs an event: 8,000 fit in 0.25 s');
  t.equal(sizer.events(0.004, 25, 400), 160, 'and 160 in 4 ms');
  sizer.observe(8000, 1.6);
  t.equal(sizer.events(0.25, 500, 8000), 2222, 'costlier (200 µs, averaged with 25 µs): the size shrinks to what fits');
  for (let i = 0; i < 20; i++) sizer.observe(4000, 0.04);
  t.equal(sizer.events(0.25, 500, 8000), 8000, 'cheap again: back to the largest chunk');
  for (let i = 0; i < 20; i++) sizer.observe(600, 6);
  t.equal(sizer.events(0.25, 500, 8000), 500, 'never under the floor');
  t.equal(sizer.events(0.004, 25, 400), 25);
});

t.test('chunks too small to measure are not counted', async (t) => {
  const sizer = new ChunkSizer();
  sizer.observe(5, 0.2);
  sizer.observe(0, 0);
  t.equal(sizer.events(0.25, 500, 8000), 8000, 'a tiny chunk\'s fixed cost is not a cost per event');
});
