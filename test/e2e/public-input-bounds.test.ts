// The project API key is public: whatever shape a request has, it must not take a shard down. What an attacker
// with the key sent (issue 47): one event with 100,000 properties, then 100,000 small events of one distinct id —
// the first stalled a worker for good, its block growing a 32,768-row column per property name. Now the shape
// bounds refuse what no SDK sends (src/domain/ingest/event-shape.ts) and a block costs what was sent whatever its
// shape (src/stores/scan/overflow.ts): checked here through the real server, with every acknowledged event read
// back, the dropped ones counted and sampled, and the keys built from input bounded.
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const METRICS_TOKEN = 'bounds-metrics-token-0123';
const server = quillForFile(t, { env: { QUILL_METRICS_TOKEN: METRICS_TOKEN } });
const stats = async () => (await server.api.get('/_stats')).body;
const deadLetters = (s: any) => s.shards.reduce((n: number, shard: any) => n + shard.deadLetters.stored, 0);
const capture = (body: object) => fetch(`${server.q.base}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, ...body }) });
const hogql = async (query: string) => {
  const res = await server.api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.results as unknown[][];
};

function wide(n: number): Record<string, number> {
  const props: Record<string, number> = {};
  for (let i = 0; i < n; i++) props[`p${i}`] = i;
  return props;
}

t.test('past the bounds: refused with the reason, the other events of the batch stored, counted and sampled', async (t) => {
  const api = server.api;
  const before = await stats();
  const tooWide = await capture({ event: 'wide', distinct_id: 'b-1', properties: wide(100_000) });
  t.equal(tooWide.status, 400, 'an event of 100,000 properties alone: 400');
  t.match(await tooWide.json(), { type: 'validation_error', code: 'too_many_properties', attr: 'properties' });
  const tooLarge = await capture({ event: 'big', distinct_id: 'b-1', properties: { text: 'x'.repeat(1_100_000) } });
  t.equal(tooLarge.status, 413, 'an event over 1,000,000 bytes alone: 413, as PostHog');
  t.match(await tooLarge.json(), { code: 'message_size_too_large' });
  const longArray = await capture({ event: 'arr', distinct_id: 'b-1', properties: { list: Array(10_001).fill(0) } });
  t.match(await longArray.json(), { code: 'array_too_long' });

  const mixed = await sendBatch(server.q.base, [
    event('b-2', 'kept-1'),
    event('b-2', 'too-wide', wide(10_001)),
    event('b-2', 'too-large', { text: 'y'.repeat(1_000_001) }),
    event('b-2', 'group', { $groups: { company: 'k'.repeat(401) } }),
    event('b-2', 'kept-2'),
  ]);
  t.equal(mixed.status, 200, 'a batch with some events past the bounds is acknowledged');
  t.same((await storedEvents(api, 'b-2')).map((e) => e.event).sort(), ['kept-1', 'kept-2'], 'its other events are stored');
  const after = await stats();
  for (const reason of ['too_many_properties', 'message_size_too_large', 'array_too_long', 'group_key_too_long']) {
    t.ok((after.dropped[reason] ?? 0) > (before.dropped[reason] ?? 0), `counted in /_stats dropped: ${reason}`);
  }
  const metrics = await api.get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
  t.match(metrics.text, /quill_events_dropped_total\{reason="too_many_properties"\} \d+/, 'and in /metrics');
  const samples = await eventually('samples of the dropped events', async () => {
    const res = await api.get('/_dead_letters?reason=too_many_properties');
    return res.body.results.length > 0 ? res.body.results : null;
  });
  t.match(samples[0], { kind: 'dropped', reason: 'too_many_properties', team: 1 }, 'a sample in the dead-letter store');
  t.ok(samples[0].content.startsWith('{'), 'with the start of what was sent');
  t.ok(samples[0].content.length <= 17_000, 'bounded');
  t.equal(deadLetters(after), deadLetters(before), 'samples are not events set aside');
  const stranger = await new Client(server.q.base, null).get('/_dead_letters');
  t.equal(stranger.status, 401, 'the dead letters need a key');
});

t.test('a wide event then 100,000 small events: every event applied, the block bounded, flags answering', async (t) => {
  const api = server.api;
  const props = wide(9_000);
  t.equal((await capture({ event: 'wide', distinct_id: 'w-1', properties: props })).status, 200, 'an event of 9,000 properties is within the bounds');
  const many = await fetch(`${server.q.base}/batch/`, {
    method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: Array(100_000).fill({ event: 'many', distinct_id: 'w-many' }) }),
  });
  t.equal(many.status, 200, '100,000 events of one distinct id in one request');
  const flags = await fetch(`${server.q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'w-1' }) });
  t.equal(flags.status, 200, '/flags/ answers while they are applied');
  t.same(await hogql(`SELECT count() FROM events WHERE distinct_id = 'w-many'`), [[100_000]], 'every small event is stored');
  const [stored] = await storedEvents(api, 'w-1');
  t.same(stored.properties, { ...props, $ip: stored.properties.$ip }, 'the wide event reads back whole');
  t.same(await hogql(`SELECT properties.p8999, properties.p3 FROM events WHERE event = 'wide'`), [[8999, 3]], 'its properties beyond the columns are queried as any');
  const s = await stats();
  t.equal(s.shards.reduce((n: number, shard: any) => n + shard.backlog, 0), 0, 'nothing left to apply');
  t.equal(deadLetters(s), 0, 'nothing set aside');
  // What the open blocks hold: linear in what was sent (9,000 values and 100,001 rows), not 9,000 columns of 32,768 rows (1.2 GB).
  const openBytes = s.shards.reduce((n: number, shard: any) => n + shard.scan.openBytes, 0);
  t.ok(openBytes < 64 * 1024 * 1024, `open blocks hold ${Math.round(openBytes / 1024 / 1024)} MB`);
  const health = await eventually('every worker beating', async () => {
    const h = await api.get('/_health');
    return h.body.workers.every((w: any) => !w.stalled) ? h.body : null;
  });
  t.equal(health.status, 'ok');
});

