// Public ingestion: every path, method and encoding SDKs use, token places, the answers (200 / 401 / 400 / 413),
// skipped events, timestamps (skew correction, offset, `_`), uuids (kept, deduplicated, regenerated) and CORS.
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { event, sendBatch, storedEvents } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, quillForFile, removeDir, startQuill } from '../helpers/quill.js';

const server = quillForFile(t);

const raw = (path: string, body: string | Uint8Array | undefined, headers: Record<string, string> = {}, method = 'POST') =>
  fetch(server.q.base + path, { method, headers, body });

t.test('every capture path, with and without the trailing slash, POST and GET', async (t) => {
  const paths = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'];
  for (const path of paths) {
    for (const slash of ['', '/']) {
      const id = `path-${path}-${slash ? 'slash' : 'bare'}`;
      const res = await raw(path + slash, JSON.stringify({ api_key: PROJECT_KEY, event: 'hit', distinct_id: id }), { 'content-type': 'application/json' });
      t.equal(res.status, 200, `POST ${path}${slash}`);
      t.same(await res.json(), { status: 1 });
      const get = await raw(`${path}${slash}?data=${encodeURIComponent(JSON.stringify({ api_key: PROJECT_KEY, event: 'hit', distinct_id: `${id}-get` }))}`, undefined, {}, 'GET');
      t.equal(get.status, 200, `GET ${path}${slash}?data=`);
    }
  }
  for (const path of paths) {
    const stored = await storedEvents(server.api, `path-${path}-slash`);
    t.equal(stored.length, 1, `stored via ${path}/`);
    // /engage/ turns a single legacy people call into $identify.
    t.equal(stored[0].event, path === '/engage' ? '$identify' : 'hit');
    t.equal((await storedEvents(server.api, `path-${path}-bare-get`)).length, 1, `stored via GET ${path}`);
  }
});

t.test('body shapes and encodings', async (t) => {
  const one = (id: string) => ({ api_key: PROJECT_KEY, event: 'enc', distinct_id: id });
  const cases: [string, () => Promise<Response>][] = [
    ['json single', () => raw('/e/', JSON.stringify(one('enc-json')), { 'content-type': 'application/json' })],
    ['batch envelope', () => raw('/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: 'enc', distinct_id: 'enc-batch' }] }))],
    ['bare array', () => raw('/e/', JSON.stringify([{ ...one('enc-array') }]))],
    ['gzip by Content-Encoding', () => raw('/batch/', gzipSync(JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: 'enc', distinct_id: 'enc-gzip-header' }] })), { 'content-type': 'application/json', 'content-encoding': 'gzip' })],
    ['gzip by ?compression=gzip-js', () => raw('/e/?compression=gzip-js', gzipSync(JSON.stringify(one('enc-gzip-param'))), { 'content-type': 'text/plain' })],
    ['gzip by magic bytes', () => raw('/i/v0/e/', gzipSync(JSON.stringify(one('enc-gzip-magic'))), { 'content-type': 'text/plain' })],
    ['base64 body', () => raw('/e/', Buffer.from(JSON.stringify(one('enc-b64'))).toString('base64'), { 'content-type': 'text/plain' })],
    ['form data= base64', () => raw('/e/?compression=base64', `data=${encodeURIComponent(Buffer.from(JSON.stringify(one('enc-form'))).toString('base64'))}`, { 'content-type': 'application/x-www-form-urlencoded' })],
    // Browsers send '+' of base64 unescaped in forms, which decodes to a space: the server repairs it.
    ['form with + turned into space', () => raw('/e/', `data=${Buffer.from(JSON.stringify({ ...one('enc-plus'), properties: { s: '>>>???' } })).toString('base64')}`, { 'content-type': 'application/x-www-form-urlencoded' })],
  ];
  for (const [name, send] of cases) {
    const res = await send();
    t.equal(res.status, 200, `${name}: ${res.status === 200 ? '' : await res.text()}`);
  }
  for (const id of ['enc-json', 'enc-batch', 'enc-array', 'enc-gzip-header', 'enc-gzip-param', 'enc-gzip-magic', 'enc-b64', 'enc-form', 'enc-plus']) {
    t.equal((await storedEvents(server.api, id)).length, 1, `${id} stored`);
  }
  t.equal((await storedEvents(server.api, 'enc-plus'))[0].properties.s, '>>>???');
});

