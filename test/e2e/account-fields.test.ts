// Account fields: PostHog's lengths and e-mail format, answered with DRF-style 400s, and
// nothing stored when refused.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);

const fieldError = (attr: string, code: string, detail: string) => ({ type: 'validation_error', code, detail, attr });
const tooLong = (attr: string, max: number) => fieldError(attr, 'max_length', `Ensure this field has no more than ${max} characters.`);

t.test('members: e-mail format and length, first name length', async (t) => {
  const path = '/api/organizations/@current/members/';
  const before = (await server.api.get(path)).body.count;
  const cases: [Record<string, unknown>, object][] = [
    [{ email: 'not an email' }, fieldError('email', 'invalid_input', 'Enter a valid email address.')],
    [{ email: 'a@b' }, fieldError('email', 'invalid_input', 'Enter a valid email address.')],
    [{ email: `${'a'.repeat(245)}@example.com` }, tooLong('email', 254)],
    [{ email: '' }, fieldError('email', 'blank', 'This field may not be blank.')],
    [{ email: null }, fieldError('email', 'null', 'This field may not be null.')],
    [{}, fieldError('email', 'required', 'This field is required.')],
    [{ email: 42 }, fieldError('email', 'invalid_input', 'Not a valid string.')],
    [{ email: 'ok@example.com', first_name: 'x'.repeat(151) }, tooLong('first_name', 150)],
  ];
  for (const [body, expected] of cases) {
    const res = await server.api.post(path, body);
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
    t.same(res.body, expected);
  }
  t.equal((await server.api.get(path)).body.count, before, 'no member was added');
  const ok = await server.api.post(path, { email: '  new.member@example.com ', first_name: 'x'.repeat(150) });
  t.equal(ok.status, 201, 'the limits themselves are accepted');
  t.equal(ok.body.user.email, 'new.member@example.com', 'stored trimmed, as DRF does');
});

t.test('organizations: name length on create and update, owner e-mail format', async (t) => {
  const huge = await server.api.post('/api/organizations/', { name: 'x'.repeat(100_000) });
  t.equal(huge.status, 400);
  t.same(huge.body, tooLong('name', 64));
  t.same((await server.api.post('/api/organizations/', { name: 'x'.repeat(65) })).body, tooLong('name', 64));
  t.same((await server.api.post('/api/organizations/', { name: 'Fine', email: 'nope' })).body, fieldError('email', 'invalid_input', 'Enter a valid email address.'));
  t.same((await server.api.post('/api/organizations/', { name: '  ' })).body, fieldError('name', 'blank', 'This field may not be blank.'));
  t.equal((await server.api.post('/api/organizations/', { name: 'y'.repeat(64), email: 'owner@example.org' })).status, 201);

  const current = (await server.api.get('/api/organizations/@current/')).body.name;
  t.same((await server.api.patch('/api/organizations/@current/', { name: 'z'.repeat(65) })).body, tooLong('name', 64));
  t.same((await server.api.patch('/api/organizations/@current/', { name: '' })).body, fieldError('name', 'blank', 'This field may not be blank.'));
  t.equal((await server.api.get('/api/organizations/@current/')).body.name, current, 'unchanged');
  t.equal((await server.api.patch('/api/organizations/@current/', { name: 'Renamed' })).body.name, 'Renamed');
});

t.test('projects, roles and key labels', async (t) => {
  t.same((await server.api.post('/api/projects/', { name: 'p'.repeat(201) })).body, tooLong('name', 200));
  t.equal((await server.api.post('/api/projects/', { name: 'p'.repeat(200) })).status, 201);
  t.same((await server.api.patch('/api/projects/@current/', { name: 'p'.repeat(201) })).body, tooLong('name', 200));
  t.same((await server.api.patch('/api/projects/@current/', { name: ' ' })).body, fieldError('name', 'blank', 'This field may not be blank.'));
  t.same((await server.api.post('/api/organizations/@current/roles/', { name: 'r'.repeat(201) })).body, tooLong('name', 200));
  t.same((await server.api.post('/api/personal_api_keys/', { label: 'l'.repeat(41) })).body, tooLong('label', 40));
  t.same((await server.api.post('/api/personal_api_keys/', { label: null })).body, fieldError('label', 'null', 'This field may not be null.'));
  t.equal((await server.api.post('/api/personal_api_keys/', { label: 'l'.repeat(40) })).status, 201);
});
