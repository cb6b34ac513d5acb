// Flag changes pushed: GET /flags/stream as Server-Sent Events. A raw client checks the events (the
// version on connect equals the definitions' ETag, a PATCH arrives with its key, Last-Event-ID resumes with exactly
// the missed events, errors are PostHog's 401 bodies, the browser stream only says "changed"); then the real
// posthog-node SDK, evaluating locally, reloads its definitions on each event and the time from a PATCH's answer
// to the SDK's new answer is measured.
import t from 'tap';
import { PostHog } from 'posthog-node';
import { Client, PERSONAL_KEY, PROJECT_KEY, quillForFile } from '../helpers/quill.js';
import { SseStream, type SseEvent } from '../helpers/sse.js';
import { eventually } from '../helpers/eventually.js';

const FF = '/api/projects/@current/feature_flags/';
const METRICS_TOKEN = 'flag-stream-metrics';
const server = quillForFile(t, { env: { QUILL_METRICS_TOKEN: METRICS_TOKEN } });

const streamUrl = (token = PROJECT_KEY) => `${server.q.base}/flags/stream?token=${token}`;
const bearer = { authorization: `Bearer ${PERSONAL_KEY}` };
const definitionsEtag = async () => (await server.api.get(`/flags/definitions?token=${PROJECT_KEY}`)).headers.get('etag');

async function serverStream(t: Tap.Test, headers: Record<string, string> = {}): Promise<SseStream> {
  const s = await SseStream.open(streamUrl(), { ...bearer, ...headers });
  t.teardown(() => s.close());
  return s;
}

/** The next event of `name`, skipping none: an event of another name fails the test. */
async function expectEvent(t: Tap.Test, s: SseStream, name: string): Promise<SseEvent & { json: any }> {
  const e = await s.next();
  t.equal(e.event, name, `a ${name} event`);
  return { ...e, json: JSON.parse(e.data) };
}

t.test('server stream: version on connect, changes with their keys, resume with Last-Event-ID', async (t) => {
  const flag = (await server.api.post(FF, { key: 'stream-a', active: false })).body;
  const other = (await server.api.post(FF, { key: 'stream-b' })).body;

  const s = await serverStream(t);
  t.equal(s.status, 200);
  t.match(s.headers.get('content-type'), /^text\/event-stream/);
  t.equal(s.headers.get('cache-control'), 'no-cache, no-transform');
  const hello = await expectEvent(t, s, 'version');
  t.equal(hello.json.version, await definitionsEtag(), 'the version is the ETag of /flags/definitions');
  t.match(hello.id, /^[0-9a-z]+-\d+$/);

  const patched = await server.api.patch(`${FF}${flag.id}/`, { active: true });
  t.equal(patched.status, 200);
  const change = await expectEvent(t, s, 'change');
  t.same(change.json.keys, ['stream-a'], 'the changed key');
  t.equal(change.json.version, await definitionsEtag(), 'the new version is the new ETag');
  t.not(change.json.version, hello.json.version);

  // A second client keeps the project watched while the first is away, so each change is its own event.
  const watcher = await serverStream(t);
  await expectEvent(t, watcher, 'version');
  const resumeFrom = change.id;
  s.close();
  await server.api.patch(`${FF}${other.id}/`, { filters: { groups: [{ properties: [], rollout_percentage: 30 }] } });
  const missed1 = await expectEvent(t, watcher, 'change');
  await server.api.patch(`${FF}${flag.id}/`, { active: false });
  const missed2 = await expectEvent(t, watcher, 'change');
  t.same([missed1.json.keys, missed2.json.keys], [['stream-b'], ['stream-a']]);

  const resumed = await serverStream(t, { 'last-event-id': resumeFrom });
  const r1 = await resumed.next();
  const r2 = await resumed.next();
  t.same([r1, r2], [
    { id: missed1.id, event: 'change', data: missed1.data },
    { id: missed2.id, event: 'change', data: missed2.data },
  ], 'exactly the missed events, with their ids');
  t.ok(await resumed.quietFor(300), 'and nothing else (no version event on a resume)');

  const upToDate = await serverStream(t, { 'last-event-id': missed2.id });
  t.ok(await upToDate.quietFor(300), 'a client that missed nothing gets nothing');

  // Live changes keep coming on a resumed stream; an update that changes nothing the definitions carry sends nothing.
  await server.api.patch(`${FF}${flag.id}/`, { active: true });
  t.same((await expectEvent(t, resumed, 'change')).json.keys, ['stream-a']);
  t.same((await expectEvent(t, upToDate, 'change')).json.keys, ['stream-a']);

  for (const stale of ['0-1', 'garbage', `${resumeFrom.split('-')[0]}-999999`]) {
    const reset = await serverStream(t, { 'last-event-id': stale });
    const e = await expectEvent(t, reset, 'reset');
    t.equal(e.json.version, await definitionsEtag(), `Last-Event-ID ${stale}: reset with the current version`);
    reset.close();
  }
  watcher.close();
  resumed.close();
  upToDate.close();
});

