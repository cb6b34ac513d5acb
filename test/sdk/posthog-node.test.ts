// Proof with a real client: the published posthog-node SDK, pointed at Quill, captures, identifies, aliases,
// identifies groups, batches with gzip, evaluates flags remotely and locally (definitions with ETag / 304). Every
// test asserts both what the SDK returned and what Quill stored (events and persons APIs).
import t from 'tap';
import { PostHog, type PostHogOptions } from 'posthog-node';
import { eventually } from '../helpers/eventually.js';
import { personOf, storedEvents } from '../helpers/ingest.js';
import { recordingFetch, type Recorder } from '../helpers/recording-fetch.js';
import { Client, PERSONAL_KEY, PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const SDK_VERSION = '5.70.0';
const FF = '/api/projects/@current/feature_flags/';

const server = quillForFile(t);

/**
 * A client on Quill with a recording fetch (the SDK's own `fetch` option, so every request — batches, /flags/,
 * definitions polls — is recorded exactly as the SDK sent it and answered by Quill itself). Retries are off so a
 * non-2xx answer surfaces as an SDK error (collected and asserted empty) instead of being retried away; the flush
 * timer is long so only the test's own `flush()` / `shutdown()` and the `flushAt` threshold send batches.
 * posthog-node 5.x gzips batches unless `disableCompression` is set; it is spelled out because the tests rely on it.
 */
function client(t: { teardown(fn: () => unknown): void }, options: Partial<PostHogOptions> = {}): { sdk: PostHog; rec: Recorder; errors: unknown[] } {
  const rec = recordingFetch();
  const sdk = new PostHog(PROJECT_KEY, {
    host: server.q.base, fetch: rec.fetch, fetchRetryCount: 0, flushInterval: 60_000, disableCompression: false, ...options,
  });
  const errors: unknown[] = [];
  sdk.on('error', (e: unknown) => errors.push(e));
  t.teardown(() => sdk.shutdown());
  return { sdk, rec, errors };
}

async function createFlag(body: Record<string, unknown>): Promise<{ id: number }> {
  const res = await server.api.post(FF, body);
  if (res.status !== 201) throw new Error(`create flag ${String(body.key)}: ${res.status} ${res.text}`);
  return res.body;
}

const byName = (events: any[], name: string) => events.filter((e) => e.event === name);

t.test('capture: properties, groups, timestamp; batches of flushAt, gzip, flush() and shutdown()', async (t) => {
  // maxBatchSize bounds every request; flushAt alone would let one flush take all 26 queued events.
  const { sdk, rec, errors } = client(t, { flushAt: 10, maxBatchSize: 10 });
  for (let i = 0; i < 25; i++) sdk.capture({ distinctId: 'node-batcher', event: 'batched', properties: { i } });
  sdk.capture({
    distinctId: 'node-buyer', event: 'order placed', timestamp: new Date('2024-05-01T12:00:00.000Z'),
    properties: { amount: 42.5, currency: 'EUR', items: [{ sku: 'a-1', qty: 2 }], gift: false },
    groups: { company: 'acme' },
  });
  await sdk.flush();

  const batches = rec.to('/batch/');
  t.ok(batches.length >= 3, `26 events left in ${batches.length} requests of at most flushAt=10`);
  for (const b of batches) {
    t.equal(b.status, 200, 'Quill accepted the batch');
    t.equal(b.headers['content-encoding'], 'gzip', 'the SDK compressed the body');
    t.same([...b.rawBody!.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic on the wire');
    t.ok(b.json.batch.length >= 1 && b.json.batch.length <= 10, `batch of ${b.json.batch.length}`);
  }
  t.equal(batches.reduce((n, b) => n + b.json.batch.length, 0), 26, 'every event sent once');

  const stored = await storedEvents(server.api, 'node-batcher');
  t.equal(stored.length, 25, 'Quill stored all 25 batched events');
  t.same(stored.map((e) => e.properties.i).sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i));
  t.equal(new Set(stored.map((e) => e.id)).size, 25, 'distinct uuids');
  t.match(stored[0].properties, { $lib: 'posthog-node', $lib_version: SDK_VERSION });

  const [order] = await storedEvents(server.api, 'node-buyer');
  t.match(order, { event: 'order placed', distinct_id: 'node-buyer', elements: [], elements_chain: '' });
  // The batch carries sent_at, so Quill applies PostHog's clock-skew correction (now + timestamp − sent_at): the
  // stored time is the SDK's timestamp shifted by the request's transit time, not exactly equal to it.
  const shift = Date.parse(order.timestamp) - Date.parse('2024-05-01T12:00:00.000Z');
  t.ok(shift >= 0 && shift < 60_000, `the SDK timestamp is kept, skew-corrected by ${shift} ms`);
  t.match(order.properties, { amount: 42.5, currency: 'EUR', items: [{ sku: 'a-1', qty: 2 }], gift: false, $lib: 'posthog-node', $groups: { company: 'acme' } });
  const mapping = (await server.api.get(`${FF}local_evaluation/`)).body.group_type_mapping as Record<string, string>;
  const index = Object.keys(mapping).find((k) => mapping[k] === 'company');
  t.ok(index !== undefined, `the group type "company" was registered: ${JSON.stringify(mapping)}`);
  t.equal(order.properties[`$group_${index}`], 'acme', '$groups → $group_<index>');
  t.same(order.person?.distinct_ids, ['node-buyer'], 'the event carries its person (summarised by its first distinct id)');

  // shutdown() flushes what is still queued.
  sdk.capture({ distinctId: 'node-shutdown', event: 'last words' });
  t.equal((await storedEvents(server.api, 'node-shutdown')).length, 0, 'still queued before shutdown');
  await sdk.shutdown();
  t.same((await storedEvents(server.api, 'node-shutdown')).map((e) => e.event), ['last words'], 'shutdown() flushed the queue');
  t.same(errors, [], 'no SDK errors');
});

t.test('identify merges the anonymous person; $set and $set_once', async (t) => {
  const { sdk, errors } = client(t);
  sdk.capture({ distinctId: 'node-anon-1', event: 'browsed', properties: { $set: { seen_as_anon: true, plan: 'free' } } });
  await sdk.flush();
  const anon = await personOf(server.api, 'node-anon-1');
  t.same(anon.distinct_ids, ['node-anon-1'], 'the anonymous id has its own person first');

  sdk.identify({
    distinctId: 'node-user-1',
    properties: { $set: { email: 'ada@acme.io', plan: 'pro' }, $set_once: { first_plan: 'pro' }, $anon_distinct_id: 'node-anon-1' },
  });
  await sdk.flush();
  const merged = await personOf(server.api, 'node-user-1');
  t.same([...merged.distinct_ids].sort(), ['node-anon-1', 'node-user-1'], 'both ids belong to one person');
  t.equal((await personOf(server.api, 'node-anon-1')).id, merged.id, 'the anonymous id resolves to the merged person');
  t.match(merged.properties, { email: 'ada@acme.io', plan: 'pro', first_plan: 'pro', seen_as_anon: true });

  // A later identify: $set overwrites, $set_once does not; plain properties are $set (the SDK's shorthand).
  sdk.identify({ distinctId: 'node-user-1', properties: { $set: { plan: 'enterprise' }, $set_once: { first_plan: 'ignored' } } });
  sdk.identify({ distinctId: 'node-user-1', properties: { nickname: 'ada' } });
  await sdk.flush();
  t.match((await personOf(server.api, 'node-user-1')).properties, { plan: 'enterprise', first_plan: 'pro', nickname: 'ada' });

  const identifies = byName(await storedEvents(server.api, 'node-user-1'), '$identify');
  t.equal(identifies.length, 3, 'three $identify events stored');
  t.match(identifies[0].properties, { $anon_distinct_id: 'node-anon-1', $set: { email: 'ada@acme.io' }, $lib: 'posthog-node' });
  t.equal(identifies[0].person?.is_identified, true);
  // The events API summarises the person with its first distinct id (PostHog's shape).
  t.same(identifies[0].person.distinct_ids, merged.distinct_ids.slice(0, 1), 'the event resolves to the merged person');
  const anonEvents = await storedEvents(server.api, 'node-anon-1');
  t.equal(anonEvents[0].person?.is_identified, true, 'the anonymous event now resolves to the identified person');
  t.same(errors, []);
});

t.test('alias joins a second distinct id, and merges an anonymous person into the aliased one', async (t) => {
  const { sdk, errors } = client(t);
  sdk.capture({ distinctId: 'node-user-2', event: 'signed up', properties: { $set: { email: 'bob@acme.io' } } });
  sdk.alias({ distinctId: 'node-user-2', alias: 'bob-crm-17' });
  await sdk.flush();
  const person = await personOf(server.api, 'node-user-2');
  t.same([...person.distinct_ids].sort(), ['bob-crm-17', 'node-user-2']);
  t.equal((await personOf(server.api, 'bob-crm-17')).id, person.id);

  // The alias already has its own (anonymous) person: alias merges it into node-user-2's person.
  sdk.capture({ distinctId: 'bob-device-9', event: 'opened app', properties: { $set: { device: 'ios' } } });
  await sdk.flush();
  const device = await personOf(server.api, 'bob-device-9');
  t.not(device.id, person.id, 'two persons before the alias');
  sdk.alias({ distinctId: 'node-user-2', alias: 'bob-device-9' });
  await sdk.flush();
  const after = await personOf(server.api, 'node-user-2');
  t.same([...after.distinct_ids].sort(), ['bob-crm-17', 'bob-device-9', 'node-user-2']);
  t.match(after.properties, { email: 'bob@acme.io', device: 'ios' });
  t.equal((await personOf(server.api, 'bob-device-9')).id, after.id);

  const aliases = byName(await storedEvents(server.api, 'node-user-2'), '$create_alias');
  t.equal(aliases.length, 2);
  t.match(aliases[0].properties, { alias: 'bob-crm-17', distinct_id: 'node-user-2', $lib: 'posthog-node' });
  t.same(errors, []);
});

t.test('groupIdentify stores group properties that group flags evaluate against', async (t) => {
  const { sdk, errors } = client(t);
  sdk.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { name: 'Acme', seats: 120 } });
  sdk.groupIdentify({ groupType: 'company', groupKey: 'tiny', properties: { name: 'Tiny', seats: 3 }, distinctId: 'node-user-3' });
  await sdk.flush();

  const stored = await storedEvents(server.api, '$company_acme');
  t.equal(stored.length, 1, 'without distinctId the SDK uses $<type>_<key>');
  t.match(stored[0], { event: '$groupidentify', properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', seats: 120 } } });
  t.match((await storedEvents(server.api, 'node-user-3'))[0].properties, { $group_type: 'company', $group_key: 'tiny' });

  // The stored group properties are what Quill evaluates group flags with (the SDK sends none of its own here).
  await createFlag({
    key: 'node-big-companies',
    filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'seats', type: 'group', group_type_index: 0, operator: 'gt', value: '50' }], rollout_percentage: 100 }] },
  });
  t.equal(await sdk.getFeatureFlag('node-big-companies', 'anyone', { groups: { company: 'acme' } }), true);
  t.equal(await sdk.getFeatureFlag('node-big-companies', 'anyone', { groups: { company: 'tiny' } }), false);
  t.same(errors, []);
});

