// Personal-key authentication, project scoping, and the accounts endpoints that make several projects possible.
import t from 'tap';
import { Client, PERSONAL_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

t.test('key sources and the 401 bodies', async (t) => {
  const path = '/api/projects/@current/feature_flags/';
  const none = await server.api.withKey(null).get(path);
  t.equal(none.status, 401);
  t.same(none.body, { type: 'authentication_error', code: 'not_authenticated', detail: 'Authentication credentials were not provided.', attr: null });

  const bad = await server.api.withKey('phx_nope').get(path);
  t.equal(bad.status, 401);
  t.same(bad.body, { type: 'authentication_error', code: 'invalid_personal_api_key', detail: 'Invalid Personal API key.', attr: null });

  t.equal((await server.api.withKey(null).get(`${path}?personal_api_key=${PERSONAL_KEY}`)).status, 200, 'query string key');
  const viaBody = await server.api.withKey(null).post(path, { personal_api_key: PERSONAL_KEY, key: 'body-key-flag' });
  t.equal(viaBody.status, 201, 'body key');
  t.equal((await server.api.get('/api/projects/@current/feature_flags')).status, 200, 'trailing slash optional');
});

t.test('project scoping: @current, numeric, unknown, non-numeric, other organization', async (t) => {
  const me = await server.api.get('/api/users/@me/');
  t.equal(me.status, 200);
  const current = me.body.team.id;
  t.equal((await server.api.get(`/api/projects/${current}/feature_flags/`)).status, 200);
  const unknown = await server.api.get('/api/projects/99999/feature_flags/');
  t.equal(unknown.status, 404);
  t.same(unknown.body, { type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null });
  t.equal((await server.api.get('/api/projects/abc/feature_flags/')).status, 404);

  const org = await server.api.post('/api/organizations/', { name: 'Other Org', email: 'other@example.com' });
  t.equal(org.status, 201);
  const otherKey: string = org.body.personal_api_key;
  const otherProject: number = org.body.project.id;
  t.match(org.body.project.api_token, /^phc_[A-Za-z0-9]{43}$/);

  const forbidden = await server.api.get(`/api/projects/${otherProject}/feature_flags/`);
  t.equal(forbidden.status, 403);
  t.same(forbidden.body, { type: 'authentication_error', code: 'permission_denied', detail: "You don't have access to the project.", attr: null });
  const other = new Client(server.q.base, otherKey);
  t.equal((await other.get(`/api/projects/${current}/feature_flags/`)).status, 403);

  // The other organization's flags never appear in ours, nor ours in theirs.
  t.equal((await other.post('/api/projects/@current/feature_flags/', { key: 'theirs' })).status, 201);
  const ours = await server.api.get('/api/projects/@current/feature_flags/');
  t.notOk(ours.body.results.some((f: { key: string }) => f.key === 'theirs'));
  const theirs = await other.get('/api/projects/@current/feature_flags/');
  t.same(theirs.body.results.map((f: { key: string }) => f.key), ['theirs']);
});

t.test('projects: list, create with its own token, retrieve', async (t) => {
  const created = await server.api.post('/api/projects/', { name: 'Second project' });
  t.equal(created.status, 201);
  t.match(created.body, { name: 'Second project', api_token: /^phc_[A-Za-z0-9]{43}$/ });
  const first = await server.api.get('/api/projects/@current/');
  t.not(created.body.api_token, first.body.api_token);
  const list = await server.api.get('/api/projects/');
  t.equal(list.body.count, 2);
  t.same(list.body.results.map((p: { id: number }) => p.id).sort(), [first.body.id, created.body.id].sort());
  const got = await server.api.get(`/api/projects/${created.body.id}/`);
  t.equal(got.body.name, 'Second project');
  // A flag in the second project does not show in the first.
  t.equal((await server.api.post(`/api/projects/${created.body.id}/feature_flags/`, { key: 'second-only' })).status, 201);
  const firstFlags = await server.api.get(`/api/projects/${first.body.id}/feature_flags/`);
  t.notOk(firstFlags.body.results.some((f: { key: string }) => f.key === 'second-only'));
  const missingName = await server.api.post('/api/projects/', {});
  t.equal(missingName.status, 400);
  t.same(missingName.body, { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'name' });
});

t.test('personal API keys: create (value shown once), list masked, use, delete', async (t) => {
  const created = await server.api.post('/api/personal_api_keys/', { label: 'ci' });
  t.equal(created.status, 201);
  t.match(created.body.value, /^phx_[A-Za-z0-9]{43}$/);
  const list = await server.api.get('/api/personal_api_keys/');
  const row = list.body.find((k: { id: string }) => k.id === created.body.id);
  t.equal(row.label, 'ci');
  t.notOk('value' in row, 'the key itself is not listed');
  t.equal(row.mask_value, `phx_...${created.body.value.slice(-4)}`);
  const withNew = new Client(server.q.base, created.body.value);
  t.equal((await withNew.get('/api/users/@me/')).status, 200);
  t.equal((await server.api.delete(`/api/personal_api_keys/${created.body.id}/`)).status, 204);
  t.equal((await withNew.get('/api/users/@me/')).status, 401, 'a deleted key stops working at once');
  t.equal((await server.api.post('/api/personal_api_keys/', {})).status, 400);
});

t.test('roles CRUD with validation', async (t) => {
  const base = '/api/organizations/@current/roles/';
  const created = await server.api.post(base, { name: 'Engineers', feature_flags_access_level: 37 });
  t.equal(created.status, 201);
  t.match(created.body, { id: /^[0-9a-f-]{36}$/, name: 'Engineers', feature_flags_access_level: 37, members: [], associated_flags: [] });
  t.match(created.body.created_by, { email: 'admin@quill.local' });
  const dup = await server.api.post(base, { name: 'engineers' });
  t.equal(dup.status, 400);
  t.same(dup.body, { type: 'validation_error', code: 'unique', detail: 'There is already a role with this name.', attr: 'name' });
  const badLevel = await server.api.post(base, { name: 'X', feature_flags_access_level: 5 });
  t.equal(badLevel.status, 400);
  t.equal(badLevel.body.attr, 'feature_flags_access_level');
  const wrongType = await server.api.post(base, { name: 'Y', feature_flags_access_level: 'high' });
  t.equal(wrongType.status, 400);
  t.same(wrongType.body, { type: 'validation_error', code: 'invalid_input', detail: 'A valid integer is required.', attr: 'feature_flags_access_level' });
  const patched = await server.api.patch(`${base}${created.body.id}/`, { feature_flags_access_level: 21 });
  t.equal(patched.body.feature_flags_access_level, 21);
  const list = await server.api.get(base);
  t.equal(list.body.count, 1);
  t.equal((await server.api.get(`${base}${created.body.id}/`)).body.name, 'Engineers');
  t.equal((await server.api.delete(`${base}${created.body.id}/`)).status, 204);
  t.equal((await server.api.get(`${base}${created.body.id}/`)).status, 404);
});

t.test('malformed JSON is a 400, never a crash', async (t) => {
  const res = await server.api.post('/api/projects/@current/feature_flags/', '{"key": ', { 'content-type': 'application/json' });
  t.equal(res.status, 400);
  t.match(res.body, { type: 'invalid_request', code: 'parse_error', detail: /^JSON parse error - /, attr: null });
  const notObject = await server.api.post('/api/projects/@current/feature_flags/', '[1,2]', { 'content-type': 'application/json' });
  t.equal(notObject.status, 400);
  t.equal(notObject.body.type, 'validation_error');
  t.equal((await fetch(`${server.q.base}/_health`)).status, 200, 'still serving');
});
