// Proof with a real client: the published posthog-js bundle in headless Chromium, on a page served from one
// origin, talking to Quill on another. Covers remote config (JSON and preloaded config.js), /flags/ with
// onFeatureFlags, $pageview, capture with gzip bodies, autocapture of a nested button, identify merging the
// anonymous person, reset, sendBeacon on page unload, and the HTML snippet loading array.js (and its extensions)
// from Quill, and the flag-stream recipe (EventSource + reloadFeatureFlags). Assertions read what Quill stored.
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Page, Request } from 'playwright-core';
import { chromiumUnavailable, launchChromium, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { eventually } from '../helpers/eventually.js';
import { personOf, storedEvents } from '../helpers/ingest.js';
import { Client, PROJECT_KEY, type QuillProcess, ROOT, removeDir, startQuill } from '../helpers/quill.js';
import { serveStaticSite, type StaticSite } from '../helpers/static-site.js';

const SDK_VERSION = '1.449.2';
/** The full bundle without external dependencies: everything the tests use is inside it, nothing is fetched from a CDN. */
const BUNDLE = `${ROOT}/node_modules/posthog-js/dist/array.full.no-external.js`;
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const FF = '/api/projects/@current/feature_flags/';

declare global {
  interface Window {
    posthog: any;
    __quill: { loaded: boolean; flagCalls: { flags: string[]; variants: Record<string, string | boolean> }[] };
  }
}

interface SeenRequest {
  url: string;
  method: string;
  resourceType: string;
  body: Buffer | null;
  status?: number;
  responseHeaders?: Record<string, string>;
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the posthog-js browser suite', unavailable);
else browserSuite();

function browserSuite(): void {
  let q: QuillProcess;
  let api: Client;
  let site: StaticSite;
  let browser: Chromium;

  t.before(async () => {
    q = await startQuill();
    api = new Client(q.base);
    // Flags exist before any page loads, so the remote config says hasFeatureFlags and the SDK asks /flags/.
    for (const flag of [
      {
        key: 'browser-multi',
        filters: {
          groups: [{ properties: [], rollout_percentage: 100 }],
          multivariate: { variants: [{ key: 'control', rollout_percentage: 0 }, { key: 'test', rollout_percentage: 100 }] },
          payloads: { test: '{"color":"blue","sizes":[1,2]}' },
        },
      },
      { key: 'browser-off', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } },
      { key: 'browser-acme', filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.io' }], rollout_percentage: 100 }] } },
    ]) {
      const res = await api.post(FF, flag);
      if (res.status !== 201) throw new Error(`create ${flag.key}: ${res.text}`);
    }
    site = await serveStaticSite({ dir: FIXTURES, extra: { '/posthog.js': BUNDLE }, vars: { QUILL_HOST: q.base, QUILL_TOKEN: PROJECT_KEY } });
    browser = await launchChromium();
    // Beacons sent while a page unloads do not reliably reach Playwright's request events, so the page records
    // each navigator.sendBeacon call in localStorage (synchronous, survives the navigation to another page of
    // the same origin) before handing it to the browser.
    await browser.context.addInitScript(() => {
      const send = navigator.sendBeacon.bind(navigator);
      navigator.sendBeacon = (url: string | URL, data?: BodyInit | null) => {
        const log = JSON.parse(localStorage.getItem('__quill_beacons') ?? '[]');
        log.push({ url: String(url), type: data instanceof Blob ? data.type : typeof data, size: data instanceof Blob ? data.size : null });
        localStorage.setItem('__quill_beacons', JSON.stringify(log));
        return send(url, data);
      };
    });
  });
  t.teardown(async () => {
    await browser?.close();
    await site?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  /**
   * A page with clean storage (a new anonymous visitor), its requests and uncaught errors recorded, loaded until
   * the SDK is ready.
   */
  async function openPage(t: { teardown(fn: () => unknown): void }, path: string, opts: Record<string, unknown> = {}): Promise<{ page: Page; requests: SeenRequest[]; errors: string[] }> {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    t.teardown(() => page.close());
    await page.goto(`${site.origin}/other.html`);
    await page.evaluate(() => {
      localStorage.clear();
      sessionStorage.clear();
    });
    await browser.context.clearCookies();

    const requests: SeenRequest[] = [];
    const byRequest = new Map<Request, SeenRequest>();
    page.on('request', (r) => {
      const seen = { url: r.url(), method: r.method(), resourceType: r.resourceType(), body: r.postDataBuffer() };
      byRequest.set(r, seen);
      requests.push(seen);
    });
    page.on('response', async (res) => {
      const seen = byRequest.get(res.request());
      if (seen) {
        seen.responseHeaders = await res.allHeaders().catch(() => ({}));
        seen.status = res.status();
      }
    });
    await page.goto(`${site.origin}${path}?opts=${encodeURIComponent(JSON.stringify(opts))}`);
    await page.waitForFunction(() => window.__quill?.loaded === true);
    return { page, requests, errors };
  }

  const quillRequests = (requests: SeenRequest[], path: string) => requests.filter((r) => r.url.startsWith(q.base + path));

  /** The events in a recorded capture request's gzip body (posthog-js sends `{api_key, batch, sent_at}` or one event). */
  function eventsIn(r: SeenRequest): { uuid: string; event: string }[] {
    const payload = JSON.parse(gunzipSync(r.body!).toString('utf8'));
    return payload.batch ?? [payload];
  }
  /** Capture requests a page sent with fetch or XHR (beacons show up, if at all, as body-less `ping` requests). */
  const fetchedCaptures = (requests: SeenRequest[]) =>
    quillRequests(requests, '/e/').filter((r) => r.method === 'POST' && (r.resourceType === 'fetch' || r.resourceType === 'xhr'));
  const fetchedEventNames = (requests: SeenRequest[]) => fetchedCaptures(requests).flatMap((r) => eventsIn(r).map((e) => e.event));

  /** Waits until Quill stored events named `names` for `distinctId`; returns all of that id's events. */
  async function storedWith(distinctId: string, ...names: string[]): Promise<any[]> {
    return eventually(`${names.join(', ')} stored for ${distinctId}`, async () => {
      const events = await storedEvents(api, distinctId);
      return names.every((n) => events.some((e) => e.event === n)) ? events : null;
    });
  }

  t.test('page load: remote config, /flags/ and onFeatureFlags, $pageview; capture sent as gzip and stored', async (t) => {
    const { page, requests, errors } = await openPage(t, '/index.html');
    // The SDK asks /flags/ only after its remote config said hasFeatureFlags: once flags arrived, both are done.
    await page.waitForFunction(() => window.__quill.flagCalls.length > 0);
    const config = quillRequests(requests, `/array/${PROJECT_KEY}/config`);
    t.equal(config.length, 1, 'the SDK fetched its remote config from Quill');
    await eventually('the config response', () => config[0]!.status);
    t.equal(config[0]!.status, 200);
    const allowOrigin = config[0]!.responseHeaders?.['access-control-allow-origin'];
    t.ok(allowOrigin === '*' || allowOrigin === site.origin, `readable cross-origin (Access-Control-Allow-Origin: ${allowOrigin})`);

    const flagRequests = quillRequests(requests, '/flags/?v=2');
    t.ok(flagRequests.length >= 1, 'the SDK asked /flags/');
    // Playwright reports a response a little after the page has consumed it.
    await eventually('the /flags/ response', () => flagRequests[0]!.status);
    t.equal(flagRequests[0]!.status, 200);
    const [first] = await page.evaluate(() => window.__quill.flagCalls);
    t.equal(first!.variants['browser-multi'], 'test', 'onFeatureFlags got the variant');
    t.ok(first!.flags.includes('browser-multi'), 'active flags include browser-multi');
    t.notOk(first!.flags.includes('browser-off'), 'a 0% flag is not active');
    t.equal(await page.evaluate(() => window.posthog.getFeatureFlag('browser-multi')), 'test');
    t.same(await page.evaluate(() => window.posthog.getFeatureFlagPayload('browser-multi')), { color: 'blue', sizes: [1, 2] });
    t.equal(await page.evaluate(() => window.posthog.isFeatureEnabled('browser-off')), false);

    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    await page.evaluate(() => window.posthog.capture('custom event', { plan: 'pro', n: 3, tags: ['a', 'b'] }));
    const stored = await storedWith(distinctId, '$pageview', 'custom event', '$feature_flag_called');

    const pageview = stored.find((e) => e.event === '$pageview');
    t.match(pageview.properties, {
      $current_url: new RegExp(`^${site.origin}/index\\.html`), $host: new URL(site.origin).host, $pathname: '/index.html',
      $lib: 'web', $lib_version: SDK_VERSION,
    });
    t.same(pageview.person?.distinct_ids, [distinctId], 'person_profiles: always created a person');
    t.match(stored.find((e) => e.event === 'custom event').properties, { plan: 'pro', n: 3, tags: ['a', 'b'], $lib: 'web', '$feature/browser-multi': 'test' });
    t.match(stored.find((e) => e.event === '$feature_flag_called').properties, { $feature_flag: 'browser-multi', $feature_flag_response: 'test' });

    // Every capture request the page sent was a gzip body (posthog-js's default, confirmed by the gzip-js entry in
    // Quill's supportedCompression), Quill answered 200, and every event in those bodies is stored.
    const posts = fetchedCaptures(requests);
    t.ok(posts.length >= 2, `${posts.length} capture requests`);
    await eventually('answers to every capture request', () => posts.every((r) => r.status !== undefined));
    const sent: string[] = [];
    for (const r of posts) {
      t.equal(r.status, 200);
      t.same([...r.body!.subarray(0, 2)], [0x1f, 0x8b], 'gzip body');
      for (const e of eventsIn(r)) sent.push(e.uuid);
    }
    const storedIds = new Set((await storedEvents(api, distinctId)).map((e) => e.id));
    t.same(sent.filter((id) => !storedIds.has(id)), [], `all ${sent.length} gzip-sent events are stored`);
    const elsewhere = requests.filter((r) => !r.url.startsWith(`${site.origin}/`) && !r.url.startsWith(`${q.base}/`));
    t.same(elsewhere.map((r) => r.url), [], 'nothing was loaded from outside the two local origins');
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test('remote config preloaded from config.js, as PostHog\'s snippet loader does', async (t) => {
    const { page, requests, errors } = await openPage(t, '/preloaded-config.html');
    await page.waitForFunction(() => window.__quill.flagCalls.length > 0);
    const script = quillRequests(requests, `/array/${PROJECT_KEY}/config.js`);
    t.equal(script.length, 1, 'the page loaded config.js from Quill');
    await eventually('the config.js response', () => script[0]!.status);
    t.equal(script[0]!.status, 200);
    t.equal(quillRequests(requests, `/array/${PROJECT_KEY}/config`).filter((r) => !r.url.endsWith('.js')).length, 0, 'the SDK used the preloaded config instead of fetching JSON');
    t.equal(await page.evaluate(() => window.posthog.getFeatureFlag('browser-multi')), 'test', 'flags load after a preloaded config');
    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    const stored = await storedWith(distinctId, '$pageview');
    t.match(stored.find((e) => e.event === '$pageview').properties.$pathname, '/preloaded-config.html');
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test('the HTML snippet loads array.js from Quill (api_host), which sends the queued capture and loads its extensions from Quill', async (t) => {
    const { page, requests, errors } = await openPage(t, '/snippet.html');
    const arrayJs = quillRequests(requests, '/static/array.js');
    t.equal(arrayJs.length, 1, 'the snippet loaded array.js from Quill');
    await eventually('the array.js response', () => arrayJs[0]!.status);
    t.equal(arrayJs[0]!.status, 200);
    t.equal(arrayJs[0]!.resourceType, 'script');
    t.equal(arrayJs[0]!.responseHeaders?.['content-encoding'], 'gzip', 'Chromium asked for gzip and got it');
    t.equal(await page.evaluate(() => window.posthog.version), SDK_VERSION, 'the SDK of the npm package');

    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    const stored = await storedWith(distinctId, 'snippet event', '$pageview');
    t.match(stored.find((e) => e.event === 'snippet event').properties, { from: 'the snippet queue', $lib: 'web', $lib_version: SDK_VERSION, $pathname: '/snippet.html' });

    // array.js loads its lazy extensions from the same asset host: here, Quill.
    const loadError = await page.evaluate(() => new Promise<string | null>((resolve) => {
      (window as any).__PosthogExtensions__.loadExternalDependency(window.posthog, 'surveys', (error: unknown) => resolve(error ? String(error) : null));
    }));
    t.equal(loadError, null, 'surveys.js loaded');
    // This SDK version asks for the versioned path (strict_script_versioning); older ones used `?v=<version>`.
    const surveys = requests.filter((r) => r.url === `${q.base}/static/${SDK_VERSION}/surveys.js` || r.url === `${q.base}/static/surveys.js?v=${SDK_VERSION}`);
    t.equal(surveys.length, 1, `surveys.js asked of Quill (${requests.map((r) => r.url).join(', ')})`);
    await eventually('the surveys.js response', () => surveys[0]!.status);
    t.equal(surveys[0]!.status, 200);
    const elsewhere = requests.filter((r) => !r.url.startsWith(`${site.origin}/`) && !r.url.startsWith(`${q.base}/`));
    t.same(elsewhere.map((r) => r.url), [], 'nothing was loaded from outside the two local origins');
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test('autocapture: a click on a button nested in a section, a div and main', async (t) => {
    const { page, errors } = await openPage(t, '/index.html');
    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    await page.click('#buy');
    const stored = await storedWith(distinctId, '$autocapture');
    const click = stored.find((e) => e.event === '$autocapture');
    t.match(click.properties, { $event_type: 'click', $el_text: 'Buy now', $lib: 'web' });

    const chain: string = click.elements_chain;
    t.match(chain, /^button\.btn\.btn-primary:/, 'the chain starts at the clicked button with its classes');
    t.ok(chain.includes('text="Buy now"'), 'the button text');
    t.ok(chain.includes('attr_id="buy"'), 'the button id');
    const tags = chain.split(';').map((part) => part.split(/[.:]/)[0]);
    t.same(tags.slice(0, 5), ['button', 'section', 'div', 'main', 'body'], 'ancestors innermost first');
    t.ok(chain.includes('div.card.product:'), 'the card div with its classes');

    t.match(click.elements[0], { tag_name: 'button', text: 'Buy now', attr_id: 'buy', attr_class: ['btn', 'btn-primary'], nth_child: Number, order: 0 });
    t.match(click.elements[1], { tag_name: 'section', attr_class: ['actions'], order: 1 });
    t.match(click.elements[2], { tag_name: 'div', attr_class: ['card', 'product'], order: 2 });
    t.equal(click.elements[2].attributes['attr__data-sku'], 'sku-42', 'data attributes are kept');
    t.match(click.elements[3], { tag_name: 'main', attr_class: ['shop'], order: 3 });
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test('identify merges the anonymous person and reloads flags; reset starts a new anonymous person', async (t) => {
    const { page, errors } = await openPage(t, '/index.html');
    const anonId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    await page.evaluate(() => window.posthog.capture('anonymous browsing', { step: 1 }));
    await storedWith(anonId, 'anonymous browsing');
    t.same((await personOf(api, anonId)).distinct_ids, [anonId], 'an anonymous person first');
    t.equal(await page.evaluate(() => window.posthog.getFeatureFlag('browser-acme')), false, 'not an acme user yet');

    await page.evaluate(() => window.posthog.identify('browser-user-1', { email: 'eve@acme.io', plan: 'pro' }, { signup_page: 'index' }));
    const identified = await storedWith('browser-user-1', '$identify');
    t.match(identified.find((e) => e.event === '$identify').properties, { $anon_distinct_id: anonId, $set: { email: 'eve@acme.io' }, $set_once: { signup_page: 'index' } });
    const person = await personOf(api, 'browser-user-1');
    t.same([...person.distinct_ids].sort(), [anonId, 'browser-user-1'].sort(), 'the anonymous id joined the identified person');
    t.match(person.properties, { email: 'eve@acme.io', plan: 'pro', signup_page: 'index' });
    t.equal((await personOf(api, anonId)).id, person.id, 'the anonymous id resolves to the same person');
    t.equal(person.is_identified, true);

    // identify reloads flags with the new person properties: the email-targeted flag turns on.
    await page.waitForFunction(() => window.posthog.getFeatureFlag('browser-acme') === true);
    const calls = await page.evaluate(() => window.__quill.flagCalls);
    t.equal(calls.at(-1)!.variants['browser-acme'], true, 'onFeatureFlags saw the reloaded flags');

    await page.evaluate(() => window.posthog.reset());
    const freshId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    t.not(freshId, anonId, 'reset: a new anonymous id');
    t.not(freshId, 'browser-user-1');
    await page.evaluate(() => window.posthog.capture('after reset'));
    const after = await storedWith(freshId, 'after reset');
    t.equal(after.find((e) => e.event === 'after reset').properties.$anon_distinct_id, undefined);
    const freshPerson = await personOf(api, freshId);
    t.not(freshPerson.id, person.id, 'a different person after reset');
    t.notOk('email' in freshPerson.properties, 'no properties carried over');
    t.same((await personOf(api, 'browser-user-1')).distinct_ids.length, 2, 'the identified person is untouched');
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test("person_profiles: 'identified_only' (the SDK's default): a never-identified visitor is a unique user; identify keeps its first pageview", async (t) => {
    const { page, errors } = await openPage(t, '/index.html', { person_profiles: 'identified_only' });
    const anonId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    await page.evaluate(() => window.posthog.capture('identified-only visit'));
    const stored = await storedWith(anonId, '$pageview', 'identified-only visit');
    for (const e of stored) t.equal(e.properties.$process_person_profile, false, `${e.event} sent without a person profile`);
    t.equal(await personOf(api, anonId), null, 'no person is created for it');
    const project = (await api.get('/api/projects/@current/')).body;
    // The visitor's two events on one day: one unique user (PostHog counts its derived person id, not nobody).
    const dau = async (event: string) => {
      const res = await api.get(`/api/projects/@current/insights/trend/?refresh=true&date_from=-1d&events=${encodeURIComponent(JSON.stringify([{ id: event, math: 'dau' }]))}`);
      t.equal(res.status, 200);
      return (res.body.result[0].data as number[]).reduce((a, b) => a + b, 0);
    };
    t.equal(await dau('identified-only visit'), 1, 'a never-identified visitor counts as a unique user');
    const hogql = async (sql: string) => (await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: sql } })).body.results;
    const actorOf = `SELECT DISTINCT person_id FROM events WHERE distinct_id = '${anonId}' AND event = '$pageview'`;
    const [[anonymousActor]] = await hogql(actorOf);
    t.match(anonymousActor, /^[0-9a-f-]{36}$/, `its person_id is the uuid derived from its distinct id (project ${project.id})`);

    await page.evaluate(() => window.posthog.identify('browser-user-2', { email: 'ann@acme.io' }));
    await storedWith('browser-user-2', '$identify');
    const person = await personOf(api, 'browser-user-2');
    t.same([...person.distinct_ids].sort(), [anonId, 'browser-user-2'].sort());
    t.equal(person.uuid, anonymousActor, 'the person takes the uuid its anonymous events already carry (PostHog: no override needed)');
    const pageview = (await storedEvents(api, anonId)).find((e) => e.event === '$pageview');
    t.same(pageview.person, { is_identified: true, distinct_ids: [anonId], properties: { email: 'ann@acme.io' } }, 'the first pageview, sent before identify, belongs to the person (shown by its first distinct id)');
    t.same(await hogql(actorOf), [[person.uuid]]);
    await page.evaluate(() => window.posthog.capture('identified-only visit'));
    await eventually('the identified visit stored', async () => (await storedEvents(api, 'browser-user-2')).some((e) => e.event === 'identified-only visit') || null);
    t.equal(await dau('identified-only visit'), 1, 'before and after identify: still one unique user');
    t.same(errors, [], 'no uncaught errors on the page');
  });

  t.test('sendBeacon: an explicit beacon capture and the unload flush of the batch queue reach Quill', async (t) => {
    /** Beacons the page sent to Quill's capture endpoint, with a non-empty body. */
    const beaconsTo = async (page: Page) => {
      const log: { url: string; size: number | null }[] = await page.evaluate(() => JSON.parse(localStorage.getItem('__quill_beacons') ?? '[]'));
      return log.filter((b) => new URL(b.url).origin === q.base && new URL(b.url).pathname === '/e/' && (b.size ?? 0) > 0);
    };

    // An event captured with transport sendBeacon right before navigating away.
    const explicit = await openPage(t, '/index.html');
    const id1: string = await explicit.page.evaluate(() => window.posthog.get_distinct_id());
    await explicit.page.evaluate(() => {
      window.posthog.capture('beacon before leaving', { via: 'sendBeacon' }, { transport: 'sendBeacon' });
      location.href = '/other.html';
    });
    await explicit.page.waitForURL('**/other.html');
    t.ok((await beaconsTo(explicit.page)).length >= 1, 'the SDK called navigator.sendBeacon for Quill');
    t.notOk(fetchedEventNames(explicit.requests).includes('beacon before leaving'), 'the event did not travel by fetch or XHR');
    const stored1 = await storedWith(id1, 'beacon before leaving');
    t.match(stored1.find((e) => e.event === 'beacon before leaving').properties, { via: 'sendBeacon', $lib: 'web' });

    // With batching on, a queued event is only sent by the unload handler, which uses sendBeacon (plus $pageleave).
    // The flush interval (5 s, the SDK's maximum) is far longer than capture + navigation in one page task.
    const batched = await openPage(t, '/index.html', { request_batching: true, request_queue_config: { flush_interval_ms: 5000 } });
    const id2: string = await batched.page.evaluate(() => window.posthog.get_distinct_id());
    await batched.page.evaluate(() => {
      window.posthog.capture('queued before unload', { n: 7 });
      location.href = '/other.html';
    });
    await batched.page.waitForURL('**/other.html');
    t.ok((await beaconsTo(batched.page)).length >= 1, 'the unload flush used navigator.sendBeacon');
    t.notOk(fetchedEventNames(batched.requests).includes('queued before unload'), 'the queued event did not travel by fetch or XHR');
    const stored2 = await storedWith(id2, 'queued before unload', '$pageleave');
    t.match(stored2.find((e) => e.event === 'queued before unload').properties, { n: 7, $lib: 'web' });
    t.same([...explicit.errors, ...batched.errors], [], 'no uncaught errors on the pages');
  });
  t.test('the flag stream recipe: a PATCH reaches posthog-js through EventSource and reloadFeatureFlags()', async (t) => {
    const { page, errors } = await openPage(t, '/index.html');
    // The recipe of src/front/README.md, as a page would run it.
    await page.evaluate(({ host, token }) => {
      const flagChanges = new EventSource(`${host}/flags/stream?token=${token}`);
      flagChanges.addEventListener('changed', () => window.posthog.reloadFeatureFlags());
      (window as any).__flagChanges = flagChanges;
    }, { host: q.base, token: PROJECT_KEY });
    await page.waitForFunction(() => (window as any).__flagChanges.readyState === 1);

    const created = await api.post(FF, { key: 'browser-live', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } });
    t.equal(created.status, 201);
    await page.waitForFunction(() => window.posthog.getFeatureFlag('browser-live') === false);
    t.pass('a new flag reached the page without a reload of the page');
    for (const [rollout, expected] of [[100, true], [0, false], [100, true]] as const) {
      const patched = await api.patch(`${FF}${created.body.id}/`, { filters: { groups: [{ properties: [], rollout_percentage: rollout }] } });
      t.equal(patched.status, 200);
      const started = Date.now();
      await page.waitForFunction((want) => window.posthog.getFeatureFlag('browser-live') === want, expected, { timeout: 10_000 });
      t.pass(`rollout ${rollout}%: posthog-js answers ${expected} ${Date.now() - started} ms after the PATCH answered`);
    }
    await page.evaluate(() => (window as any).__flagChanges.close());
    await api.patch(`${FF}${created.body.id}/`, { deleted: true });
    t.same(errors, [], 'no uncaught errors on the page');
  });
}
