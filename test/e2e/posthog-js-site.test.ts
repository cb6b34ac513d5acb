// Everything posthog-js sends by default is understood (issue 48): a small shop (test/fixtures/posthog-js-site/)
// loads posthog-js the way PostHog's HTML snippet does, from Quill's /static/array.js, with posthog-js's default
// options; the optional modules (heatmaps, dead clicks, web vitals, exception autocapture, surveys) are switched on
// in the console's settings (the project's settings, handed to posthog-js by Quill's remote config), so array.js
// lazily loads their bundles from Quill too.
// Headless Chromium then browses it for about a minute: pages, clicks, a rage click, a dead click, mouse moves, a
// form, a login (identify, person and group properties), a flag read, a thrown error, the survey and early-access
// lists, a logout (reset), three times over. The SDK's api_host is a pass-through proxy in front of Quill
// (test/helpers/recording-proxy.ts) that records every request as it left the page: Playwright shows neither the
// bodies of the beacons posthog-js sends while a page unloads nor whether a keepalive fetch cut short by a
// navigation still arrived. Asserted:
// - no request to Quill got a 4xx or 5xx (the page's network log and the proxy's), and each module's bundle and
//   list was asked;
// - every event in a capture request that left the page is stored exactly once, and nothing else is; each is one
//   the SDK's before_send hook saw;
// - each module's event is there (`$$heatmap`, `$dead_click`, `$web_vitals`, `$exception`, `$rageclick`, …);
// - the console, signed in in the same browser, shows per event name the counts this test computed (trends).
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, launchChromium, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, type QuillProcess, removeDir, startQuill } from '../helpers/quill.js';
import { recordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';
import { serveStaticSite, type StaticSite } from '../helpers/static-site.js';

const SITE = fileURLToPath(new URL('../fixtures/posthog-js-site/', import.meta.url));
const PASSWORD = 'posthog-js-site-password';
const ROUNDS = 3;
/** The capture paths posthog-js posts events to (`/e/` by default, `/i/v0/e/` when the remote config says so). */
const CAPTURE = /^\/(e|i\/v0\/e|batch|capture)\/?$/;

interface Seen {
  url: URL;
  method: string;
  resourceType: string;
  body: Buffer | null;
  status?: number;
  /** The page gave up on it (a navigation aborts what is in flight); the server may still have answered. */
  failed?: string;
}

interface SentEvent {
  uuid: string;
  event: string;
}

/** The events in a capture body as posthog-js sends it: gzip (`compression=gzip-js`), base64 or a `data=` form. */
function eventsInBody(body: Buffer): SentEvent[] {
  let text = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body).toString('utf8') : body.toString('utf8');
  if (text.startsWith('data=')) text = decodeURIComponent(text.slice(5).split('&')[0]!.replace(/\+/g, ' '));
  if (!/^\s*[[{]/.test(text)) text = Buffer.from(text, 'base64').toString('utf8');
  const payload = JSON.parse(text);
  return Array.isArray(payload) ? payload : payload.batch ?? [payload];
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the posthog-js site test', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let site: StaticSite;
  let proxy: RecordingProxy;
  let browser: Chromium;
  let page: Page;
  let consolePage: Page;
  let projectId: number;
  const seen: Seen[] = [];
  /** Every event before_send saw, in order (the page's log). */
  let logged: SentEvent[] = [];
  /** Every event that left the page in a capture request (the proxy's record), once each. */
  let sent: SentEvent[] = [];

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    api = new Client(q.base);
    // A flag, so the remote config says hasFeatureFlags and the SDK asks /flags/ (and reads it on a purchase).
    const flag = await api.post('/api/projects/@current/feature_flags/', { key: 'new-checkout', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
    if (flag.status !== 201) throw new Error(`flag: ${flag.text}`);
    proxy = await recordingProxy(q.base);
    site = await serveStaticSite({ dir: SITE, vars: { QUILL_HOST: proxy.origin, QUILL_TOKEN: PROJECT_KEY } });
    browser = await launchChromium();
    // The modules, switched on where a user switches them: the console's settings page (the project's settings,
    // which Quill's remote config hands to posthog-js).
    projectId = (await api.get('/api/projects/@current/')).body.id;
    consolePage = await browser.context.newPage();
    await consolePage.goto(`${q.base}/console/`);
    await signIn(consolePage, PASSWORD);
    await consolePage.goto(`${q.base}/console/project/${projectId}/settings`);
    await consolePage.waitForSelector('[data-testid=sdk-modules]');
    for (const name of ['heatmaps_opt_in', 'capture_dead_clicks', 'autocapture_exceptions_opt_in', 'autocapture_web_vitals_opt_in', 'surveys_opt_in']) {
      await consolePage.check(`[data-testid=sdk-modules] input[name=${name}]`);
    }
    await consolePage.click('[data-testid=sdk-modules] button[type=submit]');
    await consolePage.waitForSelector('[data-testid=sdk-modules] [role=status]');
    const project = (await api.get('/api/projects/@current/')).body;
    const on = { heatmaps_opt_in: true, capture_dead_clicks: true, autocapture_exceptions_opt_in: true, autocapture_web_vitals_opt_in: true, surveys_opt_in: true, autocapture_opt_out: false };
    for (const [k, v] of Object.entries(on)) if (project[k] !== v) throw new Error(`the console did not set ${k}: ${JSON.stringify(project)}`);
    page = await browser.context.newPage();
    const byRequest = new Map<object, Seen>();
    page.on('request', (r) => {
      const entry: Seen = { url: new URL(r.url()), method: r.method(), resourceType: r.resourceType(), body: r.postDataBuffer() };
      byRequest.set(r, entry);
      seen.push(entry);
    });
    page.on('response', (res) => {
      const entry = byRequest.get(res.request());
      if (entry) entry.status = res.status();
    });
    page.on('requestfailed', (r) => {
      const entry = byRequest.get(r);
      if (entry) entry.failed = r.failure()?.errorText ?? 'failed';
    });
  });
  t.teardown(async () => {
    await browser?.close();
    await site?.close();
    await proxy?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  /** The page's network log of its requests to Quill (through the proxy). */
  const toQuill = () => seen.filter((s) => s.url.origin === proxy.origin);
  const loaded = () => page.waitForFunction(() => (window as any).__loaded === true);
  const open = async (path: string) => {
    await page.goto(`${site.origin}${path}`);
    await loaded();
  };
  /** Clicks a link or submit button and waits for the next page, with posthog-js loaded on it. */
  const follow = async (selector: string) => {
    const before = page.url();
    await page.click(selector);
    await page.waitForURL((u) => u.href !== before);
    await loaded();
  };

  /** One visit: browse, buy, sign up, log in, fail to pay, look at offers, log out. */
  async function visit(n: number): Promise<void> {
    await open('/index.html');
    await page.click('#add');
    await page.click('#add');
    const promo = (await page.locator('#promo').boundingBox())!;
    for (let i = 0; i < 12; i++) await page.mouse.move(promo.x + 20 + i * 15, promo.y + 30 + (i % 4) * 20);
    // A rage click: three more clicks within a second at one spot (posthog-js looks for them on what autocapture
    // captures, a button here).
    const add = (await page.locator('#add').boundingBox())!;
    for (let i = 0; i < 3; i++) await page.mouse.click(add.x + add.width / 2, add.y + add.height / 2);
    // A dead click: nothing changes for 2.5 s after it (posthog-js's mutation threshold); posthog-js ignores a click
    // within a second of another one, so the rage click is a second and a half behind it.
    await page.waitForTimeout(1_500);
    await page.click('#nothing');
    await page.waitForTimeout(3_500);

    await follow('#nav-products');
    await follow(`a.product >> nth=${n % 3}`);
    await page.click('#buy');
    await page.waitForSelector('#bought:has-text("Bought")');

    await open('/signup.html');
    await page.fill('#signup-name', `Visitor ${n}`);
    await page.selectOption('#signup-plan', 'pro');
    await page.check('#signup-news');
    await follow('#signup-submit');

    await page.fill('#login-email', `visitor-${n}@example.com`);
    await page.fill('#login-password', 'secret');
    await follow('#login-submit');
    await page.click('#pay');
    await page.click('#offers');
    await page.waitForSelector('#offers-result:has-text("features")');
    // Long enough for the heatmap buffer (flushed every 5 s) and the web vitals buffer (5 s) to be sent from here.
    await page.waitForTimeout(5_500);
    await follow('#logout');
  }

  t.test('a minute of browsing: no 4xx/5xx from Quill, every module loaded and asked from Quill', async (t) => {
    const started = Date.now();
    for (let n = 0; n < ROUNDS; n++) await visit(n);
    await open('/bye.html');
    // The last page's queue is sent by its flush timer (3 s) or, at the latest, by the beacon its unload sends;
    // end.html has no posthog-js, so once there nothing more is captured.
    await page.waitForTimeout(3_500);
    await page.goto(`${site.origin}/end.html`);
    await eventually('every request answered, none arriving', async () => {
      const before = proxy.requests.length;
      await page.waitForTimeout(1_000);
      return (proxy.requests.length === before && proxy.requests.every((r) => r.status !== 0)) || null;
    });
    logged = await page.evaluate(() => JSON.parse(localStorage.getItem('__sent') ?? '[]'));
    // What left the page: the events of every capture request the proxy passed to Quill (a retried request's
    // events once).
    const byUuid = new Map<string, SentEvent>();
    for (const r of proxy.requests) {
      if (r.method !== 'POST' || !CAPTURE.test(new URL(r.path, proxy.origin).pathname) || r.body.length === 0) continue;
      for (const e of eventsInBody(r.body)) byUuid.set(e.uuid, { uuid: e.uuid, event: e.event });
    }
    sent = [...byUuid.values()];
    t.comment(`${Math.round((Date.now() - started) / 1000)} s of browsing, ${sent.length} events sent`);

    const kinds = new Map<string, number[]>();
    for (const r of proxy.requests) {
      const url = new URL(r.path, proxy.origin);
      const kind = `${r.method} ${url.pathname.replace(PROJECT_KEY, '<token>')}${url.searchParams.has('compression') ? `?compression=${url.searchParams.get('compression')}` : ''} ${r.headers['content-type'] ?? ''}`;
      kinds.set(kind, [...(kinds.get(kind) ?? []), r.status]);
    }
    t.comment(`requests to Quill:\n${[...kinds].map(([k, statuses]) => `  ${k} ×${statuses.length} [${[...new Set(statuses)].join(', ')}]`).sort().join('\n')}`);
    t.same(proxy.requests.filter((r) => r.status >= 400).map((r) => `${r.method} ${r.path}: ${r.status}`), [], 'Quill answered no request 4xx or 5xx');
    t.same(toQuill().filter((s) => (s.status ?? 0) >= 400).map((s) => `${s.method} ${s.url.pathname}: ${s.status}`), [], "and the page's network log has none");

    const asked = (path: string | RegExp) => proxy.requests.some((r) => {
      const pathname = new URL(r.path, proxy.origin).pathname;
      return (typeof path === 'string' ? pathname === path : path.test(pathname)) && r.status === 200;
    });
    t.ok(asked('/static/array.js'), 'array.js from Quill');
    t.ok(asked(`/array/${PROJECT_KEY}/config.js`), 'the remote config (config.js) from Quill');
    t.ok(asked('/flags/'), '/flags/');
    // Web vitals: the flavour with attribution (for INP and LCP) is posthog-js's default.
    for (const bundle of ['surveys', 'web-vitals(-with-attribution)?', 'dead-clicks-autocapture', 'exception-autocapture']) {
      t.ok(asked(new RegExp(`^/static/([0-9.]+/)?${bundle}\\.js$`)), `${bundle}.js from Quill`);
    }
    t.ok(asked('/api/surveys/'), 'the survey list');
    t.ok(asked('/api/early_access_features/'), 'the early access features');
    t.equal(await page.evaluate(() => document.title), 'End · Quill Shop');
    const elsewhere = seen.filter((s) => s.url.origin !== proxy.origin && s.url.origin !== site.origin);
    t.same(elsewhere.map((s) => s.url.href), [], 'nothing loaded from outside the two local origins');
  });

  t.test('every event the SDK sent is stored exactly once, and nothing else', async (t) => {
    // Sent events are ones the SDK's before_send saw; the SDK may also lose a few of those in a navigation
    // (reported, not Quill's to store).
    const seenBySdk = new Set(logged.map((e) => e.uuid));
    t.same(sent.filter((e) => !seenBySdk.has(e.uuid)).map((e) => e.event), [], 'every event on the wire is one before_send saw');
    const wire = new Set(sent.map((e) => e.uuid));
    const lost = logged.filter((e) => !wire.has(e.uuid));
    t.comment(`before_send saw ${logged.length} events; ${lost.length} never left the page${lost.length ? `: ${lost.map((e) => e.event).join(', ')}` : ''}`);

    for (const name of ['$pageview', '$pageleave', '$autocapture', '$rageclick', '$dead_click', '$$heatmap', '$web_vitals', '$exception',
      '$identify', '$set', '$groupidentify', '$feature_flag_called', 'purchase']) {
      t.ok(sent.some((e) => e.event === name), `${name} sent`);
    }

    const rows = await eventually('every sent event stored', async () => {
      const res = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: 'SELECT uuid, event FROM events LIMIT 50000' }, refresh: 'force_blocking' });
      const results = res.body?.results as [string, string][] | undefined;
      return results && results.length >= sent.length ? results : null;
    }, { timeoutMs: 30_000 }).catch(() => [] as [string, string][]);
    const stored = new Map<string, number>();
    for (const [uuid] of rows) stored.set(uuid, (stored.get(uuid) ?? 0) + 1);
    t.same(sent.filter((e) => stored.get(e.uuid) !== 1).map((e) => `${e.event} ${e.uuid} ×${stored.get(e.uuid) ?? 0}`), [], `each of the ${sent.length} sent events stored once`);
    t.equal(rows.length, sent.length, 'and nothing that was not sent');

    // What the modules' events carry, as stored.
    const one = async (event: string) => (await api.get(`/api/projects/@current/events/?event=${encodeURIComponent(event)}&limit=1`)).body.results[0] ?? { properties: {} };
    t.match((await one('$exception')).properties, { $exception_list: [{ type: 'Error', value: 'Payment failed: card declined' }] }, '$exception: the error');
    t.ok(Object.keys((await one('$$heatmap')).properties.$heatmap_data ?? {}).length > 0, '$$heatmap: positions per page');
    t.ok(Object.keys((await one('$web_vitals')).properties).some((k) => /^\$web_vitals_[A-Z]+_value$/.test(k)), '$web_vitals: a metric value');
    t.match((await one('$dead_click')).elements_chain, /^button/, '$dead_click: the button in its elements chain');
    const person = (await api.get('/api/projects/@current/persons/?distinct_id=visitor-0@example.com')).body.results[0];
    t.match(person?.properties, { email: 'visitor-0@example.com', plan: 'pro' }, 'the login identified a person with its properties');
  });

  t.test('the console shows the counts the test computed', async (t) => {
    const counts = new Map<string, number>();
    for (const e of sent) counts.set(e.event, (counts.get(e.event) ?? 0) + 1);
    const names = [...counts.keys()].sort();
    const filters = {
      insight: 'TRENDS', interval: 'day', date_from: '-1d', display: 'ActionsLineGraph',
      events: names.map((id, order) => ({ id, name: id, type: 'events', order, math: 'total' })),
    };
    await consolePage.goto(`${q.base}/console/project/${projectId}/insights/trends?filters=${encodeURIComponent(JSON.stringify(filters))}`);
    await consolePage.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
    const shown = await consolePage.$$eval('[data-testid=trend-row]', (rows) => rows.map((row) => [
      row.querySelector('th')?.textContent ?? '',
      [...row.querySelectorAll('td.value')].reduce((sum, cell) => sum + Number(cell.textContent), 0),
    ] as [string, number]));
    t.same(Object.fromEntries(shown), Object.fromEntries(names.map((n) => [n, counts.get(n)])), `per event name, ${names.length} names`);
  });
}
