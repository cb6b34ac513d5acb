/**
 * The front process: one uWS app on the main thread that parses HTTP, authenticates private calls from memory,
 * and hands everything else to the shard workers. It never touches the disk after start-up.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import uWS from 'uWebSockets.js';
import type { Config } from '../config/schema.js';
import { Exchange, BodyTooLarge, RequestAborted, type OutgoingReply } from '../http/exchange.js';
import { Router } from '../http/router.js';
import { ApiError, Errors } from '../protocol/errors.js';
import type { AuthSnapshot, BootstrapResult, Principal, Reply, RequestMeta, TaskItem } from '../protocol/worker-messages.js';
import { AuthCache } from './auth-cache.js';
import { KeyLookup } from './key-lookup.js';
import { FLUSH_DELAY_MS, KeyUsage } from './key-usage.js';
import { parseConsoleOrigins, privateOriginAllowed } from '../http/cors.js';
import { checkBody, parseJsonBody } from './body-check.js';
import { ROUTES, type RouteDef } from './routes.js';
import { parseQuery } from '../http/query.js';
import { StaticAssets } from './static-assets.js';
import { WorkerPool } from './worker-pool.js';
import type { WorkerWatch } from './watchdog.js';
import { MemoryGuard } from './memory-guard.js';
import { accountKey, LoginThrottle } from '../domain/login-throttle.js';
import { chooseEncoding, CONSOLE_PREFIX, ConsoleAssets, defaultConsoleDir, HTML_HEADERS } from './console-assets.js';
import { bearerMatches, FrontMetrics } from './metrics.js';
import { OPENAPI_MEDIA_TYPE, openApiDocument } from './openapi.js';
import type { Logger } from '../observability/logger.js';
import { FlagStreams, SSE_HEADERS, type FlagState, type StreamSink } from './flag-streams.js';
import { packageRoot } from '../package-root.js';

/** Refuse to run on uWS' silent node:http fallback (stack-notes §1a): it is several times slower. */
function assertNativeUws(): void {
  if (typeof (uWS as unknown as { getParts?: unknown }).getParts !== 'function') {
    throw new Error('uWebSockets.js native module did not load (fallback shim detected); Quill needs Node 20 on a supported platform');
  }
}

/**
 * uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT. By default uWS listens with SO_REUSEPORT, so a second Quill (or any server
 * doing the same) on a port already served shared it silently, each answering part of the connections from its own
 * data; exclusive, that start is refused ("cannot listen on …") like any other on a port taken. The typings of this
 * uWS build lack the (host, port, options, callback) form its listen accepts.
 */
const LISTEN_EXCLUSIVE_PORT = 1;
type ExclusiveListen = { listen(host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void): void };

const NO_QUERY: Record<string, string> = {};
/** The route whose answer is a stream of flag changes (src/front/flag-streams.ts). */
const FLAG_STREAM_OP = 'flags.stream';
/** The unlock of a password-protected share link, throttled as sign-in is (per link instead of per e-mail). */
const SHARE_UNLOCK_OP = 'shared.unlock';
/** PostHog's address of a share link's page; the console draws it at the same path under /console. */
const SHARED_PAGE = /^\/shared\/[A-Za-z0-9_-]{16,64}\/?$/;
/** How soon an EventSource reconnects after losing a flag stream (its `retry:`). */
const STREAM_RETRY_MS = 1000;

/** A flag stream's bytes go out through the exchange (cork, backpressure and abort rules live there). */
function streamSink(ex: Exchange): StreamSink {
  return {
    write: (chunk) => ex.writeChunk(chunk),
    whenWritable: (drained) => ex.whenWritable(drained),
    end: (drop) => ex.endStream(drop),
    onClose: (left) => ex.onAbort(left),
  };
}
/** How long SIGTERM waits for requests in flight (a body streaming slower than this is cut). */
const DRAIN_LIMIT_MS = 10_000;

/**
 * `GET /_health`: 200 while the server accepts traffic. `status` is `ok`, or `degraded` while a worker is stalled
 * (its requests go to the others; src/front/watchdog.ts), and `workers` shows each one's watchdog figures.
 */
