// A flag's life cycle in the console, in Chromium against the real server: the list's status column and its
// "Stale" filter (PostHog's active=STALE), the usage chart of a flag evaluated through /flags/, scheduling a change
// in the page and watching it apply, moving and cancelling another, and the history field by field with a
// one-click revert to an earlier version (then evaluated by /flags/). Screenshots in test-artifacts/console/.
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromiumUnavailable, keepScreenshot, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { eventually } from '../helpers/eventually.js';
import { missing } from '../helpers/required-environment.js';
import { Client, PROJECT_KEY, ROOT, removeDir, startQuill, type QuillProcess } from '../helpers/quill.js';

const PASSWORD = 'flag-lifecycle-password';
const ARTIFACTS = join(ROOT, 'test-artifacts/console');
const FF = '/api/projects/@current/feature_flags/';
const DAY = 86_400_000;

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console flag life-cycle browser suite', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let api: Client;
  let browser: Chromium;
  let page: Page;
  let projectId: number;
  const ids: Record<string, number> = {};
  const problems: string[] = [];
  const take = () => problems.splice(0, problems.length);
  const url = (path: string) => `${q.base}/console${path}`;
  const shot = (name: string) => keepScreenshot(page, join(ARTIFACTS, `${name}.png`));

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    api = new Client(q.base);
    projectId = (await api.get('/api/projects/@current/')).body.id;
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    for (const [key, extra] of [
      ['checkout', { filters: { groups: [{ properties: [], rollout_percentage: 20 }] } }],
      ['legacy-banner', { created_at: old, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }],
    ] as const) {
      const res = await api.post(FF, { key, ...extra });
      if (res.status !== 201) throw new Error(res.text);
      ids[key] = res.body.id;
    }
    for (let i = 0; i < 6; i++) await new Client(q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: `visitor-${i}` });
    browser = await launchChromium();
    page = await watchedPage(browser, problems);
    page.on('dialog', (d) => void d.accept());
    await page.goto(url('/'));
    await signIn(page, PASSWORD);
  });
  t.teardown(async () => {
    await browser?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  t.test('the list shows status and last use, and filters the stale flags', async (t) => {
    await page.goto(url(`/project/${projectId}/flags`));
    await page.waitForSelector('[data-flag=legacy-banner] .badge');
    t.equal(await page.textContent('[data-flag=legacy-banner] .badge'), 'stale', 'fully rolled out for 40 days');
    t.equal(await page.textContent('[data-flag=checkout] .badge'), 'active');
    t.notMatch(await page.textContent('[data-flag=checkout]'), /never/, 'it was evaluated');
    await page.selectOption('[aria-label="flag status filter"]', 'STALE');
    await eventually('the filtered list', async () => (await page.locator('[data-testid=flag-list] tbody tr').count()) === 1);
    t.equal(await page.getAttribute('[data-testid=flag-list] tbody tr', 'data-flag'), 'legacy-banner');
    t.match(page.url(), /active=STALE/);
    await shot('flags-stale');
    t.same(take(), [], 'no console errors');
  });

  t.test('the usage chart of a flag', async (t) => {
    await page.goto(url(`/project/${projectId}/flags/${ids.checkout}`));
    await page.getByRole('button', { name: 'Usage' }).click();
    await page.waitForSelector('[data-testid=usage-chart]');
    const points = JSON.parse((await page.getAttribute('[data-testid=usage-chart]', 'data-points'))!) as number[];
    t.equal(points.length, 30, 'one bar a day');
    t.equal(points.at(-1), 6, "today's six evaluations");
    t.match(await page.textContent('[data-testid=usage-summary]'), /6 evaluations/);
    await shot('flag-usage');
    t.same(take(), []);
  });

  t.test('scheduling a change in the page, moving and cancelling another', async (t) => {
    await page.goto(url(`/project/${projectId}/flags/${ids.checkout}`));
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForSelector('[data-testid=schedule-form]');
    await page.selectOption('[aria-label="scheduled operation"]', 'rollout');
    await page.fill('[aria-label="scheduled rollout"]', '60');
    // Soon (the field takes seconds): a few seconds from now.
    const soon = new Date(Date.now() + 5_000);
    const local = new Date(soon.getTime() - soon.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
    await page.fill('[aria-label="scheduled at"]', local);
    await page.getByRole('button', { name: 'Schedule', exact: true }).last().click();
    await page.waitForSelector('[data-testid=scheduled-changes] [data-state=pending]');
    // A second one, far ahead: moved, then cancelled.
    await page.selectOption('[aria-label="scheduled operation"]', 'disable');
    await page.fill('[aria-label="scheduled at"]', '2099-01-01T09:00:00');
    await page.getByRole('button', { name: 'Schedule', exact: true }).last().click();
    await eventually('two pending changes', async () => (await page.locator('[data-state=pending]').count()) === 2);
    const far = (await api.get(`/api/projects/@current/scheduled_changes/?record_id=${ids.checkout}`)).body.results.find((c: { scheduled_at: string }) => c.scheduled_at.startsWith('2099'));
    await page.click(`[data-scheduled="${far.id}"] >> text=Edit time`);
    await page.fill(`[aria-label="move ${far.id}"]`, '2099-02-01T09:00:00');
    await page.click(`[data-scheduled="${far.id}"] >> text=Save time`);
    await eventually('the move', async () => (await api.get(`/api/projects/@current/scheduled_changes/${far.id}/`)).body.scheduled_at.startsWith('2099-02-01'));
    await page.click(`[data-scheduled="${far.id}"] >> text=Cancel`);
    await eventually('the cancellation', async () => (await api.get(`/api/projects/@current/scheduled_changes/${far.id}/`)).status === 404);
    await shot('flag-schedule');
    // The first one runs when due: the page shows it applied after a reload.
    await eventually('the scheduled condition to be added', async () => (await api.get(`${FF}${ids.checkout}/`)).body.filters.groups.length === 2);
    await page.reload();
    await page.getByRole('button', { name: 'Schedule' }).click();
    await page.waitForSelector('[data-testid=scheduled-changes] [data-state=applied]');
    t.same(take(), []);
  });

  t.test('the history field by field, and a one-click revert', async (t) => {
    await api.patch(`${FF}${ids.checkout}/`, { name: 'Checkout v2' });
    await page.goto(url(`/project/${projectId}/flags/${ids.checkout}`));
    await page.getByRole('button', { name: 'Activity' }).click();
    await page.waitForSelector('[data-testid=flag-activity] [data-field=name]');
    t.match(await page.textContent('[data-testid=flag-activity] li:first-child [data-field=name]'), /name\s*—\s*→\s*Checkout v2|name.*Checkout v2/);
    t.match(await page.textContent('[data-testid=flag-activity]'), /scheduled change #/, 'the scheduled change is in the history');
    await page.click('[data-testid=revert-1]');
    await eventually('the revert', async () => (await api.get(`${FF}${ids.checkout}/`)).body.filters.groups.length === 1);
    const flag = (await api.get(`${FF}${ids.checkout}/`)).body;
    t.match(flag, { name: '', filters: { groups: [{ rollout_percentage: 20 }] } });
    const flags = await new Client(q.base, null).post('/flags/?v=2', { token: PROJECT_KEY, distinct_id: 'visitor-1' });
    t.equal(flags.body.flags.checkout.metadata.version, flag.version, 'every worker answers the reverted version');
    await page.waitForSelector('text=revert to version 1');
    await shot('flag-history');
    t.same(take(), []);
  });
}