t.test('a change made while no stream was open reaches a client resuming later', async (t) => {
  const flag = (await server.api.post(FF, { key: 'stream-c', active: false })).body;
  const s = await serverStream(t);
  const hello = await expectEvent(t, s, 'version');
  s.close();
  await server.api.patch(`${FF}${flag.id}/`, { active: true });
  await server.api.post(FF, { key: 'stream-d' });
  const back = await serverStream(t, { 'last-event-id': hello.id });
  const e = await expectEvent(t, back, 'change');
  t.same(e.json.keys, ['stream-c', 'stream-d'], 'both changes, in one event');
  t.equal(e.json.version, await definitionsEtag());
  back.close();
});

t.test('unauthorized and forbidden streams answer with PostHog error bodies', async (t) => {
  const badKey = await SseStream.open(streamUrl(), { authorization: 'Bearer phx_not_a_key' });
  t.equal(badKey.status, 401);
  t.match(JSON.parse(badKey.body), { type: 'authentication_error', code: 'invalid_personal_api_key' });
  const badToken = await SseStream.open(streamUrl('phc_unknown'), bearer);
  t.equal(badToken.status, 401, 'a project token that is not one');
  const browserBad = await SseStream.open(streamUrl('phc_unknown'));
  t.equal(browserBad.status, 401);
  t.match(JSON.parse(browserBad.body), { type: 'authentication_error', code: 'invalid_api_key' });
  const none = await SseStream.open(`${server.q.base}/flags/stream`);
  t.equal(none.status, 401, 'no credentials at all');
  t.match(JSON.parse(none.body), { type: 'authentication_error' });

  const narrow = await server.api.post('/api/personal_api_keys/', { label: 'no flags', scopes: ['insight:read'] });
  t.equal(narrow.status, 201);
  const forbidden = await SseStream.open(streamUrl(), { authorization: `Bearer ${narrow.body.value}` });
  t.equal(forbidden.status, 403, 'a key without feature_flag:read');
});

t.test('browser stream (project API key): only "changed", CORS open', async (t) => {
  const flag = (await server.api.post(FF, { key: 'stream-browser', active: false })).body;
  const b = await SseStream.open(streamUrl(), { origin: 'https://shop.example' });
  t.teardown(() => b.close());
  t.equal(b.status, 200);
  t.equal(b.headers.get('access-control-allow-origin'), 'https://shop.example');
  t.ok(await b.quietFor(300), 'no event on connect');
  t.match(b.lastEventId, /^[0-9a-z]+-\d+$/, 'but an id to resume from');
  const since = b.lastEventId;
  await server.api.patch(`${FF}${flag.id}/`, { active: true });
  const e = await b.next();
  t.same({ event: e.event, data: e.data }, { event: 'changed', data: '{}' }, 'no version, no keys');
  b.close();

  await server.api.patch(`${FF}${flag.id}/`, { active: false });
  const again = await SseStream.open(streamUrl(), { 'last-event-id': since });
  t.teardown(() => again.close());
  t.equal((await again.next()).event, 'changed', 'a browser that missed changes hears of them once on reconnect');
  t.ok(await again.quietFor(200));
  again.close();
});

