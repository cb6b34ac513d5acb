import t from 'tap';
import { eventsOf } from '../../src/domain/ingest/index.js';

t.test('body shapes (§1.3)', async (t) => {
  const a = { event: 'a' };
  const b = { event: 'b' };
  const cases: [string, unknown, unknown[]][] = [
    ['single object', a, [a]],
    ['batch envelope', { api_key: 'k', batch: [a, b] }, [a, b]],
    ['empty batch: nothing to ingest (spec-era 200)', { api_key: 'k', batch: [] }, []],
    ['batch: null is a single event', { event: 'a', batch: null }, [{ event: 'a', batch: null }]],
    ['batch of the wrong type', { batch: 'oops' }, []],
    ['bare array', [a, b], [a, b]],
    ['array items are not filtered here', [a, 1, null], [a, 1, null]],
    ['scalar', 42, []],
    ['null', null, []],
  ];
  for (const [name, payload, expected] of cases) t.same(eventsOf(payload), expected, name);
});
