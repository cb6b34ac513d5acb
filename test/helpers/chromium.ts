import type { Page } from 'playwright-core';

/** The system Chromium driver lives beside the console bench, which uses it too (bench/lib/chromium.ts). */
export { CHROMIUM_PATH, chromiumUnavailable, launchChromium, type Chromium } from '../../bench/lib/chromium.js';

/** Signs in through the console's form as the first user, and waits for the page it lands on (live events). */
export async function signIn(page: Page, password: string): Promise<void> {
  await page.fill('input[name=email]', 'admin@quill.local');
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=events-page]');
}