t.test('posthog-node with local evaluation follows the stream', async (t) => {
  const key = 'stream-sdk';
  const flag = (await server.api.post(FF, { key, active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).body;
  const sdk = new PostHog(PROJECT_KEY, { host: server.q.base, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 600_000, disableGeoip: true, flushAt: 1 });
  t.teardown(() => sdk.shutdown());
  t.equal(await sdk.waitForLocalEvaluationReady(10_000), true);
  const enabled = async () => sdk.isFeatureEnabled(key, 'user-1', { onlyEvaluateLocally: true });
  t.equal(await enabled(), false);

  // The recipe of src/front/README.md: reload the definitions on every event (one reload at a time, another if events
  // arrived meanwhile), then see whether the waiting check is satisfied.
  let waiter: { want: boolean; seen: (at: number) => void } | null = null;
  let reloading = false;
  let again = false;
  const reload = async () => {
    if (reloading) {
      again = true;
      return;
    }
    reloading = true;
    try {
      do {
        again = false;
        await sdk.reloadFeatureFlags();
        if (waiter && (await enabled()) === waiter.want) waiter.seen(performance.now());
      } while (again);
    } finally {
      reloading = false;
    }
  };
  const stream = await SseStream.open(streamUrl(), bearer, (e) => {
    if (e.event === 'change' || e.event === 'reset') void reload();
  });
  t.teardown(() => stream.close());
  await stream.next();

  const latencies: number[] = [];
  let state = false;
  for (let i = 0; i < 20; i++) {
    state = !state;
    const seen = new Promise<number>((resolve) => (waiter = { want: state, seen: resolve }));
    const res = await server.api.patch(`${FF}${flag.id}/`, { active: state });
    const answered = performance.now();
    t.equal(res.status, 200);
    const at = await Promise.race([seen, new Promise<number>((_, reject) => setTimeout(() => reject(new Error(`change ${i} not seen within 5 s`)), 5000))]);
    latencies.push(Math.max(0, at - answered));
    waiter = null;
    t.equal(await enabled(), state, `change ${i}: the SDK answers ${state}`);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  t.comment(`PATCH answered -> posthog-node isFeatureEnabled reflects it, ${latencies.length} changes: p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`);
  t.ok(pct(99) < 5000, 'within the generous bound');
});

t.test('a client that leaves is forgotten (quill_flag_streams_open)', async (t) => {
  const open = async () => {
    const text = (await new Client(server.q.base, METRICS_TOKEN).get('/metrics')).text;
    return Number(/^quill_flag_streams_open (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  await eventually('earlier streams closed', async () => (await open()) === 0, { timeoutMs: 5000, intervalMs: 50 });
  const clients = await Promise.all([SseStream.open(streamUrl(), bearer), SseStream.open(streamUrl()), SseStream.open(streamUrl(), bearer)]);
  await Promise.all([clients[0]!.next(), clients[2]!.next()]);
  t.equal(await open(), 3);
  for (const c of clients) c.close();
  t.ok(await eventually('the server sees them leave', async () => (await open()) === 0, { timeoutMs: 5000, intervalMs: 50 }));
});

t.test('shutdown ends open streams and still exits 0', async (t) => {
  const s = await serverStream(t);
  await expectEvent(t, s, 'version');
  const b = await SseStream.open(streamUrl());
  t.teardown(() => b.close());
  const began = Date.now();
  t.equal(await server.q.stop(), 0, 'SIGTERM drains and exits 0 with streams open');
  // Streams end before the drain, which has its own bounds (10 s, then 5 s of apply): a hung stream would hold it for good.
  t.ok(Date.now() - began < 45_000, `promptly (${Date.now() - began} ms; bound: the drain's 15 s + 30 s margin)`);
  await new Promise((r) => setTimeout(r, 50));
  t.ok(s.isEnded && b.isEnded, 'both streams ended');
});
