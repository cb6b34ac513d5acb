// Charts that read well, in a real browser (Debian's Chromium via playwright-core) against the real server and a
// known dataset: every page of the console's router at 1280 and 1920 px wide (screenshots in
// test-artifacts/console/<page>-<width>.png, no console errors); on every chart, the axis tick labels uPlot kept
// (the chart exposes them with their spans, as it draws on canvas) do not overlap and stay inside the chart, and
// the paths diagram's labels (SVG text boxes) neither overlap each other nor leave the diagram; hovering a trends
// point shows the API's value in the legend (the latest bucket's when the pointer leaves); the trends table's last
// column is reachable by scrolling at 1280 px; the Health page's axes read clock times and units; the paths
// diagram draws as many steps as asked and the API answers; a new funnel's second step is the project's most
// frequent other event.
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, keepScreenshot, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, type QuillProcess, ROOT, removeDir, startQuill } from '../helpers/quill.js';

const PASSWORD = 'charts-test-password';
const ARTIFACTS = join(ROOT, 'test-artifacts/console');
const WIDTHS = [1280, 1920];
/** On day i (0-based) of March 2024, i+1 `trend_probe` events, from persons probe-0..3 by turn. */
const DAYS = 31;
const RANGE = { date_from: '2024-03-01', date_to: '2024-03-31' };
const TRENDS = { insight: 'TRENDS', events: [{ id: 'trend_probe', math: 'total' }], interval: 'day', ...RANGE, display: 'ActionsLineGraph' };
/** Six-page sessions on 5 March (long URLs among them), so six steps are there to draw. */
const PATH_PAGES = ['/home', '/pricing', '/docs/getting-started/installing-the-server-on-a-fresh-machine', '/docs/configuration', '/signup', '/welcome'];
const STEPS = 6;
const PATHS = { insight: 'PATHS', include_event_types: ['$pageview'], step_limit: STEPS, ...RANGE };
const FUNNEL = { insight: 'FUNNELS', events: [{ id: '$pageview', type: 'events', order: 0 }, { id: 'signup', type: 'events', order: 1 }], ...RANGE, funnel_window_interval: 14, funnel_window_interval_unit: 'day' };
const LIFECYCLE = { insight: 'LIFECYCLE', events: [{ id: 'trend_probe', type: 'events', order: 0 }], interval: 'day', ...RANGE };
const STICKINESS = { insight: 'STICKINESS', events: [{ id: 'trend_probe', type: 'events', order: 0, math: 'total' }], interval: 'day', ...RANGE, display: 'ActionsLineGraph' };
const RETENTION = { insight: 'RETENTION', target_entity: { id: 'trend_probe', type: 'events' }, returning_entity: { id: 'trend_probe', type: 'events' }, period: 'Day', total_intervals: 8, date_to: '2024-03-31' };

interface Span {
  text: string;
  from: number;
  to: number;
}
interface Box {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** The first pair of spans that overlap, or null. */
function overlap(spans: Span[]): [Span, Span] | null {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.from < sorted[i - 1]!.to) return [sorted[i - 1]!, sorted[i]!];
  return null;
}

