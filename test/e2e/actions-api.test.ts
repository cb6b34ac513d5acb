// The actions API over HTTP: create, retrieve, list (live actions, search, CSV), PATCH/PUT, the soft
// delete and the refused hard delete, name uniqueness among live actions, step validation with field paths, the
// activity log, scopes, project isolation, and actions as rows of the event definitions list.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const A = '/api/projects/@current/actions';

const invalid = (attr: string, code: string, detail: string | RegExp) => ({ type: 'validation_error', code, detail, attr });

async function create(body: Record<string, unknown>): Promise<any> {
  const res = await server.api.post(`${A}/`, body);
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
  return res.body;
}

t.test('create answers the action with its steps normalised', async (t) => {
  const res = await server.api.post(`${A}/`, {
    name: 'Signed up', description: 'Welcome page or the sign-up button', tags: ['growth', ' growth ', ''],
    steps: [
      { event: '$pageview', url: '/welcome' },
      { event: '$autocapture', text: 'Sign up', selector: 'button.cta', tag_name: 'button', text_matching: 'exact', href: '' },
      { event: 'signed_up', properties: [{ key: 'plan', value: 'pro' }] },
    ],
  });
  t.equal(res.status, 201);
  const a = res.body;
  t.match(a, {
    id: Number, name: 'Signed up', description: 'Welcome page or the sign-up button', tags: ['growth'], deleted: false,
    is_action: true, pinned_at: null, is_calculating: false, created_by: { email: String }, created_at: String, updated_at: String,
  });
  const blank = { event: null, properties: [], selector: null, tag_name: null, text: null, text_matching: null, href: null, href_matching: null, url: null, url_matching: 'contains' };
  t.same(a.steps, [
    { ...blank, event: '$pageview', url: '/welcome' },
    { ...blank, event: '$autocapture', text: 'Sign up', selector: 'button.cta', tag_name: 'button', text_matching: 'exact' },
    { ...blank, event: 'signed_up', properties: [{ key: 'plan', value: 'pro' }] },
  ], 'every field present, blanks as null, url_matching contains by default');
  const got = await server.api.get(`${A}/${a.id}/`);
  t.equal(got.status, 200);
  t.same(got.body, a, 'retrieve answers the same');
  const empty = await create({ name: 'Anything' });
  t.same(empty.steps, [], 'steps are optional');
});

t.test('bad bodies answer 400 naming the field', async (t) => {
  const cases: [Record<string, unknown>, ReturnType<typeof invalid>][] = [
    [{}, invalid('name', 'required', 'This field is required.')],
    [{ name: '  ' }, invalid('name', 'blank', 'This field may not be blank.')],
    [{ name: 7 }, invalid('name', 'invalid', 'Not a valid string.')],
    [{ name: 'x'.repeat(401) }, invalid('name', 'max_length', 'Ensure this field has no more than 400 characters.')],
    [{ name: 'b', steps: { event: 'x' } }, invalid('steps', 'not_a_list', 'Expected a list of items but got type "dict".')],
    [{ name: 'b', steps: ['x'] }, invalid('steps__0', 'invalid_input', 'Invalid data. Expected a dictionary, but got str.')],
    [{ name: 'b', steps: [{}, { url: '/a', url_matching: 'startswith' }] }, invalid('steps__1__url_matching', 'invalid_choice', '"startswith" is not a valid choice.')],
    [{ name: 'b', steps: [{ text: 'x', text_matching: 'icontains' }] }, invalid('steps__0__text_matching', 'invalid_choice', '"icontains" is not a valid choice.')],
    [{ name: 'b', steps: [{ url: '([a-z', url_matching: 'regex' }] }, invalid('steps__0__url', 'invalid_input', 'Invalid regular expression: ([a-z')],
    [{ name: 'b', steps: [{ event: '$autocapture', text: '*', text_matching: 'regex' }] }, invalid('steps__0__text', 'invalid_input', 'Invalid regular expression: *')],
    [{ name: 'b', steps: [{ event: '$autocapture', selector: 'a:hover' }] }, invalid('steps__0__selector', 'invalid_input', /^Unsupported selector "a:hover"/)],
    [{ name: 'b', steps: [{ event: 3 }] }, invalid('steps__0__event', 'invalid_input', 'Not a valid string.')],
    [{ name: 'b', steps: [{ properties: [{ key: 'x', operator: 'near', value: 1 }] }] }, invalid('steps__0__properties', 'invalid_input', 'Unknown operator "near".')],
    [{ name: 'b', tags: 'x' }, invalid('tags', 'not_a_list', 'Expected a list of items but got type "str".')],
    [{ name: 'b', deleted: 'yes' }, invalid('deleted', 'invalid', 'Must be a valid boolean.')],
  ];
  for (const [body, want] of cases) {
    const res = await server.api.post(`${A}/`, body);
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
    t.match(res.body, want);
  }
  const malformed = await server.api.post(`${A}/`, '{"name": ', { 'content-type': 'application/json' });
  t.equal(malformed.status, 400);
  t.equal(malformed.body.code, 'parse_error');
  t.notOk((await server.api.get(`${A}/`)).body.results.some((a: any) => a.name === 'b'), 'nothing was stored');
});

