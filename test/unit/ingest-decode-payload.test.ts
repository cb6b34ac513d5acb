import t from 'tap';
import { deflateSync, gzipSync } from 'node:zlib';
import { decodePayload, compressionHint, type RawRequest } from '../../src/domain/ingest/index.js';

const MAX = 1024 * 1024;

const EVENT = { event: '$pageview', distinct_id: 'u1', properties: { token: 'phc_x', name: 'ü ✓ 😀 +/=' } };
const BATCH = { api_key: 'phc_x', batch: [EVENT, { ...EVENT, event: 'second' }], sent_at: '2024-01-01T00:00:00.000Z' };
const json = (v: unknown) => JSON.stringify(v);
const b64 = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const gz = (s: string | Buffer) => new Uint8Array(gzipSync(s));

// lz-string compressToBase64 of json(EVENT_LZ), generated once with the real library (see ingest-lz-string.test.ts).
const EVENT_LZ = { event: '$pageview', distinct_id: 'user-1', properties: { token: 'phc_abc', $current_url: 'https://example.com/?q=1' } };
const EVENT_LZ_B64 =
  'N4IgpgbmB2AuIC4QBIAOBDA5pAlmA7iADQgAmOAzrDtAMawD6OpiIArhWAE4C0AjMRCouAe1TdqYColCwRAaxitUAC1oN0AI1qDktNly4xGBgDasVsWKgoIA9HbAAPdAFtUpsADpaI13YB+AEcAXgEAX3CgA';

function req(body: Uint8Array | string, over: Partial<RawRequest> = {}): RawRequest {
  return {
    body: typeof body === 'string' ? utf8(body) : body,
    query: {},
    contentType: '',
    contentEncoding: '',
    method: 'POST',
    ...over,
  };
}

const FORM = 'application/x-www-form-urlencoded';

t.test('accepted encodings', async (t) => {
  const cases: { name: string; req: RawRequest; payload: unknown; form?: Record<string, string> | null }[] = [
    { name: 'plain JSON body', req: req(json(BATCH), { contentType: 'application/json' }), payload: BATCH },
    { name: 'JSON with text/plain and no content type', req: req(json(EVENT)), payload: EVENT },
    {
      name: 'posthog-js 1.449: gzip body, text/plain, no compression param (magic sniffing)',
      req: req(gz(json(BATCH)), { contentType: 'text/plain' }),
      payload: BATCH,
    },
    {
      name: 'posthog-node: application/json + Content-Encoding: gzip',
      req: req(gz(json(BATCH)), { contentType: 'application/json', contentEncoding: 'gzip' }),
      payload: BATCH,
    },
    {
      name: 'legacy ?compression=gzip-js with gzip body',
      req: req(gz(json(BATCH)), { query: { compression: 'gzip-js' }, contentType: 'text/plain' }),
      payload: BATCH,
    },
    {
      name: 'sendBeacon fallback: ?compression=base64, form data=<urlencoded base64>',
      req: req('data=' + encodeURIComponent(b64(json(BATCH))), { query: { compression: 'base64' }, contentType: FORM }),
      payload: BATCH,
      form: { data: b64(json(BATCH)) },
    },
    {
      name: "legacy base64 form with unencoded '+' (decoded to spaces) is repaired",
      req: req('data=' + b64(json(EVENT)), { contentType: FORM }),
      payload: EVENT,
    },
    {
      name: 'legacy lz64 form: data=<lz64>&compression=lz64',
      req: req('data=' + encodeURIComponent(EVENT_LZ_B64) + '&compression=lz64', { contentType: FORM }),
      payload: EVENT_LZ,
    },
    {
      name: "lz64 form with '+' turned into spaces",
      req: req('data=' + EVENT_LZ_B64 + '&compression=lz-string', { contentType: FORM }),
      payload: EVENT_LZ,
    },
    {
      name: 'lz64 form whose compression hint got lost (sniffed)',
      req: req('data=' + encodeURIComponent(EVENT_LZ_B64), { contentType: FORM }),
      payload: EVENT_LZ,
    },
    {
      name: 'lz64 hint in the query string, raw lz64 body',
      req: req(EVENT_LZ_B64, { query: { compression: 'LZ64' } }),
      payload: EVENT_LZ,
    },
    {
      name: "GET ?data=<base64> (query already decoded: '+' became ' ')",
      req: req(new Uint8Array(0), { method: 'GET', query: { data: b64(json(EVENT)).replaceAll('+', ' ') } }),
      payload: EVENT,
    },
    { name: 'GET ?data=<json>', req: req('', { method: 'GET', query: { data: json(EVENT) } }), payload: EVENT },
    { name: 'raw body that is strict base64', req: req(b64(json(BATCH)), { contentType: 'text/plain' }), payload: BATCH },
    { name: 'URL-safe base64 without padding', req: req(Buffer.from(json(EVENT)).toString('base64url')), payload: EVENT },
    { name: 'legacy double base64 (second pass)', req: req(b64(b64(json(EVENT)))), payload: EVENT },
    { name: 'gzip whose content is base64 text', req: req(gz(b64(json(EVENT)))), payload: EVENT },
    { name: 'base64 of gzip bytes', req: req('data=' + encodeURIComponent(b64(gzipSync(json(EVENT)))), { contentType: FORM }), payload: EVENT },
    {
      name: 'form body sent as text/plain (sendBeacon string body) is still read as a form',
      req: req('data=' + encodeURIComponent(b64(json(EVENT))), { contentType: 'text/plain;charset=UTF-8' }),
      payload: EVENT,
    },
    {
      name: 'percent-encoded base64 body (Rust capture fallback)',
      req: req(encodeURIComponent(b64(json(EVENT))), { contentType: 'text/plain' }),
      payload: EVENT,
    },
    {
      name: 'mislabelled: ?compression=gzip-js but plain JSON (posthog-js gzip-failure fallback)',
      req: req(json(EVENT), { query: { compression: 'gzip-js' } }),
      payload: EVENT,
    },
    {
      name: 'Content-Encoding: deflate (zlib stream) via the retry-as-compressed path',
      req: req(new Uint8Array(deflateSync(json(EVENT))), { contentEncoding: 'deflate' }),
      payload: EVENT,
    },
    { name: 'UTF-8 BOM before JSON', req: req('\ufeff' + json(EVENT)), payload: EVENT },
    {
      name: 'NaN / Infinity / -Infinity become null, not inside strings',
      req: req('{"a":NaN,"b":[Infinity,-Infinity],"c":"NaN Infinity","d":1}'),
      payload: { a: null, b: [null, null], c: 'NaN Infinity', d: 1 },
    },
    { name: 'scalar JSON is returned as-is', req: req('123'), payload: 123 },
    {
      name: 'form fields are returned for token / sent_at lookup',
      req: req('data=' + encodeURIComponent(json(EVENT)) + '&api_key=phc_form&sent_at=1700000000', { contentType: FORM }),
      payload: EVENT,
      form: { data: json(EVENT), api_key: 'phc_form', sent_at: '1700000000' },
    },
  ];
  for (const c of cases) {
    const r = decodePayload(c.req, MAX);
    if (!r.ok) {
      t.fail(`${c.name}: ${r.code} ${r.detail}`);
      continue;
    }
    t.same(r.payload, c.payload, c.name);
    if (c.form !== undefined) t.same(r.form === null ? null : { ...r.form }, c.form, `${c.name} (form)`);
  }
});

