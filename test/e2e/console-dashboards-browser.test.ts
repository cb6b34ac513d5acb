// Dashboards in the console, in a real browser (Debian's Chromium through playwright-core, the real server): a second
// dashboard made in the page, three saved insights added to it, one tile dragged to another place and one resized by
// its corner (and by the keyboard); after a reload the layout is the same in the page and in the API. A tile removed
// after a confirmation; the dashboard's date range override changes what every tile says and its result, and goes
// away again; Refresh computes anew; a new insight saved from a dashboard lands on it; rename and soft delete in the
// list. Screenshots at 1280 and 1920 px wide in test-artifacts/console/.
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, keepScreenshot, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { eventually } from '../helpers/eventually.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { Client, type QuillProcess, ROOT, removeDir, startQuill } from '../helpers/quill.js';

const PASSWORD = 'dashboards-test-password';
const ARTIFACTS = join(ROOT, 'test-artifacts/console');
/**
 * The known dataset: on day i (0-based) of 2024-03-01..10, i+1 `tile_probe` events from min(i+1, 3) persons; each of
 * the three persons signs up (`tile_signup`) on one of the first three days, so a funnel over later days converts none.
 */
const DAYS = 10;
const RANGE = { date_from: '2024-03-01', date_to: '2024-03-10' };

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console dashboards browser suite', unavailable);
else suite();

