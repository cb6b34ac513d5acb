// The property-definitions API over HTTP on a known dataset: event and person property names with their inferred
// types, search, exact names, event_names ordering, is_numerical, pagination, retrieve and PATCH, the values of an
// event and a person property (with a prefix), malformed parameters, keys without the scope, and another project's
// properties never listed.
import t from 'tap';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const PD = '/api/projects/@current/property_definitions/';
const iso = (ms: number) => new Date(ms).toISOString();
const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));

async function ingest(batch: Record<string, unknown>[], key = PROJECT_KEY): Promise<void> {
  const res = await fetch(server.q.base + '/batch/', { method: 'POST', body: JSON.stringify({ api_key: key, batch }) });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

interface Row { id: string; name: string; property_type: string | null; is_numerical: boolean; is_seen_on_filtered_events: boolean | null; [k: string]: unknown }
const list = async (query = ''): Promise<{ count: number; next: string | null; previous: string | null; results: Row[] }> => {
  const res = await server.api.get(`${PD}${query}`);
  if (res.status !== 200) throw new Error(`list ${query} answered ${res.status}: ${res.text}`);
  return res.body;
};
const names = async (query = '') => (await list(query)).results.map((r) => r.name);
/** Names without the ones ingestion adds by itself (`$ip`, `$lib`…), so the dataset's are compared exactly. */
const own = (all: string[]) => all.filter((n) => !n.startsWith('$') || n === '$browser');

const EVENT_PROPS = ['$browser', 'currency', 'is_beta', 'load_ms', 'mixed', 'price', 'signup_at'];

let otherProject: { id: number; api_token: string };

t.before(async () => {
  const now = Date.now();
  // 24 distinct ids: spread over every shard, so the names come from every worker's blocks.
  await ingest([
    ...Array.from({ length: 16 }, (_, i) => ({
      event: '$pageview', distinct_id: `pv-${i}`, timestamp: iso(now - 60_000 * (i + 1)),
      properties: {
        $browser: i % 4 === 0 ? 'Safari' : 'Chrome', load_ms: 100 + i, is_beta: i % 2 === 0, signup_at: '2024-01-31T12:00:00Z',
        $set: { email: `pv-${i}@example.com`, plan: i % 3 === 0 ? 'pro' : 'free', age: 20 + i },
      },
    })),
    ...Array.from({ length: 8 }, (_, i) => ({
      event: 'purchase', distinct_id: `buyer-${i}`, timestamp: iso(now - 30_000 * (i + 1)),
      properties: { price: 9.5 + i, currency: 'EUR', mixed: i % 2 === 0 ? 1 : 'one', '$feature/new-checkout': i % 2 === 0 },
    })),
  ]);
  // A person whose property no event carried.
  const created = await server.api.post('/api/projects/@current/persons/', { distinct_ids: ['quiet'], properties: { only_on_person: 'yes' } });
  if (created.status !== 201) throw new Error(`person create answered ${created.status}: ${created.text}`);
  const other = await server.api.post('/api/projects/', { name: 'Elsewhere' });
  otherProject = other.body;
  await ingest([{ event: 'secret', distinct_id: 'x', properties: { secret_prop: 'hidden', $set: { secret_person: 1 } } }], otherProject.api_token);
});

t.test('event properties: the names of every shard, in PostHog\'s shape, with their types', async (t) => {
  const page = await list('?limit=1000');
  t.same(own(page.results.map((r) => r.name)), EVENT_PROPS, 'by name');
  t.notOk(page.results.some((r) => r.name === 'email' || r.name === 'plan'), 'person properties are not event properties');
  t.notOk(page.results.some((r) => r.name === '$set'), '$set is an instruction, not a property (as PostHog skips it)');
  const row = (name: string) => page.results.find((r) => r.name === name)!;
  t.match(row('load_ms'), {
    id: /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, name: 'load_ms', type: 'event', group_type_index: null,
    is_numerical: true, property_type: 'Numeric', description: '', tags: [], is_seen_on_filtered_events: null, verified: false,
  });
  const types = Object.fromEntries(EVENT_PROPS.map((n) => [n, row(n).property_type]));
  t.same(types, {
    $browser: 'String', currency: 'String', is_beta: 'Boolean', load_ms: 'Numeric', mixed: 'String', price: 'Numeric', signup_at: 'DateTime',
  }, 'numbers, booleans, ISO dates; mixed values are String');
  t.same(page.results.filter((r) => r.is_numerical).map((r) => r.name), ['load_ms', 'price']);
  t.same((await list('?limit=1000')).results.map((r) => r.id), page.results.map((r) => r.id), 'ids are stable');
});

t.test('search, exact names, is_numerical, excluded_properties', async (t) => {
  t.same(await names('?search=BROW'), ['$browser'], 'case-insensitive part of the name');
  t.same(await names('?search=sign%20at'), ['signup_at'], 'every word must be in the name');
  t.same(await names('?search=nothing-like-it'), []);
  t.same(await names('?properties=price,currency,absent'), ['currency', 'price'], 'exact names, unknown ones left out');
  t.same(await names('?is_numerical=true'), ['load_ms', 'price']);
  t.notOk((await names('?is_numerical=false&limit=1000')).includes('price'));
  t.same(own(await names(`?excluded_properties=${enc(['mixed', 'price'])}&limit=1000`)), EVENT_PROPS.filter((n) => n !== 'mixed' && n !== 'price'));
  t.same(own(await names('?exclude_hidden=true&limit=1000')), EVENT_PROPS, 'exclude_hidden accepted, nothing hidden');
  t.same(await names('?is_feature_flag=true'), ['$feature/new-checkout'], 'the flag properties');
  t.notOk((await names('?is_feature_flag=false&limit=1000')).includes('$feature/new-checkout'), 'or all but them');
});

t.test('event_names: the properties seen on those events first', async (t) => {
  const page = await list(`?event_names=${enc(['purchase'])}&limit=1000`);
  const rows = page.results.filter((r) => own([r.name]).length === 1);
  t.same(rows.map((r) => [r.name, r.is_seen_on_filtered_events]), [
    ['currency', true], ['mixed', true], ['price', true],
    ['$browser', false], ['is_beta', false], ['load_ms', false], ['signup_at', false],
  ]);
  const both = await list(`?event_names=${enc(['purchase', '$pageview'])}&search=a`);
  t.ok(both.results.every((r) => r.is_seen_on_filtered_events === true), 'seen on either event');
  t.same((await list(`?event_names=${enc([])}&properties=price`)).results[0]!.is_seen_on_filtered_events, false, 'an empty list: nothing is seen');
  const onlySeen = await names(`?event_names=${enc(['purchase'])}&filter_by_event_names=true&limit=1000`);
  t.same(own(onlySeen), ['currency', 'mixed', 'price'], 'only those seen');
  t.ok(onlySeen.includes('$feature/new-checkout') && !onlySeen.includes('load_ms'));
});

t.test('pagination as the other lists', async (t) => {
  const all = (await list('?limit=1000')).results.map((r) => r.name);
  const first = await list('?limit=2');
  t.equal(first.count, all.length);
  t.same(first.results.map((r) => r.name), all.slice(0, 2));
  t.equal(first.previous, null);
  t.match(first.next, /property_definitions\/\?limit=2&offset=2$/);
  const second = await server.api.get(first.next!.replace(server.q.base, ''));
  t.same(second.body.results.map((r: Row) => r.name), all.slice(2, 4));
  t.match(second.body.previous, /limit=2$/);
});

t.test('person properties: as at the events, and persons\' current properties', async (t) => {
  const page = await list('?type=person&limit=1000');
  const got = Object.fromEntries(page.results.map((r) => [r.name, r.property_type]));
  t.match(got, { email: 'String', plan: 'String', age: 'Numeric', only_on_person: 'String' });
  t.notOk('price' in got, 'event properties are not person properties');
  t.notOk('secret_person' in got, 'another project\'s person properties are not listed');
  t.ok(page.results.every((r) => r.type === 'person' && r.is_seen_on_filtered_events === null));
  t.same(await names('?type=person&search=plan'), ['plan']);
  const personId = page.results.find((r) => r.name === 'plan')!.id;
  const eventIds = (await list('?limit=1000')).results.map((r) => r.id);
  t.notOk(eventIds.includes(personId), 'ids differ between kinds');
});

t.test('retrieve and PATCH', async (t) => {
  const price = (await list('?properties=price')).results[0]!;
  const got = await server.api.get(`${PD}${price.id}/`);
  t.equal(got.status, 200);
  t.same(got.body, price);
  const patched = await server.api.patch(`${PD}${price.id}/`, { description: 'Price in EUR', tags: ['money', ' money ', ''], property_type: 'String', name: 'renamed' });
  t.equal(patched.status, 200);
  t.match(patched.body, { id: price.id, name: 'price', description: 'Price in EUR', tags: ['money'], property_type: 'String', is_numerical: false });
  t.type(patched.body.updated_at, 'string');
  t.match(patched.body.updated_by, { email: String });
  t.match((await list('?properties=price')).results[0], { description: 'Price in EUR', property_type: 'String' }, 'the list shows it');
  const back = await server.api.patch(`${PD}${price.id}/`, { property_type: null });
  t.match(back.body, { property_type: 'Numeric', is_numerical: true, description: 'Price in EUR' }, 'null: inferred again');
  const bad = await server.api.patch(`${PD}${price.id}/`, { property_type: 'Money' });
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', code: 'invalid_choice', attr: 'property_type' });
  const badTags = await server.api.patch(`${PD}${price.id}/`, { tags: 'money' });
  t.match(badTags.body, { type: 'validation_error', code: 'not_a_list', attr: 'tags' });
  const missing = await server.api.get(`${PD}00000000-0000-5000-8000-000000000000/`);
  t.equal(missing.status, 404);
  t.same(missing.body, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
});

t.test('values of an event property and of a person property', async (t) => {
  const browsers = await server.api.get('/api/projects/@current/events/values/?key=%24browser');
  t.equal(browsers.status, 200);
  t.same(browsers.body.map((v: { name: string }) => v.name).sort(), ['Chrome', 'Safari']);
  t.same((await server.api.get('/api/projects/@current/events/values/?key=%24browser&value=saf')).body, [{ name: 'Safari' }], 'with a prefix');
  t.same((await server.api.get('/api/projects/@current/events/values/?key=currency&event_name=purchase')).body, [{ name: 'EUR' }]);
  const plans = await server.api.get('/api/projects/@current/persons/values/?key=plan');
  t.same(plans.body, [{ name: 'free', count: 10 }, { name: 'pro', count: 6 }], 'most frequent first, with counts');
  t.same((await server.api.get('/api/projects/@current/persons/values/?key=plan&value=PR')).body, [{ name: 'pro', count: 6 }]);
  t.same((await server.api.get('/api/projects/@current/events/values/?key=secret_prop')).body, [], 'another project\'s values are not seen');
});

t.test('malformed parameters answer 400 with the error body', async (t) => {
  const cases: [string, string, string][] = [
    ['?type=session', 'type', 'invalid_choice'],
    ['?event_names=not-json', 'event_names', 'invalid_input'],
    [`?event_names=${enc({ a: 1 })}`, 'event_names', 'invalid_input'],
    [`?event_names=${enc([1, 2])}`, 'event_names', 'invalid_input'],
    ['?excluded_properties=%5B', 'excluded_properties', 'invalid_input'],
    ['?type=group', 'group_type_index', 'invalid_input'],
    ['?type=group&group_type_index=9', 'group_type_index', 'invalid_input'],
  ];
  for (const [query, attr, code] of cases) {
    const res = await server.api.get(`${PD}${query}`);
    t.equal(res.status, 400, query);
    t.match(res.body, { type: 'validation_error', code, attr, detail: String }, query);
  }
});

t.test('group properties of a group type', async (t) => {
  await ingest([{ event: 'team_event', distinct_id: 'g-1', properties: { $groups: { company: 'acme' } } },
    { event: '$groupidentify', distinct_id: 'g-1', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 12, industry: 'tools' } } }]);
  const groups = await list('?type=group&group_type_index=0');
  t.same(groups.results.map((r) => [r.name, r.property_type, r.group_type_index]), [['industry', 'String', 0], ['seats', 'Numeric', 0]]);
  t.same((await list('?type=group&group_type_index=1')).results, [], 'another group type has none');
});

