/**
 * The system Chromium (installed by test/setup/ensure-chromium.sh, never a Playwright download) driven by
 * playwright-core, headless, with a fresh profile directory per launch.
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic',
];

/** Why the browser suite cannot run here, or null when it can. */
export function chromiumUnavailable(): string | null {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return null;
  } catch {
    return `${CHROMIUM_PATH} is missing or not executable (run \`bash test/setup/ensure-chromium.sh\` as root: it installs Debian's chromium with apt-get; npm test runs it first)`;
  }
}

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'quill-chromium-'));
  // launchPersistentContext is how Playwright takes an explicit --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
