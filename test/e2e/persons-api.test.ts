// The persons API over HTTP: persons created by ingestion (and merges), the list with every filter and its
// pagination, CSV output, create / retrieve / PATCH / DELETE, the property actions, split, the activity log and the
// metadata endpoints. Each behaviour that reads the whole list runs in a project of its own.
import t from 'tap';
import { personUuid } from '../../src/domain/ingest/index.js';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const PERSONS = '/api/projects/@current/persons/';


interface Project {
  id: number;
  token: string;
  persons: string;
}

async function ingest(batch: object[], token = PROJECT_KEY): Promise<void> {
  const res = await fetch(`${server.q.base}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: token, batch }),
  });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

/** Ingests one event and waits until its person is readable (so persons are created in call order). */
async function personVia(distinctId: string, set: Record<string, unknown>, project?: Project): Promise<any> {
  await ingest([{ event: 'signed_up', distinct_id: distinctId, properties: { $set: set } }], project?.token);
  const res = await server.api.get(`${project?.persons ?? PERSONS}?distinct_id=${encodeURIComponent(distinctId)}`);
  if (res.body.results.length !== 1) throw new Error(`no person for ${distinctId}: ${res.text}`);
  return res.body.results[0];
}

async function newProject(name: string): Promise<Project> {
  const res = await server.api.post('/api/projects/', { name });
  if (res.status !== 201) throw new Error(`project create answered ${res.status}: ${res.text}`);
  return { id: res.body.id, token: res.body.api_token, persons: `/api/projects/${res.body.id}/persons/` };
}

const firstIds = (body: any): string[] => body.results.map((p: any) => p.distinct_ids[0]).sort();

t.test('ingested persons are listed newest first, in the person shape', async (t) => {
  const p = await newProject('listing');
  await personVia('list-a', { plan: 'free' }, p);
  await personVia('list-b', { plan: 'pro' }, p);
  await personVia('list-c', {}, p);
  const res = await server.api.get(p.persons);
  t.equal(res.status, 200);
  t.same(res.body.results.map((x: any) => x.distinct_ids[0]), ['list-c', 'list-b', 'list-a']);
  t.equal(res.body.count, 3);
  t.equal(res.body.next, null);
  t.equal(res.body.previous, null);
  const b = res.body.results[1];
  t.same(Object.keys(b).sort(), ['created_at', 'distinct_ids', 'id', 'is_identified', 'name', 'properties', 'uuid']);
  t.match(b, { id: Number, name: 'list-b', distinct_ids: ['list-b'], properties: { plan: 'pro' }, is_identified: false });
  t.equal(b.uuid, personUuid(p.id, 'list-b'), 'the uuid is the deterministic one of the first distinct id');
  t.ok(!Number.isNaN(Date.parse(b.created_at)), 'created_at is a date-time');
});

t.test('pagination: limit and offset with absolute next/previous URLs', async (t) => {
  const p = await newProject('paging');
  for (const d of ['page-1', 'page-2', 'page-3']) await personVia(d, {}, p);
  const first = await server.api.get(`${p.persons}?limit=2`);
  t.same(first.body.results.map((x: any) => x.distinct_ids[0]), ['page-3', 'page-2']);
  t.equal(first.body.previous, null);
  t.equal(first.body.next, `${server.q.base}${p.persons}?limit=2&offset=2`);
  const second = await server.api.get(first.body.next.slice(server.q.base.length));
  t.same(second.body.results.map((x: any) => x.distinct_ids[0]), ['page-1']);
  t.equal(second.body.next, null);
  t.equal(second.body.previous, `${server.q.base}${p.persons}?limit=2`, 'previous of the second page drops the offset');
  const middle = await server.api.get(`${p.persons}?limit=1&offset=2`);
  t.equal(middle.body.previous, `${server.q.base}${p.persons}?limit=1&offset=1`);
  const bad = await server.api.get(`${p.persons}?limit=abc&offset=-4`);
  t.equal(bad.body.results.length, 3, 'invalid limit/offset fall back to the defaults');
});

t.test('$identify merges the anonymous person into one person with both distinct ids', async (t) => {
  await ingest([{ event: '$pageview', distinct_id: 'merge-anon', properties: { $set: { first_seen: 'web', plan: 'free' } } }]);
  await server.api.get(`${PERSONS}?distinct_id=merge-anon`);
  await ingest([{ event: '$identify', distinct_id: 'merge-user', properties: { $anon_distinct_id: 'merge-anon', $set: { plan: 'pro' } } }]);
  const byAnon = await server.api.get(`${PERSONS}?distinct_id=merge-anon`);
  const byUser = await server.api.get(`${PERSONS}?distinct_id=merge-user`);
  t.equal(byAnon.body.results.length, 1);
  t.equal(byAnon.body.results[0].id, byUser.body.results[0].id, 'both distinct ids name the same person');
  t.same([...byUser.body.results[0].distinct_ids].sort(), ['merge-anon', 'merge-user']);
  t.same(byUser.body.results[0].properties, { first_seen: 'web', plan: 'pro' });
  t.equal(byUser.body.results[0].is_identified, true);
});

t.test('name is the email, else the first identified-looking distinct id; anonymous-looking ids sort last', async (t) => {
  const anon = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
  await ingest([{ event: '$pageview', distinct_id: anon, properties: {} }]);
  await server.api.get(`${PERSONS}?distinct_id=${anon}`);
  await ingest([{ event: '$identify', distinct_id: 'named-user', properties: { $anon_distinct_id: anon } }]);
  const res = await server.api.get(`${PERSONS}?distinct_id=named-user`);
  const person = res.body.results[0];
  t.same(person.distinct_ids, ['named-user', anon], 'the uuid-like id is listed last although it came first');
  t.equal(person.name, 'named-user');
  await ingest([{ event: '$set', distinct_id: 'named-user', properties: { $set: { email: 'named@example.com' } } }]);
  const again = await server.api.get(`${PERSONS}${person.id}/`);
  t.equal(again.body.name, 'named@example.com');
  const bare = await server.api.post(PERSONS, { properties: {} });
  t.equal(bare.body.name, String(bare.body.id), 'without email or distinct ids the name is the id');
});

t.test("orderBy (Quill's): created_at or the display name, either way, filtered and paged", async (t) => {
  const p = await newProject('ordering');
  // Created in this order, but first seen (created_at, the first event's timestamp) in another.
  const people: [string, Record<string, unknown>, string][] = [
    ['o-zed', {}, '2024-01-04T00:00:00Z'],
    ['o-bob', { name: 'Bob' }, '2024-01-01T00:00:00Z'],
    ['o-amy', { email: 'amy@example.com' }, '2024-01-03T00:00:00Z'],
    ['o-cat', { email: 'Cat@example.com', plan: 'pro' }, '2024-01-02T00:00:00Z'],
  ];
  for (const [id, set, timestamp] of people) {
    await ingest([{ event: 'signed_up', distinct_id: id, timestamp, properties: { $set: set } }], p.token);
    await personVia(id, {}, p);
  }
  const order = async (orderBy: string, extra = '') => {
    const res = await server.api.get(`${p.persons}?orderBy=${encodeURIComponent(orderBy)}${extra}`);
    t.equal(res.status, 200, orderBy);
    return res.body;
  };
  const ids = (body: any) => body.results.map((x: any) => x.distinct_ids[0]);
  t.same(ids(await server.api.get(p.persons).then((r) => r.body)), ['o-cat', 'o-amy', 'o-bob', 'o-zed'], 'by default newest person first');
  t.same(ids(await order('["-created_at"]')), ['o-zed', 'o-amy', 'o-cat', 'o-bob'], 'created_at, newest first');
  t.same(ids(await order('["created_at"]')), ['o-bob', 'o-cat', 'o-amy', 'o-zed']);
  t.same(ids(await order('created_at')), ['o-bob', 'o-cat', 'o-amy', 'o-zed'], 'the bare text too');
  t.same(ids(await order('["person"]')), ['o-amy', 'o-bob', 'o-cat', 'o-zed'], 'by e-mail, else name, else distinct id; case aside');
  t.same(ids(await order('["-person"]')), ['o-zed', 'o-cat', 'o-bob', 'o-amy']);
  const paged = await order('["-created_at"]', '&limit=2&offset=1');
  t.same(ids(paged), ['o-amy', 'o-cat'], 'a page of the order');
  t.equal(paged.count, 4);
  t.match(paged.next, /orderBy=.*offset=3/, 'next keeps the order');
  t.same(ids(await order('["person"]', '&search=example.com')), ['o-amy', 'o-cat'], 'with a search');
  const bad = await server.api.get(`${p.persons}?orderBy=${encodeURIComponent('["-id"]')}`);
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', attr: 'orderBy' });
  t.equal((await server.api.get(`${p.persons}?orderBy=created_at&offset=10001`)).status, 400, 'offset at most 10,000 when ordered');
});

t.test('list filters', async (t) => {
  const p = await newProject('filters');
  await personVia('f-ann', { email: 'ann@example.com', plan: 'pro', age: 31, signup: '2024-01-10', tag: 'Alpha' }, p);
  await personVia('f-bob', { email: 'bob@example.com', plan: 'free', age: 19, signup: '2023-05-01' }, p);
  await personVia('f-carl', { plan: 'enterprise', age: 45, nickname: 'carl' }, p);
  const list = async (query: string) => {
    const res = await server.api.get(`${p.persons}?${query}`);
    t.equal(res.status, 200, query);
    return firstIds(res.body);
  };
  const props = (filters: unknown) => `properties=${encodeURIComponent(JSON.stringify(filters))}`;
  const pf = (key: string, operator: string | undefined, value?: unknown) =>
    ({ key, ...(operator ? { operator } : {}), ...(value === undefined ? {} : { value }), type: 'person' });

  t.test('distinct_id and email are exact', async (t) => {
    t.same(await list('distinct_id=f-bob'), ['f-bob']);
    t.same(await list('distinct_id=f-bo'), []);
    t.same(await list('distinct_id=nobody'), []);
    t.same(await list('email=ann%40example.com'), ['f-ann']);
    t.same(await list('email=ann'), []);
  });

  t.test('search: case-insensitive substring of the properties or of a distinct id', async (t) => {
    t.same(await list('search=ALPHA'), ['f-ann']);
    t.same(await list('search=example.com'), ['f-ann', 'f-bob']);
    t.same(await list('search=f-car'), ['f-carl']);
    t.same(await list('search=zzz'), []);
  });

  t.test('properties: each operator', async (t) => {
    t.same(await list(props([pf('plan', undefined, 'PRO')])), ['f-ann'], 'exact is the default, case-insensitive');
    t.same(await list(props([pf('plan', 'exact', ['pro', 'free'])])), ['f-ann', 'f-bob'], 'a list means "in"');
    t.same(await list(props([pf('plan', 'is_not', 'pro')])), ['f-bob', 'f-carl']);
    t.same(await list(props([pf('plan', 'is_not', ['pro', 'free'])])), ['f-carl'], 'a list means "not in"');
    t.same(await list(props([pf('email', 'icontains', 'ANN@')])), ['f-ann']);
    t.same(await list(props([pf('email', 'not_icontains', 'ann')])), ['f-bob', 'f-carl'], 'missing keys match negated operators');
    t.same(await list(props([pf('email', 'regex', '^b.b@')])), ['f-bob']);
    t.same(await list(props([pf('email', 'not_regex', '^b')])), ['f-ann', 'f-carl']);
    t.same(await list(props([pf('age', 'gt', 31)])), ['f-carl']);
    t.same(await list(props([pf('age', 'gte', '31')])), ['f-ann', 'f-carl']);
    t.same(await list(props([pf('age', 'lt', 31)])), ['f-bob']);
    t.same(await list(props([pf('age', 'lte', 31)])), ['f-ann', 'f-bob']);
    t.same(await list(props([pf('nickname', 'is_set')])), ['f-carl']);
    t.same(await list(props([pf('nickname', 'is_not_set')])), ['f-ann', 'f-bob']);
    t.same(await list(props([pf('signup', 'is_date_before', '2024-01-01')])), ['f-bob']);
    t.same(await list(props([pf('signup', 'is_date_after', '2024-01-01')])), ['f-ann']);
    t.same(await list(props([pf('signup', 'is_date_exact', '2024-01-10')])), ['f-ann']);
    t.same(await list(props([{ key: 'plan', value: 'free' }])), ['f-bob'], 'untyped filters are person filters');
  });

  t.test('properties: several filters AND, groups AND/OR, other types ignored', async (t) => {
    t.same(await list(props([pf('age', 'gt', 18), pf('plan', 'is_not', 'enterprise')])), ['f-ann', 'f-bob']);
    t.same(await list(props({ type: 'OR', values: [pf('plan', 'exact', 'free'), pf('age', 'gt', 40)] })), ['f-bob', 'f-carl']);
    t.same(await list(props({
      type: 'AND',
      values: [{ type: 'OR', values: [pf('plan', 'exact', 'pro'), pf('plan', 'exact', 'enterprise')] }, { type: 'AND', values: [pf('age', 'lt', 40)] }],
    })), ['f-ann']);
    t.same(await list(props([{ key: '$browser', value: 'Chrome', type: 'event' }, pf('plan', 'exact', 'pro')])), ['f-ann'],
      'event filters are left out');
    t.same(await list(props([{ key: '$browser', value: 'Chrome', type: 'event' }])), ['f-ann', 'f-bob', 'f-carl'],
      'nothing left to apply: no filtering');
    t.same(await list(`${props([pf('age', 'gt', 18)])}&search=example`), ['f-ann', 'f-bob'], 'filters combine');
  });

  t.test('properties: malformed filters are 400s with attr properties', async (t) => {
    for (const raw of ['[{"key":', '"plan"', JSON.stringify([pf('age', 'sorta', 1)]), JSON.stringify({ type: 'XOR', values: [] }),
      JSON.stringify([pf('email', 'regex', '(')]), JSON.stringify([1]), JSON.stringify([pf('signup', 'is_date_after', 'not a date')])]) {
      const res = await server.api.get(`${p.persons}?properties=${encodeURIComponent(raw)}`);
      t.equal(res.status, 400, raw);
      t.match(res.body, { type: 'validation_error', attr: 'properties', detail: String }, raw);
    }
  });
});

t.test('CSV output: the list and a single person', async (t) => {
  const p = await newProject('csv');
  const one = await personVia('csv-1', { email: 'one@example.com', city: 'Oslo, Norway' }, p);
  await personVia('csv-2', { plan: 'pro' }, p);
  const res = await server.api.get(`${p.persons}?format=csv`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/csv/);
  const lines = res.text.split('\r\n');
  t.equal(lines[0], 'created_at,distinct_ids.0,id,is_identified,name,properties.city,properties.email,properties.plan,uuid',
    'header = sorted union of the flattened keys');
  t.equal(lines.length, 4, 'header, two rows, trailing CRLF');
  t.ok(lines[1]!.includes(',csv-2,') && lines[1]!.endsWith(`,pro,${personUuid(p.id, 'csv-2')}`), lines[1]);
  t.ok(lines[2]!.includes(',"Oslo, Norway",one@example.com,,'), 'cells with commas are quoted');
  const single = await server.api.get(`${p.persons}${one.id}/?format=csv`);
  t.equal(single.status, 200);
  t.equal(single.text.split('\r\n')[0], 'created_at,distinct_ids.0,id,is_identified,name,properties.city,properties.email,uuid');
  t.equal(single.text.split('\r\n').length, 3, 'one row');
  const unknown = await server.api.get(`${p.persons}?format=xml`);
  t.equal(unknown.status, 404, 'an unknown format has no renderer');
});

t.test('POST /persons/ creates a person', async (t) => {
  const res = await server.api.post(PERSONS, { properties: { email: 'made@example.com' } });
  t.equal(res.status, 201);
  t.match(res.body, { id: Number, name: 'made@example.com', distinct_ids: [], properties: { email: 'made@example.com' }, uuid: String });
  t.equal((await server.api.get(`${PERSONS}${res.body.id}/`)).body.uuid, res.body.uuid);
  const empty = await server.api.post(PERSONS, {});
  t.equal(empty.status, 201);
  t.same(empty.body.properties, {});

  const withIds = await server.api.post(PERSONS, { properties: { plan: 'api' }, distinct_ids: ['made-1', 'made-2'] });
  t.equal(withIds.status, 201);
  t.same(withIds.body.distinct_ids, ['made-1', 'made-2']);
  await ingest([{ event: 'x', distinct_id: 'made-2', properties: { $set: { seen: true } } }]);
  const after = await server.api.get(`${PERSONS}${withIds.body.id}/`);
  t.same(after.body.properties, { plan: 'api', seen: true }, 'events of its distinct ids update the created person');

  const taken = await server.api.post(PERSONS, { distinct_ids: ['made-1'] });
  t.equal(taken.status, 400);
  t.match(taken.body, { type: 'validation_error', code: 'unique', attr: 'distinct_ids' });
  for (const body of [{ properties: ['x'] }, { properties: 'x' }]) {
    const bad = await server.api.post(PERSONS, body);
    t.equal(bad.status, 400);
    t.same(bad.body, { type: 'validation_error', code: 'invalid_input', detail: 'Expected a dictionary of items.', attr: 'properties' });
  }
  for (const ids of ['made-3', [''], [1]]) {
    const bad = await server.api.post(PERSONS, { distinct_ids: ids });
    t.equal(bad.status, 400);
    t.equal(bad.body.attr, 'distinct_ids');
  }
  const notJson = await server.api.post(PERSONS, '{"properties":');
  t.equal(notJson.status, 400);
  t.equal(notJson.body.code, 'parse_error');
});

t.test('GET /persons/:id/ by id or uuid; other ids are 400, unknown ones 404', async (t) => {
  const person = await personVia('get-me', { a: 1 });
  t.same((await server.api.get(`${PERSONS}${person.id}/`)).body, person);
  t.same((await server.api.get(`${PERSONS}${person.uuid}/`)).body, person);
  t.same((await server.api.get(`${PERSONS}${person.uuid.toUpperCase()}`)).body, person, 'uuids in either case, no trailing slash');
  const bad = await server.api.get(`${PERSONS}get-me/`);
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', code: 'invalid_input', detail: /does not look like a personID/, attr: null });
  const missing = await server.api.get(`${PERSONS}999999/`);
  t.equal(missing.status, 404);
  t.same(missing.body, { type: 'invalid_request', code: 'not_found', detail: 'Person not found.', attr: null });
  t.equal((await server.api.get(`${PERSONS}00000000-0000-4000-8000-000000000000/`)).status, 404);
  const anonymous = await server.api.withKey(null).get(`${PERSONS}${person.id}/`);
  t.equal(anonymous.status, 401);
});

t.test('PATCH /persons/:id/ merges properties', async (t) => {
  const person = await personVia('patch-me', { keep: 'yes', plan: 'free' });
  const res = await server.api.patch(`${PERSONS}${person.id}/`, { properties: { plan: 'pro', seats: 3 } });
  t.equal(res.status, 200);
  t.same(res.body.properties, { keep: 'yes', plan: 'pro', seats: 3 });
  t.same((await server.api.get(`${PERSONS}${person.id}/`)).body.properties, { keep: 'yes', plan: 'pro', seats: 3 });
  const put = await server.api.request('PUT', `${PERSONS}${person.uuid}/`, { properties: { plan: 'team' } });
  t.equal(put.status, 200);
  t.equal(put.body.properties.plan, 'team');

  const missing = await server.api.patch(`${PERSONS}${person.id}/`, { name: 'x' });
  t.equal(missing.status, 400);
  t.same(missing.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'properties' });
  const wrong = await server.api.patch(`${PERSONS}${person.id}/`, { properties: [1] });
  t.equal(wrong.status, 400);
  t.equal(wrong.body.attr, 'properties');
  t.equal((await server.api.patch(`${PERSONS}999999/`, { properties: {} })).status, 404);
});

t.test('update_property: key and value from the query string or the body', async (t) => {
  const person = await personVia('upd-prop', { a: 'x' });
  const path = `${PERSONS}${person.id}/update_property/`;
  const fromQuery = await server.api.post(`${path}?key=tier&value=42`);
  t.equal(fromQuery.status, 200);
  t.same(fromQuery.body.properties, { a: 'x', tier: '42' }, 'a query-string value is a string');
  const fromBody = await server.api.post(path, { key: 'tier', value: 42 });
  t.equal(fromBody.body.properties.tier, 42, 'a body value keeps its JSON type');
  const object = await server.api.post(path, { key: 'prefs', value: { dark: true } });
  t.same(object.body.properties.prefs, { dark: true });
  const nullValue = await server.api.post(path, { key: 'a', value: null });
  t.equal(nullValue.body.properties.a, null);

  const noKey = await server.api.post(`${path}?value=1`);
  t.equal(noKey.status, 400);
  t.same(noKey.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'key' });
  const noValue = await server.api.post(`${path}?key=tier`);
  t.equal(noValue.status, 400);
  t.same(noValue.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'value' });
  const badKey = await server.api.post(path, { key: 5, value: 1 });
  t.equal(badKey.status, 400);
  t.equal(badKey.body.attr, 'key');
  t.equal((await server.api.post(`${PERSONS}999999/update_property/?key=a&value=b`)).status, 404);
});

t.test('delete_property: $unset from the query string or the body', async (t) => {
  const person = await personVia('del-prop', { a: 1, b: 2, c: 3 });
  const path = `${PERSONS}${person.id}/delete_property/`;
  const fromQuery = await server.api.post(`${path}?%24unset=a`);
  t.equal(fromQuery.status, 200);
  t.same(fromQuery.body.properties, { b: 2, c: 3 });
  const fromBody = await server.api.post(path, { $unset: 'b' });
  t.same(fromBody.body.properties, { c: 3 });
  const absent = await server.api.post(path, { $unset: 'zzz' });
  t.equal(absent.status, 200, 'removing an absent key is not an error');
  t.same(absent.body.properties, { c: 3 });
  const missing = await server.api.post(path, {});
  t.equal(missing.status, 400);
  t.same(missing.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: '$unset' });
  t.equal((await server.api.post(`${PERSONS}not-an-id/delete_property/`, { $unset: 'c' })).status, 400);
});

t.test('split: every distinct id but the main one moves to a new empty person', async (t) => {
  await ingest([{ event: 'x', distinct_id: 'split-a', properties: { $set: { plan: 'pro' } } }]);
  await server.api.get(`${PERSONS}?distinct_id=split-a`);
  await ingest([{ event: '$create_alias', distinct_id: 'split-a', properties: { alias: 'split-b' } }]);
  await server.api.get(`${PERSONS}?distinct_id=split-a`);
  await ingest([{ event: '$create_alias', distinct_id: 'split-a', properties: { alias: 'split-c' } }]);
  const original = (await server.api.get(`${PERSONS}?distinct_id=split-a`)).body.results[0];
  t.same([...original.distinct_ids].sort(), ['split-a', 'split-b', 'split-c']);

  const res = await server.api.post(`${PERSONS}${original.id}/split/`, { main_distinct_id: 'split-b' });
  t.equal(res.status, 201);
  t.same(res.body, { success: true });
  const kept = await server.api.get(`${PERSONS}${original.id}/`);
  t.same(kept.body.distinct_ids, ['split-b']);
  t.same(kept.body.properties, { plan: 'pro' }, 'the original keeps its properties');
  const uuids = new Set([original.uuid]);
  for (const d of ['split-a', 'split-c']) {
    const other = (await server.api.get(`${PERSONS}?distinct_id=${d}`)).body.results[0];
    t.not(other.id, original.id, `${d} has its own person`);
    t.same(other.distinct_ids, [d]);
    t.same(other.properties, {});
    t.notOk(uuids.has(other.uuid), 'every new person has its own uuid');
    uuids.add(other.uuid);
  }

  const bad = await server.api.post(`${PERSONS}${original.id}/split/`, { main_distinct_id: 'not-mine' });
  t.equal(bad.status, 400);
  t.equal(bad.body.attr, 'main_distinct_id');
  t.equal((await server.api.post(`${PERSONS}999999/split/`, {})).status, 404);
});

t.test('split without main_distinct_id keeps the first distinct id', async (t) => {
  await ingest([{ event: 'x', distinct_id: 'first-id', properties: { $set: { n: 1 } } }]);
  await server.api.get(`${PERSONS}?distinct_id=first-id`);
  await ingest([{ event: '$create_alias', distinct_id: 'first-id', properties: { alias: 'second-id' } }]);
  const person = (await server.api.get(`${PERSONS}?distinct_id=second-id`)).body.results[0];
  const res = await server.api.post(`${PERSONS}${person.id}/split/`);
  t.equal(res.status, 201);
  t.same((await server.api.get(`${PERSONS}${person.id}/`)).body.distinct_ids, ['first-id']);
  t.not((await server.api.get(`${PERSONS}?distinct_id=second-id`)).body.results[0].id, person.id);
});

t.test('DELETE removes the person; the next event of its distinct id makes a fresh person', async (t) => {
  const person = await personVia('del-me', { plan: 'old' });
  const res = await server.api.delete(`${PERSONS}${person.id}/`);
  t.equal(res.status, 204);
  t.equal(res.text, '');
  t.equal((await server.api.get(`${PERSONS}${person.id}/`)).status, 404);
  t.same((await server.api.get(`${PERSONS}?distinct_id=del-me`)).body.results, []);
  t.equal((await server.api.delete(`${PERSONS}${person.id}/`)).status, 404, 'a second delete finds nothing');
  const fresh = await personVia('del-me', { plan: 'new' });
  t.not(fresh.id, person.id);
  t.same(fresh.properties, { plan: 'new' }, 'nothing of the deleted person comes back');
});

t.test('DELETE with delete_events removes the events, without it they stay', async (t) => {
  // Events are stored once per uuid: re-sending a stored event is a no-op, re-sending a deleted one is ingested again.
  const keptUuid = '0193a1b2-0000-7000-8000-00000000a001';
  const goneUuid = '0193a1b2-0000-7000-8000-00000000a002';
  await ingest([{ event: 'x', uuid: keptUuid, distinct_id: 'keep-events', properties: { $set: { from: 'first' } } }]);
  const keep = (await server.api.get(`${PERSONS}?distinct_id=keep-events`)).body.results[0];
  t.equal((await server.api.delete(`${PERSONS}${keep.id}/`)).status, 204);
  await ingest([{ event: 'x', uuid: keptUuid, distinct_id: 'keep-events', properties: { $set: { from: 'first' } } }]);
  t.same((await server.api.get(`${PERSONS}?distinct_id=keep-events`)).body.results, [], 'the stored event was not deleted, its replay is a duplicate');

  await ingest([{ event: 'x', uuid: goneUuid, distinct_id: 'drop-events', properties: { $set: { from: 'first' } } }]);
  const drop = (await server.api.get(`${PERSONS}?distinct_id=drop-events`)).body.results[0];
  t.equal((await server.api.delete(`${PERSONS}${drop.id}/?delete_events=true`)).status, 204);
  await ingest([{ event: 'x', uuid: goneUuid, distinct_id: 'drop-events', properties: { $set: { from: 'first' } } }]);
  const again = (await server.api.get(`${PERSONS}?distinct_id=drop-events`)).body.results;
  t.equal(again.length, 1, 'the deleted event is ingested again and makes a fresh person');
  t.not(again[0].id, drop.id);
});

t.test('activity log: updated, delete_property, split_person and deleted entries', async (t) => {
  const person = await personVia('act-1', { a: 1 });
  await ingest([{ event: '$create_alias', distinct_id: 'act-1', properties: { alias: 'act-2' } }]);
  await server.api.patch(`${PERSONS}${person.id}/`, { properties: { a: 2 } });
  await server.api.patch(`${PERSONS}${person.id}/`, { properties: { a: 2 } });
  await server.api.post(`${PERSONS}${person.id}/delete_property/`, { $unset: 'a' });
  await server.api.post(`${PERSONS}${person.id}/split/`);
  const res = await server.api.get(`${PERSONS}${person.id}/activity/`);
  t.equal(res.status, 200);
  t.same(res.body.results.map((e: any) => e.activity), ['split_person', 'delete_property', 'updated'],
    'newest first; a PATCH that changes nothing is not logged');
  t.equal(res.body.total_count, 3);
  const [split, , updated] = res.body.results;
  t.match(split, { scope: 'Person', item_id: String(person.id), user: { email: 'admin@quill.local' } });
  t.same(split.detail.changes, [{ type: 'Person', action: 'split', field: null, before: null, after: { distinct_ids: ['act-2'] } }]);
  t.equal(split.detail.name, person.uuid);
  t.same(updated.detail.changes, [{ type: 'Person', action: 'changed', field: 'properties', before: null, after: null }]);
  t.equal((await server.api.get(`${PERSONS}${person.uuid}/activity/`)).body.total_count, 3, 'by uuid too');

  t.equal((await server.api.delete(`${PERSONS}${person.id}/`)).status, 204);
  const all = await server.api.get(`${PERSONS}activity/`);
  t.equal(all.status, 200);
  t.match(all.body.results[0], { activity: 'deleted', scope: 'Person', item_id: String(person.id), detail: { name: person.uuid } });
  const afterDelete = await server.api.get(`${PERSONS}${person.id}/activity/`);
  t.equal(afterDelete.body.total_count, 4, 'the history of a deleted person stays readable by id');
  const paged = await server.api.get(`${PERSONS}${person.id}/activity/?limit=1&page=2`);
  t.equal(paged.body.results.length, 1);
  t.match(paged.body.next, /page=3/);
  t.match(paged.body.previous, /page=1/);
  t.equal((await server.api.get(`${PERSONS}not-a-person/activity/`)).status, 400);
});

t.test('/persons/properties/ and /persons/values/', async (t) => {
  const p = await newProject('metadata');
  await personVia('m-1', { plan: 'pro', active: true, seats: 3 }, p);
  await personVia('m-2', { plan: 'pro', active: false }, p);
  await personVia('m-3', { plan: 'Free', nested: { b: 1, a: 2 } }, p);
  await personVia('m-4', { plan: '' }, p);
  const keys = await server.api.get(`${p.persons}properties/`);
  t.equal(keys.status, 200);
  t.same(keys.body, [
    { name: 'plan', count: 4 }, { name: 'active', count: 2 }, { name: 'nested', count: 1 }, { name: 'seats', count: 1 },
  ], 'count descending, then name');
  const values = await server.api.get(`${p.persons}values/?key=plan`);
  t.same(values.body, [{ name: 'pro', count: 2 }, { name: 'Free', count: 1 }], 'empty values are left out');
  t.same((await server.api.get(`${p.persons}values/?key=plan&value=FR`)).body, [{ name: 'Free', count: 1 }], 'case-insensitive substring');
  t.same((await server.api.get(`${p.persons}values/?key=active`)).body, [{ name: 'false', count: 1 }, { name: 'true', count: 1 }],
    'every value is a string');
  t.same((await server.api.get(`${p.persons}values/?key=nested`)).body, [{ name: '{"a": 2, "b": 1}', count: 1 }]);
  t.same((await server.api.get(`${p.persons}values/`)).body, [], 'no key, no values');
  const csv = await server.api.get(`${p.persons}values/?key=plan&format=csv`);
  t.equal(csv.text, 'count,name\r\n2,pro\r\n1,Free\r\n');
});
