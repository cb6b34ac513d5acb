// The event-definitions API: definitions created by ingestion on first sight, last_seen_at moving with newer
// events, volume_30_day counted over every shard, ordering, search, pagination, retrieve, and the PATCH rules
// (writable fields only, type errors, verified stamps, updated_by/updated_at).
import t from 'tap';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
let me: { id: number; uuid: string; distinct_id: string; first_name: string; email: string };
const ED = '/api/projects/@current/event_definitions/';
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function ingest(events: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(server.q.base + '/batch/', { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }) });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

/** `count` events named `name`, one distinct id each (so they land on many shards), at `at` ms. */
const many = (name: string, count: number, at: number) =>
  Array.from({ length: count }, (_, i) => ({ event: name, distinct_id: `${name}-${i}`, timestamp: iso(at + i), properties: {} }));

async function byName(name: string) {
  const res = await server.api.get(`${ED}?search=${encodeURIComponent(name)}&limit=1000`);
  return res.body.results.find((d: { name: string }) => d.name === name);
}

t.before(async () => {
  const user = (await server.api.get('/api/users/@me/')).body;
  me = { id: user.id, uuid: user.uuid, distinct_id: user.distinct_id, first_name: user.first_name, email: user.email };
});


t.test('a definition is created on the first sight of a name, with the seed field set', async (t) => {
  const before = await server.api.get(ED);
  t.same(before.body, { count: 0, next: null, previous: null, results: [] });
  const now = Date.now();
  await ingest([...many('signed_up', 3, now - DAY), { event: '$$plugin_metrics', distinct_id: 'x', properties: {} }]);
  const res = await server.api.get(ED);
  t.equal(res.status, 200);
  t.equal(res.body.count, 1, 'internal $$plugin_metrics gets no definition');
  const d = res.body.results[0];
  t.same(Object.keys(d).sort(), [
    'action_id', 'created_at', 'created_by', 'description', 'id', 'is_action', 'is_calculating', 'last_calculated_at',
    'last_seen_at', 'last_updated_at', 'name', 'owner', 'post_to_chat', 'query_usage_30_day', 'tags', 'updated_at',
    'updated_by', 'verified', 'verified_at', 'verified_by', 'volume_30_day',
  ]);
  t.match(d, {
    id: /^[0-9a-f-]{36}$/, name: 'signed_up', owner: null, description: '', tags: [], volume_30_day: 3,
    query_usage_30_day: null, created_at: String, updated_at: String, updated_by: null, last_seen_at: iso(now - DAY + 2),
    last_updated_at: String, verified: false, verified_at: null, verified_by: null, is_action: false, action_id: null,
    is_calculating: false, last_calculated_at: String, created_by: null, post_to_chat: false,
  });
  await ingest(many('signed_up', 2, now - 2 * DAY));
  const again = await server.api.get(ED);
  t.equal(again.body.count, 1, 'the same name keeps one definition');
  t.equal(again.body.results[0].id, d.id);
  t.equal(again.body.results[0].volume_30_day, 5);
});

t.test('last_seen_at moves forward with newer events, never back', async (t) => {
  const old = Date.UTC(2024, 0, 1, 10);
  await ingest(many('moving', 1, old));
  t.equal((await byName('moving')).last_seen_at, iso(old));
  await ingest(many('moving', 1, old + 5 * DAY));
  t.equal((await byName('moving')).last_seen_at, iso(old + 5 * DAY), 'a newer event moves it');
  await ingest(many('moving', 1, old + DAY));
  t.equal((await byName('moving')).last_seen_at, iso(old + 5 * DAY), 'an older event does not');
});

t.test('volume_30_day counts events of the last 30 days on every shard; order is volume desc, then name', async (t) => {
  const now = Date.now();
  await ingest([
    ...many('zeta', 12, now - 3 * DAY),
    ...many('alpha', 4, now - 3 * DAY),
    ...many('beta', 4, now - 29 * DAY),
    ...many('beta', 9, now - 31 * DAY),
  ]);
  const res = await server.api.get(ED);
  const rows = res.body.results.map((d: { name: string; volume_30_day: number }) => [d.name, d.volume_30_day]);
  t.same(rows, [['zeta', 12], ['signed_up', 5], ['alpha', 4], ['beta', 4], ['moving', 0]]);
});

t.test('search and pagination', async (t) => {
  const search = await server.api.get(`${ED}?search=ET`);
  t.same(search.body.results.map((d: { name: string }) => d.name), ['zeta', 'beta'], 'case-insensitive substring');
  const page = await server.api.get(`${ED}?limit=2&offset=2`);
  t.equal(page.body.count, 5);
  t.same(page.body.results.map((d: { name: string }) => d.name), ['alpha', 'beta']);
  t.equal(page.body.next, `${server.q.base}${ED}?limit=2&offset=4`);
  t.equal(page.body.previous, `${server.q.base}${ED}?limit=2`);
});