t.test('names are unique among live actions; soft delete frees the name; DELETE is refused', async (t) => {
  const first = await create({ name: 'Checkout' });
  const dupe = await server.api.post(`${A}/`, { name: 'Checkout' });
  t.equal(dupe.status, 400);
  t.same(dupe.body, invalid('name', 'unique', `This project already has an action with this name, ID ${first.id}`));
  t.equal((await create({ name: 'checkout' })).name, 'checkout', 'names compare case-sensitively');

  const other = await create({ name: 'Checkout 2' });
  const rename = await server.api.patch(`${A}/${other.id}/`, { name: 'Checkout' });
  t.equal(rename.status, 400);
  t.equal(rename.body.code, 'unique');

  const del = await server.api.delete(`${A}/${first.id}/`);
  t.equal(del.status, 405);
  t.same(del.body, { type: 'invalid_request', code: 'method_not_allowed', detail: 'Hard delete of an action is not allowed. Use PATCH with {"deleted": true} to delete it.', attr: null });
  t.equal((await server.api.delete(`${A}/999999/`)).status, 404, 'an unknown action is not found first');
  t.equal((await server.api.get(`${A}/${first.id}/`)).body.deleted, false, 'DELETE changed nothing');

  const soft = await server.api.patch(`${A}/${first.id}/`, { deleted: true });
  t.equal(soft.status, 200);
  t.equal(soft.body.deleted, true);
  t.notOk((await server.api.get(`${A}/`)).body.results.some((a: any) => a.id === first.id), 'the list leaves deleted actions out');
  t.equal((await server.api.get(`${A}/${first.id}/`)).body.deleted, true, 'retrieve still answers a deleted action');
  const again = await create({ name: 'Checkout' });
  t.not(again.id, first.id, 'a deleted action\'s name can be taken');
  const back = await server.api.patch(`${A}/${first.id}/`, { deleted: false });
  t.equal(back.status, 400, 'a deleted action cannot come back under a name a live one holds');
  t.same(back.body, invalid('name', 'unique', `This project already has an action with this name, ID ${again.id}`));
  t.equal((await server.api.patch(`${A}/${first.id}/`, { deleted: false, name: 'Checkout (old)' })).status, 200, 'renamed, it can');
});