t.test('token places', async (t) => {
  const base = { event: 'tok' };
  const sends: [string, () => Promise<Response>][] = [
    ['body api_key', () => raw('/capture/', JSON.stringify({ ...base, distinct_id: 'tok-1', api_key: PROJECT_KEY }))],
    ['body token', () => raw('/capture/', JSON.stringify({ ...base, distinct_id: 'tok-2', token: PROJECT_KEY }))],
    ['body $token', () => raw('/capture/', JSON.stringify({ ...base, distinct_id: 'tok-3', $token: PROJECT_KEY }))],
    ['properties.token', () => raw('/capture/', JSON.stringify({ ...base, distinct_id: 'tok-4', properties: { token: PROJECT_KEY } }))],
    ['query token (GET)', () => raw(`/capture/?token=${PROJECT_KEY}&data=${encodeURIComponent(JSON.stringify({ ...base, distinct_id: 'tok-5' }))}`, undefined, {}, 'GET')],
    ['form api_key', () => raw('/capture/', `api_key=${PROJECT_KEY}&data=${encodeURIComponent(Buffer.from(JSON.stringify({ ...base, distinct_id: 'tok-6' })).toString('base64'))}`, { 'content-type': 'application/x-www-form-urlencoded' })],
    ['first item of an array', () => raw('/e/', JSON.stringify([{ ...base, distinct_id: 'tok-7', token: PROJECT_KEY }, { ...base, distinct_id: 'tok-8' }]))],
  ];
  for (const [name, send] of sends) t.equal((await send()).status, 200, name);
  for (let i = 1; i <= 8; i++) t.equal((await storedEvents(server.api, `tok-${i}`)).length, 1, `tok-${i}`);
});

t.test('error answers and skipped events', async (t) => {
  const bad = await raw('/capture/', JSON.stringify({ api_key: 'phc_nope', event: 'x', distinct_id: 'y' }));
  t.equal(bad.status, 401);
  t.same(await bad.json(), { type: 'authentication_error', code: 'invalid_api_key', detail: 'Project API key invalid. You can find your project API key in the Quill console under Settings (/console/), or in what Quill printed at its first start.', attr: null });
  const missing = await raw('/batch/', JSON.stringify({ batch: [{ event: 'x', distinct_id: 'y' }] }));
  t.equal(missing.status, 401);
  t.match(await missing.json(), { type: 'authentication_error', code: 'missing_api_key', attr: null });
  const malformed = await raw('/e/', '{"api_key": "phc', { 'content-type': 'application/json' });
  t.equal(malformed.status, 400);
  t.match(await malformed.json(), { type: 'validation_error', code: 'invalid_payload', detail: /^Malformed request data/, attr: null });
  const garbageGzip = await raw('/e/', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3]), { 'content-encoding': 'gzip' });
  t.equal(garbageGzip.status, 400);
  const empty = await raw('/e/', '');
  t.equal(empty.status, 400);
  t.match(await empty.json(), { type: 'validation_error', code: 'no_data' });
  const projectNotInt = await raw('/capture/', JSON.stringify({ api_key: 'phx_whatever', project_id: 'abc', event: 'x', distinct_id: 'y' }));
  t.equal(projectNotInt.status, 400);
  t.same(await projectNotInt.json(), { type: 'validation_error', code: 'invalid_project', detail: 'Invalid Project ID.', attr: 'project_id' });

  const skipped = await sendBatch(server.q.base, [
    { event: 'no-distinct-id', properties: {} },
    { distinct_id: 'skip-1', properties: {} },
    { event: 'empty-distinct-id', distinct_id: '' },
    { event: 'kept', distinct_id: 'skip-1' },
  ]);
  t.equal(skipped.status, 200, 'events without name or distinct id beside a valid one are dropped (and counted), still 200');
  const stored = await storedEvents(server.api, 'skip-1');
  t.same(stored.map((e) => e.event), ['kept']);
  const emptyBatch = await sendBatch(server.q.base, []);
  t.equal(emptyBatch.status, 200, 'an empty batch is accepted');
  t.equal((await fetch(`${server.q.base}/_health`)).status, 200, 'still serving');
});

