// The console's Web analytics page in a real browser (Debian's Chromium via playwright-core) against the real server:
// the overview numbers and their previous values, a table's visitors and the web vitals on the page equal the
// answers of /query/ for the same question; a click on a table row filters the whole page (the overview then equals
// the API's answer with that filter); the page comes as its own chunk (not in the first page's JavaScript).
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, keepScreenshot, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, type QuillProcess, removeDir, ROOT, startQuill } from '../helpers/quill.js';
import { LIVE_VISITORS_SQL } from '../../src/console/app/lib/web-analytics.js';

const PASSWORD = 'web-analytics-test-password';
const DAY = 86_400_000;

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the web analytics browser test', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let browser: Chromium;
  let page: Page;
  let projectId: number;
  const problems: string[] = [];
  const scripts: string[] = [];
  /** How many scripts the first page (sign-in) loaded. */
  let firstPage = 0;

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    api = new Client(q.base);
    projectId = (await api.get('/api/projects/@current/')).body.id;
    // Sessions over the last twelve days (so some fall in the previous period), each a few pageviews apart.
    const batch = [];
    const now = Date.now();
    const referrers = ['$direct', 'www.google.com', 'news.ycombinator.com', '$direct'];
    for (let k = 0; k < 40; k++) {
      const user = `visitor-${k % 13}`;
      const start = now - (1 + (k % 12)) * DAY + (k % 5) * 3_600_000;
      const pages = ['/', '/pricing', '/docs'].slice(0, 1 + (k % 3));
      pages.forEach((path, i) => batch.push(event(user, '$pageview', {
        $session_id: `session-${k}`, $current_url: `https://site.test${path}`, $pathname: path, $browser: k % 2 ? 'Chrome' : 'Firefox',
        ...(i === 0 ? { $referring_domain: referrers[k % 4] } : {}),
      }, { timestamp: new Date(start + i * 7_000).toISOString() })));
      batch.push(event(user, '$web_vitals', { $session_id: `session-${k}`, $web_vitals_LCP_value: 1500 + k * 100, $web_vitals_CLS_value: 0.02 * (k % 7), $web_vitals_FCP_value: 900 + k * 10, $web_vitals_INP_value: 120 + k * 5 }, { timestamp: new Date(start + 1_000).toISOString() }));
    }
    const res = await sendBatch(q.base, batch);
    if (res.status !== 200) throw new Error(`dataset: ${res.status}`);
    const note = await api.post(`/api/projects/${projectId}/annotations/`, { content: 'Launch', date_marker: new Date(now - 3 * DAY).toISOString(), scope: 'project' });
    if (note.status !== 201) throw new Error(`annotation: ${note.status} ${note.text}`);
    browser = await launchChromium();
    page = await watchedPage(browser, problems);
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${q.base}/console/`);
    await page.waitForSelector('input[name=password]');
    firstPage = scripts.length;
    await signIn(page, PASSWORD);
  });
  t.teardown(async () => {
    await browser?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  const query = async (body: object) => {
    const res = await api.post(`/api/projects/${projectId}/query/`, { query: body });
    if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`);
    return res.body;
  };
  const base = (properties: object[] = []) => ({ dateRange: { date_from: '-7d', date_to: null }, properties, compareFilter: { compare: true } });
  /** The overview as a page shows it: key → [value, previous] from the tiles' data attributes. */
  const shownOverviewOf = (p: Page) => p.$$eval('[data-testid=web-overview] [data-key]', (els) => Object.fromEntries(els.map((e) => {
    const d = (e as HTMLElement).dataset;
    return [d.key, [d.value === '' ? null : Number(d.value), d.previous === '' ? null : Number(d.previous)]];
  })));
  const shownOverview = () => shownOverviewOf(page);
  const expectedOverview = async (properties: object[] = []) => Object.fromEntries((await query({ kind: 'WebOverviewQuery', ...base(properties) })).results.map((i: any) => [i.key, [i.value, i.previous]]));

  t.test('overview, tables and web vitals equal the API', async (t) => {
    // Signing in lands here: the page's chunk comes after the first page's JavaScript, not in it.
    t.match(page.url(), /\/console\/project\/\d+\/web$/, 'the landing page');
    await page.waitForSelector('[data-testid=web-overview] [data-key=visitors]');
    t.ok(scripts.slice(firstPage).some((u) => !scripts.slice(0, firstPage).includes(u)), `the page loads its own chunk (${scripts.slice(firstPage).join(', ')})`);
    const want = await expectedOverview();
    t.same(await shownOverview(), want, 'every overview number and its previous value');
    t.ok(want.sessions[0] > 0 && want.sessions[1] > 0, 'sessions in both periods');

    await page.waitForSelector('[data-testid=web-table-Page] tr[data-row]');
    const rows = await page.$$eval('[data-testid=web-table-Page] tr[data-row]', (trs) => trs.map((tr) => [
      JSON.parse((tr as HTMLElement).dataset.row!), Number((tr.querySelector('[data-column="context.columns.visitors"]') as HTMLElement).dataset.value),
    ]));
    const table = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', includeBounceRate: true, limit: 10, ...base() });
    t.same(rows, table.results.map((r: any[]) => [r[0], r[1][0]]), 'the pages table: values and visitors in the API order');

    const vitals = await query({
      kind: 'WebVitalsQuery', properties: [], dateRange: { date_from: '-7d' },
      source: { kind: 'TrendsQuery', dateRange: { date_from: '-7d' }, interval: 'day', properties: [], trendsFilter: { display: 'ActionsLineGraph' }, series: [
        ...['INP', 'LCP', 'CLS', 'FCP'].map((m) => ({ kind: 'EventsNode', event: '$web_vitals', name: '$web_vitals', custom_name: m, math: 'p75', math_property: `$web_vitals_${m}_value` })),
        { kind: 'EventsNode', event: '$web_vitals', name: '$web_vitals', custom_name: 'samples', math: 'total' },
      ] },
    });
    await page.waitForSelector('[data-testid=web-vitals] [data-metric=LCP][data-value]:not([data-value=""])');
    const lcp = vitals.results.find((r: any) => r.action.custom_name === 'LCP');
    const samples: number[] = vitals.results.find((r: any) => r.action.custom_name === 'samples').data;
    const day = samples.map((n, i) => (n > 0 ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
    const last = lcp.data[day];
    t.ok(last > 0, `the latest day with samples has a value (${last})`);
    const shown = await page.$eval('[data-testid=web-vitals] [data-metric=LCP]', (e) => [Number((e as HTMLElement).dataset.value), (e as HTMLElement).dataset.band]);
    t.same(shown, [last, last <= 2500 ? 'good' : last <= 4000 ? 'needs_improvements' : 'poor'], 'LCP p75 of the last day with its band');
    // For a reader: the page as drawn (test-artifacts/console/web-analytics.png).
    await keepScreenshot(page, join(ROOT, 'test-artifacts/console/web-analytics.png'));
  });

  t.test('annotations are drawn on the visitors chart', async (t) => {
    await page.waitForSelector('[data-testid=web-visitors][data-markers]');
    const markers = JSON.parse(await page.$eval('[data-testid=web-visitors]', (e) => (e as HTMLElement).dataset.markers!));
    t.match(markers, [{ text: 'Launch', x: Number }]);
  });

  t.test('a clicked point is annotated on its day, on a trends chart and on the visitors chart', async (t) => {
    await page.goto(`${q.base}/console/project/${projectId}/insights/trends`);
    const cell = page.locator('[data-testid=trend-row] td.value').nth(3);
    await cell.waitFor();
    await cell.click();
    const dialog = page.locator('[data-testid=persons-dialog]');
    await dialog.getByLabel('annotation').fill('Price change');
    await dialog.getByRole('button', { name: 'Add annotation' }).click();
    await dialog.locator('[role=status]').waitFor();
    const stored = (await api.get(`/api/projects/${projectId}/annotations/?search=Price`)).body.results;
    t.match(stored, [{ content: 'Price change', scope: 'project', creation_type: 'USR' }], 'stored as a project annotation');
    await page.waitForFunction(() => ((document.querySelector('[data-testid=trend-chart]') as HTMLElement | null)?.dataset.markers ?? '').includes('Price change'));
    t.pass('drawn on the chart at once');

    await page.goto(`${q.base}/console/project/${projectId}/web`);
    await page.waitForSelector('[data-testid=web-visitors][data-markers]');
    const box = (await page.locator('[data-testid=web-visitors] canvas').first().boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.5);
    const form = page.locator('[data-testid=web-visitors-chart] [data-testid=annotate-point]');
    await form.waitFor();
    await form.getByLabel('annotation').fill('Newsletter sent');
    await form.getByRole('button', { name: 'Add annotation' }).click();
    await page.waitForFunction(() => ((document.querySelector('[data-testid=web-visitors]') as HTMLElement | null)?.dataset.markers ?? '').includes('Newsletter sent'));
    t.match((await api.get(`/api/projects/${projectId}/annotations/?search=Newsletter`)).body.results, [{ content: 'Newsletter sent' }]);
    t.same(problems.splice(0), []);
  });

  t.test('a click on a row filters the page', async (t) => {
    await page.waitForSelector('[data-testid=web-table-InitialChannelType] tr[data-row="\\"Direct\\""]');
    await page.click('[data-testid=web-table-InitialChannelType] tr[data-row="\\"Direct\\""]');
    await page.waitForSelector('[data-testid=web-filters]');
    const filter = [{ type: 'session', key: '$channel_type', value: 'Direct', operator: 'exact' }];
    const want = await expectedOverview(filter);
    await page.waitForFunction((sessions) => (document.querySelector('[data-testid=web-overview] [data-key=sessions]') as HTMLElement | null)?.dataset.value === String(sessions), want.sessions[0]);
    t.same(await shownOverview(), want, 'the overview of direct sessions');
    t.ok(new URL(page.url()).searchParams.get('filters')?.includes('$channel_type'), 'the filter is in the address');
  });

  t.test('visitors of the last 30 minutes, live', async (t) => {
    const now = Date.now();
    const res = await sendBatch(q.base, ['live-1', 'live-2', 'live-1'].map((who, i) => event(who, '$pageview', { $session_id: `live-${who}`, $current_url: 'https://site.test/', $pathname: '/' }, { timestamp: new Date(now - 60_000 * (i + 1)).toISOString() })));
    t.equal(res.status, 200);
    const asked = await api.post(`/api/projects/${projectId}/query/`, { query: { kind: 'HogQLQuery', query: LIVE_VISITORS_SQL }, refresh: 'force_blocking' });
    t.same(asked.body.results, [[2]], 'two visitors in the last 30 minutes (the dataset is older)');
    await page.reload();
    await page.waitForSelector('[data-testid=web-live][data-value="2"]');
    t.match(await page.textContent('[data-testid=web-live]'), /2 visitors in the last 30 minutes/);
  });

  t.test('shared by a link: the page opens for a visitor who is not signed in, with the same numbers', async (t) => {
    await page.goto(`${q.base}/console/project/${projectId}/web`);
    await page.waitForSelector('[data-testid=web-overview] [data-key=visitors]');
    await page.click('[data-testid=share-button]');
    await page.check('[data-testid=share-enabled]');
    const link = await (await page.waitForSelector('[data-testid=share-link]')).inputValue();
    const token = link.split('/shared/')[1]!;
    t.match(link, new RegExp(`^${q.base}/shared/[A-Za-z0-9_-]{29,30}$`), 'PostHog\'s address of a link');
    t.match((await api.get(`/api/projects/${projectId}/web_analytics/sharing/`)).body, { enabled: true, access_token: token }, 'stored by the API');

    // A second browser: no session cookie, nothing but the link.
    const visitor = await launchChromium();
    try {
      const visitorProblems: string[] = [];
      const shared = await watchedPage(visitor, visitorProblems);
      await shared.setViewportSize({ width: 1280, height: 900 });
      await shared.goto(link);
      await shared.waitForSelector('[data-testid=shared-page][data-type=web_analytics] [data-testid=web-overview] [data-key=visitors]');
      t.same(await shownOverviewOf(shared), await expectedOverview(), 'the overview equals the API\'s answer');
      t.equal(await shared.$('[data-testid=share-button]'), null, 'nothing to share or change');
      t.equal(await shared.$('nav:not(.tabs)'), null, 'no console navigation');
      await shared.click('[data-testid=web-table-InitialChannelType] tr[data-row="\\"Direct\\""]');
      const filter = [{ type: 'session', key: '$channel_type', value: 'Direct', operator: 'exact' }];
      const want = await expectedOverview(filter);
      await shared.waitForFunction((sessions) => (document.querySelector('[data-testid=web-overview] [data-key=sessions]') as HTMLElement | null)?.dataset.value === String(sessions), want.sessions[0]);
      t.same(await shownOverviewOf(shared), want, 'a row click filters the shared page too');

      // Password protection from the panel: the visitor is asked for it, a wrong one is refused, the right one opens.
      await page.check('[data-testid=share-password-required]');
      await page.click('[data-testid=share-add-password]');
      const password = (await (await page.waitForSelector('[data-testid=share-new-password] code')).textContent())!;
      t.match(password, /^[A-Za-z0-9]{16}$/, 'a generated password, shown once');
      await shared.goto(link);
      await shared.waitForSelector('[data-testid=shared-unlock]');
      await shared.fill('[aria-label=password]', 'not the password');
      await shared.click('button:has-text("Open")');
      await shared.waitForSelector('[data-testid=shared-unlock] [role=alert]');
      await shared.fill('[aria-label=password]', password);
      await shared.click('button:has-text("Open")');
      await shared.waitForSelector('[data-testid=shared-page] [data-testid=web-overview] [data-key=visitors]');
      t.pass('unlocked by the right password');

      // A shared dashboard: its tiles, read-only.
      const dash = await api.post(`/api/projects/${projectId}/dashboards/`, { name: 'Public numbers' });
      await api.post(`/api/projects/${projectId}/insights/`, {
        name: 'Pageviews', dashboards: [dash.body.id],
        query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }], dateRange: { date_from: '-14d' } } },
      });
      const dashToken = (await api.patch(`/api/projects/${projectId}/dashboards/${dash.body.id}/sharing/`, { enabled: true })).body.access_token;
      await shared.goto(`${q.base}/shared/${dashToken}`);
      await shared.waitForSelector('[data-testid=shared-page][data-type=dashboard] [data-testid=dashboard-tile] [data-testid=trend-chart]');
      t.equal(await shared.textContent('[data-testid=dashboard-page] h1'), 'Public numbers');
      t.equal(await shared.textContent('[data-testid=dashboard-tile] h3'), 'Pageviews');
      t.equal(await shared.$('[data-testid=tile-handle]'), null, 'tiles cannot be moved');
      t.equal(await shared.$('[data-testid=dashboard-tile] button.danger'), null, 'nor removed');
      await api.post(`/api/projects/${projectId}/dashboards/${dash.body.id}/sharing/refresh/`, {});
      await shared.reload();
      await shared.waitForSelector('[data-testid=shared-missing]');
      t.pass('a replaced link says it no longer opens anything');
      // The browser logs the refused password (401) and the replaced link (404) it was shown; nothing else.
      t.same(visitorProblems.filter((p) => !/status of (401|404)/.test(p)), [], 'no errors in the visitor\'s browser');
    } finally {
      await visitor.close();
    }
  });

  t.test('no errors in the browser', async (t) => {
    t.same(problems, []);
  });
}
