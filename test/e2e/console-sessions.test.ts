// Console sign-in over HTTP (no browser): the session cookie is accepted by the private API with its user's rights,
// a cookie-authenticated write needs the session's X-CSRFToken (a key-authenticated one does not), sign-out and a
// password change end sessions, wrong passwords are throttled per (account, client address) and per address (never
// the right password from another address), and the console's files are served from memory with compression and
// caching headers.
import t from 'tap';
import { get, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Client, quillForFile } from '../helpers/quill.js';

const ADMIN = 'admin@quill.local';
const PASSWORD = 'correct-horse-battery';
const server = quillForFile(t, { env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
const FF = '/api/projects/@current/feature_flags/';

interface Signed {
  cookie: string;
  csrf: string;
}

/** Signs in; `xff` plays a client address (X-Forwarded-For is believed from a loopback peer, as from a proxy). */
async function login(email: string, password: string, xff = '192.0.2.1'): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${server.q.base}/api/login`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': xff }, body: JSON.stringify({ email, password }),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function signIn(email = ADMIN, password = PASSWORD, xff?: string): Promise<Signed> {
  const res = await login(email, password, xff);
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(res.body)}`);
  const cookie = /^(quill_session=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (!cookie) throw new Error('no session cookie');
  return { cookie, csrf: res.body.csrf_token };
}

/** A request with the session cookie (no key), and the CSRF header when `csrf` is given. */
function withCookie(s: Signed, method: string, path: string, body?: unknown, csrf?: string) {
  const headers: Record<string, string> = { cookie: s.cookie, 'content-type': 'application/json' };
  if (csrf !== undefined) headers['x-csrftoken'] = csrf;
  return new Client(server.q.base, null).request(method, path, body, headers);
}

t.test('first start prints the console address and sign-in, without echoing a password from the environment', async (t) => {
  t.match(server.q.output(), /Console: http:\/\/127\.0\.0\.1:\d+\/console\/ {2}\(sign in as admin@quill\.local with QUILL_ADMIN_PASSWORD\)/);
  t.notOk(server.q.output().includes(PASSWORD), 'the password itself is not printed');
});

t.test('sign-in sets an HttpOnly SameSite cookie; the private API accepts it; reads need no CSRF token', async (t) => {
  const res = await login(ADMIN, PASSWORD);
  t.equal(res.status, 200);
  t.match(res.headers.get('set-cookie'), /^quill_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; HttpOnly; SameSite=Lax$/);
  t.match(res.body, { email: ADMIN, csrf_token: /^[A-Za-z0-9_-]{32}$/ });
  const s = await signIn();
  const me = await withCookie(s, 'GET', '/api/users/@me/');
  t.equal(me.status, 200);
  t.equal(me.body.email, ADMIN);
  t.equal(me.body.csrf_token, s.csrf, '@me gives the console its CSRF token after a reload');
  const probe = await withCookie(s, 'GET', '/api/login');
  t.same(probe.body, { authenticated: true });
  t.same((await new Client(server.q.base, null).get('/api/login')).body, { authenticated: false });
  t.equal((await withCookie(s, 'GET', FF)).status, 200, 'a scope-guarded route, with the full rights of the user');
  t.equal((await withCookie(s, 'GET', '/_stats')).status, 200, 'the owner reads /_stats');
});

t.test('a cookie-authenticated write without the CSRF token is refused; with it, it succeeds', async (t) => {
  const s = await signIn();
  const none = await withCookie(s, 'POST', FF, { key: 'csrf-none', filters: { groups: [] } });
  t.equal(none.status, 403);
  t.same(none.body, { type: 'authentication_error', code: 'csrf_failed', detail: 'CSRF Failed: CSRF token missing or incorrect.', attr: null });
  // The last character changed (to one it is not: a token ending in 'x' would otherwise stay right).
  const wrongToken = `${s.csrf.slice(0, -1)}${s.csrf.endsWith('x') ? 'y' : 'x'}`;
  const wrong = await withCookie(s, 'POST', FF, { key: 'csrf-wrong', filters: { groups: [] } }, wrongToken);
  t.equal(wrong.status, 403, 'a wrong token is refused');
  const other = await signIn();
  t.equal((await withCookie(s, 'POST', FF, { key: 'csrf-other', filters: { groups: [] } }, other.csrf)).status, 403, "another session's token is refused");
  const ok = await withCookie(s, 'POST', FF, { key: 'csrf-ok', filters: { groups: [] } }, s.csrf);
  t.equal(ok.status, 201, ok.text);
  t.equal((await server.api.get(`${FF}?search=csrf-`)).body.results.length, 1, 'only the request with the token created a flag');
  t.equal((await server.api.post(FF, { key: 'key-no-csrf', filters: { groups: [] } })).status, 201, 'a personal key needs no CSRF token');
  t.equal((await withCookie(s, 'GET', `${FF}${ok.body.id}/`)).status, 200, 'reads need none');
});

t.test('wrong and unknown credentials get the same answer; sign-out ends the session', async (t) => {
  const wrong = await login(ADMIN, 'not-the-password', '192.0.2.50');
  const unknown = await login('nobody@example.com', 'not-the-password', '192.0.2.50');
  t.equal(wrong.status, 400);
  t.same(wrong.body, { type: 'validation_error', code: 'invalid_credentials', detail: 'Invalid email or password.', attr: null });
  t.same(unknown.body, wrong.body);
  t.match((await login('', 'x')).body, { code: 'required', attr: 'email' });
  const s = await signIn();
  const out = await withCookie(s, 'POST', '/api/logout', {}, s.csrf);
  t.equal(out.status, 200);
  t.match(out.headers.get('set-cookie'), /^quill_session=; Path=\/; Max-Age=0; HttpOnly/);
  const after = await withCookie(s, 'GET', FF);
  t.equal(after.status, 401);
  t.equal(after.body.code, 'not_authenticated');
});

t.test('a member with a password; the session sees only their organization; password change ends other sessions', async (t) => {
  const member = await server.api.post('/api/organizations/@current/members/', { email: 'member@example.com', password: 'member-pass-1' });
  t.equal(member.status, 201, member.text);
  t.match((await server.api.post('/api/organizations/@current/members/', { email: 'short@example.com', password: 'short' })).body,
    { attr: 'password', detail: 'This password is too short. It must contain at least 8 characters.' });
  const other = await server.api.post('/api/organizations/', { name: 'Other org', email: 'other-owner@example.com' });
  const otherProject = other.body.project.id;
  const first = await signIn('member@example.com', 'member-pass-1');
  const second = await signIn('MEMBER@example.com', 'member-pass-1');
  t.equal((await withCookie(first, 'GET', `/api/projects/${otherProject}/feature_flags/`)).status, 403, "another organization's project");
  t.equal((await withCookie(first, 'GET', '/_stats')).status, 403, 'a member is not an owner');

  const badCurrent = await withCookie(first, 'PATCH', '/api/users/@me/', { current_password: 'nope-nope', password: 'member-pass-2' }, first.csrf);
  t.match(badCurrent.body, { attr: 'current_password', detail: 'Your current password is incorrect.' });
  const changed = await withCookie(first, 'PATCH', '/api/users/@me/', { current_password: 'member-pass-1', password: 'member-pass-2' }, first.csrf);
  t.equal(changed.status, 200, changed.text);
  t.equal((await withCookie(first, 'GET', FF)).status, 200, 'the session that changed it stays');
  t.equal((await withCookie(second, 'GET', FF)).status, 401, 'the other session ended');
  t.equal((await login('member@example.com', 'member-pass-1', '192.0.2.60')).status, 400, 'the old password no longer works');
  t.equal((await login('member@example.com', 'member-pass-2', '192.0.2.60')).status, 200);
});

t.test('50 wrong passwords from one address: the right one from another signs in at once; sessions keep working', async (t) => {
  const session = await signIn(ADMIN, PASSWORD, '198.51.100.10');
  const attacker = '198.51.100.66';
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) {
    const res = await login(ADMIN, `guess-${i}`, attacker);
    statuses.push(res.status);
    if (res.status === 429) {
      if (res.body.type !== 'throttled_error' || res.body.code !== 'throttled' || res.body.attr !== null || !(Number(res.headers.get('retry-after')) > 0)) {
        t.fail(`attempt ${i + 1}: ${JSON.stringify(res.body)} Retry-After ${res.headers.get('retry-after')}`);
      }
    }
    if (i % 10 === 9) {
      t.equal((await withCookie(session, 'GET', FF)).status, 200, `the session works during the flood (${i + 1})`);
      t.equal((await server.api.get(FF)).status, 200, `and so does a personal key (${i + 1})`);
    }
  }
  t.same(statuses.slice(0, 5), [400, 400, 400, 400, 400], 'five wrong passwords are checked');
  t.same([...new Set(statuses.slice(5))], [429], 'then the address is told to wait, without the password being checked');

  const owner = await login(ADMIN, PASSWORD, '198.51.100.11');
  t.equal(owner.status, 200, 'the right password from another address signs in at once');
  t.match(owner.headers.get('set-cookie'), /^quill_session=/);
  const fromAttacker = await login(ADMIN, PASSWORD, attacker);
  t.equal(fromAttacker.status, 429, 'from the flooding address, even the right password waits');
  t.same(fromAttacker.body, { type: 'throttled_error', code: 'throttled', detail: 'Request was throttled. Expected available in 1 second.', attr: null });

  // Waiting as Retry-After says lets one more guess be checked; each checked failure doubles the wait.
  const retryAfter = [Number(fromAttacker.headers.get('retry-after'))];
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, retryAfter[retryAfter.length - 1]! * 1000 + 50));
    t.equal((await login(ADMIN, `late-guess-${i}`, attacker)).status, 400, 'after waiting, the guess is checked');
    const next = await login(ADMIN, `late-guess-${i}-again`, attacker);
    t.equal(next.status, 429);
    retryAfter.push(Number(next.headers.get('retry-after')));
  }
  t.same(retryAfter, [1, 2, 4], 'a growing Retry-After');
  t.equal((await withCookie(session, 'GET', FF)).status, 200, 'the session signed in before the flood still works');
  t.equal((await login(ADMIN, PASSWORD, '198.51.100.11')).status, 200, 'and the owner signs in again from their address');
});