function healthReply(workers: WorkerWatch[]): Reply {
  const status = workers.some((w) => w.stalled) ? 'degraded' : 'ok';
  return { status: 200, body: JSON.stringify({ status, workers }), contentType: 'application/json' };
}

/** The console's prefix, and `/` when a browser asks for a page (API clients still get the API's 404 there). */
function isConsolePath(path: string, req: uWS.HttpRequest): boolean {
  if (path === '/') return req.getHeader('accept').includes('text/html');
  return path === CONSOLE_PREFIX || path.startsWith(`${CONSOLE_PREFIX}/`);
}

/** Quill's version, for the API description (package.json beside dist/, as in the container image). */
function quillVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * The answers of the routes the front gives itself (auth `none`), by op: `GET /api/schema/`, the OpenAPI
 * description generated once from the route table (any query, PostHog's `?format=json` included, gets the JSON).
 */
function frontAnswers(): Record<string, OutgoingReply> {
  const description = Buffer.from(JSON.stringify(openApiDocument(ROUTES, { version: quillVersion() })));
  const answers: Record<string, OutgoingReply> = { schema: { status: 200, body: description, contentType: OPENAPI_MEDIA_TYPE } };
  for (const route of ROUTES) {
    if (route.auth === 'none' && !answers[route.op]) throw new Error(`route ${route.method} ${route.path}: the front has no answer for ${route.op}`);
  }
  return answers;
}

/** The request facts of an operation the front asks for itself (no client request behind it). */
function internalMeta(path: string, now: number): RequestMeta {
  return { method: 'GET', path, query: {}, rawQuery: '', url: '', contentType: '', contentEncoding: '', ip: '', ifNoneMatch: '', authorization: '', now };
}

function errorOut(error: ApiError): OutgoingReply {
  return { status: error.status, body: error.body(), contentType: 'application/json' };
}

export interface RunningQuill {
  port: number;
  /** The port serving /metrics alone (QUILL_METRICS_PORT), or null when /metrics is on the public port. */
  metricsPort: number | null;
  boot: BootstrapResult;
  /** Stop accepting, finish in-flight requests, flush and close every store. */
  close(): Promise<void>;
}

/** How long a start-up step may run before the log names it (replaying a large backlog legitimately takes minutes). */
const START_STEP_WARN_MS = 30_000;

/** The request facts /metrics needs, with the answer's route label. */
const METRICS_ROUTE = '/metrics';

/** How long a failed start waits for its worker threads to close their stores before the process exits anyway. */
const FAILED_START_CLOSE_MS = 10_000;

export async function startQuill(config: Readonly<Config>, log: Logger): Promise<RunningQuill> {
  assertNativeUws();
  const consoleOrigins = parseConsoleOrigins(config.consoleOrigin);
  const metrics = new FrontMetrics();
  const pool = new WorkerPool(config, log, (worker) => metrics.workerRestarted(worker));
  try {
    return await startOn(pool, metrics, consoleOrigins, config, log);
  } catch (error) {
    await closeAfterFailedStart(pool, log);
    throw error;
  }
}

/**
 * A start that failed ends its worker threads before it reports the failure, so the process exits 1 (src/main.ts)
 * with no thread at work. Exiting while a thread was still loading or opening its stores aborted the process instead
 * (SIGABRT: lmdb-js's native open, cut short, cannot throw its error). Every thread first finishes what it was
 * doing (a start step settles on every worker before its failure is thrown; a thread still loading takes the
 * `shutdown` task once loaded), then closes its stores; then the pool is destroyed. A thread that takes longer than
 * FAILED_START_CLOSE_MS is left to the exit, as before.
 */
async function closeAfterFailedStart(pool: WorkerPool, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = pool.close().then(
    () => true,
    (error: unknown) => {
      log.error({ event: 'start_close_failed', err: error }, `closing the workers after the failed start: ${(error as Error)?.message ?? error}`);
      return true;
    },
  );
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), FAILED_START_CLOSE_MS)));
  const inTime = await Promise.race([closed, late]);
  clearTimeout(timer);
  if (!inTime) log.warn({ event: 'start_close_slow' }, `the workers did not close within ${FAILED_START_CLOSE_MS / 1000} s of the failed start; exiting anyway`);
}

