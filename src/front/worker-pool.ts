/**
 * The front's view of the shard workers: one Piscina pool of exactly one thread per worker (actor ownership: that
 * thread alone owns its shards' ingest logs and event stores), and per-tick batching of requests.
 *
 * Piscina owns the threads' life cycle (start, replace after a crash, destroy). Requests do not travel as Piscina
 * tasks, though: each worker runs one long `serve` task that hands it a MessagePort, and the front posts one
 * msgpackr-encoded batch per event-loop tick on that port. Measured: a Piscina task costs 10-25 µs of dispatch,
 * a port message about 2 µs (stack-notes §1b). Replies come back per item as soon as each is ready (the worker
 * coalesces those finished in one of its ticks), so a flag evaluation never waits behind an ingestion batch's
 * fdatasync in the same message.
 *
 * The `serve` task's promise is also the liveness signal: it rejects when the thread dies, and then every request
 * sent to that thread and not yet answered is failed (the front answers 500) and a new port is handed to the
 * replacement thread Piscina starts.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { isIngestion, replyFromWire, toWire, type Reply, type ReplyFrame, type RequestFrame, type TaskItem, type WireReply } from '../protocol/worker-messages.js';
import { packFrame, unpack } from '../protocol/wire.js';
import { createSharedState, SharedState } from '../protocol/shared-state.js';
import type { Logger } from '../observability/logger.js';
import { Watchdog } from './watchdog.js';
import { IngestionGate } from './ingestion-gate.js';
import { packageRoot } from '../package-root.js';

interface Waiter {
  resolve: (r: Reply) => void;
  reject: (e: unknown) => void;
  /** Not ingestion (counted in WorkerLink.interactive). */
  interactive: boolean;
}

class WorkerLink {
  port: MessagePort | null = null;
  /** Requests of the current tick, not yet posted, and how many of them are not ingestion. */
  readonly queued: RequestFrame = [];
  queuedInteractive = 0;
  /** Posted and not yet answered, by request id. */
  readonly waiting = new Map<number, Waiter>();
  /** Requests posted or queued and not yet answered (for least-busy picking). */
  load = 0;
  /** Of those, the ones that are not ingestion (see `pick`). */
  interactive = 0;
  readonly crashes = new CrashLoop();
  /** Holds ingestion back while this worker answers flag and API requests (src/front/ingestion-gate.ts). */
  readonly gate = new IngestionGate();
  /** When a replacement held back by a crash loop starts (epoch ms; 0: not held back). */
  restartAt = 0;
  constructor(readonly index: number, readonly pool: Piscina) {}
}

/**
 * Crash-loop back-off: a worker that died CRASH_LOOP_CRASHES times within CRASH_LOOP_WINDOW_MS gets requests again
 * only after a delay that doubles with each further crash in the window (1 s, 2 s, … at most 30 s): requests go to
 * the other workers meanwhile instead of failing with each new death. (Piscina still starts the replacement thread
 * at once, and it recovers its shards on its own; holding the thread back too — `minThreads: 0` — was tried and the
 * 150-round worker-crash soak then stalled in 3 runs of 3, so it is not done.)
 */
const CRASH_LOOP_CRASHES = 3;
const CRASH_LOOP_WINDOW_MS = 60_000;
const MAX_BACKOFF_MS = 30_000;

export class CrashLoop {
  private times: number[] = [];

  /** Records a crash at `now`; the delay before the replacement may start (0: at once). */
  noteCrash(now: number): number {
    this.times = this.times.filter((t) => now - t < CRASH_LOOP_WINDOW_MS);
    this.times.push(now);
    const beyond = this.times.length - CRASH_LOOP_CRASHES;
    return beyond < 0 ? 0 : Math.min(MAX_BACKOFF_MS, 1000 * 2 ** beyond);
  }

  recent(now: number): number {
    return this.times.filter((t) => now - t < CRASH_LOOP_WINDOW_MS).length;
  }
}

/**
 * The worker with the fewest requests unanswered, the first from `start` on among equals; with `interactive`, the
 * fewest requests other than ingestion, then the fewest in all (see WorkerPool.pick).
 */
export function leastBusy(
  workers: readonly { load: number; interactive: number }[], start: number, interactive: boolean, skip: (worker: number) => boolean = () => false,
): number {
  let best = 0;
  let bestLoad = Infinity;
  const n = workers.length;
  for (let k = 0; k < n; k++) {
    const i = (start + k) % n;
    const w = workers[i]!;
    if (skip(i)) continue;
    // Loads stay far below 2^20, so this orders by interactive requests, then by all.
    const load = interactive ? w.interactive * 2 ** 20 + w.load : w.load;
    if (load < bestLoad) {
      best = i;
      bestLoad = load;
    }
  }
  return best;
}

