// The console benchmark (`npm run bench:console`): a fresh Quill loaded with a generated dataset
// (bench/lib/analytics-dataset.ts; default 300,000 events, 10,000 persons, 30 days), then Debian's Chromium loads
// console pages from a cold start — a new browser profile each time, so nothing is cached, signed in by a session
// cookie set beforehand — and times until the page shows its data: the live events page until its first event
// row is drawn, the trends page (daily unique users over the 30 days) until its chart is drawn. Also reported:
// what the first page downloads (from the browser's resource timings: compressed bytes of scripts and styles)
// and the built files' sizes. One JSON document on stdout and in bench/results/console-latest.json.
//
// Environment: QUILL_BENCH_EVENTS, QUILL_BENCH_PERSONS, QUILL_BENCH_DAYS, QUILL_BENCH_REPEAT (cold loads per page,
// default 5), QUILL_BENCH_OUT.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DATASET, Dataset } from './lib/analytics-dataset.js';
import { chromiumUnavailable, launchChromium } from './lib/chromium.js';
import { loadDataset } from './lib/dataset-load.js';
import { commit, machine } from './lib/machine.js';
import { RESULTS_DIR, ROOT } from './lib/paths.js';
import { round1 } from './lib/proc-stats.js';
import { startQuill } from './lib/server-process.js';

const PASSWORD = 'console-bench-password';
const opts = {
  events: Number(process.env.QUILL_BENCH_EVENTS ?? 300_000),
  persons: Number(process.env.QUILL_BENCH_PERSONS ?? 10_000),
  days: Number(process.env.QUILL_BENCH_DAYS ?? 30),
  end: DEFAULT_DATASET.end,
  seed: DEFAULT_DATASET.seed,
};
const REPEAT = Number(process.env.QUILL_BENCH_REPEAT ?? 5);

const t0 = performance.now();
const log = (msg: string) => process.stderr.write(`[console ${((performance.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = (xs: number[]) => ({ median_ms: round1(median(xs)), min_ms: round1(Math.min(...xs)), max_ms: round1(Math.max(...xs)), runs_ms: xs.map(round1) });

interface Transfer {
  scripts_bytes: number;
  styles_bytes: number;
  documents_bytes: number;
  requests: number;
}

/**
 * One cold load: a new profile (empty cache), the session cookie, then navigation to `path` until `ready` is in
 * the page. The time runs from the navigation's start (the browser's own clock, `performance.now()` at the
 * moment `ready` matched), so the browser's start-up is not counted; what the page fetched comes from resource
 * timings (`transferSize` of what came over the network).
 */
async function coldLoad(base: string, cookie: string, path: string, ready: string): Promise<{ ms: number; transfer: Transfer }> {
  const browser = await launchChromium();
  try {
    await browser.context.addCookies([{ name: 'quill_session', value: cookie, url: base }]);
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${base}${path}`, { waitUntil: 'commit' });
    await page.waitForSelector(ready, { timeout: 120_000 });
    return await page.evaluate(() => {
      const ms = performance.now();
      // Resource timing entries (this file is compiled without the DOM library, hence the shape spelled out).
      const timings = performance as unknown as { getEntriesByType(type: string): { name: string; initiatorType?: string; transferSize: number }[] };
      const transfer = { scripts_bytes: 0, styles_bytes: 0, documents_bytes: 0, requests: 0 };
      transfer.documents_bytes += timings.getEntriesByType('navigation')[0]?.transferSize ?? 0;
      for (const e of timings.getEntriesByType('resource')) {
        transfer.requests++;
        if (e.initiatorType === 'script' || e.name.endsWith('.js')) transfer.scripts_bytes += e.transferSize;
        else if (e.initiatorType === 'link' || e.name.endsWith('.css')) transfer.styles_bytes += e.transferSize;
      }
      return { ms, transfer };
    });
  } finally {
    await browser.close();
  }
}

/** The built files (dist/console) by kind: raw, gzip and brotli bytes. */
function builtSizes(): Record<string, { raw: number; gzip: number; brotli: number }> {
  const dir = join(ROOT, 'dist/console');
  const out: Record<string, { raw: number; gzip: number; brotli: number }> = {};
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.gz') || name.endsWith('.br')) continue;
    const kind = name.startsWith('main-') ? `entry${name.slice(name.lastIndexOf('.'))}` : name.endsWith('.js') ? 'chunks.js' : name;
    const entry = (out[kind] ??= { raw: 0, gzip: 0, brotli: 0 });
    entry.raw += readFileSync(join(dir, name)).length;
    entry.gzip += readFileSync(join(dir, `${name}.gz`)).length;
    entry.brotli += readFileSync(join(dir, `${name}.br`)).length;
  }
  return out;
}

const unavailable = chromiumUnavailable();
if (unavailable) {
  console.error(`console bench: ${unavailable}`);
  process.exit(1);
}
const host = machine();
const quill = await startQuill({ env: { QUILL_ADMIN_PASSWORD: PASSWORD, QUILL_LOG_LEVEL: 'info' } });
log(`quill pid ${quill.pid}, data in ${quill.dataDir}; ${opts.events} events, ${opts.persons} persons, ${opts.days} days`);
try {
  const loading = await loadDataset(quill.base, new Dataset(opts), log);
  log(`loaded: ${JSON.stringify(loading)}`);
  const signIn = await fetch(`${quill.base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@quill.local', password: PASSWORD }) });
  const cookie = /quill_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
  if (!cookie) throw new Error(`sign-in failed: ${signIn.status}`);

  const from = new Date(opts.end - opts.days * 86_400_000).toISOString().slice(0, 10);
  const to = new Date(opts.end - 86_400_000).toISOString().slice(0, 10);
  const trendFilter = { insight: 'TRENDS', events: [{ id: '$pageview', math: 'dau' }], interval: 'day', date_from: from, date_to: to, display: 'ActionsLineGraph' };
  const pages = [
    { name: 'events', path: '/console/project/1/events', ready: '[data-testid=event-row]' },
    { name: 'trends', path: `/console/project/1/insights/trends?filters=${encodeURIComponent(JSON.stringify(trendFilter))}`, ready: '[data-testid=trend-chart][data-rendered=true]' },
  ];
  const results: Record<string, unknown> = {};
  let firstPage: Transfer | null = null;
  for (const p of pages) {
    const times: number[] = [];
    for (let i = 0; i < REPEAT; i++) {
      const run = await coldLoad(quill.base, cookie, p.path, p.ready);
      times.push(run.ms);
      if (p.name === 'events') firstPage = run.transfer;
    }
    results[p.name] = summary(times);
    log(`${p.name}: ${JSON.stringify(results[p.name])}`);
  }
  const report = {
    bench: 'console',
    ...commit(),
    machine: host,
    date: new Date().toISOString(),
    dataset: { ...opts, load: loading },
    cold_load: { repeat: REPEAT, events_page_first_row: results.events, trends_chart_drawn: results.trends, trends_filter: trendFilter },
    first_page_transfer: firstPage,
    first_page_js_compressed_kb: firstPage ? round1(firstPage.scripts_bytes / 1024) : null,
    built: builtSizes(),
  };
  const json = JSON.stringify(report, null, 2);
  console.log(json);
  const outPath = process.env.QUILL_BENCH_OUT ?? join(RESULTS_DIR, 'console-latest.json');
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(outPath, `${json}\n`);
} finally {
  await quill.stop();
  rmSync(quill.dataDir, { recursive: true, force: true });
}
