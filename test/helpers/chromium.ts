import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium as launchSystemChromium, type Chromium } from '../../bench/lib/chromium.js';

/** The system Chromium driver lives beside the console bench, which uses it too (bench/lib/chromium.ts). */
export { CHROMIUM_PATH, chromiumUnavailable, type Chromium } from '../../bench/lib/chromium.js';

/**
 * The system Chromium for a test file. Functions a test hands to `page.evaluate` are sent as their source text, and
 * the TypeScript loader tests run under (tsx, esbuild with keepNames) wraps named functions in calls to a
 * `__name` helper that exists only in Node: every page gets a no-op one.
 */
export async function launchChromium(): Promise<Chromium> {
  const browser = await launchSystemChromium();
  await browser.context.addInitScript('globalThis.__name = (target) => target;');
  return browser;
}

/** Signs in through the console's form as the first user, and waits for the page it lands on (web analytics). */
export async function signIn(page: Page, password: string): Promise<void> {
  await page.fill('input[name=email]', 'admin@quill.local');
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=web-analytics-page]');
}

/**
 * A new page of `browser` that collects the console's errors and uncaught exceptions in `problems`: the console
 * suites assert it empty after each step, so a page that throws fails the step that made it throw.
 */
export async function watchedPage(browser: Chromium, problems: string[]): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  return page;
}

/**
 * What `read` gives once `settled` accepts it, or its last reading after `timeoutMs`. A page changes after an input
 * when its next render or effect runs, which is after the input's promise resolves: reading at once raced it (the
 * SQL history put its query into the editor in an effect, read a moment before it). The assertion that follows
 * compares the returned reading, so a page that never settles fails with what it said.
 */
export async function settledReading<T>(read: () => Promise<T>, settled: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (settled(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Saves a screenshot of the page for a reader under test-artifacts/ when `QUILL_TEST_SCREENSHOTS=1`; otherwise does
 * nothing. Screenshots assert nothing, and a full-page one costs Chromium hundreds of milliseconds of CPU to paint
 * and encode: taken on every page the console suites visit, they were a tenth of the suite's browser time.
 */
export async function keepScreenshot(page: Page, path: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.QUILL_TEST_SCREENSHOTS !== '1') return;
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
}
