/**
 * A long recording as one posthog-js tab sends it (a chunk every 2 s, a full snapshot at the start and at each
 * navigation, every 5 minutes), then what it costs: disk bytes per recorded minute, and the time from opening it to
 * its first frame — through the API (the sources, then the first group of blobs until a full snapshot) and in the
 * console's player in Chromium (until the replayed page's heading is in the player's frame).
 */
import { chromiumUnavailable, launchChromium } from './chromium.js';
import { PERSONAL_KEY } from './paths.js';
import { round1 } from './proc-stats.js';
import { FLUSH_MS, packedDom, postSnapshots, recorderChunk, snapshotBody } from './snapshot-bodies.js';

const NAVIGATION_EVERY_MS = 5 * 60_000;
const FULL_SNAPSHOT_BYTES = 25_000;
const IN_FLIGHT = 8;
const auth = { authorization: `Bearer ${PERSONAL_KEY}` };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function storedBytes(base: string): Promise<number> {
  const stats = await (await fetch(`${base}/_stats`, { headers: auth })).json() as { recordings: { shards: { storedBytes: number }[] } };
  return stats.recordings.shards.reduce((n, s) => n + s.storedBytes, 0);
}

/** Sends the recording, chunk after chunk (IN_FLIGHT requests at a time, in order); returns its JSON bytes. */
async function sendRecording(base: string, session: string, minutes: number): Promise<{ chunks: number; jsonBytes: number }> {
  const chunks = (minutes * 60_000) / FLUSH_MS;
  const began = Date.now() - (minutes + 1) * 60_000;
  let jsonBytes = 0;
  for (let i = 0; i < chunks; i += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, chunks - i) }, async (_, j) => {
      const k = i + j;
      const ts = began + k * FLUSH_MS;
      const page = Math.floor((k * FLUSH_MS) / NAVIGATION_EVERY_MS) + 1;
      const full = (k * FLUSH_MS) % NAVIGATION_EVERY_MS === 0 ? packedDom(page, FULL_SNAPSHOT_BYTES) : null;
      const { body, jsonBytes: n } = snapshotBody([{ session, ts, events: recorderChunk(ts, { fullSnapshot: full, href: `https://shop.example/page-${page}` }) }]);
      const status = await postSnapshots(base, body);
      if (status !== 200) throw new Error(`chunk ${k} of the long recording: HTTP ${status}`);
      jsonBytes += n;
    }));
  }
  return { chunks, jsonBytes };
}

/** Opening the recording as the player does through the API: ms to the first full snapshot, and to every blob. */
async function firstFrameByApi(base: string, session: string): Promise<{ first_frame_ms: number; all_blobs_ms: number; sources: number }> {
  const url = `${base}/api/projects/@current/session_recordings/${session}/snapshots`;
  const t0 = performance.now();
  const { sources } = await (await fetch(url, { headers: auth })).json() as { sources: { blob_key: string }[] };
  const keys = sources.map((s) => Number(s.blob_key)).sort((a, b) => a - b);
  let firstFrame: number | null = null;
  for (let i = 0; i < keys.length; i += 100) {
    const res = await fetch(`${url}?source=blob_v2&start_blob_key=${keys[i]}&end_blob_key=${keys[Math.min(keys.length, i + 100) - 1]}`, { headers: auth });
    const text = await res.text();
    if (firstFrame === null && text.split('\n').some((line) => line && (JSON.parse(line) as [string, { type: number }])[1].type === 2)) firstFrame = performance.now() - t0;
  }
  return { first_frame_ms: round1(firstFrame ?? NaN), all_blobs_ms: round1(performance.now() - t0), sources: keys.length };
}

/** A cold console (new browser profile, signed in by cookie) opening the recording until the first page is drawn. */
async function firstFrameInPlayer(base: string, cookie: string, session: string): Promise<number> {
  const browser = await launchChromium();
  try {
    await browser.context.addCookies([{ name: 'quill_session', value: cookie, url: base }]);
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${base}/console/project/1/replay/${session}`, { waitUntil: 'commit' });
    // The page's own clock at the first poll that finds the heading (not after a round trip back to this process).
    const drawn = await page.waitForFunction(() => {
      // This file is compiled without the DOM library (and the console's CSP forbids evaluating strings).
      const doc = (globalThis as { document?: any }).document;
      return doc?.querySelector('[data-testid=replay-stage] iframe')?.contentDocument?.querySelector('#page-heading')?.textContent === 'Page 1' && performance.now();
    }, undefined, { timeout: 300_000, polling: 20 });
    return round1(await drawn.jsonValue() as number);
  } finally {
    await browser.close();
  }
}

export async function measureLongRecording(base: string, opts: { minutes: number; password: string | null; repeat: number; log: (msg: string) => void }) {
  const session = `long-recording-${opts.minutes}-min`;
  const before = await storedBytes(base);
  opts.log(`long recording: sending ${opts.minutes} minutes of chunks`);
  const sent = await sendRecording(base, session, opts.minutes);
  const bytes = (await storedBytes(base)) - before;
  const api = [];
  for (let i = 0; i < opts.repeat; i++) api.push(await firstFrameByApi(base, session));
  let player: Record<string, unknown> = { skipped: 'no console password given' };
  const unavailable = chromiumUnavailable();
  if (unavailable) player = { skipped: unavailable };
  else if (opts.password !== null) {
    const signIn = await fetch(`${base}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@quill.local', password: opts.password }) });
    const cookie = /quill_session=([^;]+)/.exec(signIn.headers.get('set-cookie') ?? '')?.[1];
    if (!cookie) throw new Error(`sign-in failed: ${signIn.status}`);
    const runs: number[] = [];
    for (let i = 0; i < opts.repeat; i++) {
      runs.push(await firstFrameInPlayer(base, cookie, session));
      opts.log(`long recording: first frame in the player after ${runs.at(-1)} ms`);
    }
    player = { median_ms: median(runs), runs_ms: runs };
  }
  return {
    minutes: opts.minutes,
    chunks: sent.chunks,
    full_snapshots: Math.ceil((opts.minutes * 60_000) / NAVIGATION_EVERY_MS),
    snapshot_json_bytes: sent.jsonBytes,
    stored_bytes: bytes,
    stored_bytes_per_recorded_minute: Math.round(bytes / opts.minutes),
    snapshot_json_bytes_per_recorded_minute: Math.round(sent.jsonBytes / opts.minutes),
    first_frame_api: { median_ms: median(api.map((a) => a.first_frame_ms)), all_blobs_median_ms: median(api.map((a) => a.all_blobs_ms)), sources: api[0]!.sources },
    first_frame_player: player,
  };
}
