/**
 * A `fetch` that records what an SDK sent and what Quill answered, for SDKs that accept a custom fetch
 * (posthog-node's `fetch` option). The request still goes to the real server unchanged; the recording only lets a
 * test see transport details the stored data cannot show (gzip bodies, batch sizes, ETag / If-None-Match, 304s).
 */
import { gunzipSync } from 'node:zlib';

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/flags/definitions?token=…`. */
  path: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  /** The raw request body as sent (gzip bytes when compressed). */
  rawBody: Uint8Array | null;
  /** The body after undoing `Content-Encoding: gzip`, parsed as JSON when possible. */
  json: any;
  status: number;
  /** Response headers, names lower-cased. */
  responseHeaders: Record<string, string>;
}

type FetchLike = (url: string, options: any) => Promise<any>;

export interface Recorder {
  fetch: FetchLike;
  requests: RecordedRequest[];
  /** Recorded requests whose path starts with `prefix`. */
  to(prefix: string): RecordedRequest[];
}

function headerRecord(h: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  const entries = h instanceof Headers ? [...h.entries()] : Object.entries(h as Record<string, string>);
  for (const [k, v] of entries) out[k.toLowerCase()] = String(v);
  return out;
}

async function bodyBytes(body: unknown): Promise<Uint8Array | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof Blob) return new Uint8Array(await body.arrayBuffer());
  throw new Error(`recording fetch: unexpected body type ${Object.prototype.toString.call(body)}`);
}

function decode(raw: Uint8Array | null, headers: Record<string, string>): any {
  if (!raw) return null;
  const bytes = headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
  const text = Buffer.from(bytes).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function recordingFetch(): Recorder {
  const requests: RecordedRequest[] = [];
  const fetchImpl: FetchLike = async (url, options = {}) => {
    const headers = headerRecord(options.headers);
    const rawBody = await bodyBytes(options.body);
    const u = new URL(url);
    // Blobs are single-use streams for fetch: hand the recorded bytes on instead.
    const res = await fetch(url, { ...options, body: rawBody ?? undefined });
    requests.push({
      method: (options.method ?? 'GET').toUpperCase(),
      path: u.pathname + u.search,
      headers,
      rawBody,
      json: decode(rawBody, headers),
      status: res.status,
      responseHeaders: headerRecord(res.headers),
    });
    return res;
  };
  return { fetch: fetchImpl, requests, to: (prefix) => requests.filter((r) => r.path.startsWith(prefix)) };
}