interface Cell { x: number; y: number; w: number; h: number }

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let browser: Chromium;
  let page: Page;
  let P: string;
  let projectId: number;
  let dashboardId: number;
  const insights: Record<string, number> = {};
  const problems: string[] = [];
  const take = () => problems.splice(0, problems.length);

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    api = new Client(q.base);
    projectId = (await api.get('/api/projects/@current/')).body.id;
    P = `/api/projects/${projectId}`;
    const batch = [];
    for (let day = 0; day < DAYS; day++) {
      const at = `2024-03-${String(day + 1).padStart(2, '0')}T12:00:00Z`;
      for (let j = 0; j <= day; j++) batch.push(event(`p-${j % 3}`, 'tile_probe', {}, { timestamp: at }));
      if (day < 3) batch.push(event(`p-${day}`, 'tile_signup', {}, { timestamp: at.replace('T12', 'T13') }));
    }
    const res = await sendBatch(q.base, batch);
    if (res.status !== 200) throw new Error(`dataset: ${res.status}`);
    // Three saved insights on no dashboard, and a first dashboard, so the one made in the page is the second.
    const save = async (name: string, filters: Record<string, unknown>) => {
      const r = await api.post(`${P}/insights/`, { name, filters });
      if (r.status !== 201) throw new Error(`insight ${name}: ${r.text}`);
      insights[name] = r.body.id;
    };
    await save('Probes per day', { insight: 'TRENDS', events: [{ id: 'tile_probe', math: 'total' }], interval: 'day', display: 'ActionsLineGraph', ...RANGE });
    await save('Signups per day', { insight: 'TRENDS', events: [{ id: 'tile_signup', math: 'total' }], interval: 'day', display: 'ActionsBar', ...RANGE });
    await save('Probe to signup', { insight: 'FUNNELS', events: [{ id: 'tile_probe', type: 'events', order: 0 }, { id: 'tile_signup', type: 'events', order: 1 }], funnel_window_interval: 14, funnel_window_interval_unit: 'day', ...RANGE });
    await api.post(`${P}/dashboards/`, { name: 'First dashboard' });
    browser = await launchChromium();
    page = await watchedPage(browser, problems);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
  t.teardown(async () => {
    await browser?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  const url = (path: string) => `${q.base}/console${path}`;
  const shot = (name: string) => keepScreenshot(page, join(ARTIFACTS, `${name}.png`));
  const tile = (name: string) => page.locator('[data-testid=dashboard-grid] > .grid-cell').filter({ has: page.getByRole('heading', { name, exact: true }) });
  /** Every tile's grid cell as the page shows it, by insight name. */
  const domCells = async (): Promise<Record<string, Cell>> => Object.fromEntries(await page.locator('[data-testid=dashboard-grid] > .grid-cell').evaluateAll((els) => els.map((el) => {
    const e = el as HTMLElement;
    // The cell the browser's grid actually placed it in, not only the data attributes.
    const style = getComputedStyle(e);
    const span = (start: string, end: string) => (end.startsWith('span') ? Number(end.slice(5)) : Number(end) - Number(start));
    const [x, w] = [Number(style.gridColumnStart) - 1, span(style.gridColumnStart, style.gridColumnEnd)];
    const [y, h] = [Number(style.gridRowStart) - 1, span(style.gridRowStart, style.gridRowEnd)];
    const data = { x: Number(e.dataset.x), y: Number(e.dataset.y), w: Number(e.dataset.w), h: Number(e.dataset.h) };
    if (data.x !== x || data.y !== y || data.w !== w || data.h !== h) throw new Error(`grid style and data disagree: ${JSON.stringify({ data, x, y, w, h })}`);
    return [e.querySelector('h3')!.textContent!, data];
  })));
  /** Every tile's stored layout (`layouts.sm`), by insight name. */
  const apiCells = async (): Promise<Record<string, Cell>> => {
    const d = await api.get(`${P}/dashboards/${dashboardId}/`);
    return Object.fromEntries(d.body.tiles.map((x: any) => [x.insight.name, x.layouts.sm]));
  };
  /** Drags from the middle of `from` by (dx, dy) pixels, in steps, as a person would. */
  const drag = async (selector: ReturnType<Page['locator']>, dx: number, dy: number) => {
    const box = (await selector.boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + dx / 2, y + dy / 2, { steps: 5 });
    await page.mouse.move(x + dx, y + dy, { steps: 5 });
    await page.mouse.up();
  };
  /** One column and one row of the grid, in pixels (12 columns with 12 px gaps; 60 px rows). */
  const gridUnits = async () => {
    const width = (await page.locator('[data-testid=dashboard-grid]').boundingBox())!.width;
    return { col: (width + 12) / 12, row: 60 + 12 };
  };
  const tilesRendered = () => page.waitForFunction(() => {
    const tiles = [...document.querySelectorAll('[data-testid=dashboard-tile]')];
    return tiles.length > 0 && tiles.every((el) => el.querySelector('[data-rendered=true]'));
  });

  t.test('sign in', async (t) => {
    await page.goto(url('/'));
    await signIn(page, PASSWORD);
    t.same(take(), []);
  });

  t.test('a second dashboard made in the page gets three saved insights, each tile with its name, kind and dates', async (t) => {
    await page.goto(url(`/project/${projectId}/dashboard`));
    await page.waitForSelector('[data-testid=dashboard-list]');
    t.equal(await page.locator('[data-testid=dashboard-row]').count(), 1, 'the first dashboard');
    await page.getByLabel('new dashboard name').fill('Growth');
    await page.getByLabel('new dashboard description').fill('Probes and signups');
    await page.getByRole('button', { name: 'New dashboard' }).click();
    await page.waitForURL(/\/dashboard\/\d+$/);
    dashboardId = Number(page.url().split('/').pop());
    await page.waitForSelector('[data-testid=dashboard-empty]');
    t.match((await api.get(`${P}/dashboards/${dashboardId}/`)).body, { name: 'Growth', description: 'Probes and signups', tiles: [] });
    t.equal((await api.get(`${P}/dashboards/`)).body.count, 2, 'two dashboards');

    for (const name of ['Probes per day', 'Signups per day', 'Probe to signup']) {
      await page.getByLabel('saved insight to add').selectOption({ label: name });
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await tile(name).waitFor();
    }
    await tilesRendered();
    const stored = (await api.get(`${P}/dashboards/${dashboardId}/`)).body;
    t.same(stored.tiles.map((x: any) => x.insight.name).sort(), ['Probe to signup', 'Probes per day', 'Signups per day']);
    t.same((await api.get(`${P}/insights/${insights['Probes per day']}/`)).body.dashboards, [dashboardId], 'the insight knows its dashboard');
    t.same(await page.locator('[data-testid=tile-kind]').allTextContents(), ['Trends', 'Trends', 'Funnels']);
    t.same(await page.locator('[data-testid=tile-range]').allTextContents(), Array(3).fill('2024-03-01 – 2024-03-10'));
    t.equal(await tile('Probes per day').locator('[data-testid=trend-chart]').getAttribute('data-points'), String(DAYS));
    t.same(await domCells(), {
      'Probes per day': { x: 0, y: 0, w: 6, h: 5 }, 'Signups per day': { x: 6, y: 0, w: 6, h: 5 }, 'Probe to signup': { x: 0, y: 5, w: 6, h: 5 },
    }, 'new tiles two by row');
    t.same(take(), []);
  });

  t.test('a tile dragged above another and one resized by its corner keep their places after a reload', async (t) => {
    const { col, row } = await gridUnits();
    // The funnel (second row, left) dragged up five rows: it takes the first place, the first trend goes below it.
    await drag(tile('Probe to signup').locator('[data-testid=tile-handle]'), 0, -5 * row);
    const moved = { 'Probe to signup': { x: 0, y: 0, w: 6, h: 5 }, 'Probes per day': { x: 0, y: 5, w: 6, h: 5 }, 'Signups per day': { x: 6, y: 0, w: 6, h: 5 } };
    t.same(await domCells(), moved, 'the page shows the swap');
    await eventually('the move stored', async () => sameCells(await apiCells(), moved));
    // The signups tile's corner dragged two columns left and three rows down: 4 wide, 8 high.
    await drag(tile('Signups per day').locator('[data-testid=tile-resize]'), -2 * col, 3 * row);
    const laidOut = { ...moved, 'Signups per day': { x: 6, y: 0, w: 4, h: 8 } };
    t.same(await domCells(), laidOut, 'the page shows the new size');
    await eventually('the resize stored', async () => sameCells(await apiCells(), laidOut));
    await tilesRendered();
    await shot('dashboard-grid-1280');

    await page.reload();
    await page.waitForSelector('[data-testid=dashboard-grid]');
    await tilesRendered();
    t.same(await domCells(), laidOut, 'the same layout after a reload');
    t.same(await apiCells(), laidOut, 'as the API stores it (layouts.sm)');
    const box = (await tile('Signups per day').boundingBox())!;
    t.ok(Math.abs(box.width - (4 * col - 12)) < 2, `the resized tile is 4 columns wide (${box.width} px)`);
    t.ok(Math.abs(box.height - (8 * row - 12)) < 2, `and 8 rows high (${box.height} px)`);

    // The keyboard does the same: the focused handle, Shift+ArrowRight widens by a column, ArrowDown passes the tile below.
    await tile('Signups per day').locator('[data-testid=tile-handle]').focus();
    await page.keyboard.press('Shift+ArrowRight');
    await eventually('the keyboard resize stored', async () => (await apiCells())['Signups per day']!.w === 5);
    await tile('Probe to signup').locator('[data-testid=tile-handle]').focus();
    await page.keyboard.press('ArrowDown');
    const keyed = { 'Probes per day': { x: 0, y: 0, w: 6, h: 5 }, 'Probe to signup': { x: 0, y: 5, w: 6, h: 5 }, 'Signups per day': { x: 6, y: 0, w: 5, h: 8 } };
    t.same(await domCells(), keyed, 'the funnel moved down past the trend');
    await eventually('the keyboard move stored', async () => sameCells(await apiCells(), keyed));

    await page.setViewportSize({ width: 1920, height: 1080 });
    await tilesRendered();
    t.same(await domCells(), keyed, 'a wider window keeps the grid cells');
    await shot('dashboard-grid-1920');
    await page.setViewportSize({ width: 1280, height: 900 });
    t.same(take(), []);
  });

  t.test('a tile is removed after a confirmation; the insight stays saved', async (t) => {
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      d.dismiss();
    });
    await page.getByRole('button', { name: 'Remove Signups per day from the dashboard' }).click();
    t.match(asked, /Remove "Signups per day"/);
    t.equal(await page.locator('[data-testid=dashboard-tile]').count(), 3, 'dismissed: still there');
    page.once('dialog', (d) => d.accept());
    await page.getByRole('button', { name: 'Remove Signups per day from the dashboard' }).click();
    await tile('Signups per day').waitFor({ state: 'detached' });
    await eventually('the removal stored', async () => (await api.get(`${P}/dashboards/${dashboardId}/`)).body.tiles.length === 2);
    const insight = await api.get(`${P}/insights/${insights['Signups per day']}/`);
    t.equal(insight.status, 200);
    t.same(insight.body.dashboards, [], 'on no dashboard now');
    await page.reload();
    await tilesRendered();
    t.same(Object.keys(await domCells()).sort(), ['Probe to signup', 'Probes per day']);
    t.same(take(), []);
  });

  t.test("the dashboard's date range override changes what the tiles say and their results", async (t) => {
    const probes = tile('Probes per day');
    await page.getByLabel('dashboard date range').selectOption('custom');
    await page.getByLabel('dashboard date from').fill('2024-03-04');
    await page.getByLabel('dashboard date to').fill('2024-03-06');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=tile-range]')].every((e) => e.textContent === '2024-03-04 – 2024-03-06'));
    await tilesRendered();
    t.equal(await page.locator('[data-testid=tile-range]').count(), 2);
    t.equal(await probes.locator('[data-testid=trend-chart]').getAttribute('data-points'), '3', 'three days now');
    const stored = (await api.get(`${P}/dashboards/${dashboardId}/`)).body;
    t.same(stored.filters, { date_from: '2024-03-04', date_to: '2024-03-06' });
    const byName = Object.fromEntries(stored.tiles.map((x: any) => [x.insight.name, x.insight]));
    t.same(byName['Probes per day'].result[0].data, [4, 5, 6], 'the API computes the tile over the override');
    const funnel = (await api.get(`${P}/insights/${insights['Probe to signup']}/`)).body.filters;
    const direct = await api.post(`${P}/insights/funnel/`, { ...funnel, date_from: '2024-03-04', date_to: '2024-03-06' });
    const own = await api.post(`${P}/insights/funnel/`, funnel);
    t.same(byName['Probe to signup'].result.map((s: any) => s.count), direct.body.result.map((s: any) => s.count), 'the funnel too');
    t.same([direct.body.result[1].count, own.body.result[1].count], [0, 3], 'no signup in the override, three in its own range');
    t.match(await page.textContent('[data-testid=override-badge]'), '2024-03-04 – 2024-03-06');
    t.same((await api.get(`${P}/insights/${insights['Probes per day']}/`)).body.filters.date_from, '2024-03-01', 'the insight keeps its own dates');
    await shot('dashboard-override');

    await page.getByLabel('dashboard date range').selectOption('-7d');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=tile-range]')].every((e) => e.textContent === 'Last 7 days'));
    t.same((await api.get(`${P}/dashboards/${dashboardId}/`)).body.filters, { date_from: '-7d' });

    await page.getByLabel('dashboard date range').selectOption('');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=tile-range]')].every((e) => e.textContent === '2024-03-01 – 2024-03-10'));
    await tilesRendered();
    // The range label changes with the dashboard's state; the chart with the tile's new answer, a moment later.
    await probes.locator(`[data-testid=trend-chart][data-points="${DAYS}"]`).waitFor({ timeout: 10_000 }).catch(() => undefined);
    t.equal(await probes.locator('[data-testid=trend-chart]').getAttribute('data-points'), String(DAYS), 'each tile its own dates again');
    t.equal(await page.locator('[data-testid=override-badge]').count(), 0);
    t.same((await api.get(`${P}/dashboards/${dashboardId}/`)).body.filters, {});
    t.same(take(), []);
  });

  t.test('Refresh computes every tile anew and says when', async (t) => {
    const before = await page.locator('[data-testid=last-refresh]').getAttribute('data-last-refresh');
    t.ok(before, `computed at ${before}`);
    // One more probe on the last day: a refreshed trend counts it.
    const res = await sendBatch(q.base, [event('p-0', 'tile_probe', {}, { timestamp: '2024-03-10T13:00:00Z' })]);
    t.equal(res.status, 200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForFunction((b) => {
      const v = document.querySelector('[data-testid=last-refresh]')?.getAttribute('data-last-refresh');
      return v && v !== b;
    }, before);
    const after = (await page.locator('[data-testid=last-refresh]').getAttribute('data-last-refresh'))!;
    t.ok(after > before!, `${after} after ${before}`);
    t.match(await page.textContent('[data-testid=last-refresh]'), /^Computed /);
    await tilesRendered();
    await page.locator('[data-testid=trend-chart]').first().waitFor();
    const stored = (await api.get(`${P}/dashboards/${dashboardId}/`)).body;
    t.equal(stored.tiles.find((x: any) => x.insight.name === 'Probes per day').insight.result[0].data[DAYS - 1], DAYS + 1, 'the new event is counted');
    t.same(take(), []);
  });

  t.test('a new insight started from the dashboard is saved onto it', async (t) => {
    await page.getByRole('link', { name: 'New insight' }).click();
    await page.waitForURL(new RegExp(`/insights/trends\\?dashboard=${dashboardId}$`));
    const growth = page.locator('[data-testid=dashboard-picker] label:has-text("Growth") input');
    await growth.waitFor();
    t.equal(await growth.isChecked(), true, 'the dashboard it came from is ticked');
    t.equal(await page.locator('[data-testid=dashboard-picker] label:has-text("First dashboard") input').isChecked(), false);
    await page.getByLabel('insight name').fill('Started on Growth');
    await page.getByRole('button', { name: 'Save insight' }).click();
    await page.waitForURL(/\/insights\/saved\/\d+$/);
    const id = Number(page.url().split('/').pop());
    t.same((await api.get(`${P}/insights/${id}/?refresh=force_cache`)).body.dashboards, [dashboardId]);
    await page.goto(url(`/project/${projectId}/dashboard/${dashboardId}`));
    await tile('Started on Growth').waitFor();
    t.equal(await page.locator('[data-testid=dashboard-tile]').count(), 3);
    t.same(take(), []);
  });

  t.test('the list renames a dashboard and deletes one (soft) after a confirmation', async (t) => {
    await page.goto(url(`/project/${projectId}/dashboard`));
    await page.waitForSelector('[data-testid=dashboard-list]');
    const first = page.locator('[data-testid=dashboard-row]:has-text("First dashboard")');
    await first.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('dashboard name', { exact: true }).fill('Old numbers');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('[data-testid=dashboard-row]:has-text("Old numbers")');
    await shot('dashboards-list');
    const old = (await api.get(`${P}/dashboards/`)).body.results.find((d: any) => d.name === 'Old numbers');
    t.ok(old, 'renamed in the API');
    page.once('dialog', (d) => d.accept());
    await page.locator('[data-testid=dashboard-row]:has-text("Old numbers")').getByRole('button', { name: 'Delete' }).click();
    await page.locator('[data-testid=dashboard-row]:has-text("Old numbers")').waitFor({ state: 'detached' });
    t.equal((await api.get(`${P}/dashboards/${old.id}/`)).status, 404, 'deleted');
    t.same((await api.get(`${P}/dashboards/`)).body.results.map((d: any) => d.name), ['Growth']);
    t.same(take(), []);
  });

  t.test('a retention tile leaves out its cohorts of no one and keeps each share and date on one line', async (t) => {
    // Five days before the first probe: five empty cohorts, then the probes' days.
    const retention = { insight: 'RETENTION', target_entity: { id: 'tile_probe', type: 'events' }, returning_entity: { id: 'tile_probe', type: 'events' }, period: 'Day', total_intervals: 8, date_from: '2024-02-25', date_to: '2024-03-03', retention_type: 'retention_recurring' };
    const saved = await api.post(`${P}/insights/`, { name: 'Probe retention', filters: retention, dashboards: [dashboardId] });
    t.equal(saved.status, 201, saved.text);
    const cohorts = (await api.get(`${P}/insights/retention/?${new URLSearchParams(Object.entries(retention).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`)).body.result as { values: { count: number }[] }[];
    const empty = cohorts.filter((c) => c.values[0]!.count === 0).length;
    t.ok(empty >= 5 && empty < cohorts.length, `the answer has empty cohorts (${empty} of ${cohorts.length})`);
    await page.goto(url(`/project/${projectId}/dashboard/${dashboardId}`));
    const grid = tile('Probe retention').locator('[data-testid=retention-grid]');
    await grid.waitFor();
    t.equal(await grid.locator('[data-testid=retention-row]').count(), cohorts.length - empty, 'only the cohorts with persons');
    t.equal(await tile('Probe retention').locator('[data-testid=retention-hidden]').textContent(), `${empty} cohorts of no one are not shown.`);
    const cells = await grid.locator('td.cell, th').evaluateAll((els) => els.map((e) => ({ text: e.textContent ?? '', wrap: getComputedStyle(e).whiteSpace })));
    t.same(cells.filter((c) => c.wrap !== 'nowrap'), [], 'no cell may wrap');
    t.ok(cells.some((c) => /^\d+\u00a0%$/.test(c.text)), 'shares print with a no-break space');
    await page.goto(url(`/project/${projectId}/insights/saved/${saved.body.id}`));
    await page.locator('[data-testid=retention-grid]').waitFor();
    t.equal(await page.locator('[data-testid=retention-row]').count(), cohorts.length, "the insight's page shows every cohort");
    t.same(take(), []);
  });

  t.test("a saved trends insight's alert: made in its form, checked now, its state and value shown", async (t) => {
    const saved = await api.post(`${P}/insights/`, {
      name: 'Alerted probes',
      query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'tile_probe' }], interval: 'day', dateRange: { date_from: '-7d' } } },
    });
    t.equal(saved.status, 201, saved.text);
    await page.goto(url(`/project/${projectId}/insights/saved/${saved.body.id}`));
    const panel = page.locator('[data-testid=insight-alerts]');
    await panel.waitFor();
    await panel.getByRole('button', { name: 'New alert' }).click();
    await panel.getByLabel('alert name').fill('Too quiet');
    await panel.getByRole('button', { name: 'Save alert' }).click();
    t.equal(await panel.locator('[role=alert]').textContent(), 'Give a lower bound, an upper bound, or both.', 'a form without bounds is not sent');
    await panel.getByLabel('alert lower bound').fill('1');
    await panel.getByRole('button', { name: 'Save alert' }).click();
    const row = panel.locator('tr[data-alert="Too quiet"]');
    await row.waitFor();
    t.match(await row.textContent(), /Fires when the value is below 1\./, 'the rule in words');
    await row.getByRole('button', { name: 'Check now' }).click();
    await panel.locator('tr[data-alert="Too quiet"][data-state="Firing"]').waitFor();
    const stored = (await api.get(`${P}/alerts/?insight=${saved.body.id}`)).body.results[0];
    t.match(stored, { name: 'Too quiet', state: 'Firing', threshold: { configuration: { type: 'absolute', bounds: { lower: 1, upper: null } } }, calculation_interval: 'daily' });
    t.equal(await row.getByTestId('alert-value').textContent(), String(stored.last_value), 'the value the check saw (no probe in the last days)');
    t.equal(await row.getByTestId('alert-state').textContent(), 'Firing');
    await row.getByRole('button', { name: 'Pause' }).click();
    await panel.locator('tr[data-alert="Too quiet"] [data-testid=alert-state]', { hasText: 'Paused' }).waitFor();
    t.equal((await api.get(`${P}/alerts/${stored.id}/`)).body.enabled, false, 'paused in the API');
    t.same(take(), []);
  });
}

function sameCells(a: Record<string, Cell | undefined>, b: Record<string, Cell>): boolean {
  return Object.keys(b).length === Object.keys(a).length && Object.entries(b).every(([k, c]) => {
    const x = a[k];
    return x !== undefined && x.x === c.x && x.y === c.y && x.w === c.w && x.h === c.h;
  });
}
