// Personal-key uses as `last_used_at` (src/front/key-usage.ts): at most one recorded use per key and minute, queued
// in batches; the front schedules a flush when a batch begins.
import t from 'tap';
import { KeyUsage, RECORD_EVERY_MS } from '../../src/front/key-usage.js';

t.test('a key is recorded on its first use, then not again within the minute', async (t) => {
  const usage = new KeyUsage();
  t.equal(usage.note('a', 1_000), true, 'the first use begins a batch');
  t.equal(usage.note('a', 1_001), false, 'a second use within the minute is not queued');
  t.equal(usage.note('b', 1_002), false, 'another key joins the batch (no second flush scheduled)');
  t.equal(usage.queued, 2);
  t.same(usage.take(2_000), [['a', 1_000], ['b', 1_002]]);
  t.equal(usage.queued, 0);
  t.equal(usage.note('a', 1_000 + RECORD_EVERY_MS - 1), false, 'still within the minute after the flush');
  t.equal(usage.queued, 0);
  t.equal(usage.note('a', 1_000 + RECORD_EVERY_MS), true, 'a minute after its recorded use, the key is recorded again');
  t.same(usage.take(1_000 + RECORD_EVERY_MS), [['a', 1_000 + RECORD_EVERY_MS]]);
});

t.test('throttles older than a minute are forgotten on take (memory stays bounded by the keys in use)', async (t) => {
  const usage = new KeyUsage();
  for (let i = 0; i < 1000; i++) usage.note(`k${i}`, 0);
  t.equal(usage.take(0).length, 1000);
  t.same(usage.take(RECORD_EVERY_MS), []);
  t.equal((usage as unknown as { recorded: Map<string, number> }).recorded.size, 0);
  t.equal(usage.note('k1', RECORD_EVERY_MS), true, 'a forgotten key is recorded on its next use');
});
