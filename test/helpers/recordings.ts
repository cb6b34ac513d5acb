/** Building what posthog-js' recorder posts to /s/, and reading recordings back through the API. */
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Client, PROJECT_KEY } from './quill.js';

export interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
  [k: string]: unknown;
}

export const rr = {
  meta: (ts: number, href: string): RrwebEvent => ({ type: 4, timestamp: ts, data: { href, width: 1280, height: 720 } }),
  full: (ts: number): RrwebEvent => ({ type: 2, timestamp: ts, data: { node: { type: 0, childNodes: [], id: 1 }, initialOffset: { left: 0, top: 0 } } }),
  click: (ts: number): RrwebEvent => ({ type: 3, timestamp: ts, data: { source: 2, type: 2, id: 5, x: 10, y: 20 } }),
  input: (ts: number, text = '***'): RrwebEvent => ({ type: 3, timestamp: ts, data: { source: 5, text, isChecked: false, id: 6 } }),
  move: (ts: number): RrwebEvent => ({ type: 3, timestamp: ts, data: { source: 1, positions: [{ x: 1, y: 1, id: 5, timeOffset: 0 }] } }),
  console: (ts: number, level: string): RrwebEvent => ({ type: 6, timestamp: ts, data: { plugin: 'rrweb/console@1', payload: { level, payload: ['"x"'], trace: [] } } }),
  /** A custom event carrying a marker: the durability tests find every acknowledged chunk by it. */
  marker: (ts: number, id: string): RrwebEvent => ({ type: 5, timestamp: ts, data: { tag: 'marker', payload: { id } } }),
};

/** One `$snapshot` event as posthog-js captures it (its uuid is what makes a retry recognisable). */
export function snapshot(sessionId: string, distinctId: string, events: RrwebEvent[], windowId = 'window-1', uuid: string = randomUUID()) {
  return {
    event: '$snapshot',
    uuid,
    properties: { $snapshot_data: events, $session_id: sessionId, $window_id: windowId, $snapshot_bytes: JSON.stringify(events).length, distinct_id: distinctId, token: PROJECT_KEY, $lib: 'web' },
    timestamp: new Date(events[0]!.timestamp).toISOString(),
  };
}

/** Posts snapshot events to /s/ as posthog-js does: a JSON array, gzipped as `text/plain` unless `plain`. */
export async function postSnapshots(base: string, items: unknown[], opts: { plain?: boolean } = {}): Promise<Response> {
  const body = JSON.stringify(items.map((i) => ({ ...(i as object), sent_at: new Date().toISOString() })));
  return opts.plain
    ? fetch(`${base}/s/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    : fetch(`${base}/s/?ver=1.449.2`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: gzipSync(body) });
}

export const RECORDINGS = '/api/projects/@current/session_recordings';

/** Every line of a recording's snapshots ([window id, rrweb event]), reading every source. */
export async function snapshotLines(api: Client, sessionId: string): Promise<[string, RrwebEvent][]> {
  const sources = await api.get(`${RECORDINGS}/${sessionId}/snapshots`);
  if (sources.status !== 200) throw new Error(`sources: ${sources.status} ${sources.text}`);
  const keys = (sources.body.sources as { blob_key: string }[]).map((s) => Number(s.blob_key)).sort((a, b) => a - b);
  const lines: [string, RrwebEvent][] = [];
  for (let i = 0; i < keys.length; i += 100) {
    const first = keys[i]!;
    const last = keys[Math.min(keys.length, i + 100) - 1]!;
    const res = await api.get(`${RECORDINGS}/${sessionId}/snapshots?source=blob_v2&start_blob_key=${first}&end_blob_key=${last}`);
    if (res.status !== 200) throw new Error(`blobs: ${res.status} ${res.text}`);
    for (const line of res.text.split('\n')) if (line) lines.push(JSON.parse(line));
  }
  return lines;
}

/**
 * A field posthog-js compressed itself (`cv: "2024-10"`: a full snapshot's data, a mutation's lists): gzip bytes as
 * a latin-1 string. Anything else is returned as it is.
 */
export function unpackField(value: unknown): unknown {
  if (typeof value !== 'string' || value.charCodeAt(0) !== 0x1f || value.charCodeAt(1) !== 0x8b) return value;
  return JSON.parse(gunzipSync(Buffer.from(value, 'latin1')).toString('utf8'));
}

/** An rrweb event with its compressed fields unpacked (for looking inside a recording's DOM and mutations). */
export function unpackEvent(e: RrwebEvent): RrwebEvent {
  if (e.cv === undefined) return e;
  if (typeof e.data === 'string') return { ...e, data: unpackField(e.data) };
  const data = { ...(e.data as Record<string, unknown>) };
  for (const k of Object.keys(data)) data[k] = unpackField(data[k]);
  return { ...e, data };
}