export class WorkerPool {
  private readonly workers: WorkerLink[];
  private flushScheduled = false;
  private roundRobin = 0;
  private nextId = 1;
  private closing = false;
  /** Shared with every worker thread: see src/protocol/shared-state.ts. */
  private readonly shared = createSharedState();
  private readonly state = new SharedState(this.shared);
  /** Stalled workers get no new interactive requests while another worker beats (src/front/watchdog.ts). */
  readonly watchdog: Watchdog;
  private readonly crashBackoff: boolean;

  constructor(
    config: Readonly<Config>,
    private readonly log: Logger,
    /** Told when a worker thread died (Piscina starts its replacement). */
    private readonly onWorkerDied: (worker: number) => void = () => undefined,
  ) {
    this.crashBackoff = config.crashBackoff;
    this.watchdog = new Watchdog(new SharedState(this.shared), config.workers, config.watchdogS * 1000, log);
    const filename = join(packageRoot(), 'dist', 'workers', 'shard-worker.cjs');
    this.workers = Array.from({ length: config.workers }, (_, index) => {
      const pool = new Piscina({
        filename,
        minThreads: 1,
        maxThreads: 1,
        idleTimeout: Infinity,
        // The serve task runs for the thread's whole life; control tasks must still get through beside it.
        concurrentTasksPerWorker: 16,
        // The worker's event loop must keep running between tasks: its port, peer messages, the apply loop and
        // lmdb-js commit callbacks live there. With atomics 'sync' the thread would sleep in Atomics.wait instead.
        atomics: 'disabled',
        workerData: { config, index, shared: this.shared },
      });
      // A thread that dies with no task running would make Piscina emit 'error' on the pool; without a listener
      // that would be re-thrown on the main thread and take the whole server down with it.
      pool.on('error', (error: unknown) => this.log.error({ event: 'worker_error', worker: index, err: error }, `worker ${index} failed`));
      return new WorkerLink(index, pool);
    });
  }

  /** Marks start-up complete for current and future worker threads, and opens the request ports. */
  markStarted(): void {
    new SharedState(this.shared).markStarted();
    for (const w of this.workers) this.serve(w);
    this.watchdog.start();
  }

  /** Per worker, how long until a replacement held back by a crash loop starts (0: not held back). */
  restartDelays(now = Date.now()): number[] {
    return this.workers.map((w) => (w.restartAt > 0 ? Math.max(0, w.restartAt - now) : 0));
  }

  /** Per worker, the ingestion requests its gate holds now and has held since start (src/front/ingestion-gate.ts). */
  gateFigures(): { waiting: number; heldTotal: number }[] {
    return this.workers.map((w) => ({ waiting: w.gate.waiting, heldTotal: w.gate.heldTotal }));
  }

  get size(): number {
    return this.workers.length;
  }

  /** A view of the memory shared with the workers (the front reads flag versions from it: src/front/flag-streams.ts). */
  sharedState(): SharedState {
    return new SharedState(this.shared);
  }

  /**
   * Picks the least busy worker, round-robin among equals (every worker can serve any request). For a request
   * other than ingestion (`op` given) "busy" counts the other such requests first: an ingestion request waiting
   * for its fdatasync does not hold the worker's thread, while a flag request left unanswered says the thread is
   * taken (a slice of apply, a collection), so the next one goes to the other worker.
   */
  pick(op?: string): number {
    const interactive = op !== undefined && !isIngestion(op);
    let best = leastBusy(this.workers, this.roundRobin, interactive);
    // A worker without a thread (replaced after a crash, held back by a crash loop) would hold any request until it
    // is back, and a stalled one would hold a flag or API request until it beats again: another worker takes it.
    const avoid = (i: number) => this.workers[i]!.port === null || (interactive && this.watchdog.stalled(i));
    if (avoid(best)) {
      const other = leastBusy(this.workers, this.roundRobin, interactive, avoid);
      if (!avoid(other)) best = other;
    }
    this.roundRobin = (best + 1) % this.workers.length;
    return best;
  }

  /**
   * Queues one request for `worker`; all requests queued in this tick travel as one message. An ingestion request
   * may first wait in the worker's gate while the worker answers flag and API requests.
   */
  call(worker: number, item: TaskItem): Promise<Reply> {
    const w = this.workers[worker]!;
    const now = performance.now();
    if (!isIngestion(item.op)) {
      w.gate.asked(now);
      return this.enqueue(w, item);
    }
    let go: (() => void) | undefined;
    const released = new Promise<void>((resolve) => (go = resolve));
    if (w.gate.admit(now, go!)) return this.enqueue(w, item);
    return released.then(() => this.enqueue(w, item));
  }

  private enqueue(w: WorkerLink, item: TaskItem): Promise<Reply> {
    const id = this.nextId++;
    w.queued.push(id, toWire(item));
    w.load++;
    const interactive = !isIngestion(item.op);
    if (interactive) {
      w.interactive++;
      w.queuedInteractive++;
    }
    const promise = new Promise<Reply>((resolve, reject) => w.waiting.set(id, { resolve, reject, interactive }));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return promise;
  }

