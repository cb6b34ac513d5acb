// The stored-events API: GET /events/ (every filter, ordering, limit/offset, the timestamp cursor in `next`, CSV,
// the select/where subset), GET /events/:id/, GET /events/values/, the person field after merges, elements from
// autocapture, and every 4xx. Events are spread over several shards and both workers (many distinct ids).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { personUuid } from '../../src/domain/ingest/index.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
let team: number;
const EV = '/api/projects/@current/events/';

interface Sent {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

const BASE = Date.UTC(2024, 2, 1, 10, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const USERS = 40;
const dataset: Sent[] = [];

async function ingest(events: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(server.q.base + '/batch/', { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

function event(e: Sent): Record<string, unknown> {
  return { event: e.event, distinct_id: e.distinct_id, uuid: e.uuid, timestamp: e.timestamp, properties: e.properties };
}

/** Expected API order: newest first, ties by uuid descending (ascending: the reverse). */
function ordered(rows: Sent[], ascending = false): Sent[] {
  const sorted = [...rows].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.uuid < b.uuid ? -1 : 1));
  return ascending ? sorted : sorted.reverse();
}

const ids = (body: { results: { id: string }[] }) => body.results.map((r) => r.id);
const enc = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));

t.before(async () => {
  team = (await server.api.get('/api/projects/@current/')).body.id;
  for (let i = 0; i < USERS; i++) {
    const distinct_id = `user-${i}`;
    dataset.push({
      uuid: randomUUID(), event: '$pageview', distinct_id, timestamp: iso(BASE + i * 60_000),
      properties: {
        $browser: i % 2 === 0 ? 'Chrome' : 'Firefox', n: i, ...(i % 3 === 0 ? { plan: 'pro' } : {}),
        $set: { email: `user${i}@example.com`, name: `User ${i}`, secret: 's3cret', tier: i < 10 ? 'gold' : 'basic' },
      },
    });
    if (i % 5 === 0) {
      dataset.push({
        uuid: randomUUID(), event: 'purchase', distinct_id, timestamp: iso(BASE + i * 60_000 + 30_000),
        properties: { amount: i * 10, items: ['apple', 'pear'] },
      });
    }
  }
  await ingest(dataset.map(event));
});


t.test('list: newest first, stored event shape, default limit', async (t) => {
  const res = await server.api.get(EV);
  t.equal(res.status, 200);
  t.same(Object.keys(res.body).sort(), ['next', 'results']);
  t.same(ids(res.body), ordered(dataset).map((e) => e.uuid));
  t.equal(res.body.next, null, 'fewer rows than the default limit of 100: no next page');
  const sent = dataset.find((e) => e.distinct_id === 'user-3' && e.event === '$pageview')!;
  const row = res.body.results.find((r: { id: string }) => r.id === sent.uuid);
  t.same(Object.keys(row).sort(), ['distinct_id', 'elements', 'elements_chain', 'event', 'id', 'person', 'properties', 'timestamp']);
  t.match(row, {
    id: sent.uuid, distinct_id: 'user-3', event: '$pageview', timestamp: '2024-03-01T10:03:00.000Z',
    properties: { $browser: 'Firefox', n: 3, plan: 'pro' }, elements: [], elements_chain: '',
  });
  t.same(row.person, {
    is_identified: false, distinct_ids: ['user-3'], properties: { email: 'user3@example.com', name: 'User 3' },
  }, 'person: first distinct id and only email/name/username');

  await ingest(Array.from({ length: 120 }, (_, i) => ({
    event: 'bulk', distinct_id: `bulk-${i % 7}`, timestamp: iso(BASE - 86_400_000 + i * 1000), properties: {},
  })));
  const full = await server.api.get(EV);
  t.equal(full.body.results.length, 100, 'default limit is 100');
  t.type(full.body.next, 'string');
});

t.test('filters: event, distinct_id, person_id (uuid and numeric id)', async (t) => {
  const purchases = await server.api.get(`${EV}?event=purchase`);
  t.same(ids(purchases.body), ordered(dataset.filter((e) => e.event === 'purchase')).map((e) => e.uuid));
  const none = await server.api.get(`${EV}?event=Purchase`);
  t.same(none.body.results, [], 'event names match exactly');

  const byId = await server.api.get(`${EV}?distinct_id=user-10`);
  t.same(ids(byId.body), ordered(dataset.filter((e) => e.distinct_id === 'user-10')).map((e) => e.uuid));
  const both = await server.api.get(`${EV}?distinct_id=user-10&event=purchase`);
  t.same(ids(both.body), ordered(dataset.filter((e) => e.distinct_id === 'user-10' && e.event === 'purchase')).map((e) => e.uuid));

  const uuid = personUuid(team, 'user-15');
  const byPerson = await server.api.get(`${EV}?person_id=${uuid}`);
  t.same(ids(byPerson.body), ordered(dataset.filter((e) => e.distinct_id === 'user-15')).map((e) => e.uuid));
  const select = await server.api.get(`${EV}?distinct_id=user-15&select=${enc(['person_id'])}`);
  t.same(select.body.results, [[uuid], [uuid]], 'select person_id gives the person uuid');

  const persons = await server.api.get('/api/projects/@current/persons/?distinct_id=user-15');
  t.equal(persons.status, 200);
  const numeric = persons.body.results[0].id;
  const byNumeric = await server.api.get(`${EV}?person_id=${numeric}`);
  t.same(ids(byNumeric.body), ids(byPerson.body), 'a numeric person id works like the uuid');
  const unknown = await server.api.get(`${EV}?person_id=${randomUUID()}`);
  t.same(unknown.body, { next: null, results: [] }, 'an unknown person has no events');
  const bad = await server.api.get(`${EV}?person_id=user-15`);
  t.equal(bad.status, 400);
  t.same(bad.body, { type: 'validation_error', code: 'invalid_input', detail: 'person_id must be a numeric person id or a person uuid.', attr: 'person_id' });
});

t.test('properties filter: event properties, operators, groups', async (t) => {
  const pageviews = dataset.filter((e) => e.event === '$pageview');
  const check = async (filter: unknown, expected: Sent[], msg: string) => {
    const res = await server.api.get(`${EV}?event=%24pageview&properties=${enc(filter)}`);
    t.equal(res.status, 200, msg);
    t.same(ids(res.body), ordered(expected).map((e) => e.uuid), msg);
  };
  await check([{ key: '$browser', value: 'Chrome', type: 'event' }], pageviews.filter((e) => e.properties.$browser === 'Chrome'), 'exact, typed');
  await check([{ key: '$browser', value: 'Chrome' }], pageviews.filter((e) => e.properties.$browser === 'Chrome'), 'type defaults to event');
  await check([{ key: '$browser', value: ['Chrome', 'Firefox'], operator: 'exact' }], pageviews, 'a list value means in');
  await check([{ key: 'n', value: 35, operator: 'gt' }], pageviews.filter((e) => (e.properties.n as number) > 35), 'gt on numbers');
  await check([{ key: '$browser', value: 'fox', operator: 'icontains' }], pageviews.filter((e) => e.properties.$browser === 'Firefox'), 'icontains');
  await check([{ key: 'plan', value: 'pro', operator: 'is_not' }], pageviews.filter((e) => e.properties.plan !== 'pro'), 'is_not matches missing keys');
  await check([{ key: 'plan', operator: 'is_set' }], pageviews.filter((e) => e.properties.plan === 'pro'), 'is_set');
  await check([{ key: '$browser', value: '^Chr', operator: 'regex' }], pageviews.filter((e) => e.properties.$browser === 'Chrome'), 'regex');
  await check([{ key: '$browser', value: 'Chrome' }, { key: 'plan', value: 'pro' }],
    pageviews.filter((e) => e.properties.$browser === 'Chrome' && e.properties.plan === 'pro'), 'a list is AND');
  await check({ type: 'OR', values: [{ key: 'n', value: 1 }, { key: 'n', value: 2 }] },
    pageviews.filter((e) => e.properties.n === 1 || e.properties.n === 2), 'OR group');
  await check({ type: 'AND', values: [{ type: 'OR', values: [{ key: 'n', value: 4 }, { key: 'n', value: 6 }] }, { key: 'plan', value: 'pro', negation: true }] },
    pageviews.filter((e) => e.properties.n === 4), 'nested groups and negation');
  await check({ key: 'n', value: 7 }, pageviews.filter((e) => e.properties.n === 7), 'a single filter object');
  await check([], pageviews, 'an empty list filters nothing');
});

t.test('properties filter: person properties and cohorts', async (t) => {
  const gold = await server.api.get(`${EV}?properties=${enc([{ key: 'tier', value: 'gold', type: 'person' }])}`);
  const goldIds = new Set(Array.from({ length: 10 }, (_, i) => `user-${i}`));
  t.same(ids(gold.body), ordered(dataset.filter((e) => goldIds.has(e.distinct_id))).map((e) => e.uuid));
  const mixed = await server.api.get(`${EV}?properties=${enc({ type: 'AND', values: [
    { key: 'tier', value: 'gold', type: 'person' }, { key: 'amount', value: 0, operator: 'gt', type: 'event' }] })}`);
  t.same(ids(mixed.body), ordered(dataset.filter((e) => goldIds.has(e.distinct_id) && ((e.properties.amount as number) ?? 0) > 0)).map((e) => e.uuid));

  const cohort = await server.api.post('/api/projects/@current/cohorts/', {
    name: 'Gold', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'tier', value: 'gold', type: 'person' }] }] } },
  });
  t.equal(cohort.status, 201, 'cohort created');
  const inCohort = await server.api.get(`${EV}?properties=${enc([{ key: 'id', value: cohort.body.id, type: 'cohort' }])}`);
  t.same(ids(inCohort.body), ids(gold.body), 'cohort filter');
  const missing = await server.api.get(`${EV}?properties=${enc([{ key: 'id', value: 999999, type: 'cohort' }])}`);
  t.equal(missing.status, 400, 'an unknown cohort is refused');
  t.equal(missing.body.attr, 'properties');
});

