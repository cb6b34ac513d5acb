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
import { CSRF_HEADER } from '../domain/cookies.js';
import { clientAddress } from '../domain/login-throttle.js';

export interface OutgoingReply {
  status: number;
  body: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

export class BodyTooLarge extends Error {}
export class RequestAborted extends Error {}

const textDecoder = new TextDecoder();

/** See `closesWhenTooLarge`: how far past the body limit a declared upload is still read (and dropped). */
const DRAIN_FACTOR = 4;

/** Which request facts a route needs; only those headers are read (each read crosses into uWS' C++). */
export interface FactNeeds {
  /** The body's content type and encoding (routes that read a body). */
  body: boolean;
  /** The client address (ingestion records it as `$ip`). */
  ip: boolean;
  /** Authorization, host and scheme (absolute pagination URLs), If-None-Match (private API, definitions), and the
   * console session's Cookie and X-CSRFToken (kept on the exchange, never sent to a worker). */
  api: boolean;
  /** The client address as sign-in throttling sees it (src/domain/login-throttle.ts `clientAddress`). */
  peer: boolean;
  /**
   * A public route authenticated by a key in a header (OFREP): Authorization, or OFREP's `X-API-Key` (passed on as
   * `Bearer <key>`), and If-None-Match.
   */
  keyHeader?: boolean;
}

/** The key of a request that carries it in `Authorization` or in OFREP's `X-API-Key`, as `Bearer <key>`. */
function headerKey(req: HttpRequest): string {
  const authorization = req.getHeader('authorization');
  if (authorization) return authorization;
  const apiKey = req.getHeader('x-api-key').trim();
  return apiKey ? `Bearer ${apiKey}` : '';
}

export class Exchange {
  private aborted = false;
  private done = false;
  private streaming = false;
  private onAbortHooks: (() => void)[] = [];
  /** The request's method as sent (`HEAD` included: see `routeMethod`). */
  readonly method: string;
  /**
   * The method routes are matched and answered for: a `HEAD` is answered exactly as its `GET` (same work, status
   * and headers) and `send` leaves the body out (RFC 9110 §9.3.2).
   */
  readonly routeMethod: string;
  readonly path: string;
  readonly rawQuery: string;
  /** CORS: the Origin to mirror. */
  readonly origin: string;
  /** CORS: false when this is a private route and `origin` is not one of the console's (src/http/cors.ts). */
  private corsGranted = true;
  readonly contentLength: number | null;
  /** Set by `readFacts` (synchronously, before the first await). */
  meta!: RequestMeta;
  /** The `Cookie` and `X-CSRFToken` headers of an API request (the console's session). */
  cookie = '';
  csrfToken = '';

  constructor(private readonly res: HttpResponse, req: HttpRequest, private readonly now: number) {
    res.onAborted(() => {
      this.aborted = true;
      for (const hook of this.onAbortHooks) hook();
    });
    this.method = req.getMethod().toUpperCase();
    this.routeMethod = this.method === 'HEAD' ? 'GET' : this.method;
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    this.origin = req.getHeader('origin');
    const lengthHeader = req.getHeader('content-length');
    this.contentLength = lengthHeader === '' ? null : Number(lengthHeader);
  }

  /** Copies what the route needs out of the request; must run before the handler returns or awaits. */
  readFacts(req: HttpRequest, needs: FactNeeds, trustProxy = true): RequestMeta {
    let ip = '';
    if (needs.ip) {
      // X-Forwarded-For names the client only behind a proxy: one the operator declares (QUILL_TRUST_PROXY), whose
      // first entry is the client as the outermost proxy saw it, or else one on this host (a loopback peer), whose
      // own entry is the last. From anyone else the header is the client's word and the peer is the address.
      const forwardedFor = req.getHeader('x-forwarded-for');
      const peer = textDecoder.decode(this.res.getRemoteAddressAsText());
      ip = trustProxy ? (forwardedFor ? forwardedFor.split(',')[0]!.trim() : peer) : clientAddress(peer, forwardedFor);
    }
    if (needs.peer) ip = clientAddress(textDecoder.decode(this.res.getRemoteAddressAsText()), req.getHeader('x-forwarded-for'));
    let url = '';
    if (needs.api) {
      url = `${Exchange.ownOrigin(req)}${this.path}`;
      this.cookie = req.getHeader('cookie');
      this.csrfToken = req.getHeader(CSRF_HEADER);
    }
    this.meta = {
      // Workers answer a HEAD as the GET it stands for (capture's `GET ?data=` reads its token from the query).
      method: this.routeMethod,
      path: this.path,
      query: {},
      rawQuery: this.rawQuery,
      url,
      contentType: needs.body ? req.getHeader('content-type') : '',
      contentEncoding: needs.body ? req.getHeader('content-encoding') : '',
      ip,
      ifNoneMatch: needs.api || needs.keyHeader ? req.getHeader('if-none-match') : '',
      authorization: needs.api ? req.getHeader('authorization') : needs.keyHeader ? headerKey(req) : '',
      now: this.now,
    };
    return this.meta;
  }

  /** This server's origin as the request addressed it (scheme from a proxy's `X-Forwarded-Proto`). */
  static ownOrigin(req: HttpRequest): string {
    return `${req.getHeader('x-forwarded-proto') || 'http'}://${req.getHeader('host') || '127.0.0.1'}`;
  }

