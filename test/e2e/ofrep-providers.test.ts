// OFREP (OpenFeature's remote evaluation protocol) through OpenFeature's own SDKs and OFREP providers: the server
// provider (@openfeature/ofrep-provider with @openfeature/server-sdk, one request per evaluation) and the web
// provider (@openfeature/ofrep-web-provider with @openfeature/web-sdk, bulk evaluation, polling with ETag), both
// in Node. Every kind of flag, a missing one, a disabled one, a variant with its payload, a change seen by the web
// provider, the protocol's errors, and that the evaluations count as uses of the flags.
import t from 'tap';
import { OpenFeature as ServerFeature, type Client as ServerClient } from '@openfeature/server-sdk';
import { OpenFeature as WebFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const FF = '/api/projects/@current/feature_flags/';
const ids: Record<string, number> = {};

t.before(async () => {
  const flags = [
    { key: 'bool-on', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    { key: 'acme-only', filters: { groups: [{ properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }], rollout_percentage: 100 }] } },
    { key: 'half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } },
    {
      key: 'checkout', name: 'Checkout experiment',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] },
        payloads: { test: '{"button":"green"}', control: '{"button":"grey"}' },
      },
    },
    { key: 'switched-off', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    { key: 'retry-limit', is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '42' } } },
    { key: 'theme', is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"color":"blue","size":3}' } } },
  ];
  for (const flag of flags) {
    const res = await server.api.post(FF, flag);
    if (res.status !== 201) throw new Error(`creating ${flag.key}: ${res.status} ${res.text}`);
    ids[flag.key] = res.body.id;
  }
});

const raw = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Client(server.q.base, null).post(path, body, { authorization: `Bearer ${PROJECT_KEY}`, ...headers });

t.test('the server provider evaluates every kind of flag, one request each', async (t) => {
  const clients: [string, ServerClient][] = [];
  for (const [label, headers] of [['Bearer', [['Authorization', `Bearer ${PROJECT_KEY}`]]], ['X-API-Key', [['X-API-Key', PROJECT_KEY]]]] as const) {
    const domain = `quill-${label}`;
    await ServerFeature.setProviderAndWait(domain, new OFREPProvider({ baseUrl: server.q.base, headers: headers as unknown as [string, string][] }));
    clients.push([label, ServerFeature.getClient(domain)]);
  }
  t.teardown(() => ServerFeature.close());
  // What /flags/ says for the same person: OFREP must agree with it.
  const flags = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'user-7', person_properties: { email: 'ann@acme.com' } });
  const variant = flags.body.flags.checkout.variant as string;
  const half = flags.body.flags.half.enabled as boolean;
  for (const [label, client] of clients) {
    const ctx = { targetingKey: 'user-7', email: 'ann@acme.com' };
    t.match(await client.getBooleanDetails('bool-on', false, ctx), { value: true, reason: 'STATIC' }, `${label}: a flag on for everyone`);
    t.match(await client.getBooleanDetails('acme-only', false, ctx), { value: true, reason: 'TARGETING_MATCH' }, `${label}: a targeted flag, matched`);
    t.match(await client.getBooleanDetails('acme-only', true, { targetingKey: 'user-7', email: 'bob@else.com' }), { value: false, reason: 'DEFAULT' }, `${label}: not matched`);
    t.match(await client.getBooleanDetails('half', !half, ctx), { value: half, reason: 'SPLIT' }, `${label}: a partial rollout, as /flags/ answers it`);
    const multi = await client.getStringDetails('checkout', 'none', ctx);
    t.match(multi, { value: variant, variant, reason: 'SPLIT', flagMetadata: { payload: variant === 'test' ? '{"button":"green"}' : '{"button":"grey"}', description: 'Checkout experiment', version: 1 } }, `${label}: a variant with its payload`);
    t.match(await client.getBooleanDetails('switched-off', true, ctx), { value: false, reason: 'DISABLED' }, `${label}: a disabled flag`);
    t.match(await client.getNumberDetails('retry-limit', 0, ctx), { value: 42 }, `${label}: a number (a remote-configuration flag's payload)`);
    t.match(await client.getObjectDetails('theme', {}, ctx), { value: { color: 'blue', size: 3 } }, `${label}: an object`);
    t.match(await client.getBooleanDetails('no-such-flag', true, ctx), { value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' }, `${label}: a missing flag gives the default`);
    t.match(await client.getBooleanDetails('bool-on', false, { email: 'x' }), { value: false, reason: 'ERROR', errorCode: 'TARGETING_KEY_MISSING' }, `${label}: no targeting key`);
  }
});

