// Session replay with the real client: the published posthog-js (array.js, loaded from Quill as PostHog's snippet
// does) in headless Chromium, recording turned on by the project's setting. The SDK lazy-loads its recorder from
// Quill's /static/, records a scripted session over two pages (typing into an input, clicks, a console.error) and
// posts it to /s/; the recordings API then lists it with its duration, counts and first URL, and its snapshots hold
// the input masked, never the typed text.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { chromiumUnavailable, launchChromium, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { eventually } from '../helpers/eventually.js';
import { Client, PROJECT_KEY, type QuillProcess, removeDir, startQuill } from '../helpers/quill.js';
import { serveStaticSite, type StaticSite } from '../helpers/static-site.js';
import { RECORDINGS, snapshotLines, unpackEvent } from '../helpers/recordings.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const TYPED = 'hunter2-4111111111111111';

declare global {
  interface Window {
    posthog: any;
    __quill: { loaded: boolean };
  }
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the posthog-js recording test', unavailable);
else recordingSuite();

function recordingSuite(): void {
  let q: QuillProcess;
  let api: Client;
  let site: StaticSite;
  let browser: Chromium;

  t.before(async () => {
    q = await startQuill();
    api = new Client(q.base);
    const on = await api.patch('/api/projects/@current/', { session_recording_opt_in: true });
    if (on.status !== 200) throw new Error(`turning recording on: ${on.status} ${on.text}`);
    site = await serveStaticSite({ dir: FIXTURES, vars: { QUILL_HOST: q.base, QUILL_TOKEN: PROJECT_KEY } });
    browser = await launchChromium();
  });
  t.teardown(async () => {
    await browser?.close();
    await site?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  t.test('posthog-js records a two-page session against Quill; the list shows it and the input stays masked', async (t) => {
    const page = await browser.context.newPage();
    t.teardown(() => page.close());
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const fromQuill: { url: string; status: number }[] = [];
    page.on('response', (res) => {
      if (res.url().startsWith(q.base)) fromQuill.push({ url: res.url(), status: res.status() });
    });
    const recording = () => page.waitForFunction(() => window.__quill?.loaded && window.posthog.sessionRecordingStarted(), undefined, { timeout: 30_000 });

    const started = Date.now();
    await page.goto(`${site.origin}/replay/signup.html`);
    await recording();
    const sessionId: string = await page.evaluate(() => window.posthog.get_session_id());
    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    await page.click('#secret');
    await page.keyboard.type(TYPED, { delay: 20 });
    await page.click('#fail');
    // Past the recorder's 2 s buffer and the request queue's flush: page one's snapshots leave before the navigation.
    await page.waitForTimeout(3_500);
    await page.click('#next');
    await page.waitForURL('**/replay/welcome.html');
    await recording();
    t.equal(await page.evaluate(() => window.posthog.get_session_id()), sessionId, 'one session over both pages');
    await page.click('#tour');
    await page.waitForTimeout(1_000);
    await page.mouse.move(200, 200);
    await page.mouse.move(300, 250);

    const lazyRecorder = fromQuill.filter((r) => /\/static\/(\d[^/]*\/)?lazy-recorder\.js/.test(r.url));
    t.ok(lazyRecorder.length >= 1 && lazyRecorder.every((r) => r.status === 200 || r.status === 304), 'the recorder bundle was lazy-loaded from Quill');
    t.ok(fromQuill.some((r) => r.url.includes(`/array/${PROJECT_KEY}/config`)), 'the remote config came from Quill');

    // posthog-js flushes its snapshot buffer every 2 s and its request queue every few seconds.
    const rec = await eventually('the recording listed with both pages', async () => {
      const list = await api.get(`${RECORDINGS}/?date_from=-1h`);
      const found = list.body.results?.find((r: { id: string }) => r.id === sessionId);
      return found && found.click_count >= 3 && found.console_error_count >= 1 && found.storage.windows >= 1 ? found : null;
    });
    const elapsed = (Date.now() - started) / 1000;
    t.match(rec, { id: sessionId, distinct_id: distinctId, start_url: `${site.origin}/replay/signup.html`, snapshot_source: 'web', viewed: false });
    t.ok(rec.recording_duration >= 2 && rec.recording_duration <= elapsed + 1, `duration ${rec.recording_duration} s, within the ${elapsed.toFixed(1)} s the test ran`);
    t.ok(rec.active_seconds >= 1 && rec.active_seconds <= rec.recording_duration, `active ${rec.active_seconds} s`);
    t.ok(rec.keypress_count >= 1, `${rec.keypress_count} input events`);
    t.ok(rec.click_count >= 3, `${rec.click_count} clicks (input, Pay, Continue, the tour: the last click of a page may leave with its unload)`);
    t.ok(rec.console_error_count >= 1, `${rec.console_error_count} console errors (the page's)`);
    t.ok(rec.person === null || rec.person.distinct_ids.includes(distinctId), 'the person, once the visitor has one');

    // Page two's snapshots come with its own flush: wait for its Meta event.
    const events = await eventually('both pages in the snapshots', async () => {
      const all = (await snapshotLines(api, sessionId)).map(([, e]) => unpackEvent(e));
      const pages = all.filter((e) => e.type === 4).map((e) => (e.data as { href: string }).href);
      return pages.some((h) => h.endsWith('/replay/welcome.html')) ? all : null;
    });
    const text = JSON.stringify(events);
    t.notOk(text.includes(TYPED) || text.includes('hunter2'), 'the typed text is nowhere in the recording');
    const inputs = events.filter((e) => e.type === 3 && (e.data as { source?: number }).source === 5);
    t.ok(inputs.length >= 1 && inputs.every((e) => /^\**$/.test((e.data as { text: string }).text)), `every input event carries the masked value (${inputs.length})`);
    const hrefs = events.filter((e) => e.type === 4).map((e) => (e.data as { href: string }).href);
    t.ok(hrefs.some((h) => h.endsWith('/replay/signup.html')) && hrefs.some((h) => h.endsWith('/replay/welcome.html')), 'a Meta event for each page');
    t.ok(events.some((e) => e.type === 2), 'full snapshots');
    const consoleErrors = events.filter((e) => e.type === 6 && (e.data as { plugin?: string; payload?: { level?: string } }).payload?.level === 'error');
    t.ok(JSON.stringify(consoleErrors).includes('payment provider unreachable'), 'the console line is in the recording');

    // Snapshots are not events: the visitor's events are their pageviews, clicks and so on, never a $snapshot.
    const stored = await api.get(`/api/projects/@current/events/?after=2000-01-01&distinct_id=${encodeURIComponent(distinctId)}&limit=1000`);
    t.ok(stored.body.results.length > 0 && stored.body.results.every((e: { event: string }) => e.event !== '$snapshot'), 'no $snapshot among the events');
    t.same(errors, [], 'no uncaught errors on the pages');
  });
}
