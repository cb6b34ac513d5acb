/**
 * `GET /metrics` (Prometheus text format, prom-client). The front counts what it sees — requests by route, method
 * and status, latency of capture and flag requests, worker threads replaced after a crash — and asks every worker
 * for its own series (ingestion, fsyncs, LMDB sizes, analyses: src/worker/metrics.ts) as prom-client JSON, then
 * merges them (AggregatorRegistry.aggregate: series with the same labels are added up). Nothing here touches the
 * disk: the workers read what lives there.
 *
 * A worker that does not answer within WORKER_TIMEOUT_MS (dead, being replaced) is reported with
 * `quill_worker_up{worker} 0` and its series are missing from that scrape; the rest is still served.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { WorkerWatch } from './watchdog.js';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from '../observability/prom.js';

const WORKER_TIMEOUT_MS = 5_000;
/** Request latency, seconds: capture and flags answer in about a millisecond when idle, tens under load. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Worker operations whose latency is a histogram, by the endpoint family they belong to. */
const TIMED_OPS: Record<string, 'capture' | 'flags'> = {
  capture: 'capture', engage: 'capture', decide: 'flags', flags: 'flags', 'decide.defaults': 'flags', 'flags.defaults': 'flags',
};

export class FrontMetrics {
  private readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly latency: Histogram<'endpoint'>;
  private readonly restarts: Counter<'worker'>;
  private readonly up: Gauge<'worker'>;
  private readonly scrapeSeconds: Gauge;
  private readonly stalled: Gauge<'worker'>;
  private readonly heartbeatAge: Gauge<'worker'>;
  private readonly oldestRequest: Gauge<'worker'>;
  private readonly stalls: Gauge<'worker'>;
  private readonly restartBackoff: Gauge<'worker'>;
  private readonly flagStreamsOpen: Gauge;
  private readonly ingestionHeld: Gauge<'worker'>;
  private readonly ingestionHeldTotal: Gauge<'worker'>;
  /** Labelled children by `route method status`: a lookup per request instead of prom-client's label hashing. */
  private readonly counters = new Map<string, { inc(): void }>();
  private readonly timers = new Map<string, { observe(v: number): void }>();

