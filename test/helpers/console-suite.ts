/**
 * The set-up every console browser suite shares: a Quill with a known console password, the suite's data sent to
 * it, Chromium with a watched page (console errors collected), signed in as the first user; all stopped and removed
 * after the suite. The fields are set once the suite's `before` has run.
 */
import type { Page } from 'playwright-core';
import { launchChromium, signIn, watchedPage, type Chromium } from './chromium.js';
import { Client, removeDir, startQuill, type QuillProcess } from './quill.js';

export interface ConsoleSuite {
  q: QuillProcess;
  api: Client;
  browser: Chromium;
  page: Page;
  projectId: number;
  /** Console errors and uncaught page errors since the last `take()`. */
  problems: string[];
  take(): string[];
  /** A console address: `/project/1/sql` → `<base>/console/project/1/sql`. */
  url(path: string): string;
}

export function consoleSuite(
  t: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void },
  opts: { password: string; seed?(s: ConsoleSuite): Promise<void>; viewport?: { width: number; height: number } },
): ConsoleSuite {
  const s = { problems: [] as string[] } as ConsoleSuite;
  s.take = () => s.problems.splice(0, s.problems.length);
  s.url = (path) => `${s.q.base}/console${path}`;
  t.before(async () => {
    s.q = await startQuill({ env: { QUILL_ADMIN_PASSWORD: opts.password } });
    s.api = new Client(s.q.base);
    s.projectId = (await s.api.get('/api/projects/@current/')).body.id;
    await opts.seed?.(s);
    s.browser = await launchChromium();
    s.page = await watchedPage(s.browser, s.problems);
    if (opts.viewport) await s.page.setViewportSize(opts.viewport);
    await s.page.goto(s.url('/'));
    await signIn(s.page, opts.password);
  });
  t.teardown(async () => {
    await s.browser?.close();
    await s.q?.stop();
    if (s.q) removeDir(s.q.dataDir);
  });
  return s;
}