/** The first pair of boxes that intersect (by more than half a pixel each way), or null. */
function boxOverlap(boxes: Box[]): [Box, Box] | null {
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i]!;
      const b = boxes[j]!;
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5) return [a, b];
    }
  }
  return null;
}

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console charts browser suite', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let browser: Chromium;
  let page: Page;
  let projectId: number;
  let dashboardId: number;
  const problems: string[] = [];
  const take = () => problems.splice(0, problems.length);

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    api = new Client(q.base);
    projectId = (await api.get('/api/projects/@current/')).body.id;
    const batch = [];
    for (let day = 0; day < DAYS; day++) {
      for (let j = 0; j <= day; j++) {
        const person = `probe-${j % 4}`;
        batch.push(event(person, 'trend_probe', { $set: { email: `${person}@example.com` } }, { timestamp: `2024-03-${String(day + 1).padStart(2, '0')}T12:00:00Z` }));
      }
    }
    for (let p = 0; p < 4; p++) {
      // Everyone walks the six pages in order; probe-3 skips the docs, so step 3 has two nodes.
      const pages = p === 3 ? [PATH_PAGES[0]!, PATH_PAGES[1]!, PATH_PAGES[4]!, PATH_PAGES[5]!, '/app', '/settings'] : PATH_PAGES;
      pages.forEach((u, i) => batch.push(event(`probe-${p}`, '$pageview', { $current_url: u }, { timestamp: `2024-03-05T10:0${i}:00Z` })));
      batch.push(event(`probe-${p}`, 'signup', {}, { timestamp: '2024-03-05T10:07:00Z' }));
    }
    // Recent events give the definitions a 30-day volume: cta_clicked is the most frequent after $pageview.
    const now = Date.now();
    for (let i = 0; i < 6; i++) batch.push(event('probe-0', i < 4 ? 'cta_clicked' : 'signup', {}, { timestamp: new Date(now - (i + 1) * 60_000).toISOString() }));
    for (let i = 0; i < 8; i++) batch.push(event('probe-1', '$pageview', { $current_url: '/home' }, { timestamp: new Date(now - (i + 1) * 60_000).toISOString() }));
    const res = await sendBatch(q.base, batch);
    if (res.status !== 200) throw new Error(`dataset: ${res.status}`);
    const dashboard = await api.post(`/api/projects/${projectId}/dashboards/`, { name: 'Probe dashboard' });
    if (dashboard.status !== 201) throw new Error(`dashboard: ${dashboard.status} ${dashboard.text}`);
    dashboardId = dashboard.body.id;
    for (const [name, filters] of [['Probe trend', TRENDS], ['Probe funnel', FUNNEL], ['Probe paths', PATHS], ['Probe lifecycle', LIFECYCLE]] as const) {
      const saved = await api.post(`/api/projects/${projectId}/insights/`, { name, filters });
      if (saved.status !== 201) throw new Error(`insight: ${saved.status} ${saved.text}`);
      const onDashboard = await api.patch(`/api/projects/${projectId}/insights/${saved.body.id}/`, { dashboards: [dashboardId] });
      if (onDashboard.status !== 200) throw new Error(`insight on the dashboard: ${onDashboard.status} ${onDashboard.text}`);
    }
    browser = await launchChromium();
    page = await watchedPage(browser, problems);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${q.base}/console/`);
    await signIn(page, PASSWORD);
  });
  t.teardown(async () => {
    await browser?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  const url = (path: string) => `${q.base}/console${path}`;
  const withFilters = (path: string, filters: object) => `${path}?filters=${encodeURIComponent(JSON.stringify(filters))}`;
  const apiResult = async (endpoint: string, filters: object) => {
    const res = await api.post(`/api/projects/${projectId}/${endpoint}`, filters);
    if (res.status !== 200) throw new Error(`${endpoint}: ${res.status} ${res.text}`);
    return res.body.result;
  };

  /** Every uPlot chart drawn on the page: its tick label spans (x, y) and width. */
  const charts = () => page.$$eval('.chart[data-x-ticks]', (els) => els.map((el) => {
    const e = el as HTMLElement;
    return { id: e.dataset.testid ?? '', width: Number(e.dataset.width), x: JSON.parse(e.dataset.xTicks!) as Span[], y: JSON.parse(e.dataset.yTicks!) as Span[] };
  }));

  /** Every label of the paths diagrams on the page, as drawn (without its tooltip), and each diagram's box. */
  const pathLabels = () => page.$$eval('[data-testid=paths-flow] svg', (svgs) => svgs.map((svg) => {
    const frame = svg.getBoundingClientRect();
    const labels = [...svg.querySelectorAll('text.path-label')].map((el) => {
      const r = el.getBoundingClientRect();
      const text = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
      return { text, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    });
    const links = [...svg.querySelectorAll('path[data-testid=path-link]')].map((el) => {
      const r = el.getBoundingClientRect();
      return { text: el.querySelector('title')?.textContent ?? '', left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    });
    return { frame: { left: frame.left, right: frame.right, top: frame.top, bottom: frame.bottom }, labels, links };
  }));

  /** The text boxes of every other SVG with text on the page (not the paths diagram). */
  const otherSvgText = () => page.$$eval('svg', (svgs) => svgs.filter((svg) => !svg.closest('[data-testid=paths-flow]') && svg.querySelector('text')).map((svg) => {
    const frame = svg.getBoundingClientRect();
    const labels = [...svg.querySelectorAll('text')].map((el) => {
      const r = el.getBoundingClientRect();
      return { text: el.textContent ?? '', left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    });
    return { id: svg.getAttribute('aria-label') ?? 'svg', frame: { left: frame.left, right: frame.right }, labels };
  }));

  /** Labels of every chart on the page read well: none overlaps another, none leaves its chart. */
  async function checkLabels(t: { ok(v: unknown, m?: string): void; equal(a: unknown, b: unknown, m?: string): void; same(a: unknown, b: unknown, m?: string): void }, where: string): Promise<number> {
    let checked = 0;
    for (const c of await charts()) {
      t.ok(c.x.length >= 1 && c.y.length >= 2, `${where} ${c.id}: ${c.x.length} x and ${c.y.length} y labels`);
      t.equal(overlap(c.x), null, `${where} ${c.id}: x labels apart (${c.x.map((s) => s.text).join(' | ')})`);
      t.equal(overlap(c.y), null, `${where} ${c.id}: y labels apart`);
      t.ok(c.x.every((s) => s.from >= 0 && s.to <= c.width), `${where} ${c.id}: x labels inside the ${c.width} px chart`);
      checked++;
    }
    for (const d of await pathLabels()) {
      t.ok(d.labels.length >= 2, `${where}: ${d.labels.length} path labels`);
      t.equal(boxOverlap(d.labels), null, `${where}: path labels apart`);
      const onLinks = d.labels.flatMap((l) => d.links.filter((k) => boxOverlap([l, k]) !== null).map((k) => `${l.text} on ${k.text}`));
      t.same(onLinks, [], `${where}: no path label on a link (${d.links.length} links)`);
      const outside = d.labels.filter((l) => l.left < d.frame.left - 0.5 || l.right > d.frame.right + 0.5 || l.top < d.frame.top - 0.5 || l.bottom > d.frame.bottom + 0.5);
      t.same(outside.map((l) => l.text), [], `${where}: path labels inside the diagram`);
      t.ok(d.labels.every((l) => l.text.length > 0), `${where}: every path label shows text`);
      checked++;
    }
    // Other SVG charts (an experiment's exposures and lift interval): their text boxes apart and inside.
    for (const svg of await otherSvgText()) {
      t.equal(boxOverlap(svg.labels), null, `${where} ${svg.id}: labels apart`);
      t.ok(svg.labels.every((l) => l.left >= svg.frame.left - 0.5 && l.right <= svg.frame.right + 0.5), `${where} ${svg.id}: labels inside`);
      checked++;
    }
    return checked;
  }

  t.test('every page at 1280 and 1920 px: screenshots, no console errors, chart labels that do not overlap', async (t) => {
    const person = (await api.get('/api/projects/@current/persons/?distinct_id=probe-0')).body.results[0];
    const flag = await api.post('/api/projects/@current/feature_flags/', { key: 'charts-check', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
    const cohort = await api.post('/api/projects/@current/cohorts/', { name: 'Probe people', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: 'probe' }] }] } } });
    const experiment = await api.post('/api/projects/@current/experiments/', {
      name: 'Probe experiment', feature_flag_key: 'probe-experiment', start_date: '2024-03-01T00:00:00Z', end_date: '2024-03-21T00:00:00Z',
      metrics: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'signup' }] }],
    });
    // Exposures over twenty days: the experiment's chart has a date axis to thin.
    const exposures = [];
    for (let i = 0; i < 60; i++) {
      const at = `2024-03-${String(2 + (i % 19)).padStart(2, '0')}T09:00:00Z`;
      exposures.push(event(`exposed-${i}`, '$feature_flag_called', { $feature_flag: 'probe-experiment', $feature_flag_response: i % 2 ? 'test' : 'control' }, { timestamp: at }));
    }
    t.equal((await sendBatch(q.base, exposures)).status, 200);
    const saved = (await api.get(`/api/projects/${projectId}/insights/`)).body.results;
    const P = `/project/${projectId}`;
    // The routes of src/console/app/main.tsx, each with what shows it is drawn.
    const pages: [string, string, string][] = [
      ['events', `${P}/events`, '[data-testid=event-list]'],
      ['persons', `${P}/persons`, '[data-testid=person-list]'],
      ['person', `${P}/persons/${person.uuid}`, '[data-testid=person-events] [data-testid=event-list]'],
      ['flags', `${P}/flags`, '[data-testid=flag-list]'],
      ['flag-new', `${P}/flags/new`, '[data-testid=flag-form]'],
      ['flag-edit', `${P}/flags/${flag.body.id}`, '[data-testid=flag-form] input[name=key]'],
      ['cohorts', `${P}/cohorts`, '[data-testid=cohort-list]'],
      ['cohort', `${P}/cohorts/${cohort.body.id}`, '[data-testid=cohort-page] input[name=name]'],
      ['experiments', `${P}/experiments`, '[data-testid=experiment-list]'],
      ['experiment', `${P}/experiments/${experiment.body.id}`, '[data-testid=exposures-chart]'],
      ['definitions', `${P}/definitions`, '[data-testid=definition-list]'],
      ['insights', `${P}/insights`, '[data-testid=insights-page] .kinds'],
      ['insights-kind', `${P}/insights/trends-list`, '[data-testid=insights-page]'],
      ['trends', withFilters(`${P}/insights/trends`, TRENDS), '[data-testid=trend-chart][data-x-ticks]'],
      ['trends-bar', withFilters(`${P}/insights/trends`, { ...TRENDS, display: 'ActionsBar' }), '[data-testid=trend-chart][data-x-ticks]'],
      ['lifecycle', withFilters(`${P}/insights/lifecycle`, LIFECYCLE), '[data-testid=trend-chart][data-x-ticks]'],
      ['stickiness', withFilters(`${P}/insights/stickiness`, STICKINESS), '[data-testid=trend-chart][data-x-ticks]'],
      ['funnel', withFilters(`${P}/insights/funnels`, FUNNEL), '[data-testid=funnel-chart][data-x-ticks]'],
      ['retention', withFilters(`${P}/insights/retention`, RETENTION), '[data-testid=retention-page] table'],
      ['paths', withFilters(`${P}/insights/paths`, PATHS), '[data-testid=paths-flow]'],
      ['saved-insight', `${P}/insights/saved/${saved.find((i: { name: string }) => i.name === 'Probe trend').id}`, '[data-testid=trend-chart][data-x-ticks]'],
      ['dashboards', `${P}/dashboard`, '[data-testid=dashboards-page]'],
      ['dashboard', `${P}/dashboard/${dashboardId}`, '[data-testid=dashboard-tile] [data-testid=trend-chart][data-x-ticks]'],
      ['health', `${P}/health`, '[data-testid=health-rate][data-x-ticks]'],
      ['settings', `${P}/settings`, '[data-testid=settings-form]'],
      ['account', '/account', '[data-testid=account-page]'],
    ];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, path, ready] of pages) {
        await page.goto(url(path));
        await page.waitForSelector(ready, { timeout: 20_000 });
        if (name === 'dashboard') await page.waitForSelector('[data-testid=dashboard-tile] [data-testid=paths-flow]');
        const checked = await checkLabels(t, `${name} at ${width}`);
        if (['experiment', 'trends', 'trends-bar', 'lifecycle', 'stickiness', 'funnel', 'paths', 'saved-insight', 'health'].includes(name)) t.ok(checked >= 1, `${name} at ${width}: a chart checked`);
        if (name === 'dashboard') t.ok(checked >= 3, `dashboard at ${width}: the trend, funnel, lifecycle and paths tiles (${checked})`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
        t.ok(overflow <= 0, `${name} at ${width}: nothing wider than the window (${overflow} px over)`);
        await keepScreenshot(page, join(ARTIFACTS, `${name}-${width}.png`));
        t.same(take(), [], `${name} at ${width}: no console errors`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    // 30 exposures per variant, under the guard's 100: the page says what is missing, per variant, with the numbers.
    await page.goto(url(`${P}/experiments/${experiment.body.id}`));
    const guard = page.locator('[data-testid=experiment-guard]');
    await guard.waitFor();
    const lines = await guard.locator('li').allTextContents();
    t.ok(lines.includes('control: 30 exposures of the 100 needed per variant.') && lines.includes('test: 30 exposures of the 100 needed per variant.'), `why not significant yet: ${lines.join(' | ')}`);
    t.same(take(), []);
  });

  t.test('31 daily labels thin out: every label on a wide chart, fewer on a dashboard tile', async (t) => {
    await page.setViewportSize({ width: 1920, height: 900 });
    await page.goto(url(withFilters(`/project/${projectId}/insights/trends`, TRENDS)));
    await page.waitForSelector('[data-testid=trend-chart][data-x-ticks]');
    const wide = (await charts())[0]!;
    await page.goto(url(`/project/${projectId}/dashboard/${dashboardId}`));
    await page.waitForSelector('[data-testid=dashboard-tile] [data-testid=trend-chart][data-x-ticks]');
    const tile = (await charts()).find((c) => c.id === 'trend-chart')!;
    t.ok(tile.x.length < wide.x.length, `a tile keeps ${tile.x.length} labels, the page's chart ${wide.x.length}`);
    t.ok(tile.x.length >= 2, 'a tile still labels its axis');
    t.equal(overlap(tile.x), null);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  t.test('hovering a trends point shows its value in the legend; the latest bucket otherwise', async (t) => {
    const data: number[] = (await apiResult('insights/trend/', TRENDS))[0].data;
    const labels: string[] = (await apiResult('insights/trend/', TRENDS))[0].labels;
    await page.goto(url(withFilters(`/project/${projectId}/insights/trends`, TRENDS)));
    await page.waitForSelector('[data-testid=trend-chart][data-x-ticks]');
    const legend = async () => page.$$eval('[data-testid=trend-chart] .u-legend .u-series', (rows) => rows.map((r) => ({
      name: r.querySelector('.u-label')?.textContent ?? '', value: r.querySelector('.u-value')?.textContent ?? '',
    })));
    const idle = await legend();
    t.same(idle.map((r) => r.name), ['Date', 'trend_probe'], 'readable names');
    t.same(idle.map((r) => r.value), [labels[DAYS - 1], String(data[DAYS - 1])], 'no pointer: the latest bucket');
    const over = (await page.locator('[data-testid=trend-chart] .u-over').boundingBox())!;
    for (const i of [2, 14, 27]) {
      await page.mouse.move(over.x + ((i + 0.5) * over.width) / DAYS, over.y + over.height / 2);
      await page.waitForFunction((want) => document.querySelectorAll('[data-testid=trend-chart] .u-legend .u-value')[0]?.textContent === want, labels[i]);
      t.same((await legend()).map((r) => r.value), [labels[i], String(data[i])], `bucket ${i}: the legend says ${labels[i]}, ${data[i]} as the API`);
    }
    await page.mouse.move(over.x + over.width / 2, over.y + over.height + 120);
    await page.waitForFunction((want) => document.querySelectorAll('[data-testid=trend-chart] .u-legend .u-value')[0]?.textContent === want, labels[DAYS - 1]);
    t.same((await legend()).map((r) => r.value), [labels[DAYS - 1], String(data[DAYS - 1])], 'pointer gone: the latest bucket again');
    t.same(take(), []);
  });

  t.test("the trends table's last column is reachable by scrolling at 1280 px", async (t) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(url(withFilters(`/project/${projectId}/insights/trends`, TRENDS)));
    await page.waitForSelector('[data-testid=trend-table]');
    const scroller = page.locator('[data-testid=trend-table]').locator('xpath=..');
    const before = await scroller.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    t.ok(before.scroll > before.client, `the table is wider (${before.scroll} px) than its box (${before.client} px)`);
    await scroller.evaluate((el) => { el.scrollLeft = el.scrollWidth; });
    const seen = await page.evaluate(() => {
      const table = document.querySelector('[data-testid=trend-table]')!;
      const box = table.parentElement!.getBoundingClientRect();
      const last = table.querySelector('thead th:last-child')!.getBoundingClientRect();
      const first = table.querySelector('tbody th')!.getBoundingClientRect();
      return { box: { left: box.left, right: box.right }, last: { left: last.left, right: last.right }, first: { left: first.left }, text: table.querySelector('thead th:last-child')!.textContent, viewport: innerWidth };
    });
    t.equal(seen.text, 'Total (sum)');
    t.ok(seen.last.left >= seen.box.left && seen.last.right <= seen.box.right + 0.5 && seen.last.right <= seen.viewport, 'the last column is inside the box and the window');
    t.ok(Math.abs(seen.first.left - seen.box.left) < 1, 'the series name stays at the left edge while scrolled');
    await keepScreenshot(page, join(ARTIFACTS, 'trends-table-scrolled-1280.png'), { fullPage: false });
  });

  t.test('the Health page: clock times on the time axis, units on the values', async (t) => {
    await page.goto(url(`/project/${projectId}/health`));
    await page.waitForSelector('[data-testid=health-fsync][data-x-ticks]', { timeout: 20_000 });
    const byId = Object.fromEntries((await charts()).map((c) => [c.id, c]));
    for (const id of ['health-rate', 'health-backlog', 'health-fsync']) {
      t.ok(byId[id]!.x.length >= 1 && byId[id]!.x.every((s) => /^\d\d:\d\d:\d\d$/.test(s.text)), `${id}: clock times (${byId[id]!.x.map((s) => s.text).join(', ')})`);
      const texts = byId[id]!.x.map((s) => s.text);
      t.equal(new Set(texts).size, texts.length, `${id}: no clock time twice`);
    }
    t.ok(byId['health-rate']!.y.every((s) => s.text.endsWith('/s')), `rates per second (${byId['health-rate']!.y.map((s) => s.text).join(', ')})`);
    t.ok(byId['health-fsync']!.y.every((s) => s.text.endsWith(' ms')), 'latencies in ms');
    const values = await page.$$eval('[data-testid=health-rate] .u-legend .u-series .u-value', (els) => els.map((e) => e.textContent ?? ''));
    t.ok(values.slice(1).length >= 2 && values.slice(1).every((v) => / events\/s$/.test(v)), `legend values with units (${values.join(' | ')})`);
    t.match(await page.textContent('[data-testid=shard-table] tbody td:last-child'), /^\d+(\.\d)? (B|KB|MB|GB)$/, 'the log size in B, KB, MB or GB');
    // Per shard, appended and applied differ (an event is applied by the shard owning its person); the totals row
    // adds them up and says so. Once nothing is being applied, every appended event is applied.
    const table = () => page.$$eval('[data-testid=shard-table] tr', (rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent ?? '')));
    const num = (text: string) => Number(text.replace(/[^\d]/g, ''));
    await page.waitForFunction(() => {
      const cells = Array.from(document.querySelectorAll('[data-testid=shard-totals] td'), (c) => Number((c.textContent ?? '').replace(/[^\d]/g, '')));
      return cells.length >= 3 && cells[0]! > 0 && cells[0] === cells[1]! + cells[2]!;
    }, undefined, { timeout: 30_000 });
    const rows = await table();
    const shardRows = rows.filter((r) => /^\d+$/.test(r[0]!));
    const totals = rows.find((r) => r[0] === 'All')!;
    t.equal(shardRows.length, 2, 'a row per shard');
    for (const col of [1, 2, 3]) t.equal(num(totals[col]!), shardRows.reduce((sum, r) => sum + num(r[col]!), 0), `the totals row adds up column ${rows[0]![col]}`);
    t.match(await page.textContent('[data-testid=shard-table-note]'), /applied \(stored\) by the shard that owns its person/, 'the difference per shard is explained');
    t.same(take(), []);
  });

  t.test('the paths diagram draws as many steps as asked and answered, long names cut with the full name as tooltip', async (t) => {
    const edges: { source: string; target: string }[] = await apiResult('insights/path/', PATHS);
    const answered = Math.max(...edges.map((e) => Number(e.target.split('_')[0])));
    t.equal(answered, STEPS, `the API answers ${STEPS} steps`);
    await page.goto(url(withFilters(`/project/${projectId}/insights/paths`, PATHS)));
    await page.waitForSelector('[data-testid=paths-flow]');
    const drawn = await page.$$eval('[data-testid=path-node]', (nodes) => ({
      steps: new Set(nodes.map((n) => n.getAttribute('data-step'))).size,
      columns: new Set(nodes.map((n) => Math.round(Number(n.querySelector('rect')!.getAttribute('x'))))).size,
      columnOfStep: nodes.map((n) => [Number(n.getAttribute('data-step')), Math.round(Number(n.querySelector('rect')!.getAttribute('x')))]),
    }));
    t.equal(drawn.steps, STEPS, 'every step has nodes');
    t.equal(drawn.columns, STEPS, 'one column per step');
    const xOf = new Map<number, Set<number>>();
    for (const [step, x] of drawn.columnOfStep) xOf.set(step!, (xOf.get(step!) ?? new Set()).add(x!));
    t.ok([...xOf.values()].every((xs) => xs.size === 1), 'the nodes of a step share its column (a path that ends early stays in its step)');
    t.equal(await page.locator('[data-testid=paths-steps-note]').count(), 0, 'no note: every asked step is drawn');
    const long = PATH_PAGES[2]!;
    const cut = await page.$$eval('text.path-label', (els, name) => els.filter((e) => e.querySelector('title')?.textContent?.startsWith(name)).map((e) => ({
      shown: [...e.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(''), title: e.querySelector('title')!.textContent,
    })), long);
    t.equal(cut.length, 1);
    t.ok(cut[0]!.shown.includes('…') && cut[0]!.shown.length < long.length, `the long URL is cut: "${cut[0]!.shown}"`);
    t.match(cut[0]!.title, `${long} (`, 'its tooltip has the full name and count');
    // Asking more steps than any session has: the page says why fewer are drawn.
    await page.goto(url(withFilters(`/project/${projectId}/insights/paths`, { ...PATHS, step_limit: 9 })));
    await page.waitForSelector('[data-testid=paths-steps-note]');
    t.match(await page.textContent('[data-testid=paths-steps-note]'), `reach step ${STEPS} of the 9 asked`);
    t.same(take(), []);
  });

  t.test("a new funnel starts at $pageview then the project's most frequent other event", async (t) => {
    const definitions = (await api.get(`/api/projects/${projectId}/event_definitions/?limit=200`)).body.results as { name: string; volume_30_day: number }[];
    const custom = definitions.filter((d) => !d.name.startsWith('$')).sort((a, b) => b.volume_30_day - a.volume_30_day);
    t.equal(custom[0]!.name, 'cta_clicked', 'the dataset: cta_clicked is the most frequent custom event of the last 30 days');
    await page.goto(url(`/project/${projectId}/insights/funnels`));
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('[aria-label="step 2 event"]')?.value === 'cta_clicked');
    t.equal(await page.inputValue('[aria-label="step 1 event"]'), '$pageview');
    t.equal(await page.inputValue('[aria-label="step 2 event"]'), 'cta_clicked');
    await page.waitForSelector('[data-testid=funnel-chart][data-rendered=true]');
    await page.click('text=+ step');
    t.equal(await page.inputValue('[aria-label="step 3 event"]'), '', 'an added step is the user\'s to choose');
    await page.waitForSelector('[data-testid=funnel-choose]');
    await keepScreenshot(page, join(ARTIFACTS, 'funnel-new-1280.png'));
    t.same(take(), []);
  });
}
