// Property names and values suggested in the console, in Chromium against the real server on a known dataset:
// the breakdown and a property filter offer the project's names, a filter's value field offers the values seen, a
// typo'd breakdown is flagged with the closest name and no insight request is sent until it is fixed (requests
// counted with page.on('request')), "Use anyway" lets an unknown name run, and a flag's release condition offers
// person property names, as do a cohort's conditions and an experiment's metric property. Screenshots in test-artifacts/console/.
import { join } from 'node:path';
import t from 'tap';
import type { Page, Request } from 'playwright-core';
import { chromiumUnavailable, keepScreenshot, launchChromium, watchedPage, signIn, type Chromium } from '../helpers/chromium.js';
import { missing } from '../helpers/required-environment.js';
import { event, sendBatch } from '../helpers/ingest.js';
import { type QuillProcess, ROOT, removeDir, startQuill } from '../helpers/quill.js';

const PASSWORD = 'console-properties-password';
const ARTIFACTS = join(ROOT, 'test-artifacts/console');
const FILTER = { insight: 'TRENDS', events: [{ id: '$pageview', math: 'total' }], interval: 'day', date_from: '-7d', display: 'ActionsLineGraph' };

const unavailable = chromiumUnavailable();
if (unavailable) missing(t, 'browser', 'the console properties browser suite', unavailable);
else suite();

