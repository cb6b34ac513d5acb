// The console's Web analytics page in a real browser (Debian's Chromium via playwright-core) against the real server:
// the overview numbers and their previous values, a table's visitors and the web vitals on the page equal the
// answers of /query/ for the same question; a click on a table row filters the whole page (the overview then equals
// the API's answer with that filter); the page comes as its own chunk (not in the first page's JavaScript).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, type QuillProcess, removeDir, ROOT, startQuill } from '../helpers/quill.js';

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
  /** The overview as the page shows it: key → [value, previous] from the tiles' data attributes. */
  const shownOverview = () => page.$$eval('[data-testid=web-overview] [data-key]', (els) => Object.fromEntries(els.map((e) => {
    const d = (e as HTMLElement).dataset;
    return [d.key, [d.value === '' ? null : Number(d.value), d.previous === '' ? null : Number(d.previous)]];
  })));
  const expectedOverview = async (properties: object[] = []) => Object.fromEntries((await query({ kind: 'WebOverviewQuery', ...base(properties) })).results.map((i: any) => [i.key, [i.value, i.previous]]));

  t.test('overview, tables and web vitals equal the API', async (t) => {
    const before = scripts.length;
    await page.click('nav a:has-text("Web analytics")');
    await page.waitForSelector('[data-testid=web-overview] [data-key=visitors]');
    t.ok(scripts.slice(before).some((u) => !scripts.slice(0, before).includes(u)), `the page loads its own chunk (${scripts.slice(before).join(', ')})`);
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
    mkdirSync(join(ROOT, 'test-artifacts/console'), { recursive: true });
    await page.screenshot({ path: join(ROOT, 'test-artifacts/console/web-analytics.png'), fullPage: true });
  });

  t.test('annotations are drawn on the visitors chart', async (t) => {
    await page.waitForSelector('[data-testid=web-visitors][data-markers]');
    const markers = JSON.parse(await page.$eval('[data-testid=web-visitors]', (e) => (e as HTMLElement).dataset.markers!));
    t.match(markers, [{ text: 'Launch', x: Number }]);
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

  t.test('no errors in the browser', async (t) => {
    t.same(problems, []);
  });
}
