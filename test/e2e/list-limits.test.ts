// Unbounded lists: `GET /events/?limit=1000000000` built a 386 MB answer. Every list caps its
// page (events and persons at 1,000 rows, CSV at 10,000), a page of large events also stops at a byte budget, and
// clients reach the rest through `next` (CSV: a `Link` header).
import t from 'tap';
import { sendBatch } from '../helpers/ingest.js';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const EV = '/api/projects/@current/events/';
const PERSONS = '/api/projects/@current/persons/';
const MANY = 1500;

t.before(async () => {
  const batch = Array.from({ length: MANY }, (_, i) => ({ event: 'many', distinct_id: `many-${i}`, properties: { i } }));
  const res = await sendBatch(server.q.base, batch);
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
});

const pathOf = (url: string | null) => (url === null ? null : url.slice(server.q.base.length));
const linkOf = (res: { headers: Headers }) => pathOf(/^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1] ?? null);

t.test('the events list answers at most 1,000 rows, whatever the limit, and next leads to the rest', async (t) => {
  const first = await server.api.get(`${EV}?event=many&limit=1000000000`);
  t.equal(first.status, 200);
  t.equal(first.body.results.length, 1000);
  t.type(first.body.next, 'string');
  const seen = new Set<string>(first.body.results.map((e: any) => e.id));
  let next = pathOf(first.body.next);
  while (next !== null) {
    const page = await server.api.get(next);
    for (const e of page.body.results) seen.add(e.id);
    next = pathOf(page.body.next);
  }
  t.equal(seen.size, MANY, 'every event reached once');
});

t.test('offset is bounded: past 10,000 it is a 400 naming it', async (t) => {
  const res = await server.api.get(`${EV}?offset=10001`);
  t.equal(res.status, 400);
  t.match(res.body, { type: 'validation_error', code: 'invalid_input', attr: 'offset' });
  t.equal((await server.api.get(`${EV}?offset=99999999999999999999999`)).status, 400, 'also when too long for an exact integer');
});

t.test('CSV pages hold at most 10,000 rows and name the next page in a Link header', async (t) => {
  const page = await server.api.get(`${EV}?event=many&format=csv&limit=1000`);
  t.equal(page.text.trim().split('\r\n').length, 1 + 1000, 'a header line and 1,000 rows');
  const next = linkOf(page);
  t.type(next, 'string');
  const rest = await server.api.get(next!);
  t.equal(rest.text.trim().split('\r\n').length, 1 + MANY - 1000);
  t.equal(linkOf(rest), null, 'the last page names no next one');
  const clamped = await server.api.get(`${EV}?event=many&format=csv&limit=50000`);
  t.equal(clamped.text.trim().split('\r\n').length, 1 + MANY, 'a CSV limit above 10,000 is clamped, not refused');
});

t.test('a page of large events stops at its byte budget and next continues after it', async (t) => {
  // Events of 900 KB (an event is at most 1,000,000 bytes: src/domain/ingest/event-shape.ts), 24 of them: 21 MB.
  const blob = 'b'.repeat(900_000);
  const count = 24;
  for (let i = 0; i < count; i++) {
    // One distinct id: the events live in one shard, whose scan stops once it has read 16 MB.
    t.equal((await sendBatch(server.q.base, [{ event: 'large', distinct_id: 'large-1', properties: { i, blob } }])).status, 200);
  }
  const first = await server.api.get(`${EV}?event=large&limit=100`);
  t.equal(first.status, 200);
  t.ok(first.body.results.length < count, `the first page holds ${first.body.results.length} of the ${count} events`);
  t.type(first.body.next, 'string');
  const seen = new Set<number>(first.body.results.map((e: any) => e.properties.i));
  let next = pathOf(first.body.next);
  while (next !== null) {
    const page = await server.api.get(next);
    for (const e of page.body.results) seen.add(e.properties.i);
    next = pathOf(page.body.next);
  }
  t.same([...seen].sort((a, b) => a - b), Array.from({ length: count }, (_, i) => i));
});
