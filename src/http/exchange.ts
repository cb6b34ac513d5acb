/**
 * The one place that touches uWS `HttpRequest`/`HttpResponse`. Every rule that crashes the process when broken is
 * enforced here (stack-notes §1a):
 *  - `onAborted` is attached before anything else can happen;
 *  - request facts are copied synchronously (the HttpRequest dies at the first await);
 *  - body chunks are copied (uWS neuters them after the callback) and counted against a limit;
 *  - every write happens inside `cork`, never after abort or after the response ended.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { RequestMeta } from '../protocol/worker-messages.js';
import { statusLine } from './status-text.js';

export interface OutgoingReply {
  status: number;
  body: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

export class BodyTooLarge extends Error {}
export class RequestAborted extends Error {}

const textDecoder = new TextDecoder();

export class Exchange {
  private aborted = false;
  private done = false;
  private onAbortHooks: (() => void)[] = [];
  readonly meta: RequestMeta;
  /** CORS: the Origin to mirror, and the headers a preflight asked for. */
  readonly origin: string;
  readonly requestedHeaders: string;
  readonly contentLength: number | null;

  constructor(private readonly res: HttpResponse, req: HttpRequest, now: number) {
    res.onAborted(() => {
      this.aborted = true;
      for (const hook of this.onAbortHooks) hook();
    });
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const host = req.getHeader('host') || '127.0.0.1';
    const forwardedProto = req.getHeader('x-forwarded-proto');
    const forwardedFor = req.getHeader('x-forwarded-for');
    const lengthHeader = req.getHeader('content-length');
    this.origin = req.getHeader('origin');
    this.requestedHeaders = req.getHeader('access-control-request-headers');
    this.contentLength = lengthHeader === '' ? null : Number(lengthHeader);
    this.meta = {
      method,
      path,
      query: parseQuery(rawQuery),
      rawQuery,
      url: `${forwardedProto || 'http'}://${host}${path}`,
      contentType: req.getHeader('content-type'),
      contentEncoding: req.getHeader('content-encoding'),
      ip: forwardedFor ? forwardedFor.split(',')[0]!.trim() : textDecoder.decode(res.getRemoteAddressAsText()),
      userAgent: req.getHeader('user-agent'),
      ifNoneMatch: req.getHeader('if-none-match'),
      authorization: req.getHeader('authorization'),
      now,
    };
  }

  get isAborted(): boolean {
    return this.aborted;
  }

  /**
   * Reads the whole body, refusing more than `limit` bytes: immediately from Content-Length, or while streaming
   * (chunked uploads carry no length). Resolves with one contiguous copy.
   */
  readBody(limit: number): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      if (this.contentLength !== null && this.contentLength > limit) {
        reject(new BodyTooLarge());
        return;
      }
      const known = this.contentLength !== null && Number.isFinite(this.contentLength) ? this.contentLength : 0;
      let buffer = Buffer.allocUnsafe(known > 0 ? known : 1024);
      let length = 0;
      let failed = false;
      this.onAbortHooks.push(() => reject(new RequestAborted()));
      this.res.onData((chunk, isLast) => {
        if (failed) return;
        const size = chunk.byteLength;
        if (length + size > limit) {
          failed = true;
          reject(new BodyTooLarge());
          return;
        }
        if (length + size > buffer.length) {
          const grown = Buffer.allocUnsafe(Math.max(buffer.length * 2, length + size));
          buffer.copy(grown, 0, 0, length);
          buffer = grown;
        }
        // Copy now: uWS reuses the chunk's memory once this callback returns.
        Buffer.from(chunk).copy(buffer, length);
        length += size;
        if (isLast) resolve(buffer.subarray(0, length));
      });
    });
  }

  /** Writes the reply (once). `close` ends the connection, so an oversized upload is not read to its end. */
  send(reply: OutgoingReply, close = false): void {
    if (this.aborted || this.done) return;
    this.done = true;
    this.res.cork(() => {
      this.res.writeStatus(statusLine(reply.status));
      if (this.origin) {
        this.res.writeHeader('Access-Control-Allow-Origin', this.origin);
        this.res.writeHeader('Access-Control-Allow-Credentials', 'true');
        this.res.writeHeader('Vary', 'Origin');
      } else {
        this.res.writeHeader('Access-Control-Allow-Origin', '*');
      }
      if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) this.res.writeHeader(k, v);
      const noBody = reply.status === 204 || reply.status === 304;
      if (!noBody && (reply.body.length > 0 || reply.contentType)) {
        this.res.writeHeader('Content-Type', reply.contentType ?? 'application/json');
      }
      this.res.end(noBody ? undefined : reply.body, close);
    });
  }

  /** Preflight answer: mirror what the browser asked for, as PostHog does. */
  sendPreflight(): void {
    this.send({
      status: 200,
      body: '{"status":1}',
      headers: {
        'Access-Control-Allow-Methods': 'GET, POST, PATCH, DELETE, OPTIONS',
        'Access-Control-Allow-Headers': this.requestedHeaders || 'Content-Type, Authorization',
        'Access-Control-Max-Age': '86400',
      },
    });
  }
}

function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    out[decodeComponent(k)] = decodeComponent(v);
  }
  return out;
}

function decodeComponent(s: string): string {
  const plus = s.includes('+') ? s.replace(/\+/g, ' ') : s;
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus;
  }
}
