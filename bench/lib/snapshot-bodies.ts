/**
 * What posthog-js' recorder sends to `/s/`: `$snapshot` events whose `$snapshot_data` is a chunk of rrweb events
 * (what happened since the last flush, every 2 s while the page is active), gzipped by the SDK. A full snapshot's
 * DOM is gzip-as-latin-1 (`cv: "2024-10"`), which is incompressible on the wire and on disk; the incremental
 * events (mouse moves, attribute mutations, masked input, a click, a console line) are ordinary JSON.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { PROJECT_KEY } from './paths.js';

/** posthog-js flushes its recording buffer this often while something happens (RECORDING_BUFFER_TIMEOUT). */
export const FLUSH_MS = 2_000;

export interface ChunkShape {
  /** A full snapshot's packed DOM (packedDom) at the chunk's start, or null (incremental events only). */
  fullSnapshot: string | null;
  href: string;
}

const WORDS = Array.from({ length: 400 }, (_, i) => (i * 2_654_435_761 >>> 0).toString(36).slice(0, 3 + (i % 7)));

/**
 * A page's DOM as rrweb serialises it (document, html, head, body with an `h1` "Page <n>" and paragraphs of
 * words), gzipped as posthog-js packs it, grown until the packed text is about `bytes` long. The player can
 * rebuild it, so the time to a recording's first frame can be read off the replayed heading.
 */
export function packedDom(page: number, bytes: number): string {
  let id = 10;
  const text = (t: string) => ({ type: 3, textContent: t, id: id++ });
  const el = (tagName: string, attributes: Record<string, string>, childNodes: unknown[]) => ({ type: 2, tagName, attributes, childNodes, id: id++ });
  const paragraphs: unknown[] = [el('h1', { id: 'page-heading' }, [text(`Page ${page}`)])];
  let packed = '';
  for (let n = 0; packed.length < bytes; n++) {
    for (let k = 0; k < 20; k++, n++) {
      const words = Array.from({ length: 60 }, (_, w) => WORDS[(n * 7_919 + w * 104_729 + page * 31) % WORDS.length]!);
      paragraphs.push(el('p', { class: `para p-${n % 5}` }, [text(words.join(' '))]));
    }
    const dom = {
      node: { type: 0, id: 1, childNodes: [{ type: 1, name: 'html', publicId: '', systemId: '', id: 2 },
        el('html', {}, [el('head', {}, []), el('body', {}, paragraphs)])] },
      initialOffset: { left: 0, top: 0 },
    };
    packed = gzipSync(JSON.stringify(dom)).toString('latin1');
  }
  return packed;
}

/** One flush worth of rrweb events starting at `ts`, spread over FLUSH_MS. */
export function recorderChunk(ts: number, shape: ChunkShape): unknown[] {
  const events: unknown[] = [];
  if (shape.fullSnapshot !== null) {
    events.push({ type: 4, timestamp: ts, data: { href: shape.href, width: 1280, height: 800 } });
    events.push({ type: 2, timestamp: ts + 1, data: shape.fullSnapshot, cv: '2024-10' });
  }
  for (let i = 0; i < 40; i++) events.push({ type: 3, timestamp: ts + 10 + i * 20, data: { source: 1, positions: [{ x: 100 + i, y: 200 + i, id: 17, timeOffset: -10 }, { x: 101 + i, y: 201 + i, id: 17, timeOffset: 0 }] } });
  for (let i = 0; i < 20; i++) events.push({ type: 3, timestamp: ts + 900 + i * 30, data: { source: 0, texts: '', attributes: `[{"id":${i},"attributes":{"class":"row row-${i} is-active"}}]`, removes: '', adds: '', isAttachIframe: false }, cv: '2024-10' });
  for (let i = 0; i < 10; i++) events.push({ type: 3, timestamp: ts + 1_600 + i * 50, data: { source: 5, text: '*'.repeat(i + 1), isChecked: false, id: 42 } });
  events.push({ type: 3, timestamp: ts + 1_800, data: { source: 2, type: 2, id: 55, x: 640, y: 410 } });
  events.push({ type: 6, timestamp: ts + 1_900, data: { plugin: 'rrweb/console@1', payload: { level: 'warn', payload: ['"slow response"'], trace: [] } } });
  return events;
}

export interface SnapshotChunk {
  session: string;
  ts: number;
  events: unknown[];
}

/** A `/s/` request body as posthog-js sends it (JSON array of `$snapshot` events, gzipped), and its JSON size. */
export function snapshotBody(chunks: readonly SnapshotChunk[]): { body: Buffer; jsonBytes: number } {
  const items = chunks.map((c) => ({
    event: '$snapshot', uuid: randomUUID(), timestamp: new Date(c.ts).toISOString(),
    properties: { $snapshot_data: c.events, $session_id: c.session, $window_id: 'w', distinct_id: c.session, token: PROJECT_KEY, $lib: 'web' },
  }));
  const json = JSON.stringify(items);
  return { body: gzipSync(json, { level: 1 }), jsonBytes: Buffer.byteLength(json) };
}

/**
 * Keep-alive connections for the senders: node:http costs this process about a quarter of fetch's CPU per request,
 * CPU the server under measurement would otherwise lose on two cores.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs a body made by snapshotBody; resolves with the status (0: the connection failed). */
export function postSnapshots(base: string, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${base}/s/`, { method: 'POST', agent, headers: { 'content-type': 'text/plain', 'content-length': body.byteLength } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/**
 * `/s/` at a steady rate from `sessions` recorded tabs, each flushing one chunk every FLUSH_MS (rate = sessions /
 * 2 requests/s), until `stop()`. The bodies are made before the clock starts so that gzip in this process does
 * not take the CPU the server is measured on. Resolves with what was sent and acknowledged, and the CPU the sending
 * took in this process (percent of one core).
 */
export async function pacedSnapshots(base: string, sessions: number, seconds: number, stop: () => boolean): Promise<{ sent: number; acknowledged: number; jsonBytes: number; rate_per_s: number; sender_cpu_pct: number }> {
  const rate = sessions / (FLUSH_MS / 1000);
  const needed = Math.ceil(rate * seconds * 1.1) + 10;
  const start = Date.now();
  const dom = packedDom(1, 25_000);
  const bodies = Array.from({ length: needed }, (_, i) => snapshotBody([{
    session: `paced-${i % sessions}`, ts: start + Math.floor(i / sessions) * FLUSH_MS,
    events: recorderChunk(start + Math.floor(i / sessions) * FLUSH_MS, { fullSnapshot: i < sessions ? dom : null, href: 'https://shop.example/checkout' }),
  }]));
  let sent = 0;
  let acknowledged = 0;
  let jsonBytes = 0;
  const inFlight = new Set<Promise<void>>();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  while (!stop() && sent < bodies.length) {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate);
    while (sent < due && sent < bodies.length) {
      const b = bodies[sent++]!;
      const p = postSnapshots(base, b.body).then((status) => {
        if (status === 200) {
          acknowledged++;
          jsonBytes += b.jsonBytes;
        }
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(inFlight);
  const cpu = process.cpuUsage(cpu0);
  const sender_cpu_pct = Math.round(((cpu.user + cpu.system) / 1e3 / (performance.now() - t0)) * 1000) / 10;
  return { sent, acknowledged, jsonBytes, rate_per_s: rate, sender_cpu_pct };
}