t.test('properties filter: malformed input is a 400 with attr properties', async (t) => {
  for (const [raw, why] of [
    ['{not json', 'invalid JSON'],
    [enc('"a string"'), 'not a list or group'],
    [enc([{ key: 'x', value: 1, type: 'element' }]), 'unsupported type'],
    [enc([{ key: 'x', value: '(', operator: 'regex' }]), 'a regex that does not compile'],
    [enc([{ key: 'x', value: 1, operator: 'nope' }]), 'unknown operator'],
    [enc({ type: 'XOR', values: [] }), 'unknown group type'],
    [enc([5]), 'a filter that is not an object'],
  ] as const) {
    const res = await server.api.get(`${EV}?properties=${raw}`);
    t.equal(res.status, 400, why);
    t.match(res.body, { type: 'validation_error', code: String, detail: String, attr: 'properties' }, why);
  }
});

t.test('after / before: strict bounds, absolute and relative dates', async (t) => {
  const pageviews = dataset.filter((e) => e.event === '$pageview');
  const at = (i: number) => iso(BASE + i * 60_000);
  const window = await server.api.get(`${EV}?event=%24pageview&after=${enc(at(5))}&before=${enc(at(9))}`);
  t.same(ids(window.body), ordered(pageviews.filter((e) => e.properties.n as number > 5 && (e.properties.n as number) < 9)).map((e) => e.uuid),
    'bounds are exclusive');
  const offset = await server.api.get(`${EV}?event=%24pageview&after=${enc('2024-03-01T11:05:00+01:00')}&before=${enc('2024-03-01 10:09:00')}`);
  t.same(ids(offset.body), ids(window.body), 'offsets and a space separator are understood');
  const unencodedPlus = await server.api.get(`${EV}?event=%24pageview&after=2024-03-01T11:05:00+01:00&before=${enc(at(9))}`);
  t.same(ids(unencodedPlus.body), ids(window.body), 'an unencoded + (a space once decoded) still reads as an offset');
  const day = await server.api.get(`${EV}?before=2024-03-01`);
  t.same(ids(day.body).filter((id) => dataset.some((e) => e.uuid === id)), [], 'a plain date is midnight UTC');

  const recent = { uuid: randomUUID(), event: 'recent', distinct_id: 'user-1', timestamp: iso(Date.now() - 2 * 3_600_000), properties: {} };
  await ingest([event(recent)]);
  const lastDay = await server.api.get(`${EV}?after=-1d`);
  t.same(ids(lastDay.body), [recent.uuid], 'relative -1d');
  const lastHour = await server.api.get(`${EV}?after=-1h`);
  t.same(ids(lastHour.body), [], 'relative -1h (two hours ago is outside)');
  const older = await server.api.get(`${EV}?before=-1w&event=recent`);
  t.same(ids(older.body), [], 'relative -1w as an upper bound');
  const month = await server.api.get(`${EV}?after=-1mStart&event=recent`);
  t.same(ids(month.body), [recent.uuid], 'relative -1mStart');

  for (const [param, value] of [['after', 'yesterday'], ['before', '2024-13-01'], ['after', '2024-02-30'], ['before', '-5x'], ['after', '-999999y']]) {
    const res = await server.api.get(`${EV}?${param}=${value}`);
    t.equal(res.status, 400, `${param}=${value}`);
    t.match(res.body, { type: 'validation_error', code: 'invalid_input', attr: param });
  }
});