t.test('timestamps: skew correction, offset, `_`, missing', async (t) => {
  const now = Date.now();
  const clientNow = now + 3_600_000; // client clock one hour fast
  await raw('/batch/', JSON.stringify({
    api_key: PROJECT_KEY,
    sent_at: new Date(clientNow).toISOString(),
    batch: [{ event: 'skewed', distinct_id: 'ts-1', timestamp: new Date(clientNow - 60_000).toISOString() }],
  }));
  const skewed = (await storedEvents(server.api, 'ts-1'))[0];
  const delta = Date.parse(skewed.timestamp) - (now - 60_000);
  t.ok(Math.abs(delta) < 5_000, `now + (timestamp - sent_at): off by ${delta} ms`);

  await raw('/capture/', JSON.stringify({ api_key: PROJECT_KEY, event: 'offset', distinct_id: 'ts-2', offset: 120_000 }));
  const offset = (await storedEvents(server.api, 'ts-2'))[0];
  t.ok(Math.abs(Date.parse(offset.timestamp) - (now - 120_000)) < 5_000, 'now - offset');

  await raw(`/e/?_=${clientNow}`, JSON.stringify({ api_key: PROJECT_KEY, event: 'underscore', distinct_id: 'ts-3', timestamp: new Date(clientNow - 30_000).toISOString() }));
  const underscore = (await storedEvents(server.api, 'ts-3'))[0];
  t.ok(Math.abs(Date.parse(underscore.timestamp) - (now - 30_000)) < 5_000, '`_` query parameter is sent_at in ms');

  await raw('/capture/', JSON.stringify({ api_key: PROJECT_KEY, event: 'no-ts', distinct_id: 'ts-4' }));
  t.ok(Math.abs(Date.parse((await storedEvents(server.api, 'ts-4'))[0].timestamp) - Date.now()) < 10_000, 'missing timestamp = now');

  await raw('/capture/', JSON.stringify({ api_key: PROJECT_KEY, event: 'fixed', distinct_id: 'ts-5', timestamp: '2023-05-06T07:08:09.123Z' }));
  t.equal(Date.parse((await storedEvents(server.api, 'ts-5'))[0].timestamp), Date.parse('2023-05-06T07:08:09.123Z'), 'timestamp without sent_at kept');
});