/** The start itself; startQuill wraps it so that a failure closes the worker threads. */
async function startOn(pool: WorkerPool, metrics: FrontMetrics, consoleOrigins: ReturnType<typeof parseConsoleOrigins>, config: Readonly<Config>, log: Logger): Promise<RunningQuill> {
  /** A start-up step on one worker; one that has not answered after a while is named in the log (a start that hangs says where). */
  const startStep = async <T>(worker: number, control: string): Promise<T> => {
    const began = Date.now();
    const watchdog = setInterval(() => {
      log.warn({ event: 'start_slow', worker, step: control, waited_s: Math.round((Date.now() - began) / 1000) }, `start-up: worker ${worker} has not finished "${control}"`);
    }, START_STEP_WARN_MS);
    try {
      return await pool.control<T>(worker, { control });
    } finally {
      clearInterval(watchdog);
    }
  };
  const boot = await startStep<BootstrapResult>(0, 'bootstrap');
  // Replays hand events to other workers, so every worker opens its shards before any starts replaying.
  // A step that fails on one worker is reported once it has settled on all of them (see closeAfterFailedStart).
  for (const step of ['open', 'recover'] as const) {
    const settled = await Promise.allSettled(Array.from({ length: pool.size }, (_, i) => startStep(i, step)));
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
  pool.markStarted();
  const memoryGuard = new MemoryGuard(Math.round(config.memoryMb * 1048576), pool.sharedState(), log);
  // Key uses, batched to a worker as `last_used_at` (src/front/key-usage.ts): a Map lookup per request, no write.
  const keyUsage = new KeyUsage();
  let usageTimer: NodeJS.Timeout | null = null;
  let usageFlush: Promise<void> = Promise.resolve();
  const flushKeyUsage = (): Promise<void> => {
    if (usageTimer) clearTimeout(usageTimer);
    usageTimer = null;
    const uses = keyUsage.take(Date.now());
    if (uses.length === 0) return usageFlush;
    const item: TaskItem = { op: 'auth.key_usage', meta: internalMeta('/internal/key_usage', Date.now()), params: {}, principal: null, body: { uses }, raw: null };
    // One batch at a time, in order: a batch is written after the one before it.
    usageFlush = usageFlush.then(() => pool.call(pool.pick(), item)).then(
      (reply) => {
        if (reply.status !== 204) log.warn({ event: 'key_usage_failed', status: reply.status }, 'recording personal API key uses failed');
      },
      (error: unknown) => log.warn({ event: 'key_usage_failed', err: error }, 'recording personal API key uses failed'),
    );
    return usageFlush;
  };
  const keyUsed = (digest: string, now: number) => {
    if (keyUsage.note(digest, now) && !draining) usageTimer = setTimeout(() => void flushKeyUsage(), FLUSH_DELAY_MS);
  };
  const auth = new AuthCache(await pool.control<AuthSnapshot>(0, { control: 'auth-snapshot' }), config.operatorKey, keyUsed);
  const keyLookup = new KeyLookup(pool, auth);
  const loginThrottle = new LoginThrottle();
  const consoleAssets = ConsoleAssets.load(defaultConsoleDir());
  if (!consoleAssets) log.warn({ event: 'console_missing' }, 'The console is not built (dist/console is missing): run `npm run build`. The API works without it.');

  const assets = StaticAssets.load();
  const router = new Router<RouteDef>();
  for (const route of ROUTES) router.add(route.method, route.path, route);
  const ownAnswers = frontAnswers();

  const maxBody = Math.floor(config.maxBodyMb * 1024 * 1024);
  let draining = false;
  let inFlight = 0;
  let drained: (() => void) | null = null;

  const flagStreams = new FlagStreams(
    pool.sharedState(),
    (projectId) => pool.control<FlagState | null>(pool.pick(), { control: 'flags-state', projectId }),
    (error) => log.error({ event: 'flag_stream_failed', err: error }, 'refreshing a flag stream failed'),
  );

  const refreshAuth = async () => auth.replace(await pool.control<AuthSnapshot>(pool.pick(), { control: 'auth-snapshot' }));

  async function dispatch(ex: Exchange, route: RouteDef, params: Record<string, string>): Promise<OutgoingReply> {
    if (route.auth === 'none') return ownAnswers[route.op]!;
    const meta = ex.meta;
    const hasBody = route.body !== 'none' && meta.method !== 'GET';
    const raw = hasBody ? await ex.readBody(maxBody) : null;
    let body: unknown = null;
    if (route.body === 'json' && raw) {
      body = parseJsonBody(raw);
    }
    let principal: Principal | null = null;
    if (route.auth === 'login') return route.method === 'POST' ? signIn(ex, route, body, params) : sessionState(ex);
    if (route.auth === 'personal') {
      const query = meta.authorization && !route.projectFrom ? NO_QUERY : parseQuery(meta.rawQuery);
      const sources = { authorization: meta.authorization, body, query, cookie: ex.cookie, csrf: ex.csrfToken, method: meta.method, now: meta.now };
      let resolved = auth.resolve(sources, route, params);
      if ('miss' in resolved) {
        await keyLookup.learn(resolved.miss, meta);
        resolved = auth.resolve(sources, route, params);
        if ('miss' in resolved) throw Errors.invalidPersonalApiKey();
      }
      principal = resolved.principal;
    }
    if (route.body === 'json' && route.schema) {
      const invalid = checkBody(route.schema, body);
      if (invalid) throw invalid;
    }
    const item: TaskItem = { op: route.op, meta, params, principal, body, raw: route.body === 'raw' ? raw : null };
    const reply: Reply = await pool.call(pool.pick(route.op), item);
    if (reply.authChanged) await refreshAuth();
    return reply;
  }

  /**
   * Sign-in, throttled here (the one place every attempt passes, with no I/O): an attempt counts as a failure
   * unless the worker accepts the password (src/domain/login-throttle.ts).
   */
  async function signIn(ex: Exchange, route: RouteDef, body: unknown, params: Record<string, string>): Promise<OutgoingReply> {
    if (route.schema) {
      const invalid = checkBody(route.schema, body);
      if (invalid) throw invalid;
    }
    // A share link's password is throttled per link, as an account's is per e-mail.
    const account = route.op === SHARE_UNLOCK_OP ? `share\n${params.access_token ?? ''}` : accountKey((body as Record<string, unknown> | null)?.email);
    const verdict = loginThrottle.begin(account, ex.meta.ip, ex.meta.now);
    if (!verdict.allowed) {
      return { ...errorOut(Errors.throttled(verdict.retryAfterSeconds)), headers: { 'Retry-After': String(verdict.retryAfterSeconds) } };
    }
    const reply = await pool.call(pool.pick(), { op: route.op, meta: ex.meta, params, principal: null, body, raw: null });
    if (reply.status === 200) loginThrottle.succeeded(account, ex.meta.ip, Date.now());
    if (reply.authChanged) await refreshAuth();
    return reply;
  }

  /** `GET /api/login`: whether the request's session cookie is a live session (the console's first question). */
  function sessionState(ex: Exchange): OutgoingReply {
    let authenticated = false;
    if (ex.cookie) {
      try {
        auth.resolve({ authorization: '', body: null, query: NO_QUERY, cookie: ex.cookie, method: 'GET', now: ex.meta.now }, { scope: null }, {});
        authenticated = true;
      } catch {
        /* no live session */
      }
    }
    return { status: 200, body: JSON.stringify({ authenticated }), contentType: 'application/json', headers: { 'Cache-Control': 'no-store' } };
  }

  /** The console's files (GET under /console/, HEAD as GET), and `/` sends a browser there. */
  function serveConsole(ex: Exchange, req: uWS.HttpRequest): void {
    if (ex.path === '/') {
      return ex.send({ status: 302, body: '', headers: { Location: `${CONSOLE_PREFIX}/`, 'Cache-Control': 'no-cache' } });
    }
    if (!consoleAssets) return ex.send(errorOut(Errors.notFound('The console is not built: run `npm run build`.')));
    const found = consoleAssets.lookup(ex.path);
    if (!found) return ex.send(errorOut(Errors.notFound()));
    const { asset, name } = found;
    const headers: Record<string, string> = {
      'Cache-Control': asset.cacheControl, ETag: asset.etag, 'X-Content-Type-Options': 'nosniff', Vary: 'Accept-Encoding',
      ...(name === 'index.html' ? HTML_HEADERS : {}),
    };
    if (req.getHeader('if-none-match') === asset.etag) return ex.send({ status: 304, body: '', headers });
    const { body, encoding } = chooseEncoding(asset, req.getHeader('accept-encoding'));
    if (encoding) headers['Content-Encoding'] = encoding;
    ex.send({ status: 200, body, contentType: asset.contentType, headers });
  }

  /**
   * Private routes and sign-in grant CORS to the console's origins only (src/http/cors.ts); public ones and the
   * front's own answers (the API description) to every origin.
   */
  function restrictCors(ex: Exchange, req: uWS.HttpRequest, route: RouteDef): void {
    if ((route.auth === 'personal' || route.auth === 'login') && ex.origin) ex.restrictCors(privateOriginAllowed(ex.origin, Exchange.ownOrigin(req), consoleOrigins));
  }

  /**
   * /metrics answers with a bearer token (QUILL_METRICS_TOKEN or the operator key). On the public port it exists
   * only when one of them is configured; on its own port (QUILL_METRICS_PORT) it is open unless a token is set.
   */
  const metricsSecrets = [config.metricsToken, config.operatorKey].filter((s): s is string => s !== null);
  const metricsOnPublicPort = config.metricsPort === null && metricsSecrets.length > 0;
  const metricsItem = (now: number): TaskItem => ({ op: 'metrics', params: {}, principal: null, body: null, raw: null, meta: internalMeta(METRICS_ROUTE, now) });

  function serveMetrics(ex: Exchange, authorization: string, open: boolean, done: (reply: OutgoingReply) => void): void {
    if (!open && !bearerMatches(authorization, metricsSecrets)) return done(errorOut(Errors.notAuthenticated()));
    metrics.watchdog(pool.watchdog.all(), pool.watchdog.stalls, pool.restartDelays());
    metrics.flagStreams(flagStreams.openStreams);
    metrics.ingestionGates(pool.gateFigures());
    metrics.render(pool.size, async (worker) => {
      const reply = await pool.call(worker, metricsItem(Date.now()));
      if (reply.status !== 200 || typeof reply.body !== 'string') throw new Error(`worker ${worker} answered ${reply.status}`);
      return reply.body;
    }).then(
      (text) => done({ status: 200, body: text, contentType: FrontMetrics.contentType }),
      (error: unknown) => {
        log.error({ event: 'metrics_failed', err: error }, 'rendering /metrics failed');
        done(errorOut(Errors.server()));
      },
    );
  }

  /**
   * Every request of the public port. A HEAD is matched and answered as its GET everywhere below (the route table,
   * the API description, the posthog-js bundles, the console, /metrics, /_health): `ex.routeMethod` is GET, the
   * work and the headers are the GET's, and the exchange leaves the body out (src/http/exchange.ts `send`).
   */
  function handle(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
    const started = performance.now();
    const ex = new Exchange(res, req, Date.now());
    const { method, path } = ex;
    const routeMethod = ex.routeMethod;
    /** Answers and counts the request under `route` (a route pattern, or what the front answered itself). */
    const answer = (route: string, op: string | null, reply: OutgoingReply | null, close = false, streamed?: number) => {
      const status = reply?.status ?? streamed ?? 499;
      if (reply) ex.send(reply, close);
      const seconds = (performance.now() - started) / 1000;
      metrics.request(route, method, status, op, seconds);
      if (config.accessLog) log.info({ event: 'request', method, path, route, status, ms: Math.round(seconds * 10_000) / 10 }, 'request');
    };
    if (method === 'OPTIONS') {
      const requested = req.getHeader('access-control-request-method').toUpperCase() || 'GET';
      const asked = router.match(requested === 'HEAD' ? 'GET' : requested, path);
      if (asked.kind === 'found') restrictCors(ex, req, asked.value);
      ex.sendPreflight(req);
      return metrics.request('preflight', method, 200, null, 0);
    }
    if (path === '/_health') {
      return answer('/_health', null, draining ? errorOut(Errors.shuttingDown()) : healthReply(pool.watchdog.all()));
    }
    if (draining) return answer('draining', null, errorOut(Errors.shuttingDown()), true);
    if (routeMethod === 'GET' && path.startsWith('/static/')) return serveAsset(ex, req);
    if (routeMethod === 'GET' && isConsolePath(path, req)) return serveConsole(ex, req);
    // A share link as PostHog prints it (/shared/<token>) opens the console's shared page for it.
    if (routeMethod === 'GET' && path.startsWith('/shared/') && SHARED_PAGE.test(path)) {
      return answer('/shared/:access_token', null, { status: 302, body: '', headers: { Location: `${CONSOLE_PREFIX}${path}`, 'Cache-Control': 'no-store' } });
    }
    if (metricsOnPublicPort && (path === METRICS_ROUTE || path === `${METRICS_ROUTE}/`) && routeMethod === 'GET') {
      return serveMetrics(ex, req.getHeader('authorization'), false, (reply) => answer(METRICS_ROUTE, null, reply));
    }
    const match = router.match(routeMethod, path);
    if (match.kind === 'not_found') return answer('unmatched', null, errorOut(Errors.notFound()));
    if (match.kind === 'method_not_allowed') return answer('unmatched', null, errorOut(Errors.methodNotAllowed(method)));
    const route = match.value;
    // HEAD is safe (RFC 9110): it tells what a GET would answer without doing it, and a capture GET stores events.
    if (method === 'HEAD' && route.recordsIp) return answer(route.path, route.op, { status: 200, body: '{"status":1}', contentType: 'application/json' });
    const failed = (error: unknown) => {
      if (error instanceof RequestAborted) return answer(route.path, route.op, null);
      if (error instanceof BodyTooLarge) return answer(route.path, route.op, errorOut(Errors.tooLarge()), ex.closesWhenTooLarge(maxBody));
      if (error instanceof ApiError) return answer(route.path, route.op, errorOut(error));
      log.error({ event: 'request_failed', method, path, err: error }, `request ${method} ${path} failed`);
      answer(route.path, route.op, errorOut(Errors.server()));
    };
    if (route.op === FLAG_STREAM_OP) {
      // With an Authorization header: the server stream (personal key, as /flags/definitions); without: the browser
      // stream, authenticated by the project API key in `?token=` like /flags/ (CORS open, as for public routes).
      const browser = req.getHeader('authorization') === '';
      const lastEventId = req.getHeader('last-event-id');
      const asked: RouteDef = browser ? { ...route, auth: 'public', op: 'flags.stream_public', needs: { ...route.needs, api: false } } : route;
      restrictCors(ex, req, asked);
      ex.readFacts(req, asked.needs, config.trustProxy);
      track(dispatch(ex, asked, match.params)
        .then(async (reply) => {
          if (reply.status !== 200) return answer(route.path, route.op, reply);
          if (ex.method === 'HEAD') {
            // The stream's head and nothing more: no subscription, no events.
            ex.beginStream(200, SSE_HEADERS, '');
            return answer(route.path, route.op, null, false, 200);
          }
          const body = typeof reply.body === 'string' ? reply.body : Buffer.from(reply.body).toString();
          const projectId = (JSON.parse(body) as { project_id: number }).project_id;
          await flagStreams.connect(projectId, browser ? 'browser' : 'server', lastEventId, (opening) => {
            if (draining) {
              answer(route.path, route.op, errorOut(Errors.shuttingDown()), true);
              return null;
            }
            if (!ex.beginStream(200, SSE_HEADERS, `retry: ${STREAM_RETRY_MS}\n\n${opening}`)) return null;
            answer(route.path, route.op, null, false, 200);
            return streamSink(ex);
          });
        })
        .catch(failed));
      return;
    }
    restrictCors(ex, req, route);
    ex.readFacts(req, route.needs, config.trustProxy);
    track(dispatch(ex, route, match.params).then((reply) => answer(route.path, route.op, reply), failed));
  }

  /** Counts a request in flight until `work` settles (the drain waits for them). */
  function track(work: Promise<unknown>): void {
    inFlight++;
    void work.finally(() => {
      inFlight--;
      if (draining && inFlight === 0 && drained) drained();
    });
  }

  /** The posthog-js bundles (src/front/static-assets.ts); answered by the front alone, no worker involved. */
  function serveAsset(ex: Exchange, req: uWS.HttpRequest): void {
    const request = { path: ex.path, acceptEncoding: req.getHeader('accept-encoding'), ifNoneMatch: req.getHeader('if-none-match') };
    track(assets.answer(request).then(
      (reply) => ex.send(reply ?? errorOut(Errors.notFound())),
      (error: unknown) => {
        log.error({ event: 'asset_failed', path: ex.path, err: error }, `static asset ${ex.path} failed`);
        ex.send(errorOut(Errors.server()));
      },
    ));
  }

  /** The port that serves /metrics alone (QUILL_METRICS_PORT): open unless QUILL_METRICS_TOKEN is set. */
  function handleMetricsPort(res: uWS.HttpResponse, req: uWS.HttpRequest): void {
    const ex = new Exchange(res, req, Date.now());
    if (ex.routeMethod !== 'GET' || (ex.path !== METRICS_ROUTE && ex.path !== `${METRICS_ROUTE}/`)) return ex.send(errorOut(Errors.notFound()));
    serveMetrics(ex, req.getHeader('authorization'), config.metricsToken === null, (reply) => ex.send(reply));
  }

  /** A uWS app answering every path with `handler`, listening on `port`. */
  async function serve(handler: typeof handle, port: number, what: string): Promise<{ app: uWS.TemplatedApp; socket: uWS.us_listen_socket }> {
    const app = uWS.App();
    app.any('/*', (res, req) => {
      try {
        handler(res, req);
      } catch (error) {
        // Handlers attach onAborted first, so answering here is safe; never let a throw reach uWS (it aborts).
        log.error({ event: 'handler_crashed', err: error }, 'handler crashed');
        try {
          res.cork(() => res.writeStatus('500 Internal Server Error').end(Errors.server().body()));
        } catch {
          /* response already gone */
        }
      }
    });
    const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      (app as unknown as ExclusiveListen).listen(config.host, port, LISTEN_EXCLUSIVE_PORT, (s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${config.host}:${port} (${what})`))));
    });
    return { app, socket };
  }

  const { app, socket: listenSocket } = await serve(handle, config.port, 'QUILL_PORT');
  const port = uWS.us_socket_local_port(listenSocket);
  const metricsServer = config.metricsPort === null ? null : await serve(handleMetricsPort, config.metricsPort, 'QUILL_METRICS_PORT');
  const metricsApp = metricsServer?.app ?? null;
  const metricsSocket = metricsServer?.socket ?? null;
  const metricsPort = metricsSocket ? uWS.us_socket_local_port(metricsSocket) : null;

  /**
   * The drain: requests already being handled (body still arriving, or waiting for a worker) finish; anything
   * arriving meanwhile gets 503 `shutting_down`, `/_health` too. The listening socket stays open until then, so a
   * client or load balancer connecting during the drain is told why instead of being refused.
   */
  async function close(): Promise<void> {
    if (draining) return;
    draining = true;
    flagStreams.closeAll();
    memoryGuard.close();
    if (inFlight > 0) {
      await Promise.race([new Promise<void>((r) => (drained = r)), new Promise((r) => setTimeout(r, DRAIN_LIMIT_MS))]);
    }
    uWS.us_listen_socket_close(listenSocket);
    if (metricsSocket) uWS.us_listen_socket_close(metricsSocket);
    // The uses still queued are written before the workers stop (a SIGKILL loses at most FLUSH_DELAY_MS of them).
    await flushKeyUsage();
    await pool.close();
    // `close` exists on this uWS build (it closes keep-alive connections) but is missing from its typings.
    (app as unknown as { close(): void }).close();
    (metricsApp as unknown as { close(): void } | null)?.close();
  }

  return { port, metricsPort, boot, close };
}