t.test('orderBy, limit, offset', async (t) => {
  const purchases = dataset.filter((e) => e.event === 'purchase');
  const asc = await server.api.get(`${EV}?event=purchase&orderBy=${enc(['timestamp'])}`);
  t.same(ids(asc.body), ordered(purchases, true).map((e) => e.uuid));
  const desc = await server.api.get(`${EV}?event=purchase&orderBy=${enc(['-timestamp'])}`);
  t.same(ids(desc.body), ordered(purchases).map((e) => e.uuid));
  const page = await server.api.get(`${EV}?event=purchase&limit=3&offset=2`);
  t.same(ids(page.body), ordered(purchases).slice(2, 5).map((e) => e.uuid));
  const beyond = await server.api.get(`${EV}?event=purchase&offset=500`);
  t.same(beyond.body, { next: null, results: [] });

  for (const [query, attr] of [['limit=ten', 'limit'], ['limit=-1', 'limit'], ['offset=1.5', 'offset'], [`orderBy=${enc(['event'])}`, 'orderBy'], ['orderBy=%5B', 'orderBy']]) {
    const res = await server.api.get(`${EV}?${query}`);
    t.equal(res.status, 400, query);
    t.match(res.body, { type: 'validation_error', code: 'invalid_input', attr }, query);
  }
  const huge = await server.api.get(`${EV}?event=purchase&limit=100000000`);
  t.equal(huge.status, 200, 'a limit above the maximum is clamped');
  t.equal(huge.body.results.length, purchases.length);
  const enormous = await server.api.get(`${EV}?event=purchase&limit=123456789012345678901234567890`);
  t.equal(enormous.status, 200, 'even one too long for an exact integer');
  t.equal(enormous.body.results.length, purchases.length);
});