  /** Private routes: answer with a CORS grant only if `granted` (the origin is the console's). */
  restrictCors(granted: boolean): void {
    this.corsGranted = granted;
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

  /**
   * Whether refusing an oversized body (413) should also close the connection. Closing while the client is still
   * sending makes the kernel reset the connection, and the reset can discard the 413 before the client reads it
   * (measured: a keep-alive client sending 2.3 MB to a 1 MB limit got a reset, not the answer). Left open, uWS
   * reads and drops the rest of the body and the client gets its 413 (posthog-node then halves its batch). So the
   * connection stays open for a declared length up to DRAIN_FACTOR times the limit, and closes beyond that or
   * when the length is unknown (a chunked upload could go on for ever).
   */
  closesWhenTooLarge(limit: number): boolean {
    return this.contentLength === null || !(this.contentLength <= limit * DRAIN_FACTOR);
  }

  /**
   * Writes the reply (once). `close` ends the connection, so an oversized upload is not read to its end. A HEAD
   * gets the GET's status and headers, its Content-Length included, and no body: uWS itself would send the body
   * after a HEAD's headers (measured: curl reports the excess bytes), which corrupts the next answer on a
   * keep-alive connection. The length is written as a header, and `endWithoutBody` gets no argument: this uWS
   * build's `endWithoutBody(length)` leaves the response waiting for that many body bytes (the connection closes at
   * the client's next request), and its `endWithoutBody(undefined, true)` writes a length of 2^63 (both measured).
   * So a HEAD that should close the connection says `Connection: close`, as the GET's answer does, and the client
   * closes it.
   */
  send(reply: OutgoingReply, close = false): void {
    if (this.aborted || this.done) return;
    this.done = true;
    this.res.cork(() => {
      this.writeHead(reply.status, reply.headers);
      const noBody = reply.status === 204 || reply.status === 304;
      if (!noBody && (reply.body.length > 0 || reply.contentType)) {
        this.res.writeHeader('Content-Type', reply.contentType ?? 'application/json');
      }
      if (this.method === 'HEAD') {
        const length = noBody ? 0 : typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength;
        this.res.writeHeader('Content-Length', String(length));
        if (close) this.res.writeHeader('Connection', 'close');
        this.res.endWithoutBody();
      } else {
        this.res.end(noBody ? undefined : reply.body, close);
      }
    });
  }

  /** Status, CORS and the reply's headers (inside a cork). */
  private writeHead(status: number, headers: Record<string, string> | undefined): void {
    this.res.writeStatus(statusLine(status));
    if (this.origin) {
      if (this.corsGranted) {
        this.res.writeHeader('Access-Control-Allow-Origin', this.origin);
        this.res.writeHeader('Access-Control-Allow-Credentials', 'true');
      }
      this.res.writeHeader('Vary', 'Origin');
    } else {
      this.res.writeHeader('Access-Control-Allow-Origin', '*');
    }
    if (headers) for (const [k, v] of Object.entries(headers)) this.res.writeHeader(k, v);
  }

  /** Runs `hook` if the client goes away before the response ended. */
  onAbort(hook: () => void): void {
    this.onAbortHooks.push(hook);
  }

  /**
   * Starts a streamed answer (Server-Sent Events): status and headers, then `first`, sent chunked (no length).
   * The response stays open until `endStream` or the client leaves; every later chunk goes through `writeChunk`.
   * Returns false when the client is already gone. A HEAD gets the head alone and the answer ends there.
   */
  beginStream(status: number, headers: Record<string, string>, first: string): boolean {
    if (this.aborted || this.done) return false;
    if (this.method === 'HEAD') {
      // The stream's head as a GET gets it (chunked, no length), then nothing: there is no body to stream.
      this.done = true;
      this.res.cork(() => {
        this.writeHead(status, { ...headers, 'Transfer-Encoding': 'chunked' });
        this.res.endWithoutBody();
      });
      return !this.aborted;
    }
    this.streaming = true;
    this.res.cork(() => {
      this.writeHead(status, headers);
      // A first chunk uWS has to buffer is still sent once the socket drains; later chunks check backpressure.
      this.res.write(first);
    });
    return !this.aborted;
  }

  /**
   * Writes one chunk of a streamed answer. 'sent': handed to the kernel; 'buffered': uWS holds (part of) it until
   * the socket drains (backpressure: `whenWritable` says when); 'gone': the client left or the stream ended.
   */
  writeChunk(chunk: string): 'sent' | 'buffered' | 'gone' {
    if (this.aborted || this.done || !this.streaming) return 'gone';
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    return ok ? 'sent' : 'buffered';
  }

  /** Calls `drained` once uWS could write to the socket again after a 'buffered' chunk. */
  whenWritable(drained: () => void): void {
    if (this.aborted || this.done) return;
    this.res.onWritable(() => {
      drained();
      return true;
    });
  }

  /** Ends a streamed answer: cleanly (the last chunk), or by dropping the connection (`drop`: a client too slow to read). */
  endStream(drop = false): void {
    if (this.aborted || this.done) return;
    this.done = true;
    if (drop) {
      this.res.close();
      return;
    }
    this.res.cork(() => this.res.end());
  }

  /** Preflight answer: mirror what the browser asked for, as PostHog does. */
  sendPreflight(req: HttpRequest): void {
    const requested = req.getHeader('access-control-request-headers');
    this.send({
      status: 200,
      body: '{"status":1}',
      headers: {
        'Access-Control-Allow-Methods': 'GET, POST, PATCH, PUT, DELETE, OPTIONS',
        'Access-Control-Allow-Headers': requested || 'Content-Type, Authorization',
        'Access-Control-Max-Age': '86400',
      },
    });
  }
}