t.test('input that becomes an LMDB key is bounded: nothing acknowledged is set aside', async (t) => {
  const api = server.api;
  const big = 'x'.repeat(900_000);
  const before = await stats();
  const answers = await Promise.all([
    capture({ event: '$identify', distinct_id: 'k-1', properties: { $anon_distinct_id: big } }),
    capture({ event: '$create_alias', distinct_id: 'k-2', properties: { alias: big } }),
    capture({ event: '$merge_dangerously', distinct_id: 'k-3', properties: { alias: big } }),
    capture({ event: 'e', distinct_id: 'k-4', properties: { $set: { [big]: 1 } } }),
    capture({ event: 'e', distinct_id: 'k-5', properties: { [big]: 1 } }),
    capture({ event: big.slice(0, 400_000), distinct_id: big.slice(0, 400_000) }),
  ]);
  t.same(answers.map((r) => r.status), [200, 200, 200, 200, 200, 200], 'acknowledged');
  const refused = await capture({ event: '$groupidentify', distinct_id: 'k-6', properties: { $group_type: 'company', $group_key: big } });
  t.equal(refused.status, 400, 'a group key past 400 characters is refused, as PostHog drops it');
  t.match(await refused.json(), { code: 'group_key_too_long' });
  t.equal((await storedEvents(api, 'k-5')).length, 1, 'applied');
  const merged = (await api.get(`/api/projects/@current/persons/?distinct_id=k-1`)).body.results[0];
  // Cut to the same 200 characters, the three merge ids name one distinct id: the three persons are one.
  t.same(merged.distinct_ids.sort(), ['k-1', 'k-2', 'k-3', 'x'.repeat(200)], 'a merge id is cut to 200 characters, as distinct ids are');
  const flags = await fetch(`${server.q.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: big, groups: { company: big } }) });
  t.equal(flags.status, 200, 'flags for a huge distinct id and group key');
  const status = await api.get(`/api/projects/@current/query/${'q'.repeat(3000)}/`);
  t.equal(status.status, 404, 'a query status by an id too long to be one');
  const after = await stats();
  t.equal(deadLetters(after), deadLetters(before), 'nothing set aside');
});

t.test('a person whose properties would pass 640 KB: the update is refused, the event kept', async (t) => {
  const api = server.api;
  const before = await stats();
  const chunk = 'z'.repeat(200_000);
  for (let i = 0; i < 4; i++) {
    t.equal((await capture({ event: 'grow', distinct_id: 'fat-1', properties: { $set: { [`part${i}`]: chunk } } })).status, 200);
  }
  t.equal((await storedEvents(api, 'fat-1')).length, 4, 'every event stored');
  const person = (await api.get(`/api/projects/@current/persons/?distinct_id=fat-1`)).body.results[0];
  t.same(Object.keys(person.properties).filter((k) => k.startsWith('part')).sort(), ['part0', 'part1', 'part2'], 'the fourth $set would pass the bound');
  const after = await stats();
  t.equal(after.ingestion_warnings.person_properties_size_violation - before.ingestion_warnings.person_properties_size_violation, 1, 'counted');
});