t.test('PATCH and PUT change what they name; pinning', async (t) => {
  const a = await create({ name: 'Pricing visit', steps: [{ event: '$pageview', url: '/pricing' }] });
  const patched = await server.api.patch(`${A}/${a.id}/`, { description: 'Looked at prices', tags: ['sales'] });
  t.equal(patched.status, 200);
  t.match(patched.body, { name: 'Pricing visit', description: 'Looked at prices', tags: ['sales'] });
  t.same(patched.body.steps, a.steps, 'steps kept when not sent');
  t.ok(patched.body.updated_at >= a.updated_at);
  const put = await server.api.request('PUT', `${A}/${a.id}/`, { steps: [{ event: '$pageview', url: '^https://[^/]+/pricing$', url_matching: 'regex' }] });
  t.equal(put.status, 200);
  t.equal(put.body.steps[0].url_matching, 'regex');
  const badStep = await server.api.patch(`${A}/${a.id}/`, { steps: [{ url: '(', url_matching: 'regex' }] });
  t.equal(badStep.status, 400);
  t.equal(badStep.body.attr, 'steps__0__url');
  t.equal((await server.api.get(`${A}/${a.id}/`)).body.steps[0].url_matching, 'regex', 'a refused PATCH changes nothing');

  const pinned = await server.api.patch(`${A}/${a.id}/`, { pinned_at: '2001-01-01T00:00:00Z' });
  t.ok(Date.parse(pinned.body.pinned_at) > Date.parse('2020-01-01'), 'pinned at the server\'s time, not the one sent');
  const still = await server.api.patch(`${A}/${a.id}/`, { pinned_at: new Date().toISOString() });
  t.equal(still.body.pinned_at, pinned.body.pinned_at, 'pinning a pinned action keeps its time');
  t.equal((await server.api.patch(`${A}/${a.id}/`, { pinned_at: null })).body.pinned_at, null, 'null unpins');
  t.equal((await server.api.patch(`${A}/999999/`, { name: 'x' })).status, 404);
  t.equal((await server.api.get(`${A}/abc/`)).status, 404);
});

t.test('the list: live actions, newest first, search, CSV', async (t) => {
  const a = await create({ name: 'List Alpha' });
  const b = await create({ name: 'list beta' });
  const list = await server.api.get(`${A}/`);
  t.equal(list.status, 200);
  t.same(Object.keys(list.body), ['results'], 'a bare {results}, no pagination');
  const ids = list.body.results.map((x: any) => x.id);
  t.ok(ids.indexOf(b.id) < ids.indexOf(a.id), 'newest first');
  t.same((await server.api.get(`${A}/?search=LIST`)).body.results.map((x: any) => x.name), ['list beta', 'List Alpha'], 'search: case-insensitive, by name');
  const csv = await server.api.get(`${A}/?format=csv&search=list`);
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  const lines = csv.text.trimEnd().split('\r\n');
  t.equal(lines.length, 3, 'a header and two rows');
  const header = lines[0]!.split(',');
  t.ok(['id', 'name', 'is_action', 'deleted', 'created_at'].every((h) => header.includes(h)), `header ${lines[0]}`);
  t.ok(lines[1]!.includes('list beta') && lines[1]!.includes('True'), lines[1]);
  t.equal((await server.api.get(`${A}/?format=xml`)).status, 404, 'an unknown format is not found, as DRF answers');
});

t.test('every change is in the activity log', async (t) => {
  const a = await create({ name: 'Logged' });
  await server.api.patch(`${A}/${a.id}/`, { name: 'Logged twice', steps: [{ event: 'x' }] });
  await server.api.patch(`${A}/${a.id}/`, { description: '' });
  await server.api.patch(`${A}/${a.id}/`, { deleted: true });
  const log = await server.api.get(`${A}/${a.id}/activity/`);
  t.equal(log.status, 200);
  t.same(log.body.results.map((e: any) => e.activity), ['deleted', 'updated', 'created'], 'newest first; a PATCH that changes nothing is not logged');
  t.match(log.body.results[2], { scope: 'Action', item_id: String(a.id), detail: { name: 'Logged', changes: null }, user: { email: String } });
  const changes = log.body.results[1].detail.changes;
  t.same(changes.map((c: any) => c.field), ['name', 'steps']);
  t.match(changes[0], { type: 'Action', action: 'changed', before: 'Logged', after: 'Logged twice' });
  t.same(log.body.results[0].detail.changes, [{ type: 'Action', action: 'changed', field: 'deleted', before: false, after: true }]);
  const all = await server.api.get(`${A}/activity/`);
  t.ok(all.body.results.every((e: any) => e.scope === 'Action') && all.body.total_count >= 4);
  t.equal((await server.api.get(`${A}/999999/activity/`)).status, 404);
});