t.test('authentication, scope and projects', async (t) => {
  const anonymous = await server.api.withKey(null).get(PD);
  t.equal(anonymous.status, 401);
  t.equal(anonymous.body.type, 'authentication_error');
  const keyWith = async (scopes: string[]) => {
    const res = await server.api.post('/api/personal_api_keys/', { label: scopes.join(' '), scopes });
    if (res.status !== 201) throw new Error(`key answered ${res.status}`);
    return server.api.withKey(res.body.value);
  };
  const wrong = await keyWith(['event_definition:write', 'query:read']);
  const refused = await wrong.get(PD);
  t.equal(refused.status, 403);
  t.match(refused.body, { type: 'authentication_error', code: 'permission_denied' });
  const reader = await keyWith(['property_definition:read']);
  t.equal((await reader.get(PD)).status, 200);
  const price = (await list('?properties=price')).results[0]!;
  t.equal((await reader.patch(`${PD}${price.id}/`, { description: 'x' })).status, 403, 'read does not write');
  const writer = await keyWith(['property_definition:write']);
  t.equal((await writer.patch(`${PD}${price.id}/`, { description: 'by a write key' })).status, 200);

  const elsewhere = await server.api.get(`/api/projects/${otherProject.id}/property_definitions/?limit=1000`);
  t.equal(elsewhere.status, 200);
  t.ok(elsewhere.body.results.some((r: Row) => r.name === 'secret_prop'), 'the other project lists its own');
  t.notOk(elsewhere.body.results.some((r: Row) => r.name === 'price'), 'and not this one\'s');
  t.notOk((await names('?limit=1000')).includes('secret_prop'), 'this project never lists the other\'s');
  t.equal((await server.api.get(`/api/projects/${otherProject.id}/property_definitions/${price.id}/`)).status, 404, 'an id of another project');
});