t.test('no form is reported for non-form bodies', async (t) => {
  const r = decodePayload(req(json(EVENT), { contentType: 'application/json' }), MAX);
  t.ok(r.ok && r.form === null);
});

t.test('errors', async (t) => {
  const bomb = gzipSync(Buffer.alloc(5 * MAX, 0x20)); // ~5 KB of gzip inflating to 5 MiB
  const cases: { name: string; req: RawRequest; code: string; detail?: RegExp }[] = [
    { name: 'empty body', req: req(new Uint8Array(0)), code: 'no_data', detail: /^No data found/ },
    { name: 'empty GET without data', req: req(new Uint8Array(0), { method: 'GET', query: { data: '' } }), code: 'no_data' },
    { name: 'form with empty data field', req: req('data=&compression=lz64', { contentType: FORM }), code: 'no_data' },
    { name: 'malformed JSON', req: req('{"event": '), code: 'invalid_payload', detail: /^Malformed request data: / },
    { name: 'not JSON at all', req: req('hello, world!'), code: 'invalid_payload' },
    { name: 'corrupt gzip', req: req(new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4])), code: 'invalid_payload' },
    { name: 'base64 of garbage', req: req(b64('not json')), code: 'invalid_payload' },
    { name: 'gzip bomb (decompressed size over maxBytes)', req: req(new Uint8Array(bomb), { contentEncoding: 'gzip' }), code: 'request_too_large' },
    { name: 'gzip bomb inside base64 form', req: req('data=' + encodeURIComponent(b64(bomb)), { contentType: FORM }), code: 'request_too_large' },
    { name: 'raw body over maxBytes', req: req(json({ x: 'y'.repeat(MAX) })), code: 'request_too_large' },
  ];
  for (const c of cases) {
    const r = decodePayload(c.req, MAX);
    t.equal(r.ok, false, c.name);
    if (r.ok) continue;
    t.equal(r.code, c.code, `${c.name}: code`);
    if (c.detail) t.match(r.detail, c.detail, `${c.name}: detail`);
  }
});

t.test('LZ bomb: lz64 output over maxBytes', async (t) => {
  // 'a' x 40 compresses to 8 characters; a limit of 20 makes it a "bomb".
  const r = decodePayload(req('IY18ZVkA', { query: { compression: 'lz64' } }), 20);
  t.same(r.ok ? 'ok' : r.code, 'request_too_large');
});

t.test('compression hint normalisation', async (t) => {
  const cases: [string | undefined, string][] = [
    [undefined, 'none'], ['', 'none'], ['identity', 'none'],
    ['gzip', 'gzip'], ['GZIP-JS', 'gzip'], ['x-gzip', 'gzip'], ['gzip, identity', 'gzip'],
    ['lz64', 'lz64'], ['LZ-String', 'lz64'], ['base64', 'base64'], ['b64', 'base64'],
    ['br', 'unknown'], ['deflate', 'unknown'],
  ];
  for (const [input, expected] of cases) t.equal(compressionHint(input), expected, String(input));
});

t.test('hint precedence: query, then form, then Content-Encoding', async (t) => {
  // Query says lz64 while the form says base64: the lz64 text must be used as lz64.
  const r = decodePayload(
    req('data=' + encodeURIComponent(EVENT_LZ_B64) + '&compression=base64', { contentType: FORM, query: { compression: 'lz64' }, contentEncoding: 'gzip' }),
    MAX,
  );
  t.same(r.ok && r.payload, EVENT_LZ);
});