function suite(): void {
  let q: QuillProcess;
  let browser: Chromium;
  let page: Page;
  let projectId: number;
  const problems: string[] = [];
  /** Insight requests the page sent (POST /insights/trend/), with their bodies. */
  const insightRequests: Record<string, unknown>[] = [];

  t.before(async () => {
    q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD } });
    const now = Date.now();
    const batch = Array.from({ length: 12 }, (_, i) => event(`visitor-${i}`, '$pageview', {
      $browser: i % 3 === 0 ? 'Safari' : 'Chrome', load_ms: 100 + i, $set: { plan: i % 2 === 0 ? 'pro' : 'free' },
    }, { timestamp: new Date(now - 3_600_000 * (i + 1)).toISOString() }));
    const res = await sendBatch(q.base, batch);
    if (res.status !== 200) throw new Error(`dataset: ${res.status}`);
    browser = await launchChromium();
    page = await watchedPage(browser, problems);
    await page.setViewportSize({ width: 1280, height: 900 });
    page.on('request', (r: Request) => {
      if (r.method() === 'POST' && r.url().includes('/insights/trend/')) insightRequests.push(JSON.parse(r.postData() ?? '{}'));
    });
    await page.goto(`${q.base}/console/`);
    await page.waitForSelector('[data-testid=login-form]');
    await signIn(page, PASSWORD);
    projectId = Number(/\/project\/(\d+)\//.exec(page.url())![1]);
  });
  t.teardown(async () => {
    await browser?.close();
    await q?.stop();
    if (q) removeDir(q.dataDir);
  });

  const url = (path: string) => `${q.base}/console${path}`;
  const shot = (name: string) => keepScreenshot(page, join(ARTIFACTS, `${name}.png`));
  /** The options of an input's datalist, once it has some. */
  const suggestions = async (label: string, nth = 0): Promise<string[]> => {
    const input = page.getByLabel(label, { exact: true }).nth(nth);
    await input.evaluate((el: HTMLInputElement) => new Promise<void>((resolve) => {
      const check = () => ((el.list?.options.length ?? 0) > 0 ? resolve() : setTimeout(check, 20));
      check();
    }));
    return input.evaluate((el: HTMLInputElement) => Array.from(el.list!.options, (o) => o.value));
  };

  t.test('breakdown and filters suggest the project\'s names, a filter\'s value the values seen', async (t) => {
    await page.goto(url(`/project/${projectId}/insights/trends?filters=${encodeURIComponent(JSON.stringify(FILTER))}`));
    await page.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
    const eventNames = await suggestions('breakdown');
    t.ok(eventNames.includes('$browser') && eventNames.includes('load_ms'), `breakdown offers event properties: ${eventNames.join(', ')}`);
    t.notOk(eventNames.includes('plan'), 'not person properties');
    await page.getByLabel('breakdown type').selectOption('person');
    t.ok((await suggestions('breakdown')).includes('plan'), 'a person breakdown offers person properties');
    await page.getByLabel('breakdown type').selectOption('event');

    await page.getByRole('button', { name: '+ property filter' }).click();
    t.ok((await suggestions('property key')).includes('$browser'), 'the filter\'s name field offers the names');
    await page.getByLabel('property key').fill('$browser');
    t.same((await suggestions('property value')).sort(), ['Chrome', 'Safari'], 'its value field offers the values seen');
    await page.getByLabel('property value').fill('Chrome');
    await page.waitForFunction(() => document.querySelector('[data-testid=trend-table] td:last-child')?.textContent === '8');
    t.equal(await page.locator('[data-testid=property-warning]').count(), 0, 'known names are not flagged');
    await shot('properties-suggested');
    await page.getByLabel('remove filter').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=trend-table] td:last-child')?.textContent === '12');
    t.same(problems, []);
  });

  t.test('a typo\'d breakdown is flagged, and no insight request is sent until it is fixed', async (t) => {
    const before = insightRequests.length;
    const breakdown = page.getByLabel('breakdown', { exact: true });
    await breakdown.fill('$browsr');
    await breakdown.press('Tab');
    const warning = page.locator('[data-testid=property-warning]');
    await warning.waitFor();
    t.match(await warning.textContent(), /No event has a property named “\$browsr”\. Did you mean \$browser\?/);
    await page.locator('[data-testid=insight-held]').waitFor();
    t.equal(await breakdown.getAttribute('aria-invalid'), 'true');
    await shot('properties-typo');
    // Longer than the page's 150 ms debounce before it sends an analysis: none went out for the typo.
    await page.waitForTimeout(600);
    t.equal(insightRequests.length, before, 'no insight request for the unknown name');
    t.notOk(insightRequests.some((r) => r.breakdown === '$browsr'), 'the typo was never sent');

    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/insights/trend/'));
    await page.locator('[data-testid=property-suggestion]').click();
    t.match(JSON.parse((await sent).postData()!), { breakdown: '$browser', breakdown_type: 'event' }, 'the suggestion runs the insight');
    await page.waitForFunction(() => Array.from(document.querySelectorAll('[data-testid=trend-row] th')).some((th) => th.textContent?.includes('Chrome')));
    t.equal(await breakdown.inputValue(), '$browser');
    t.equal(await warning.count(), 0, 'the warning is gone');
    t.equal(await page.locator('[data-testid=insight-held]').count(), 0);
    const labels = await page.locator('[data-testid=trend-row] th').allTextContents();
    t.ok(labels.some((l) => l.includes('Safari')), `broken down by browser: ${labels.join(' | ')}`);
    t.same(problems, []);
  });

  t.test('"Use anyway" runs an unknown name as typed', async (t) => {
    const breakdown = page.getByLabel('breakdown', { exact: true });
    const before = insightRequests.length;
    await breakdown.fill('campaign_not_sent_yet');
    await breakdown.press('Tab');
    await page.locator('[data-testid=property-warning]').waitFor();
    t.equal(await page.locator('[data-testid=property-suggestion]').count(), 0, 'nothing close enough to suggest');
    await page.waitForTimeout(600);
    t.equal(insightRequests.length, before, 'held');
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/insights/trend/'));
    await page.locator('[data-testid=property-confirm]').click();
    t.match(JSON.parse((await sent).postData()!), { breakdown: 'campaign_not_sent_yet' });
    await page.locator('[data-testid=property-warning]').waitFor({ state: 'detached' });
    t.same(problems, []);
  });

  t.test('a math property suggests numeric properties; a typo there is flagged too', async (t) => {
    await page.goto(url(`/project/${projectId}/insights/trends?filters=${encodeURIComponent(JSON.stringify({ ...FILTER, events: [{ id: '$pageview', math: 'sum', math_property: 'load_ms' }] }))}`));
    await page.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
    t.same(await suggestions('series 1 property'), ['load_ms'], 'only the numeric one');
    const before = insightRequests.length;
    const field = page.getByLabel('series 1 property');
    await field.fill('load_mss');
    await field.press('Tab');
    await page.locator('[data-testid=property-warning]').waitFor();
    t.match(await page.locator('[data-testid=property-warning]').textContent(), /Did you mean load_ms\?/);
    await page.waitForTimeout(600);
    t.equal(insightRequests.length, before, 'held');
    t.same(problems, []);
  });

  t.test('"Sum of property" before its property: the series names what is missing, nothing is sent, the old chart is dimmed', async (t) => {
    await page.goto(url(`/project/${projectId}/insights/trends?filters=${encodeURIComponent(JSON.stringify(FILTER))}`));
    await page.waitForSelector('[data-testid=trend-chart][data-rendered=true]');
    await page.waitForSelector('[data-testid=insight-result][data-stale=false]');
    const before = insightRequests.length;
    await page.getByLabel('series 1 math').selectOption('sum');
    const problem = page.locator('[data-testid=series-error]');
    await problem.waitFor();
    t.equal(await problem.textContent(), 'Choose the numeric property for “Sum of property”.', 'said beside the series');
    t.equal(await page.locator('[data-testid=insight-result]').getAttribute('data-stale'), 'true', 'the chart of the total count is dimmed');
    await page.waitForTimeout(600);
    t.equal(insightRequests.length, before, 'no insight request without the property');
    t.notOk(await page.getByText('needs a math_property').count(), 'no API text on the page');
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/insights/trend/'));
    await page.getByLabel('series 1 property').fill('load_ms');
    await page.getByLabel('series 1 property').press('Tab');
    t.match(JSON.parse((await sent).postData()!), { events: [{ id: '$pageview', math: 'sum', math_property: 'load_ms' }] });
    await page.waitForSelector('[data-testid=insight-result][data-stale=false]');
    t.equal(await problem.count(), 0, 'the message is gone once the property is there');
    t.same(problems, []);
  });

  t.test('a stickiness series says it counts persons', async (t) => {
    await page.goto(url(`/project/${projectId}/insights/stickiness`));
    await page.waitForSelector('[data-testid=trends-page]');
    t.same(await page.getByLabel('series 1 math').locator('option').allTextContents(), ['Persons, by intervals active']);
    t.same(problems, []);
  });

  t.test('a flag\'s release condition suggests person property names and values', async (t) => {
    await page.goto(url(`/project/${projectId}/flags/new`));
    await page.waitForSelector('[data-testid=flag-form]');
    await page.getByRole('button', { name: '+ condition' }).first().click();
    t.ok((await suggestions('property key')).includes('plan'), 'person properties');
    await page.getByLabel('property key').fill('plna');
    await page.getByLabel('property key').blur();
    const warning = page.locator('[data-testid=property-warning]');
    await warning.waitFor();
    t.match(await warning.textContent(), /No person has a property named “plna”\. Did you mean plan\?/);
    t.equal(await page.locator('[data-testid=property-confirm]').count(), 0, 'a flag form holds nothing back: no "Use anyway"');
    await page.locator('[data-testid=property-suggestion]').click();
    t.equal(await page.getByLabel('property key').inputValue(), 'plan');
    t.same((await suggestions('property value')).sort(), ['free', 'pro']);
    await shot('properties-flag-condition');
    t.same(problems, []);
  });

  t.test('a cohort condition and an experiment\'s metric property suggest names too', async (t) => {
    await page.goto(url(`/project/${projectId}/cohorts/new`));
    await page.waitForSelector('[data-testid=cohort-page]');
    await page.getByRole('button', { name: '+ property filter' }).first().click();
    const names = await suggestions('property key');
    t.ok(names.includes('plan') && !names.includes('load_ms'), `person properties, not event ones: ${names.join(', ')}`);
    await page.goto(url(`/project/${projectId}/experiments`));
    await page.getByRole('button', { name: 'New experiment' }).click();
    await page.locator('select[name=metric_type]').selectOption('mean');
    await page.locator('select[name=metric_math]').selectOption({ index: 1 });
    t.same(await suggestions('metric property'), ['load_ms'], 'numeric event properties');
    t.same(problems, []);
  });
}