t.test('wrong passwords are throttled per client address, across accounts', async (t) => {
  const attacker = '203.0.113.7';
  for (let i = 0; i < 30; i++) {
    const res = await login(`spray-${i}@example.com`, 'password1', attacker);
    if (res.status !== 400) t.fail(`attempt ${i + 1} answered ${res.status}`);
  }
  t.equal((await login(ADMIN, PASSWORD, attacker)).status, 429, 'the address is blocked, even with right credentials');
  t.equal((await login(ADMIN, PASSWORD, '203.0.113.8')).status, 200, 'another address is not');
});

t.test('sign-in from another site gets no CORS grant; the console origin does', async (t) => {
  const evil = await fetch(`${server.q.base}/api/login`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/json' }, body: '{}' });
  t.equal(evil.headers.get('access-control-allow-origin'), null);
  const own = await fetch(`${server.q.base}/api/login`, { method: 'POST', headers: { origin: server.q.base, 'content-type': 'application/json' }, body: '{}' });
  t.equal(own.headers.get('access-control-allow-origin'), server.q.base);
});

t.test('console files: from memory, brotli or gzip, ETag and immutable hashed assets; / sends browsers there', async (t) => {
  const base = server.q.base;
  const root = await fetch(`${base}/`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml' } });
  t.equal(root.status, 302);
  t.equal(root.headers.get('location'), '/console/');
  t.equal((await fetch(`${base}/`, { redirect: 'manual', headers: { accept: 'application/json' } })).status, 404, 'API clients get the 404 they always did');

  const page = await rawGet(`${base}/console/project/1/flags`, { 'accept-encoding': 'identity' });
  t.equal(page.status, 200);
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(page.headers['cache-control'], 'no-cache');
  t.match(page.headers['content-security-policy'], /default-src 'self'/);
  const html = page.body.toString();
  const script = /src="(\/console\/main-[A-Z0-9]{8}\.js)"/.exec(html)?.[1];
  t.ok(script, 'index.html names the hashed entry script');
  t.notOk(/https?:\/\//.test(html), 'nothing loaded from another host');
  t.equal((await rawGet(`${base}/console/`, { 'if-none-match': String(page.headers.etag) })).status, 304);

  const plain = await rawGet(`${base}${script}`, { 'accept-encoding': 'identity' });
  t.equal(plain.headers['content-encoding'], undefined);
  t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  t.ok(plain.body.length > 1000, 'the script itself');
  const br = await rawGet(`${base}${script}`, { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(br.headers['content-encoding'], 'br');
  t.ok(br.body.length < plain.body.length / 2, `brotli ${br.body.length} of ${plain.body.length} bytes`);
  t.ok(brotliDecompressSync(br.body).equals(plain.body), 'brotli decodes to the file');
  const gz = await rawGet(`${base}${script}`, { 'accept-encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.ok(gunzipSync(gz.body).equals(plain.body), 'gzip decodes to the file');
  t.equal((await rawGet(`${base}${script}`, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding'], 'gzip', 'q=0 refuses brotli');
  t.equal((await rawGet(`${base}/console/missing-ABCDEFGH.js`, {})).status, 404, 'a missing file is a 404, not the page');
});

/** A GET whose body is not decoded (node:http), to see the bytes on the wire. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}
