/** The apply's hot-persons cache (src/worker/ingest/hot-persons.ts): bounded by an estimate of its bytes. */
import t from 'tap';
import { createSharedState, SharedState } from '../../src/protocol/shared-state.js';
import { HotPersons } from '../../src/worker/ingest/hot-persons.js';

const row = (id: number) => ({
  id, team: 1, uuid: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`, created_at: '2026-11-27T00:00:00.000Z',
  is_identified: false, version: 0, distinct_ids: [`visitor-${id}`],
  properties: Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`property_${k}`, `a value of some length ${k}`])),
});

t.test('the cache keeps what fits its byte budget, the most recent first', async (t) => {
  const budget = 1024 * 1024;
  const cache = new HotPersons(new SharedState(createSharedState()), budget);
  for (let i = 1; i <= 20_000; i++) cache.put(row(i));
  t.ok(cache.approxBytes <= budget, `within the budget (${cache.approxBytes} bytes estimated)`);
  t.ok(cache.size > 100 && cache.size < 20_000, `some persons kept, not all (${cache.size})`);
  t.ok(cache.get(1, 'visitor-20000'), 'the last one is there');
  t.notOk(cache.get(1, 'visitor-1'), 'the first one went');
});

t.test('without a budget it keeps up to its entry bound', async (t) => {
  const cache = new HotPersons(new SharedState(createSharedState()));
  for (let i = 1; i <= 5_000; i++) cache.put(row(i));
  t.equal(cache.size, 5_000);
  t.ok(cache.approxBytes > 5_000 * 500, 'and estimates what they hold');
});

t.test('over the memory budget it keeps a share of its budget, and grows back after', async (t) => {
  const budget = 1024 * 1024;
  const cache = new HotPersons(new SharedState(createSharedState()), budget);
  for (let i = 1; i <= 20_000; i++) cache.put(row(i));
  const full = cache.size;
  cache.setShare(0.25);
  t.ok(cache.approxBytes <= budget / 4, `evicted at once to a quarter (${cache.approxBytes} bytes)`);
  t.ok(cache.get(1, 'visitor-20000'), 'the most recent are kept');
  for (let i = 20_001; i <= 40_000; i++) cache.put(row(i));
  t.ok(cache.approxBytes <= budget / 4, 'and stays there while it is over');
  cache.setShare(1);
  for (let i = 40_001; i <= 60_000; i++) cache.put(row(i));
  // A full cache evicts in batches of 1/32 of its bound: its size moves within that.
  t.ok(Math.abs(cache.size - full) <= Math.ceil(full / 32), `back to its full size once under (${cache.size} against ${full})`);
});

t.test('a full cache evicts the least recently used, in batches', async (t) => {
  const budget = 1024 * 1024;
  const cache = new HotPersons(new SharedState(createSharedState()), budget);
  for (let i = 1; i <= 20_000; i++) cache.put(row(i));
  const sizes = new Set<number>();
  for (let i = 20_001; i <= 21_000; i++) {
    cache.put(row(i));
    sizes.add(cache.size);
  }
  const [least, most] = [Math.min(...sizes), Math.max(...sizes)];
  t.ok(most - least >= Math.floor(most / 32) - 1, `the size falls by a batch at once (${least}..${most})`);
  // Touching an old entry makes it recent: it outlives the batches that evict its neighbours.
  const survivor = 21_000;
  for (let i = 21_001; i <= 40_000; i++) {
    if (i % 100 === 0) cache.get(1, `visitor-${survivor}`) && cache.put(row(survivor));
    cache.put(row(i));
  }
  t.ok(cache.get(1, `visitor-${survivor}`), 'a person seen often stays');
  t.notOk(cache.get(1, 'visitor-21001'), 'one seen once went');
  t.ok(cache.get(1, 'visitor-40000'));
});