t.test('remote flags: values, payloads parsed as JSON, all flags, evaluateFlags, $feature_flag_called', async (t) => {
  await createFlag({ key: 'node-bool', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"tier":"gold","limits":[1,2]}' } } });
  await createFlag({
    key: 'node-multi',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 0 }, { key: 'test', rollout_percentage: 100 }] },
      payloads: { test: '{"color":"green"}', control: '{"color":"grey"}' },
    },
  });
  await createFlag({ key: 'node-off', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
  await createFlag({ key: 'node-acme-only', filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.io' }], rollout_percentage: 100 }] } });

  const { sdk, rec, errors } = client(t);
  // node-user-1 was identified with email ada@acme.io above: Quill's stored person properties decide node-acme-only.
  const id = 'node-user-1';
  t.equal(await sdk.getFeatureFlag('node-bool', id), true);
  t.equal(await sdk.getFeatureFlag('node-multi', id), 'test');
  t.equal(await sdk.getFeatureFlag('node-off', id), false);
  t.equal(await sdk.getFeatureFlag('node-acme-only', id), true, 'stored person property matched');
  t.equal(await sdk.getFeatureFlag('node-acme-only', 'node-stranger'), false);
  t.equal(await sdk.getFeatureFlag('node-acme-only', 'node-stranger', { personProperties: { email: 'x@acme.io' } }), true, 'request person properties');
  t.equal(await sdk.getFeatureFlag('does-not-exist', id), undefined, 'unknown flag');
  t.equal(await sdk.isFeatureEnabled('node-bool', id), true);
  t.equal(await sdk.isFeatureEnabled('node-multi', id), true);
  t.equal(await sdk.isFeatureEnabled('node-off', id), false);
  t.same(await sdk.getFeatureFlagPayload('node-bool', id), { tier: 'gold', limits: [1, 2] }, 'payload parsed as JSON');
  t.same(await sdk.getFeatureFlagPayload('node-multi', id), { color: 'green' }, 'payload of the matched variant');

  const all = await sdk.getAllFlags(id);
  t.match(all, { 'node-bool': true, 'node-multi': 'test', 'node-off': false, 'node-acme-only': true, 'node-big-companies': false });
  const withPayloads = await sdk.getAllFlagsAndPayloads(id);
  t.match(withPayloads.featureFlags, { 'node-multi': 'test' });
  t.same(withPayloads.featureFlagPayloads?.['node-bool'], { tier: 'gold', limits: [1, 2] });
  t.same(withPayloads.featureFlagPayloads?.['node-multi'], { color: 'green' });

  const flags = await sdk.evaluateFlags(id, { flagKeys: ['node-multi', 'node-bool', 'node-off'] });
  t.equal(flags.isEnabled('node-bool'), true);
  t.equal(flags.getFlag('node-multi'), 'test');
  t.equal(flags.isEnabled('node-off'), false);
  t.same(flags.getFlagPayload('node-multi'), { color: 'green' });
  sdk.capture({ distinctId: id, event: 'checkout with flags', flags });
  await sdk.flush();

  const flagRequests = rec.to('/flags/');
  t.ok(flagRequests.length > 0 && flagRequests.every((r) => r.status === 200), 'remote evaluation went to /flags/ and got 200s');
  t.match(flagRequests[0].path, /^\/flags\/\?v=2/);

  const events = await storedEvents(server.api, id);
  const checkout = byName(events, 'checkout with flags')[0];
  t.match(checkout.properties, { '$feature/node-multi': 'test', '$feature/node-bool': true, '$feature/node-off': false });
  t.ok(checkout.properties.$active_feature_flags.includes('node-multi'), '$active_feature_flags');
  const called = byName(events, '$feature_flag_called');
  const calledFor = (key: string) => called.filter((e) => e.properties.$feature_flag === key);
  t.equal(calledFor('node-multi').length, 1, 'one $feature_flag_called per (person, flag, value)');
  t.equal(calledFor('node-multi')[0].properties.$feature_flag_response, 'test');
  t.equal(calledFor('node-bool')[0].properties.$feature_flag_response, true);
  t.same(errors, []);
});

t.test('local evaluation: definitions with a personal key, polling reuses the ETag (304) until a flag changes', async (t) => {
  const flag = await createFlag({
    key: 'node-local-pro',
    filters: { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }], rollout_percentage: 100 }], payloads: { true: '{"local":true}' } },
  });
  // A short poll interval makes the SDK's own poller send the conditional requests; the recording fetch shows
  // each one's If-None-Match and Quill's status. Waiting for an observed 304 (rather than sleeping) keeps this
  // deterministic however the poller's timers line up with the test.
  const { sdk, rec, errors } = client(t, { personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 200 });
  t.equal(await sdk.waitForLocalEvaluationReady(10_000), true, 'definitions loaded from Quill');
  const defs = () => rec.to('/flags/definitions');
  const first = defs()[0]!;
  t.equal(first.status, 200);
  t.equal(first.headers.authorization, `Bearer ${PERSONAL_KEY}`);
  t.notOk('if-none-match' in first.headers, 'the first request is unconditional');
  const etag = first.responseHeaders.etag;
  t.match(etag, /^"[0-9a-f]+"$/, 'Quill sent a strong ETag');

  const notModified = await eventually('a 304 to the poller', () => defs().find((r) => r.status === 304));
  t.equal(notModified.headers['if-none-match'], etag, 'the poll sent back the stored ETag');
  t.equal(notModified.rawBody, null);

  const evalOpts = (plan: string) => ({ personProperties: { plan }, onlyEvaluateLocally: true });
  const flagsBefore = rec.to('/flags/?').length;
  t.equal(await sdk.getFeatureFlag('node-local-pro', 'node-local-a', evalOpts('pro')), true);
  t.equal(await sdk.getFeatureFlag('node-local-pro', 'node-local-a', evalOpts('free')), false);
  t.same(await sdk.getFeatureFlagPayload('node-local-pro', 'node-local-a', true, { onlyEvaluateLocally: true }), { local: true });
  t.match(await sdk.getAllFlags('node-local-a', { personProperties: { plan: 'pro' }, onlyEvaluateLocally: true }), { 'node-local-pro': true });
  t.equal(rec.to('/flags/?').length, flagsBefore, 'no /flags/ request: evaluated locally from the definitions');

  // A change through the API invalidates the ETag: the next poll gets 200 and the new definition.
  const patched = await server.api.patch(`${FF}${flag.id}/`, {
    filters: { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['free'] }], rollout_percentage: 100 }] },
  });
  if (patched.status !== 200) throw new Error(`flag update: ${patched.status} ${patched.text}`);
  const refreshed = await eventually('a 200 with a new ETag', () => defs().find((r) => r.status === 200 && r.responseHeaders.etag !== etag));
  t.equal(refreshed.headers['if-none-match'], etag, 'it was a conditional request');
  await eventually('the SDK to apply the new definition', async () =>
    (await sdk.getFeatureFlag('node-local-pro', 'node-local-a', evalOpts('free'))) === true);
  t.equal(await sdk.getFeatureFlag('node-local-pro', 'node-local-a', evalOpts('pro')), false);

  // Quill agrees with the SDK's local answer.
  const remote = await new Client(server.q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'node-local-a', person_properties: { plan: 'free' } });
  t.equal(remote.body.flags['node-local-pro'].enabled, true);
  t.same(errors, []);
});