t.test('uuids: client uuid kept, a repeat stored once, invalid regenerated', async (t) => {
  const e = event('uuid-1', 'with-uuid');
  t.equal((await sendBatch(server.q.base, [e])).status, 200);
  t.equal((await sendBatch(server.q.base, [e, e])).status, 200, 'an SDK retry of an acknowledged batch');
  const stored = await storedEvents(server.api, 'uuid-1');
  t.equal(stored.length, 1, 'stored exactly once');
  t.equal(stored[0].id, e.uuid, 'the client uuid is the event id');
  await sendBatch(server.q.base, [{ event: 'bad-uuid', distinct_id: 'uuid-2', uuid: 'not-a-uuid' }]);
  const regenerated = await storedEvents(server.api, 'uuid-2');
  t.equal(regenerated.length, 1, 'an invalid uuid does not fail the request');
  t.match(regenerated[0].id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUIDv7 is generated');
});

t.test('CORS for browsers on another origin', async (t) => {
  const pre = await raw('/e/', undefined, { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, 'OPTIONS');
  t.equal(pre.status, 200);
  t.equal(pre.headers.get('access-control-allow-origin'), 'http://app.example');
  t.equal(pre.headers.get('access-control-allow-credentials'), 'true');
  t.match(pre.headers.get('access-control-allow-methods'), /POST/);
  const post = await raw('/e/', JSON.stringify({ api_key: PROJECT_KEY, event: 'cors', distinct_id: 'cors-1' }), { origin: 'http://app.example' });
  t.equal(post.headers.get('access-control-allow-origin'), 'http://app.example');
});

t.test('413 past QUILL_MAX_BODY_MB, also after decompression; lz64 bodies', async (t) => {
  const small = await startQuill({ env: { QUILL_MAX_BODY_MB: '1', QUILL_PROJECT_API_KEY: 'phc_abc' } });
  t.teardown(async () => {
    await small.stop();
    removeDir(small.dataDir);
  });
  const big = JSON.stringify({ api_key: 'phc_abc', batch: [{ event: 'big', distinct_id: 'b', properties: { blob: 'x'.repeat(1_200_000) } }] });
  const tooLarge = await fetch(`${small.base}/batch/`, { method: 'POST', body: big });
  t.equal(tooLarge.status, 413);
  t.same(await tooLarge.json(), { type: 'client_error', code: 'request_too_large', detail: 'Request too large.', attr: null });
  const bomb = await fetch(`${small.base}/batch/`, { method: 'POST', body: gzipSync(big), headers: { 'content-encoding': 'gzip' } });
  t.equal(bomb.status, 413, 'a small gzip body that inflates past the limit');
  t.equal((await fetch(`${small.base}/_health`)).status, 200);
  // A legacy posthog-js lz64 form body: LZ-String compressToBase64 of
  // {"event":"$pageview","distinct_id":"user-1","properties":{"token":"phc_abc",...}}.
  const lz = 'N4IgpgbmB2AuIC4QBIAOBDA5pAlmA7iADQgAmOAzrDtAMawD6OpiIArhWAE4C0AjMRCouAe1TdqYColCwRAaxitUAC1oN0AI1qDktNly4xGBgDasVsWKgoIA9HbAAPdAFtUpsADpaI13YB+AEcAXgEAX3CgA';
  const lzRes = await fetch(`${small.base}/e/`, { method: 'POST', body: `data=${encodeURIComponent(lz)}&compression=lz64`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(lzRes.status, 200);
  const stored = await storedEvents(new Client(small.base), 'user-1');
  t.equal(stored[0]?.event, '$pageview');
});

t.test('GET /_stats needs a personal key and counts what every shard logged and applied', async (t) => {
  t.equal((await raw('/_stats', undefined, {}, 'GET')).status, 401);
  const before = await server.api.get('/_stats');
  t.equal(before.status, 200);
  t.equal(before.body.workers, 2);
  t.equal(before.body.shards.length, 2, 'one entry per shard');
  const total = (body: any, field: string) => body.shards.reduce((n: number, s: any) => n + s[field], 0);
  const batch = Array.from({ length: 10 }, (_, i) => event(`stats-${i}`, 'stats'));
  t.equal((await sendBatch(server.q.base, batch)).status, 200);
  // An events read waits until everything acknowledged is applied, so the counters are settled afterwards.
  await storedEvents(server.api, 'stats-0');
  const after = await server.api.get('/_stats');
  t.equal(total(after.body, 'appendedEvents') - total(before.body, 'appendedEvents'), 10, 'ten events logged');
  t.equal(total(after.body, 'appliedEvents') - total(before.body, 'appliedEvents'), 10, 'ten events applied');
  t.equal(total(after.body, 'backlog'), 0, 'nothing left to apply');
  t.equal(total(after.body, 'lagMs'), 0, 'so no ingestion lag');
});