t.test('retrieve by id; unknown, malformed and other-project ids are 404', async (t) => {
  const listed = await byName('alpha');
  const res = await server.api.get(`${ED}${listed.id}/`);
  t.equal(res.status, 200);
  t.same({ ...res.body, last_calculated_at: null }, { ...listed, last_calculated_at: null });
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '12']) {
    const missing = await server.api.get(`${ED}${id}/`);
    t.equal(missing.status, 404, id);
    t.same(missing.body, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
  }
  const other = await server.api.post('/api/projects/', { name: 'Other' });
  t.equal(other.status, 201);
  const elsewhere = await server.api.get(`/api/projects/${other.body.id}/event_definitions/${listed.id}/`);
  t.equal(elsewhere.status, 404, 'a definition of another project is not found');
  const patchElsewhere = await server.api.patch(`/api/projects/${other.body.id}/event_definitions/${listed.id}/`, { description: 'x' });
  t.equal(patchElsewhere.status, 404);
});

t.test('PATCH: writable fields, stamps, read-only fields ignored', async (t) => {
  const d = await byName('zeta');
  const res = await server.api.patch(`${ED}${d.id}/`, {
    description: 'Zeta happens', tags: ['core', ' core ', 'growth'], owner: me.id, post_to_chat: true,
    name: 'renamed', volume_30_day: 1, id: 'x', created_at: '2000-01-01T00:00:00Z', last_seen_at: null, verified_by: 1,
  });
  t.equal(res.status, 200);
  t.match(res.body, {
    id: d.id, name: 'zeta', description: 'Zeta happens', tags: ['core', 'growth'], owner: me.id, post_to_chat: true,
    volume_30_day: 12, created_at: d.created_at, last_seen_at: d.last_seen_at, verified: false, verified_at: null, verified_by: null,
  });
  t.same(res.body.updated_by, me, 'updated_by is the caller');
  t.ok(Date.parse(res.body.updated_at) >= Date.parse(d.created_at), 'updated_at is stamped');
  t.equal(res.body.last_updated_at, res.body.updated_at);

  const verified = await server.api.patch(`${ED}${d.id}/`, { verified: true });
  t.equal(verified.body.verified, true);
  t.same(verified.body.verified_by, me);
  t.type(verified.body.verified_at, 'string');
  const stillVerified = await server.api.patch(`${ED}${d.id}/`, { verified: true, description: null });
  t.equal(stillVerified.body.verified_at, verified.body.verified_at, 'verifying again keeps the first stamp');
  t.equal(stillVerified.body.description, '', 'description can be cleared');
  const unverified = await server.api.patch(`${ED}${d.id}/`, { verified: false });
  t.match(unverified.body, { verified: false, verified_at: null, verified_by: null });
  const empty = await server.api.patch(`${ED}${d.id}/`, {});
  t.equal(empty.status, 200, 'an empty PATCH only stamps');
  t.ok(Date.parse(empty.body.updated_at) >= Date.parse(unverified.body.updated_at));
  const cleared = await server.api.patch(`${ED}${d.id}/`, { owner: null, tags: [] });
  t.match(cleared.body, { owner: null, tags: [], description: '', post_to_chat: true });
  t.same(await server.api.get(`${ED}${d.id}/`).then((r) => ({ ...r.body, last_calculated_at: null })), { ...cleared.body, last_calculated_at: null },
    'the change is stored');
});

t.test('PATCH: type errors are 400 with the field in attr', async (t) => {
  const d = await byName('alpha');
  const cases: [Record<string, unknown>, { code: string; detail: string; attr: string }][] = [
    [{ owner: 'me' }, { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received str.', attr: 'owner' }],
    [{ owner: 1.5 }, { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received float.', attr: 'owner' }],
    [{ owner: 999999 }, { code: 'does_not_exist', detail: 'Invalid pk "999999" - object does not exist.', attr: 'owner' }],
    [{ description: 5 }, { code: 'invalid_input', detail: 'Not a valid string.', attr: 'description' }],
    [{ tags: 'core' }, { code: 'not_a_list', detail: 'Expected a list of items but got type "str".', attr: 'tags' }],
    [{ tags: ['ok', 3] }, { code: 'invalid_input', detail: 'Not a valid string.', attr: 'tags' }],
    [{ verified: 'yes' }, { code: 'invalid_input', detail: 'Must be a valid boolean.', attr: 'verified' }],
    [{ post_to_chat: 1 }, { code: 'invalid_input', detail: 'Must be a valid boolean.', attr: 'post_to_chat' }],
  ];
  for (const [body, error] of cases) {
    const res = await server.api.patch(`${ED}${d.id}/`, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.same(res.body, { type: 'validation_error', ...error }, JSON.stringify(body));
  }
  const after = await server.api.get(`${ED}${d.id}/`);
  t.match(after.body, { owner: null, description: '', tags: [], verified: false, post_to_chat: false, updated_by: null }, 'nothing was changed');

  const notJson = await server.api.request('PATCH', `${ED}${d.id}/`, '{oops', { 'content-type': 'application/json' });
  t.equal(notJson.status, 400);
  t.equal(notJson.body.type, 'invalid_request');
  const owner = await server.api.patch(`${ED}${d.id}/`, { owner: String(me.id) });
  t.equal(owner.body.owner, me.id, 'a numeric string is a pk, as in DRF');
});

t.test('unsupported methods and authentication', async (t) => {
  const d = await byName('beta');
  t.equal((await server.api.delete(`${ED}${d.id}/`)).status, 405);
  t.equal((await server.api.post(ED, { name: 'new' })).status, 405);
  t.equal((await server.api.withKey(null).get(ED)).status, 401);
});