t.test('remote config: getRemoteConfigPayload reads a remote-configuration flag; other flags get PostHog\'s bare 404', async (t) => {
  await createFlag({
    key: 'node-remote-config', is_remote_configuration: true,
    filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"theme":"dark","limits":[1,2]}' } },
  });
  await createFlag({ key: 'node-remote-config-empty', is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  await createFlag({ key: 'node-not-remote-config', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"x":1}' } } });
  const { sdk, rec, errors } = client(t, { personalApiKey: PERSONAL_KEY, enableLocalEvaluation: false });

  t.same(await sdk.getRemoteConfigPayload('node-remote-config'), { theme: 'dark', limits: [1, 2] }, 'the payload, parsed');
  const [asked] = rec.to('/api/projects/@current/feature_flags/node-remote-config/remote_config');
  t.match(asked, { method: 'GET', status: 200, headers: { authorization: `Bearer ${PERSONAL_KEY}` } });
  t.equal(new URL(asked!.path, 'http://x').searchParams.get('token'), PROJECT_KEY, 'the SDK names the project by its key');
  t.equal(await sdk.getRemoteConfigPayload('node-remote-config-empty'), null, 'no payload: null');

  // PostHog answers a flag that is not a remote configuration (or none at all) with an empty 404, which this SDK
  // version does not check before parsing: it throws instead of handing an error body over as the payload.
  await t.rejects(sdk.getRemoteConfigPayload('node-not-remote-config'), SyntaxError);
  await t.rejects(sdk.getRemoteConfigPayload('node-no-such-flag'), SyntaxError);
  t.same(rec.to('/api/projects/@current/feature_flags/node-n').map((r) => r.status), [404, 404]);

  // Remote-configuration flags are evaluated by /flags/ like any boolean flag (PostHog serves their plaintext
  // payload there too) and are left out of the local-evaluation definitions.
  t.same(await sdk.getFeatureFlagPayload('node-remote-config', 'node-rc-user'), { theme: 'dark', limits: [1, 2] });
  const defs = await server.api.get(`/flags/definitions?token=${PROJECT_KEY}`);
  t.notOk(defs.body.flags.some((f: { key: string }) => f.key.startsWith('node-remote-config')), 'not in the definitions');
  t.ok(defs.body.flags.some((f: { key: string }) => f.key === 'node-not-remote-config'), 'other flags are');
  t.same(errors, []);
});
