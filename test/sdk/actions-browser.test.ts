// Actions on real autocapture: the published posthog-js bundle in headless Chromium clicks a button, a
// link, a button in a form, a span inside a button and a link whose text holds quotes; Quill stores the
// `elements_chain` strings posthog-js built, and actions match them by text and href (exact, contains, regex),
// selector (tags, classes, ids, attributes, `>` and descendant) and tag name — counted by a trend.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { chromiumUnavailable, launchChromium, type Chromium } from '../helpers/chromium.js';
import { eventually } from '../helpers/eventually.js';
import { storedEvents } from '../helpers/ingest.js';
import { missing } from '../helpers/required-environment.js';
import { Client, PROJECT_KEY, type QuillProcess, ROOT, removeDir, startQuill } from '../helpers/quill.js';
import { serveStaticSite, type StaticSite } from '../helpers/static-site.js';

const BUNDLE = `${ROOT}/node_modules/posthog-js/dist/array.full.no-external.js`;
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const CLICKS = ['#signup', 'nav a', '#checkout button', 'section .label', '#docs'];

declare global {
  interface Window {
    posthog: any;
    __quill: { loaded: boolean };
  }
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the actions browser suite', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let site: StaticSite;
  let browser: Chromium;
  let clicks: any[] = [];

  t.before(async () => {
    q = await startQuill();
    api = new Client(q.base);
    site = await serveStaticSite({ dir: FIXTURES, extra: { '/posthog.js': BUNDLE }, vars: { QUILL_HOST: q.base, QUILL_TOKEN: PROJECT_KEY } });
    browser = await launchChromium();
    const page = await browser.context.newPage();
    await page.goto(`${site.origin}/actions.html`);
    await page.waitForFunction(() => window.__quill?.loaded === true);
    // Links stay on the page (posthog-js has captured the click before the default action would navigate).
    await page.evaluate(() => document.addEventListener('click', (e) => (e.target as Element).closest('a') && e.preventDefault()));
    const distinctId: string = await page.evaluate(() => window.posthog.get_distinct_id());
    for (const selector of CLICKS) await page.click(selector);
    clicks = await eventually('every click stored', async () => {
      const events = (await storedEvents(api, distinctId)).filter((e) => e.event === '$autocapture');
      return events.length === CLICKS.length ? events : null;
    });
    await page.close();
  });
  t.teardown(async () => {
    await browser?.close();
    await site?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  /** Events the action counts today (a trend over it, one number). */
  async function counted(steps: object[]): Promise<number> {
    const created = await api.post('/api/projects/@current/actions/', { name: `action ${JSON.stringify(steps)}`, steps });
    if (created.status !== 201) throw new Error(`action: ${created.status} ${created.text}`);
    const params = `actions=${encodeURIComponent(JSON.stringify([{ id: created.body.id, type: 'actions' }]))}&date_from=-1d&display=ActionsTable&refresh=true`;
    const res = await api.get(`/api/projects/@current/insights/trend/?${params}`);
    if (res.status !== 200) throw new Error(`trend: ${res.status} ${res.text}`);
    return res.body.result[0].aggregated_value;
  }
  const click = (extra: object) => [{ event: '$autocapture', ...extra }];

  t.test('posthog-js built the chains: clicked element first, with text, href, classes and ids', async (t) => {
    const chains: string[] = clicks.map((e) => e.elements_chain);
    t.match(chains[0], /^button\.btn\.cta:.*text="Sign up"/);
    t.match(chains[1], /^a\.nav-link:.*href="\/pricing".*text="Pricing";nav\.top:/);
    t.match(chains[2], /^button\.buy:.*text="sign up";form\.checkout:attr__class="checkout"attr__id="checkout"/);
    t.match(chains[3], /^span\.label:.*text="Sign up now";button\.cta:/);
    t.match(chains[4], /^a:.*href="https:\/\/docs\.example\.com\/start\?from=site".*text="Read the \\"docs\\""/, 'quotes escaped in the chain');
  });

  t.test('text: exact (case-sensitive), contains (case-insensitive), regex', async (t) => {
    t.equal(await counted(click({ text: 'Sign up' })), 1, 'exact by default');
    t.equal(await counted(click({ text: 'Sign up', text_matching: 'exact' })), 1);
    t.equal(await counted(click({ text: 'sign up', text_matching: 'exact' })), 1, 'exact is case-sensitive');
    t.equal(await counted(click({ text: 'SIGN UP', text_matching: 'contains' })), 3, 'contains ignores case and finds "Sign up now"');
    t.equal(await counted(click({ text: '^Sign up', text_matching: 'regex' })), 2, 'regex is unanchored: ^ anchors it');
    t.equal(await counted(click({ text: '(?i)^sign up$', text_matching: 'regex' })), 2, '(?i) makes a regex case-insensitive');
    t.equal(await counted(click({ text: 'Read the "docs"' })), 1, 'a text with quotes, escaped in the chain, matches as written');
    t.equal(await counted(click({ text: 'Sign' })), 0, 'exact is not a prefix match');
  });

  t.test('href: exact, contains, regex', async (t) => {
    t.equal(await counted(click({ href: '/pricing' })), 1);
    t.equal(await counted(click({ href: '/PRICING' })), 0, 'exact is case-sensitive');
    t.equal(await counted(click({ href: 'DOCS.example', href_matching: 'contains' })), 1);
    t.equal(await counted(click({ href: '^https://docs\\.example\\.com/', href_matching: 'regex' })), 1);
    t.equal(await counted(click({ href: '^/', href_matching: 'regex' })), 1);
  });

  t.test('selector and tag name', async (t) => {
    t.equal(await counted(click({ selector: 'button.cta' })), 2, 'classes: the sign-up button and the promo button');
    t.equal(await counted(click({ selector: 'div.hero > button' })), 1, 'child');
    t.equal(await counted(click({ selector: 'main section button' })), 1, 'descendants');
    t.equal(await counted(click({ selector: 'main > button' })), 0, 'a button is no child of main');
    t.equal(await counted(click({ selector: '#checkout button' })), 1, 'an id');
    t.equal(await counted(click({ selector: '[data-section="top"] button' })), 1, 'an attribute');
    t.equal(await counted(click({ selector: 'button.cta > span.label' })), 1);
    t.equal(await counted(click({ tag_name: 'a' })), 2);
    t.equal(await counted(click({ tag_name: 'button' })), 3, 'any element of the chain: the span\'s button too');
    t.equal(await counted(click({ tag_name: 'span' })), 1);
    t.equal(await counted(click({ tag_name: 'button', text: 'Sign up now' })), 1, 'conditions of a step are AND\'d');
  });

  t.test('element conditions only apply to $autocapture steps; steps are OR\'d', async (t) => {
    const pageviews = await counted([{ event: '$pageview' }]);
    t.ok(pageviews >= 1);
    t.equal(await counted([{ event: '$pageview', text: 'no such text' }]), pageviews, 'ignored on a $pageview step');
    t.equal(await counted([...click({ text: 'Sign up' }), ...click({ href: '/pricing' }), ...click({ selector: 'button.cta' })]), 3,
      'an event matching two steps counts once');
    const all = await api.get(`/api/projects/@current/insights/trend/?events=${encodeURIComponent('[{"id":null}]')}&date_from=-1d&display=ActionsTable&refresh=true`);
    t.equal(await counted([]), all.body.result[0].aggregated_value, 'no steps: every event');
  });
}
