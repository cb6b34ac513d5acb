// Invalid events no longer vanish: a request none of whose events can be stored gets a 400
// naming the field, as PostHog's Rust capture answers; a request with some valid events stores them, answers 200
// and counts each dropped one by reason in /_stats `dropped`. An empty batch is still a 200.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { storedEvents } from '../helpers/ingest.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(server.q.base + path, { method: 'POST', headers, body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body) });
const dropped = async (): Promise<Record<string, number>> => (await server.api.get('/_stats')).body.dropped;
const delta = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.keys(after).filter((k) => after[k] !== (before[k] ?? 0)).map((k) => [k, after[k]! - (before[k] ?? 0)]));

t.test('a request with nothing that can be stored is a 400 naming the field, and is counted', async (t) => {
  const cases: [string, string, unknown, string, string][] = [
    ['null event', '/capture/', { api_key: PROJECT_KEY, event: null, distinct_id: 'd' }, 'missing_event_name', 'event'],
    ['empty event', '/e/', { api_key: PROJECT_KEY, event: '', distinct_id: 'd' }, 'missing_event_name', 'event'],
    ['null distinct_id', '/capture/', { api_key: PROJECT_KEY, event: 'e', distinct_id: null }, 'missing_distinct_id', 'distinct_id'],
    ['empty distinct_id', '/i/v0/e/', { api_key: PROJECT_KEY, event: 'e', distinct_id: '' }, 'missing_distinct_id', 'distinct_id'],
    ['batch: "x"', '/batch/', { api_key: PROJECT_KEY, batch: 'x' }, 'invalid_batch', 'batch'],
    ['a batch of {}', '/batch/', { api_key: PROJECT_KEY, batch: [{}] }, 'missing_event_name', 'event'],
    ['a list of scalars', '/e/', [{ token: PROJECT_KEY, event: 'e' }, 1], 'missing_distinct_id', 'distinct_id'],
    ['batch items that are not objects', '/batch/', { api_key: PROJECT_KEY, batch: [1, 'two', null] }, 'not_an_object', 'batch'],
  ];
  for (const [name, path, body, code, attr] of cases) {
    const before = await dropped();
    const res = await post(path, body);
    t.equal(res.status, 400, name);
    t.match(await res.json(), { type: 'validation_error', code, detail: String, attr }, name);
    const counted = delta(await dropped(), before);
    if (code === 'invalid_batch') t.same(counted, {}, `${name}: a malformed batch holds no event to count`);
    else t.ok(counted[code]! >= 1, `${name}: counted as ${code}`);
  }
});

t.test('valid events are stored beside invalid ones, 200, each dropped one counted by reason', async (t) => {
  const before = await dropped();
  const res = await post('/batch/', gzipSync(JSON.stringify({
    api_key: PROJECT_KEY,
    batch: [
      { event: 'kept', distinct_id: 'mixed-1' },
      { event: null, distinct_id: 'mixed-1' },
      { event: 'no-id', distinct_id: '' },
      {},
      7,
      { event: 'kept-too', distinct_id: 'mixed-1' },
    ],
  })), { 'content-encoding': 'gzip' });
  t.equal(res.status, 200);
  t.same(await res.json(), { status: 1 });
  t.same((await storedEvents(server.api, 'mixed-1')).map((e) => e.event).sort(), ['kept', 'kept-too']);
  t.same(delta(await dropped(), before), { missing_event_name: 2, missing_distinct_id: 1, not_an_object: 1 });
});

t.test('an empty batch is still accepted, and counts nothing', async (t) => {
  const before = await dropped();
  const res = await post('/batch/', { api_key: PROJECT_KEY, batch: [] });
  t.equal(res.status, 200);
  t.same(await res.json(), { status: 1 });
  t.same(delta(await dropped(), before), {});
});
