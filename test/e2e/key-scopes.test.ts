// Personal API key scopes: stored as asked, enforced per route, and a key never mints or
// manages a key with more rights than its own.
import t from 'tap';
import { Client, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

const denied = (detail: string) => ({ type: 'authentication_error', code: 'permission_denied', detail, attr: null });

async function keyWith(body: Record<string, unknown>, by: Client = server.api): Promise<{ client: Client; id: string; body: any }> {
  const res = await by.post('/api/personal_api_keys/', { label: 'scoped', ...body });
  if (res.status !== 201) throw new Error(`key creation answered ${res.status} ${res.text}`);
  return { client: by.withKey(res.body.value), id: res.body.id, body: res.body };
}

t.test('a feature_flag:read key is stored as such, reads flags and cannot write them', async (t) => {
  const { client, body } = await keyWith({ scopes: ['feature_flag:read'] });
  t.same(body.scopes, ['feature_flag:read'], 'stored as asked, not as *');
  t.same(body.scoped_teams, []);
  const list = await client.get('/api/projects/@current/feature_flags/');
  t.equal(list.status, 200, 'read allowed');
  const create = await client.post('/api/projects/@current/feature_flags/', { key: 'read-only-key-flag' });
  t.equal(create.status, 403);
  t.same(create.body, denied("API key missing required scope 'feature_flag:write'"));
  const flags = await server.api.get('/api/projects/@current/feature_flags/');
  t.notOk(flags.body.results.some((f: { key: string }) => f.key === 'read-only-key-flag'), 'nothing was created');
  const me = await client.get('/api/users/@me/');
  t.equal(me.status, 403);
  t.same(me.body, denied("API key missing required scope 'user:read'"));
  const events = await client.get('/api/projects/@current/events/');
  t.same(events.body, denied("API key missing required scope 'query:read'"));
  t.equal((await client.get('/api/projects/@current/persons/')).status, 403);
});

t.test('write implies read; * holds everything', async (t) => {
  const { client } = await keyWith({ scopes: ['feature_flag:write'] });
  t.equal((await client.get('/api/projects/@current/feature_flags/')).status, 200);
  t.equal((await client.post('/api/projects/@current/feature_flags/', { key: 'written-by-write-key' })).status, 201);
  const full = await keyWith({ scopes: ['*'] });
  t.equal((await full.client.get('/api/users/@me/')).status, 200);
  const omitted = await keyWith({});
  t.same(omitted.body.scopes, ['*'], 'a full-access key that names no scopes creates a full-access key');
});

t.test('a key cannot mint a key with more rights than itself', async (t) => {
  const readOnly = await keyWith({ scopes: ['feature_flag:read'] });
  const noKeyScope = await readOnly.client.post('/api/personal_api_keys/', { label: 'escalate', scopes: ['*'] });
  t.equal(noKeyScope.status, 403);
  t.same(noKeyScope.body, denied("API key missing required scope 'personal_api_key:write'"));

  const keyManager = await keyWith({ scopes: ['feature_flag:read', 'personal_api_key:write'] });
  for (const scopes of [['*'], ['feature_flag:write'], ['person:read'], ['feature_flag:read', 'personal_api_key:write', 'cohort:read']]) {
    const res = await keyManager.client.post('/api/personal_api_keys/', { label: 'escalate', scopes });
    t.equal(res.status, 403, `cannot grant ${scopes.join(',')}`);
    t.equal(res.body.code, 'permission_denied');
    t.match(res.body.detail, /^API key cannot grant scope '/);
  }
  const narrower = await keyManager.client.post('/api/personal_api_keys/', { label: 'narrower', scopes: ['feature_flag:read'] });
  t.equal(narrower.status, 201);
  t.same(narrower.body.scopes, ['feature_flag:read']);
  const inherited = await keyManager.client.post('/api/personal_api_keys/', { label: 'inherited' });
  t.equal(inherited.status, 201);
  t.same(inherited.body.scopes, ['feature_flag:read', 'personal_api_key:write'], 'no scopes named: the creating key\'s own');
  const child = server.api.withKey(inherited.body.value);
  t.equal((await child.post('/api/projects/@current/feature_flags/', { key: 'child-write' })).status, 403, 'the minted key is no stronger');
});

t.test('a key sees and deletes only keys within its rights; @current is always itself', async (t) => {
  const all = await server.api.get('/api/personal_api_keys/');
  const fullKeyId = all.body.find((k: { scopes: string[] }) => k.scopes.includes('*')).id;
  const keyManager = await keyWith({ scopes: ['feature_flag:read', 'personal_api_key:write'] });
  const weaker = await keyWith({ scopes: ['feature_flag:read'] });
  const listed = await keyManager.client.get('/api/personal_api_keys/');
  t.equal(listed.status, 200);
  const ids = listed.body.map((k: { id: string }) => k.id);
  t.ok(ids.includes(weaker.id), 'a weaker key is listed');
  t.ok(ids.includes(keyManager.id), 'itself is listed');
  t.notOk(ids.includes(fullKeyId), 'the full-access key is not listed');
  t.ok(listed.body.every((k: { scopes: string[] }) => !k.scopes.includes('*')));
  t.equal((await keyManager.client.get(`/api/personal_api_keys/${fullKeyId}/`)).status, 404);
  t.equal((await keyManager.client.delete(`/api/personal_api_keys/${fullKeyId}/`)).status, 404, 'cannot delete a stronger key');
  t.equal((await server.api.get('/api/users/@me/')).status, 200, 'the full key still works');
  t.equal((await keyManager.client.delete(`/api/personal_api_keys/${weaker.id}/`)).status, 204, 'can delete a weaker one');
  t.equal((await weaker.client.get('/api/projects/@current/feature_flags/')).status, 401);

  const bare = await keyWith({ scopes: [] });
  const current = await bare.client.get('/api/personal_api_keys/@current/');
  t.equal(current.status, 200, 'a key with no scopes still reads itself');
  t.equal(current.body.id, bare.id);
  t.same(current.body.scopes, []);
  t.notOk('value' in current.body);
  t.equal((await bare.client.get('/api/personal_api_keys/')).status, 403);
});

t.test('scopes are validated on creation', async (t) => {
  const unknown = await server.api.post('/api/personal_api_keys/', { label: 'x', scopes: ['feature_flag:read', 'insight:admin'] });
  t.equal(unknown.status, 400);
  t.same(unknown.body, { type: 'validation_error', code: 'invalid_input', detail: 'Invalid scope: insight:admin', attr: 'scopes' });
  const notList = await server.api.post('/api/personal_api_keys/', { label: 'x', scopes: '*' });
  t.same(notList.body, { type: 'validation_error', code: 'not_a_list', detail: 'Expected a list of items but got type "str".', attr: 'scopes' });
  const label = await server.api.post('/api/personal_api_keys/', { label: 'x'.repeat(41) });
  t.same(label.body, { type: 'validation_error', code: 'max_length', detail: 'Ensure this field has no more than 40 characters.', attr: 'label' });
});

t.test('scoped_teams confine a key to projects; scoped_organizations to the organization', async (t) => {
  const first = (await server.api.get('/api/projects/@current/')).body;
  const second = (await server.api.post('/api/projects/', { name: 'Scoped second' })).body;
  const { client, body } = await keyWith({ scopes: ['feature_flag:write', 'user:read', 'project:read'], scoped_teams: [second.id] });
  t.same(body.scoped_teams, [second.id]);
  t.equal((await client.get(`/api/projects/${second.id}/feature_flags/`)).status, 200);
  const other = await client.get(`/api/projects/${first.id}/feature_flags/`);
  t.equal(other.status, 403);
  t.same(other.body, denied(`API key does not have access to the requested project: ID ${first.id}.`));
  t.equal((await client.get('/api/projects/@current/feature_flags/')).status, 403, '@current is the first project here');
  const nonProject = await client.get('/api/projects/');
  t.same(nonProject.body, denied('API keys with scoped projects are only supported on project-based endpoints.'));
  t.equal((await client.get('/api/users/@me/')).status, 200, 'the user endpoint is exempt, as in PostHog');
  const defs = await client.get(`/flags/definitions?token=${first.api_token}`);
  t.same(defs.body, denied(`API key does not have access to the requested project: ID ${first.id}.`));
  t.equal((await client.get(`/flags/definitions?token=${second.api_token}`)).status, 200);
  // A personal key in place of the project key (capture, flags) reaches only the projects it is confined to.
  const keyValue = client.key!;
  const capture = (projectId: number) => fetch(`${server.q.base}/capture/`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: keyValue, project_id: projectId, event: 'via-personal-key', distinct_id: 'pk' }),
  });
  const outside = await capture(first.id);
  t.equal(outside.status, 403);
  t.same(await outside.json(), denied(`API key does not have access to the requested project: ID ${first.id}.`));
  t.equal((await capture(second.id)).status, 200);

  const foreignTeam = await server.api.post('/api/personal_api_keys/', { label: 'x', scoped_teams: [999999] });
  t.same(foreignTeam.body, { type: 'validation_error', code: 'invalid_input', detail: 'You must be a member of all teams that you are scoping the key to.', attr: 'scoped_teams' });

  const me = (await server.api.get('/api/users/@me/')).body;
  const orgKey = await keyWith({ scoped_organizations: [me.organization.id] });
  t.same(orgKey.body.scoped_organizations, [me.organization.id]);
  t.equal((await orgKey.client.get('/api/projects/@current/feature_flags/')).status, 200);
  const foreignOrg = await server.api.post('/api/personal_api_keys/', { label: 'x', scoped_organizations: ['11111111-1111-4111-8111-111111111111'] });
  t.equal(foreignOrg.status, 400);
  t.equal(foreignOrg.body.attr, 'scoped_organizations');
});

t.test('local-evaluation definitions need feature_flag:read', async (t) => {
  const token = (await server.api.get('/api/projects/@current/')).body.api_token;
  const persons = await keyWith({ scopes: ['person:read'] });
  const res = await persons.client.get(`/flags/definitions?token=${token}`);
  t.equal(res.status, 403);
  t.same(res.body, denied("API key missing required scope 'feature_flag:read'"));
  const flags = await keyWith({ scopes: ['feature_flag:read'] });
  t.equal((await flags.client.get(`/flags/definitions?token=${token}`)).status, 200);
  t.equal((await flags.client.get(`/api/feature_flag/local_evaluation?token=${token}`)).status, 200);
});
