// /decide/ and /flags/: response shapes per version, body encodings, token aliases, errors, and PostHog's 2000
// published hash vectors through both endpoints.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { Client, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const vectors = JSON.parse(readFileSync(new URL('../vectors/flag-vectors.json', import.meta.url), 'utf8'));
const server = quillForFile(t);
const FF = '/api/projects/@current/feature_flags/';

t.before(async () => {
  for (const def of [vectors.simple_flag.flag_definition, vectors.multivariate_flag.flag_definition]) {
    const res = await server.api.post(FF, { key: def.key, filters: def.filters, active: true });
    if (res.status !== 201) throw new Error(`flag create failed: ${res.text}`);
  }
  await server.api.post(FF, { key: 'with-payload', filters: { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"color":"blue"}' } } });
  await server.api.post(FF, { key: 'off-for-all', filters: { groups: [{ rollout_percentage: 0 }] } });
  await server.api.post(FF, { key: 'inactive', active: false, filters: { groups: [{ rollout_percentage: 100 }] } });
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  new Client(server.q.base, null).post(path, body, headers);

t.test('2000 published vectors through /flags/?v=2 and /decide/?v=3', async (t) => {
  const ids = Array.from({ length: 1000 }, (_, i) => `distinct_id_${i}`);
  const simpleMismatch: string[] = [];
  const multiMismatch: string[] = [];
  for (let start = 0; start < ids.length; start += 50) {
    await Promise.all(ids.slice(start, start + 50).map(async (id, k) => {
      const i = start + k;
      const flags = await post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: id });
      const decide = await post('/decide/?v=3', { api_key: PROJECT_KEY, distinct_id: id });
      const expectSimple = vectors.simple_flag.results[i];
      const expectMulti = vectors.multivariate_flag.results[i];
      if (flags.body.flags['simple-flag'].enabled !== expectSimple || decide.body.featureFlags['simple-flag'] !== expectSimple) simpleMismatch.push(id);
      const multi = flags.body.flags['multivariate-flag'];
      const gotMulti = multi.enabled ? multi.variant : false;
      if (gotMulti !== expectMulti || decide.body.featureFlags['multivariate-flag'] !== expectMulti) multiMismatch.push(id);
    }));
  }
  t.same(simpleMismatch, [], 'simple-flag: all 1000 vectors match');
  t.same(multiMismatch, [], 'multivariate-flag: all 1000 vectors match');
});

t.test('response shape of every version', async (t) => {
  const body = { token: PROJECT_KEY, distinct_id: 'distinct_id_1' };
  const v1 = await post('/decide/', body);
  t.equal(v1.status, 200);
  t.match(v1.body, {
    config: { enable_collect_everything: true }, editorParams: {}, isAuthenticated: false,
    supportedCompression: ['gzip', 'gzip-js', 'lz64'], requestId: /^[0-9a-f-]{36}$/,
  });
  t.same(v1.body.featureFlags.sort(), ['multivariate-flag', 'simple-flag', 'with-payload'].sort(), 'v1: enabled keys only');

  const v2 = await post('/decide/?v=2', body);
  t.same(v2.body.featureFlags, { 'simple-flag': true, 'multivariate-flag': 'second-variant', 'with-payload': true }, 'v2: enabled values');

  const v3 = await post('/decide/?v=3', body);
  t.same(v3.body.featureFlags, { 'simple-flag': true, 'multivariate-flag': 'second-variant', 'with-payload': true, 'off-for-all': false });
  t.same(v3.body.featureFlagPayloads, { 'with-payload': '{"color":"blue"}' });
  t.equal(v3.body.errorsWhileComputingFlags, false);
  t.notOk('inactive' in v3.body.featureFlags, 'inactive flags are omitted');

  const v4 = await post('/decide/?v=4', body);
  t.match(v4.body.flags['with-payload'], {
    key: 'with-payload', enabled: true, variant: null,
    reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    metadata: { id: Number, version: 1, payload: '{"color":"blue"}' },
  });
  t.match(v4.body.flags['off-for-all'], { enabled: false, reason: { code: 'out_of_rollout_bound', condition_index: 0 } });

  const f1 = await post('/flags/?v=1', body);
  t.same(f1.body.featureFlags, v3.body.featureFlags, '/flags v1 = decide v3');
  t.notOk('config' in f1.body);
  const f2 = await post('/flags/?v=2', body);
  t.same(Object.keys(f2.body.flags).sort(), ['multivariate-flag', 'off-for-all', 'simple-flag', 'with-payload']);
  t.notOk('config' in f2.body, 'no config without config=true');
  const f2c = await post('/flags/?v=2&config=true', body);
  t.match(f2c.body, { config: { enable_collect_everything: true }, supportedCompression: Array, flags: Object });
  const bare = await post('/flags/', body);
  t.match(bare.body, { config: Object, flags: Object }, 'no v and no config = v2 with config');

  const keysOnly = await post('/flags/?v=2', { ...body, flag_keys_to_evaluate: ['simple-flag'] });
  t.same(Object.keys(keysOnly.body.flags), ['simple-flag']);
  const disabled = await post('/flags/?v=2', { ...body, disable_flags: true });
  t.same(disabled.body.flags, {});
});

t.test('body encodings and token aliases', async (t) => {
  const payload = { distinct_id: 'distinct_id_1' };
  const expect = (res: { status: number; body: any }, label: string) => {
    t.equal(res.status, 200, label);
    t.equal(res.body.featureFlags?.['simple-flag'], true, label);
  };
  expect(await post('/decide/?v=3', { ...payload, token: PROJECT_KEY }), 'token');
  expect(await post('/decide/?v=3', { ...payload, api_key: PROJECT_KEY }), 'api_key');
  expect(await post('/decide/?v=3', { ...payload, $token: PROJECT_KEY }), '$token');
  const json = JSON.stringify({ ...payload, token: PROJECT_KEY });
  expect(await post('/decide/?v=3', gzipSync(json), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 'gzip header');
  expect(await post('/decide/?v=3&compression=gzip-js', gzipSync(json), { 'content-type': 'text/plain' }), 'gzip-js param');
  expect(await post('/decide/?v=3', gzipSync(json), { 'content-type': 'text/plain' }), 'gzip magic bytes');
  const b64 = Buffer.from(json).toString('base64');
  expect(await post('/decide/?v=3&compression=base64', `data=${encodeURIComponent(b64)}`, { 'content-type': 'application/x-www-form-urlencoded' }), 'form base64');
  expect(await post('/decide/?v=3', b64, { 'content-type': 'text/plain' }), 'bare base64');
  expect(await post('/flags/?v=1', gzipSync(json), { 'content-type': 'text/plain' }), '/flags gzip');
});

t.test('errors', async (t) => {
  const missingId = await post('/flags/?v=2', { token: PROJECT_KEY });
  t.equal(missingId.status, 400);
  t.same(missingId.body, { type: 'validation_error', code: 'missing_distinct_id', detail: 'Decide requires a distinct_id.', attr: null });
  const noKey = await post('/decide/', { distinct_id: 'x' });
  t.equal(noKey.status, 401);
  t.match(noKey.body, { type: 'authentication_error', code: 'no_api_key' });
  const badKey = await post('/flags/?v=2', { token: 'phc_wrong', distinct_id: 'x' });
  t.equal(badKey.status, 401);
  t.same(badKey.body, { type: 'authentication_error', code: 'invalid_api_key', detail: 'Project API key invalid. You can find your project API key in the Quill console under Settings (/console/), or in what Quill printed at its first start.', attr: null });
  const malformed = await post('/decide/', '{"token":', { 'content-type': 'application/json' });
  t.equal(malformed.status, 400);
  t.match(malformed.body, { type: 'validation_error', code: 'malformed_data' });
  const get = await fetch(`${server.q.base}/decide/`);
  t.equal(get.status, 200);
  t.match(await get.json(), { config: { enable_collect_everything: true }, featureFlags: [] });
  const numericId = await post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 12345 });
  t.equal(numericId.status, 200, 'numeric distinct ids are stringified');
});

t.test('remote config for posthog-js', async (t) => {
  const res = await fetch(`${server.q.base}/array/${PROJECT_KEY}/config`);
  t.equal(res.status, 200);
  t.match(await res.json(), { token: PROJECT_KEY, hasFeatureFlags: true, supportedCompression: Array, sessionRecording: false });
  const js = await fetch(`${server.q.base}/array/${PROJECT_KEY}/config.js`);
  t.equal(js.headers.get('content-type'), 'application/javascript');
  t.match(await js.text(), /window\._POSTHOG_REMOTE_CONFIG\[/);
  t.equal((await fetch(`${server.q.base}/array/phc_unknown/config`)).status, 401);
});