t.test('scopes: action:read reads, action:write writes', async (t) => {
  const key = async (scopes: string[]) => server.api.withKey((await server.api.post('/api/personal_api_keys/', { label: 'actions', scopes })).body.value);
  const reader = await key(['action:read']);
  t.equal((await reader.get(`${A}/`)).status, 200);
  const denied = await reader.post(`${A}/`, { name: 'by a reader' });
  t.equal(denied.status, 403);
  t.equal(denied.body.detail, "API key missing required scope 'action:write'");
  const writer = await key(['action:write']);
  t.equal((await writer.post(`${A}/`, { name: 'by a writer' })).status, 201);
  t.equal((await (await key(['feature_flag:write'])).get(`${A}/`)).status, 403, 'other scopes do not reach actions');
});

t.test('a project sees only its own actions', async (t) => {
  const project = await server.api.post('/api/projects/', { name: 'other' });
  const B = `/api/projects/${project.body.id}/actions`;
  const theirs = await server.api.post(`${B}/`, { name: 'Checkout' });
  t.equal(theirs.status, 201, 'a name taken in another project is free here');
  t.equal((await server.api.get(`${A}/${theirs.body.id}/`)).status, 404);
  t.equal((await server.api.patch(`${A}/${theirs.body.id}/`, { name: 'stolen' })).status, 404);
  t.same((await server.api.get(`${B}/`)).body.results.map((a: any) => a.name), ['Checkout']);
  t.notOk((await server.api.get(`${A}/`)).body.results.some((a: any) => a.id === theirs.body.id));
});

t.test('event definitions: event_type picks events, actions or both', async (t) => {
  const project = await server.api.post('/api/projects/', { name: 'definitions' });
  const P = `/api/projects/${project.body.id}`;
  const res = await fetch(`${server.q.base}/batch/`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.body.api_token, batch: [{ event: '$pageview', distinct_id: 'd' }, { event: 'signed_up', distinct_id: 'd' }] }),
  });
  t.equal(res.status, 200);
  const action = (await server.api.post(`${P}/actions/`, { name: 'Signed up (action)', steps: [{ event: 'signed_up' }] })).body;
  const gone = (await server.api.post(`${P}/actions/`, { name: 'Gone' })).body;
  await server.api.patch(`${P}/actions/${gone.id}/`, { deleted: true });
  const names = async (query: string) => (await server.api.get(`${P}/event_definitions/${query}`)).body.results.map((r: any) => [r.name, r.is_action, r.action_id]);
  t.same((await names('')).sort(), [['$pageview', false, null], ['signed_up', false, null]], 'events only by default');
  t.same(await names('?event_type=event'), await names(''));
  t.same(await names('?event_type=action_event'), [['Signed up (action)', true, action.id]], 'live actions only');
  t.same((await names('?event_type=all')).sort(), [['$pageview', false, null], ['Signed up (action)', true, action.id], ['signed_up', false, null]]);
  t.same(await names('?event_type=event_custom'), [['signed_up', false, null]]);
  t.same(await names('?event_type=event_posthog'), [['$pageview', false, null]]);
  t.same(await names('?event_type=all&search=action'), [['Signed up (action)', true, action.id]]);
  const row = (await server.api.get(`${P}/event_definitions/?event_type=action_event`)).body.results[0];
  t.match(row, { id: null, volume_30_day: null, is_action: true, action_id: action.id, created_at: action.created_at });
  const bad = await server.api.get(`${P}/event_definitions/?event_type=actions`);
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', code: 'invalid_choice', attr: 'event_type' });
});