  /** Sends a control task (start-up, shutdown) to one worker as a Piscina task. */
  control<T>(worker: number, task: object, transferList: ArrayBuffer[] = []): Promise<T> {
    return this.workers[worker]!.pool.run(task, { transferList: transferList as never });
  }

  /**
   * Ends every worker thread: each closes its stores (the `shutdown` task, taken once the thread has loaded), then
   * the threads are terminated — always, even when a shutdown failed (its error is thrown after). A thread is never
   * terminated while it loads or opens its stores: that aborts the whole process (workers/shard-worker.cts).
   */
  async close(): Promise<void> {
    this.closing = true;
    this.watchdog.stop();
    const shutdowns = await Promise.allSettled(this.workers.map((_, i) => this.control(i, { control: 'shutdown' })));
    await Promise.all(this.workers.map((w) => w.pool.destroy()));
    const failed = shutdowns.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Hands `w` a fresh port inside a `serve` task; reconnects when the thread behind it dies. */
  private serve(w: WorkerLink): void {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (bytes: Uint8Array) => this.receive(w, bytes));
    port1.unref();
    w.port = port1;
    w.pool.run({ control: 'serve', port: port2 }, { transferList: [port2] as never }).then(
      () => port1.close(),
      (error: unknown) => {
        port1.close();
        w.port = null;
        this.state.clearInteractive(w.index);
        const lost = [...w.waiting.values()];
        w.waiting.clear();
        w.queued.length = 0;
        w.queuedInteractive = 0;
        w.load = 0;
        w.interactive = 0;
        for (const waiter of lost) waiter.reject(error);
        w.gate.reset();
        if (this.closing) return;
        this.log.error(
          { event: 'worker_crash', worker: w.index, failed_requests: lost.length, err: error },
          `worker ${w.index} died (${lost.length} requests failed); its replacement takes over: ${(error as Error)?.message ?? error}`,
        );
        this.onWorkerDied(w.index);
        const delay = this.crashBackoff ? w.crashes.noteCrash(Date.now()) : 0;
        if (delay === 0) return this.serve(w);
        this.log.error(
          { event: 'worker_crash_loop', worker: w.index, crashes: w.crashes.recent(Date.now()), restart_in_ms: delay },
          `worker ${w.index} keeps dying: it gets requests again in ${delay} ms; the other workers serve meanwhile`,
        );
        w.restartAt = Date.now() + delay;
        setTimeout(() => {
          w.restartAt = 0;
          if (!this.closing) this.serve(w);
        }, delay).unref();
      },
    );
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const w of this.workers) {
      if (w.queued.length === 0 || !w.port) continue;
      const bytes = this.packQueued(w);
      w.queued.length = 0;
      // Counted before the message leaves: the worker's apply and analyses see them coming (shared-state.ts).
      if (bytes && w.queuedInteractive > 0) this.state.postInteractive(w.index, w.queuedInteractive);
      w.queuedInteractive = 0;
      if (bytes) w.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
    }
  }

  /**
   * The tick's requests for `w` as one message. Should one of them not pack (the front bounds what it accepts,
   * src/domain/json-depth.ts, so this is a last line of defence), it alone fails (the front answers 500) and the
   * others go: this runs outside any request's try/catch, where a throw would end the process.
   */
  private packQueued(w: WorkerLink): Uint8Array | null {
    return packFrame(w.queued, (id, error) => {
      this.log.error({ event: 'request_unsendable', worker: w.index }, `request ${id} cannot be sent to worker ${w.index}: ${(error as Error)?.message ?? error}`);
      const waiter = w.waiting.get(id);
      w.waiting.delete(id);
      this.settled(w, waiter);
      if (waiter?.interactive) w.queuedInteractive--;
      waiter?.reject(error);
      return undefined;
    });
  }

  /** A request of `w` was answered or failed. */
  private settled(w: WorkerLink, waiter: Waiter | undefined): void {
    w.load--;
    if (waiter?.interactive) w.interactive--;
    else if (waiter) w.gate.finished(performance.now());
  }

  private receive(w: WorkerLink, bytes: Uint8Array): void {
    let frame: ReplyFrame;
    try {
      frame = unpack<ReplyFrame>(bytes);
    } catch (error) {
      // Workers only send what they packed themselves; never let a bad frame reach the process's top level.
      this.log.error({ event: 'reply_unreadable', worker: w.index }, `unreadable reply frame from worker ${w.index}: ${(error as Error)?.stack ?? error}`);
      return;
    }
    for (let i = 0; i < frame.length; i += 2) {
      const id = frame[i] as number;
      const waiter = w.waiting.get(id);
      if (!waiter) continue;
      w.waiting.delete(id);
      this.settled(w, waiter);
      waiter.resolve(replyFromWire(frame[i + 1] as WireReply));
    }
  }
}