/** Follows `next` links from `path`, returning every id seen and the links. */
async function walk(path: string): Promise<{ seen: string[]; links: string[] }> {
  const seen: string[] = [];
  const links: string[] = [];
  let url: string | null = server.q.base + path;
  for (let guard = 0; url && guard < 100; guard++) {
    const res = await server.api.get(url.slice(server.q.base.length));
    seen.push(...ids(res.body));
    url = res.body.next;
    if (url) links.push(url);
  }
  return { seen, links };
}

t.test('next: an absolute URL with the cursor, keeping the other parameters', async (t) => {
  const pageviews = ordered(dataset.filter((e) => e.event === '$pageview'));
  const first = await server.api.get(`${EV}?event=%24pageview&limit=15`);
  const last = pageviews[14]!;
  t.equal(first.body.next, `${server.q.base}${EV}?event=%24pageview&limit=15&before=${encodeURIComponent(last.timestamp)}`);
  const { seen, links } = await walk(`${EV}?event=%24pageview&limit=15`);
  t.same(seen, pageviews.map((e) => e.uuid), 'walking next visits every row once, in order');
  t.equal(links.length, 2);

  const asc = await walk(`${EV}?event=%24pageview&limit=15&orderBy=${enc(['timestamp'])}`);
  t.same(asc.seen, ordered(dataset.filter((e) => e.event === '$pageview'), true).map((e) => e.uuid));
  t.match(asc.links[0], /[?&]after=2024-03-01T10%3A14%3A00.000Z/, 'ascending pages move `after`');

  const withOffset = await server.api.get(`${EV}?event=%24pageview&limit=10&offset=5`);
  t.notMatch(withOffset.body.next, /offset=/, 'the cursor replaces the offset');
  const rest = await server.api.get(withOffset.body.next.slice(server.q.base.length));
  t.same(ids(rest.body), pageviews.slice(15, 25).map((e) => e.uuid));
});