t.test('the web provider evaluates in bulk, polls with the ETag and sees a change', async (t) => {
  const statuses: number[] = [];
  const recordingFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await fetch(input, init);
    statuses.push(res.status);
    return res;
  };
  await WebFeature.setContext({ targetingKey: 'user-7', email: 'ann@acme.com' });
  const provider = new OFREPWebProvider({ baseUrl: server.q.base, headers: [['X-API-Key', PROJECT_KEY]], pollInterval: 100, cacheMode: 'disabled', fetchImplementation: recordingFetch });
  await WebFeature.setProviderAndWait(provider);
  t.teardown(() => WebFeature.close());
  const client = WebFeature.getClient();
  t.match(client.getBooleanDetails('bool-on', false), { value: true, reason: 'STATIC' });
  t.match(client.getBooleanDetails('acme-only', false), { value: true, reason: 'TARGETING_MATCH' });
  t.match(client.getStringDetails('checkout', 'none'), { value: /^(control|test)$/, flagMetadata: { payload: /button/ } });
  t.match(client.getBooleanDetails('switched-off', true), { value: false, reason: 'DISABLED' }, 'disabled flags are in the bulk answer');
  t.match(client.getNumberDetails('retry-limit', 0), { value: 42 });
  t.match(client.getObjectDetails('theme', {}), { value: { color: 'blue', size: 3 } });
  t.match(client.getBooleanDetails('no-such-flag', true), { value: true, errorCode: 'FLAG_NOT_FOUND' });

  await eventually('the poller to be answered 304 (nothing changed)', () => statuses.includes(304));
  let changed = 0;
  client.addHandler(ProviderEvents.ConfigurationChanged, () => changed++);
  const patch = await server.api.patch(`${FF}${ids['bool-on']}/`, { active: false });
  t.equal(patch.status, 200);
  await eventually('the web provider to see the flag switched off', () => client.getBooleanDetails('bool-on', true).reason === 'DISABLED');
  t.equal(client.getBooleanValue('bool-on', true), false);
  t.ok(changed >= 1, 'ConfigurationChanged was emitted');
  await server.api.patch(`${FF}${ids['bool-on']}/`, { active: true });
});

t.test('the bulk answer has a strong ETag and answers 304 to it', async (t) => {
  const body = { context: { targetingKey: 'etag-user' } };
  const first = await raw('/ofrep/v1/evaluate/flags', body);
  t.equal(first.status, 200);
  const etag = first.headers.get('etag');
  t.match(etag, /^"[A-Za-z0-9_-]+"$/);
  t.equal(first.headers.get('access-control-expose-headers'), 'ETag');
  t.same(first.body.flags.map((f: { key: string }) => f.key).sort(), Object.keys(ids).sort(), 'every live flag, disabled ones included');
  const again = await raw('/ofrep/v1/evaluate/flags', body, { 'if-none-match': etag! });
  t.equal(again.status, 304);
  const other = await raw('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'etag-user', email: 'x@acme.com' } }, { 'if-none-match': etag! });
  t.equal(other.status, 200, 'another context answers otherwise: a new body and tag');
  t.not(other.headers.get('etag'), etag);
});

t.test('protocol errors in OFREP\'s shape (and the usual one)', async (t) => {
  const notJson = await new Client(server.q.base, null).post('/ofrep/v1/evaluate/flags/bool-on', '{"context": nope', { authorization: `Bearer ${PROJECT_KEY}`, 'content-type': 'application/json' });
  t.match(notJson, { status: 400, body: { key: 'bool-on', errorCode: 'PARSE_ERROR', errorDetails: String, type: 'validation_error', code: 'parse_error' } });
  t.match(await raw('/ofrep/v1/evaluate/flags/bool-on', { context: {} }), { status: 400, body: { key: 'bool-on', errorCode: 'TARGETING_KEY_MISSING' } });
  t.match(await raw('/ofrep/v1/evaluate/flags/bool-on', { context: [1] }), { status: 400, body: { errorCode: 'INVALID_CONTEXT' } });
  t.match(await raw('/ofrep/v1/evaluate/flags/bool-on', { context: { targetingKey: 7 } }), { status: 400, body: { errorCode: 'INVALID_CONTEXT' } });
  t.match(await raw('/ofrep/v1/evaluate/flags/bool-on', { context: { targetingKey: 'u', groups: 'x' } }), { status: 400, body: { errorCode: 'INVALID_CONTEXT' } });
  t.match(await raw('/ofrep/v1/evaluate/flags', { context: {} }), { status: 400, body: { errorCode: 'TARGETING_KEY_MISSING' } });
  t.match(await raw('/ofrep/v1/evaluate/flags/nope', { context: { targetingKey: 'u' } }), { status: 404, body: { key: 'nope', errorCode: 'FLAG_NOT_FOUND' } });
  const anonymous = new Client(server.q.base, null);
  t.equal((await anonymous.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u' } })).status, 401, 'no key');
  t.equal((await anonymous.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u' } }, { 'x-api-key': 'phc_nope' })).status, 401, 'an unknown key');
  t.equal((await anonymous.post('/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u' } }, { authorization: 'Bearer phc_nope' })).status, 401);
});

t.test('OFREP evaluations count as uses of the flags', async (t) => {
  const before = (await server.api.get(`${FF}${ids.theme}/usage/?days=1`)).body.total.evaluations as number;
  for (let i = 0; i < 3; i++) t.equal((await raw('/ofrep/v1/evaluate/flags/theme', { context: { targetingKey: `counted-${i}` } })).status, 200);
  const usage = await server.api.get(`${FF}${ids.theme}/usage/?days=1`);
  t.equal(usage.status, 200);
  t.equal(usage.body.total.evaluations, before + 3, 'read after the evaluations: every worker wrote its counts first');
  t.match(usage.body, { results: [{ date: new Date().toISOString().slice(0, 10) }], last_called_at: String, status: 'active' });
});
