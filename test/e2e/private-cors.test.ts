// CORS: the private API grants cross-origin reads (with credentials) only to the console's
// origins (the server's own and QUILL_CONSOLE_ORIGIN); capture and flag endpoints stay open to every origin.
import t from 'tap';
import { PERSONAL_KEY, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const CONSOLE = 'https://console.example.com';
const EVIL = 'https://evil.example';
const server = quillForFile(t, { env: { QUILL_CONSOLE_ORIGIN: CONSOLE } });

const FLAGS = '/api/projects/@current/feature_flags/';

async function call(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  const res = await fetch(server.q.base + path, { method, headers, body });
  await res.arrayBuffer();
  return res;
}

const grant = (res: Response) => ({ origin: res.headers.get('access-control-allow-origin'), credentials: res.headers.get('access-control-allow-credentials') });

t.test('private API: another site gets no CORS grant, answers or errors alike', async (t) => {
  const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
  const ok = await call('GET', FLAGS, { ...auth, origin: EVIL });
  t.equal(ok.status, 200, 'the server still answers (the browser withholds it)');
  t.same(grant(ok), { origin: null, credentials: null });
  t.equal(ok.headers.get('vary'), 'Origin', 'caches keep answers per origin');
  const unauthorised = await call('GET', FLAGS, { origin: EVIL });
  t.equal(unauthorised.status, 401);
  t.same(grant(unauthorised), { origin: null, credentials: null });
  const viaQuery = await call('GET', `${FLAGS}?personal_api_key=${PERSONAL_KEY}`, { origin: EVIL });
  t.same(grant(viaQuery), { origin: null, credentials: null });
  for (const path of ['/api/users/@me/', '/_stats', `/flags/definitions?token=${PROJECT_KEY}`, '/api/personal_api_keys/']) {
    t.same(grant(await call('GET', path, { ...auth, origin: EVIL })), { origin: null, credentials: null }, path);
  }
  const preflight = await call('OPTIONS', FLAGS, { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' });
  t.same(grant(preflight), { origin: null, credentials: null }, 'preflight refused');
});

t.test('private API: the console and the server itself are granted, with credentials', async (t) => {
  const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
  t.same(grant(await call('GET', FLAGS, { ...auth, origin: CONSOLE })), { origin: CONSOLE, credentials: 'true' });
  t.same(grant(await call('GET', FLAGS, { ...auth, origin: server.q.base })), { origin: server.q.base, credentials: 'true' }, 'same origin');
  const preflight = await call('OPTIONS', FLAGS, { origin: CONSOLE, 'access-control-request-method': 'PATCH' });
  t.same(grant(preflight), { origin: CONSOLE, credentials: 'true' });
  t.match(preflight.headers.get('access-control-allow-methods'), /PATCH/);
  t.same(grant(await call('GET', FLAGS, auth)), { origin: '*', credentials: null }, 'no Origin (not a browser): unchanged');
});

t.test('public endpoints keep mirroring every origin', async (t) => {
  const capture = await call('POST', '/capture/', { origin: EVIL, 'content-type': 'application/json' }, JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }));
  t.equal(capture.status, 200);
  t.same(grant(capture), { origin: EVIL, credentials: 'true' });
  const flags = await call('POST', '/flags/?v=2', { origin: EVIL, 'content-type': 'application/json' }, JSON.stringify({ token: PROJECT_KEY, distinct_id: 'd' }));
  t.same(grant(flags), { origin: EVIL, credentials: 'true' });
  const decide = await call('POST', '/decide/?v=3', { origin: EVIL, 'content-type': 'application/json' }, JSON.stringify({ token: PROJECT_KEY, distinct_id: 'd' }));
  t.same(grant(decide), { origin: EVIL, credentials: 'true' });
  t.same(grant(await call('GET', `/array/${PROJECT_KEY}/config`, { origin: EVIL })), { origin: EVIL, credentials: 'true' });
  const preflight = await call('OPTIONS', '/batch/', { origin: EVIL, 'access-control-request-method': 'POST' });
  t.same(grant(preflight), { origin: EVIL, credentials: 'true' });
  t.same(grant(await call('GET', '/_health', { origin: EVIL })), { origin: EVIL, credentials: 'true' });
});