t.test('next: rows sharing a timestamp are neither lost nor repeated across pages', async (t) => {
  const ts = iso(BASE - 3 * 86_400_000);
  const tied = Array.from({ length: 30 }, (_, i) => ({ uuid: randomUUID(), event: 'tied', distinct_id: `tie-${i}`, timestamp: ts, properties: {} }));
  await ingest(tied.map(event));
  for (const order of ['-timestamp', 'timestamp']) {
    const { seen } = await walk(`${EV}?event=tied&limit=7&orderBy=${enc([order])}`);
    t.same(seen, ordered(tied, order === 'timestamp').map((e) => e.uuid), `ordering ${order}`);
  }
});

t.test('person field follows $identify merges', async (t) => {
  const T = BASE + 3_600_000;
  const anonOnly = { uuid: randomUUID(), event: '$pageview', distinct_id: 'anon-1', timestamp: iso(T), properties: {} };
  const anonMerged = { uuid: randomUUID(), event: '$pageview', distinct_id: 'anon-2', timestamp: iso(T + 1000), properties: {} };
  await ingest([event(anonOnly), event(anonMerged),
    { event: '$pageview', distinct_id: 'known-2', timestamp: iso(T + 2000), properties: { $set: { email: 'k2@example.com' } } }]);
  let res = await server.api.get(`${EV}?distinct_id=anon-2`);
  t.same(res.body.results[0].person, { is_identified: false, distinct_ids: ['anon-2'], properties: {} }, 'before the merge');

  await ingest([
    { event: '$identify', distinct_id: 'known-1', timestamp: iso(T + 3000), properties: { $anon_distinct_id: 'anon-1', $set: { email: 'k1@example.com', name: 'K One', username: 'k1', age: 40 } } },
    { event: '$identify', distinct_id: 'known-2', timestamp: iso(T + 4000), properties: { $anon_distinct_id: 'anon-2', $set: { name: 'K Two' } } },
  ]);
  res = await server.api.get(`${EV}?distinct_id=anon-1`);
  t.same(res.body.results[0].person, {
    is_identified: true, distinct_ids: ['anon-1'], properties: { email: 'k1@example.com', name: 'K One', username: 'k1' },
  }, 'the anonymous person gained the identified id');
  res = await server.api.get(`${EV}?distinct_id=anon-2`);
  t.same(res.body.results[0].person, {
    is_identified: true, distinct_ids: ['known-2'], properties: { email: 'k2@example.com', name: 'K Two' },
  }, 'an event of a merged-away person shows the surviving person');
  const byPerson = await server.api.get(`${EV}?person_id=${personUuid(team, 'known-2')}&orderBy=${enc(['timestamp'])}`);
  t.same(byPerson.body.results.map((r: { distinct_id: string }) => r.distinct_id), ['anon-2', 'known-2', 'known-2'],
    'person_id covers every distinct id the person has now');
});

t.test('elements and elements_chain from autocapture $elements', async (t) => {
  const uuid = randomUUID();
  await ingest([{
    event: '$autocapture', distinct_id: 'clicker', uuid, timestamp: iso(BASE),
    properties: {
      $event_type: 'click',
      $elements: [
        { tag_name: 'button', $el_text: 'Buy', attr__class: 'btn primary', nth_child: 1, nth_of_type: 1, attr__id: 'buy' },
        { tag_name: 'a', attr__href: '/shop', nth_child: 2, nth_of_type: 1 },
      ],
    },
  }]);
  const res = await server.api.get(`${EV}${uuid}/`);
  t.equal(res.status, 200);
  t.equal(res.body.elements_chain,
    'button.btn.primary:attr__class="btn primary"attr__id="buy"attr_id="buy"nth-child="1"nth-of-type="1"text="Buy";'
    + 'a:attr__href="/shop"href="/shop"nth-child="2"nth-of-type="1"');
  t.same(res.body.elements, [
    { text: 'Buy', tag_name: 'button', attr_class: ['btn', 'primary'], href: null, attr_id: 'buy', nth_child: 1, nth_of_type: 1, attributes: { attr__class: 'btn primary', attr__id: 'buy' }, order: 0 },
    { text: null, tag_name: 'a', attr_class: null, href: '/shop', attr_id: null, nth_child: 2, nth_of_type: 1, attributes: { attr__href: '/shop' }, order: 1 },
  ]);
  t.equal(res.body.properties.$event_type, 'click');
  t.notOk('$elements' in res.body.properties, '$elements leaves the properties');
  const listed = await server.api.get(`${EV}?event=%24autocapture`);
  t.same(listed.body.results[0], res.body, 'list items and retrieve agree');
});

