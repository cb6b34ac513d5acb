// Which events of a capture request are stored, which are dropped (and why), and when the whole request is
// refused (src/domain/ingest/accept-events.ts).
import t from 'tap';
import { acceptEvents, eventsOf, type NormalizeContext } from '../../src/domain/ingest/index.js';
import { MAX_JSON_DEPTH } from '../../src/domain/json-depth.js';

const ctx: NormalizeContext = { now: Date.UTC(2024, 0, 1), sentAt: null, ip: null };
const accept = (payload: unknown) => acceptEvents(payload, eventsOf(payload), ctx);
const deepList = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
const ok = { event: 'e', distinct_id: 'd' };

t.test('a request is refused only when it has events and none can be stored', async (t) => {
  const cases: [string, unknown, string | null][] = [
    ['valid single event', ok, null],
    ['empty batch', { batch: [] }, null],
    ['empty list', [], null],
    ['batch is not a list', { batch: 'x' }, 'invalid_batch'],
    ['batch is an object', { batch: { event: 'e' } }, 'invalid_batch'],
    ['a scalar payload', 42, 'not_an_object'],
    ['batch of {}', { batch: [{}] }, 'missing_event_name'],
    ['null event', { event: null, distinct_id: 'd' }, 'missing_event_name'],
    ['empty distinct_id', { event: 'e', distinct_id: '' }, 'missing_distinct_id'],
    ['items that are not objects', [1, 'two'], 'not_an_object'],
    ['the first reason is reported', { batch: [{ event: 'e' }, {}] }, 'missing_distinct_id'],
    ['too deep', { event: 'e', distinct_id: 'd', properties: { n: deepList(MAX_JSON_DEPTH) } }, 'too_deep'],
    ['one valid among invalid ones', { batch: [{}, ok, { event: 'e' }] }, null],
  ];
  for (const [name, payload, refusal] of cases) t.equal(accept(payload).refusal, refusal, name);
});

t.test('valid events are kept, every other one is counted by reason and logged as skipped', async (t) => {
  const deep = { event: 'p', distinct_id: 'v', properties: { n: deepList(100_000) } };
  const atBound = { event: 'b', distinct_id: 'v', properties: { n: deepList(MAX_JSON_DEPTH - 2) } };
  const r = accept({ batch: [ok, deep, {}, 7, { event: 'x' }, atBound] });
  t.equal(r.refusal, null);
  t.same(r.events.map((e) => e.event), ['e', 'b'], `an event exactly ${MAX_JSON_DEPTH} levels deep is kept`);
  t.same(Object.fromEntries(r.dropped), { too_deep: 1, missing_event_name: 1, not_an_object: 1, missing_distinct_id: 1 });
  t.same(r.uuids.map((u) => u === null), [false, true, true, true, true, false], 'dropped events are skipped by the apply loop');
});
