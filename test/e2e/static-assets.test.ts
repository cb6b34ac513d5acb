// GET /static/<name>.js: the posthog-js browser bundles of the installed npm package, from the front's memory, as
// PostHog's asset host serves them to the standard snippet (array.js) and to array.js itself (its lazily loaded
// extensions): exact bytes, a strong ETag with 304, Cache-Control, gzip when accepted, readable cross-origin.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { ROOT, quillForFile } from '../helpers/quill.js';

const DIST = `${ROOT}/node_modules/posthog-js/dist`;
const VERSION: string = JSON.parse(readFileSync(`${ROOT}/node_modules/posthog-js/package.json`, 'utf8')).version;
const server = quillForFile(t);

/** node:http rather than fetch: fetch would ask for and undo gzip itself. */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.q.base}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('array.js and its lazily loaded siblings are served byte for byte', async (t) => {
  for (const name of ['array.js', 'recorder.js', 'surveys.js', 'exception-autocapture.js', 'dead-clicks-autocapture.js', 'web-vitals.js', 'tracing-headers.js']) {
    const res = await get(`/static/${name}?v=${VERSION}`);
    t.equal(res.status, 200, name);
    t.equal(res.headers['content-type'], 'application/javascript; charset=utf-8');
    t.ok(res.body.equals(readFileSync(`${DIST}/${name}`)), `${name}: the npm package's bytes`);
    t.equal(res.headers['content-encoding'], undefined, 'no gzip unless asked');
  }
});

t.test('ETag and 304, Cache-Control, gzip on request, CORS', async (t) => {
  const plain = await get('/static/array.js', { origin: 'http://site.example' });
  const etag = plain.headers.etag as string;
  t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong ETag');
  t.equal(plain.headers['cache-control'], 'public, max-age=3600');
  t.equal(plain.headers['access-control-allow-origin'], 'http://site.example', 'readable by a crossorigin script tag');
  t.match(String(plain.headers.vary), /Accept-Encoding/);

  const again = await get('/static/array.js', { 'if-none-match': etag });
  t.equal(again.status, 304);
  t.equal(again.body.length, 0);
  t.equal(again.headers.etag, etag);

  const zipped = await get('/static/array.js', { 'accept-encoding': 'gzip, deflate, br' });
  t.equal(zipped.status, 200);
  t.equal(zipped.headers['content-encoding'], 'gzip');
  t.ok(zipped.body.length < plain.body.length / 2, `gzip: ${zipped.body.length} of ${plain.body.length} bytes`);
  t.ok(gunzipSync(zipped.body).equals(plain.body), 'gunzips to the same bytes');
  t.not(zipped.headers.etag, etag, 'the gzip copy has its own ETag');
  t.equal((await get('/static/array.js', { 'accept-encoding': 'gzip', 'if-none-match': zipped.headers.etag as string })).status, 304);
  t.equal((await get('/static/array.js', { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'], undefined, 'gzip;q=0 refuses gzip');

  const versioned = await get(`/static/${VERSION}/surveys.js`);
  t.equal(versioned.status, 200, 'strict_script_versioning path');
  t.equal(versioned.headers['cache-control'], 'public, max-age=31536000, immutable');
});

t.test('anything else under /static/ is a 404 with the error body', async (t) => {
  for (const path of ['/static/nope.js', '/static/9.9.9/array.js', '/static/array.js.map', '/static/module.js', '/static/../package.json', '/static/%2e%2e/package.json', '/static/']) {
    const res = await get(path);
    t.equal(res.status, 404, path);
    t.same(JSON.parse(res.body.toString()), { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
  }
  t.equal((await fetch(`${server.q.base}/static/array.js`, { method: 'POST' })).status, 404);
});