t.test('retrieve: shape, invalid uuid, unknown uuid', async (t) => {
  const sent = dataset.find((e) => e.event === 'purchase' && e.distinct_id === 'user-20')!;
  const res = await server.api.get(`${EV}${sent.uuid}/`);
  t.equal(res.status, 200);
  t.match(res.body, { id: sent.uuid, distinct_id: 'user-20', event: 'purchase', timestamp: sent.timestamp, properties: { amount: 200, items: ['apple', 'pear'] } });
  const upper = await server.api.get(`${EV}${sent.uuid.toUpperCase()}`);
  t.equal(upper.body.id, sent.uuid, 'uuids are case-insensitive');
  const bad = await server.api.get(`${EV}not-a-uuid/`);
  t.equal(bad.status, 400);
  t.same(bad.body, { type: 'validation_error', code: 'invalid', detail: 'Invalid UUID', attr: null });
  const id = randomUUID();
  const missing = await server.api.get(`${EV}${id}/`);
  t.equal(missing.status, 404);
  t.same(missing.body, { type: 'invalid_request', code: 'not_found', detail: `No events exist for event UUID ${id}`, attr: null });
});

t.test('CSV: list and retrieve, flattened with a sorted header', async (t) => {
  const sent = dataset.find((e) => e.event === 'purchase' && e.distinct_id === 'user-5')!;
  const one = await server.api.get(`${EV}${sent.uuid}/?format=csv`);
  t.equal(one.status, 200);
  t.match(one.headers.get('content-type'), /^text\/csv/);
  const [header, row, end] = one.text.split('\r\n');
  t.equal(end, '');
  const columns = header!.split(',');
  t.same(columns, [...columns].sort(), 'header is sorted');
  t.ok(columns.includes('properties.amount') && columns.includes('properties.items.0') && columns.includes('person.distinct_ids.0'));
  t.equal(row!.split(',')[columns.indexOf('properties.amount')], '50');
  t.equal(row!.split(',')[columns.indexOf('id')], sent.uuid);

  const list = await server.api.get(`${EV}?event=purchase&format=csv`);
  const lines = list.text.split('\r\n').filter((l) => l !== '');
  t.equal(lines.length, 1 + dataset.filter((e) => e.event === 'purchase').length, 'one line per event after the header');
  const xml = await server.api.get(`${EV}?format=xml`);
  t.equal(xml.status, 404, 'an unknown format is not found, as DRF answers');
});