  constructor() {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'quill_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status.', labelNames: ['route', 'method', 'status'], registers });
    this.latency = new Histogram({ name: 'quill_http_request_duration_seconds', help: 'Time from request to answer for capture (ingestion) and flag evaluation.', labelNames: ['endpoint'], buckets: LATENCY_BUCKETS, registers });
    this.restarts = new Counter({ name: 'quill_worker_restarts_total', help: 'Shard worker threads that died and were replaced.', labelNames: ['worker'], registers });
    this.up = new Gauge({ name: 'quill_worker_up', help: 'Whether each shard worker answered this scrape (1) or not (0).', labelNames: ['worker'], registers });
    this.stalled = new Gauge({ name: 'quill_worker_stalled', help: 'Whether each worker\'s event loop has not turned for QUILL_WATCHDOG_S (1): it gets no new flag or API requests meanwhile.', labelNames: ['worker'], registers });
    this.heartbeatAge = new Gauge({ name: 'quill_worker_heartbeat_age_seconds', help: 'How long since each worker\'s event loop last turned (its watchdog heartbeat).', labelNames: ['worker'], registers });
    this.oldestRequest = new Gauge({ name: 'quill_worker_oldest_request_seconds', help: 'How long each worker\'s oldest unfinished request has run (0: none).', labelNames: ['worker'], registers });
    // A counter in meaning; a gauge here because its value is the watchdog's own count, set at each scrape.
    this.stalls = new Gauge({ name: 'quill_worker_stalls_total', help: 'Times each worker was found stalled since start.', labelNames: ['worker'], registers });
    this.restartBackoff = new Gauge({ name: 'quill_worker_restart_backoff_seconds', help: 'How long until the replacement of a worker in a crash loop starts (0: none held back).', labelNames: ['worker'], registers });
    this.ingestionHeld = new Gauge({ name: 'quill_ingestion_requests_held', help: 'Ingestion requests read and waiting in the front while their worker answers flag or API requests.', labelNames: ['worker'], registers });
    // A counter in meaning; a gauge here because its value is the gate's own count, set at each scrape.
    this.ingestionHeldTotal = new Gauge({ name: 'quill_ingestion_requests_held_total', help: 'Ingestion requests that waited in the front for their worker to answer flag or API requests first, since start.', labelNames: ['worker'], registers });
    this.flagStreamsOpen = new Gauge({ name: 'quill_flag_streams_open', help: 'Open GET /flags/stream connections (Server-Sent Events).', registers });
    this.scrapeSeconds = new Gauge({ name: 'quill_metrics_previous_scrape_duration_seconds', help: 'How long gathering the previous /metrics answer took.', registers });
  }

  /** One answered request. `op`: the worker operation of its route (null for the front's own answers). */
  request(route: string, method: string, status: number, op: string | null, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let counter = this.counters.get(key);
    // Any client can send any method: unknown ones share one label, so no client can grow the series without end.
    if (!counter) this.counters.set(key, (counter = this.requests.labels(route, METHODS.has(method) ? method : 'other', String(status))));
    counter.inc();
    const endpoint = op === null ? undefined : TIMED_OPS[op];
    if (endpoint === undefined) return;
    let timer = this.timers.get(endpoint);
    if (!timer) this.timers.set(endpoint, (timer = this.latency.labels(endpoint)));
    timer.observe(seconds);
  }

  /** The watchdog's figures, set before each scrape (src/front/watchdog.ts). */
  watchdog(watches: readonly WorkerWatch[], stalls: readonly number[], restartDelaysMs: readonly number[] = []): void {
    restartDelaysMs.forEach((ms, worker) => this.restartBackoff.labels(String(worker)).set(ms / 1000));
    for (const w of watches) {
      const worker = String(w.worker);
      this.stalled.labels(worker).set(w.stalled ? 1 : 0);
      this.heartbeatAge.labels(worker).set(w.heartbeat_age_ms / 1000);
      this.oldestRequest.labels(worker).set(w.oldest_request_ms / 1000);
      this.stalls.labels(worker).set(stalls[w.worker] ?? 0);
    }
  }

  /** The ingestion gates' figures, set before each scrape (src/front/ingestion-gate.ts). */
  ingestionGates(gates: readonly { waiting: number; heldTotal: number }[]): void {
    gates.forEach((g, worker) => {
      this.ingestionHeld.labels(String(worker)).set(g.waiting);
      this.ingestionHeldTotal.labels(String(worker)).set(g.heldTotal);
    });
  }

  /** Open flag streams, set before each scrape (src/front/flag-streams.ts). */
  flagStreams(open: number): void {
    this.flagStreamsOpen.set(open);
  }

  workerRestarted(worker: number): void {
    this.restarts.labels(String(worker)).inc();
  }

  /** The exposition text: the front's series merged with every worker's (`gather(i)` answers worker i's JSON). */
  async render(workers: number, gather: (worker: number) => Promise<string>): Promise<string> {
    const started = performance.now();
    const parts = await Promise.all(Array.from({ length: workers }, async (_, i) => {
      try {
        const text = await withTimeout(gather(i), WORKER_TIMEOUT_MS);
        this.up.labels(String(i)).set(1);
        return JSON.parse(text) as MetricObjectWithValues<MetricValue<string>>[];
      } catch {
        this.up.labels(String(i)).set(0);
        return [];
      }
    }));
    const own = await this.registry.getMetricsAsJSON();
    const text = await AggregatorRegistry.aggregate([own, ...parts] as never).metrics();
    this.scrapeSeconds.set((performance.now() - started) / 1000);
    return text;
  }

  static readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Who may read /metrics: a bearer token equal to one of `secrets` (QUILL_METRICS_TOKEN, the operator key).
 * Compared as digests in constant time, so the comparison leaks nothing about the secret.
 */
export function bearerMatches(authorization: string, secrets: readonly string[]): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (!m) return false;
  const given = createHash('sha256').update(m[1]!).digest();
  let ok = false;
  for (const secret of secrets) ok = timingSafeEqual(given, createHash('sha256').update(secret).digest()) || ok;
  return ok;
}