t.test('select / where subset', async (t) => {
  const purchases = ordered(dataset.filter((e) => e.event === 'purchase'));
  const res = await server.api.get(`${EV}?event=purchase&select=${enc(['event', 'distinct_id', 'properties.amount', "properties.items"])}&limit=2`);
  t.equal(res.status, 200);
  t.same(res.body, {
    columns: ['event', 'distinct_id', 'properties.amount', 'properties.items'],
    types: ['String', 'String', 'String', 'String'],
    results: purchases.slice(0, 2).map((e) => ['purchase', e.distinct_id, String(e.properties.amount), '["apple","pear"]']),
    hasMore: true,
  });
  const where = await server.api.get(`${EV}?select=${enc(['uuid', 'timestamp'])}&where=${enc(["event = 'purchase'", 'properties.amount >= 200'])}`);
  t.same(where.body.results, purchases.filter((e) => (e.properties.amount as number) >= 200).map((e) => [e.uuid, e.timestamp]));
  t.same(where.body.types, ['UUID', "DateTime64(6, 'UTC')"]);
  t.equal(where.body.hasMore, false);
  const star = await server.api.get(`${EV}?event=purchase&limit=1&select=${enc(['*'])}`);
  t.same(star.body.columns, ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain']);

  const whereAlone = await server.api.get(`${EV}?where=${enc(["event = 'x'"])}`);
  t.equal(whereAlone.status, 400);
  t.match(whereAlone.body, { type: 'validation_error', attr: 'where' });
  const aggregate = await server.api.get(`${EV}?select=${enc(['count()'])}`);
  t.equal(aggregate.status, 400);
  t.match(aggregate.body, { type: 'validation_error', attr: 'select', detail: /Unsupported select expression "count\(\)"/ });
  const badWhere = await server.api.get(`${EV}?select=${enc(['event'])}&where=${enc(['event LIKE 1'])}`);
  t.equal(badWhere.status, 400);
  t.equal(badWhere.body.attr, 'where');
});

t.test('values: custom events, property values, filters', async (t) => {
  const now = Date.now();
  await ingest([
    { event: 'signup', distinct_id: 'v-1', timestamp: iso(now - 3_600_000), properties: { $browser: 'Safari', tags: ['red', 'blue'], meta: { a: 1 }, count: 3 } },
    { event: '$pageview', distinct_id: 'v-2', timestamp: iso(now - 7_200_000), properties: { $browser: 'Edge', tags: ['green'] } },
    { event: '$pageview', distinct_id: 'v-3', timestamp: iso(now - 10 * 86_400_000), properties: { $browser: 'Opera' } },
    ...Array.from({ length: 15 }, (_, i) => ({ event: 'many', distinct_id: `v-many-${i}`, timestamp: iso(now - 60_000 * (i + 1)), properties: { k: `value-${i}` } })),
  ]);
  const V = `${EV}values/`;
  const custom = await server.api.get(`${V}?key=custom_event`);
  t.equal(custom.status, 200);
  const names = custom.body.map((r: { name: string }) => r.name);
  t.ok(names.includes('purchase') && names.includes('signup') && names.includes('many'));
  t.notOk(names.some((n: string) => n.startsWith('$')), 'no $ events');

  const browsers = await server.api.get(`${V}?key=%24browser`);
  t.same(browsers.body, [{ name: 'Safari' }, { name: 'Edge' }], 'recent events only (the 2024 dataset and the 10-day-old event are out), newest first');
  const filtered = await server.api.get(`${V}?key=%24browser&value=saf`);
  t.same(filtered.body, [{ name: 'Safari' }], 'value is a case-insensitive substring');
  const byEvent = await server.api.get(`${V}?key=%24browser&event_name=%24pageview`);
  t.same(byEvent.body, [{ name: 'Edge' }], 'event_name');
  const byEvents = await server.api.get(`${V}?key=%24browser&event_name=${enc(['$pageview', 'signup'])}`);
  t.same(byEvents.body, [{ name: 'Safari' }, { name: 'Edge' }], 'event_name as a JSON list');
  const tags = await server.api.get(`${V}?key=tags`);
  t.same(tags.body, [{ name: 'blue' }, { name: 'red' }, { name: 'green' }], 'lists are flattened (values seen together by name)');
  t.same((await server.api.get(`${V}?key=meta`)).body, [{ name: '{"a":1}' }], 'objects as JSON text');
  t.same((await server.api.get(`${V}?key=count`)).body, [{ name: '3' }], 'numbers as text');
  const many = await server.api.get(`${V}?key=k`);
  t.equal(many.body.length, 10, 'at most 10 values');
  t.same(many.body[0], { name: 'value-0' });
  t.same((await server.api.get(V)).body, [], 'no key');
  t.same((await server.api.get(`${V}?key=absent`)).body, [], 'unknown key');
  const csv = await server.api.get(`${V}?key=%24browser&format=csv`);
  t.equal(csv.text, 'name\r\nSafari\r\nEdge\r\n');
});

t.test('authentication and unknown paths', async (t) => {
  const anonymous = await server.api.withKey(null).get(EV);
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.type, 'authentication_error');
  const post = await server.api.post(EV, {});
  t.equal(post.status, 405);
  const other = await server.api.get('/api/projects/999999/events/');
  t.equal(other.status, 404);
});
