/**
 * The front's view of the shard workers: one Piscina pool of exactly one thread per worker (actor ownership: that
 * thread alone owns its shards' LMDB environments and ingest logs), and per-tick batching of requests.
 *
 * Lanes: requests are batched separately per kind, because a batch is answered as a whole. An ingestion batch
 * waits for an fdatasync; flag evaluations must not wait behind it.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { STARTED, type Reply, type ReplyBatch, type TaskItem } from '../protocol/worker-messages.js';
import { packForTransfer, unpack } from '../protocol/wire.js';

export type Lane = 'fast' | 'ingest' | 'api';
const LANES: Lane[] = ['fast', 'ingest', 'api'];

interface Pending {
  items: TaskItem[];
  waiters: { resolve: (r: Reply) => void; reject: (e: unknown) => void }[];
}

class WorkerHandle {
  readonly pending = new Map<Lane, Pending>();
  inFlight = 0;
  constructor(readonly index: number, readonly pool: Piscina) {}
}

export class WorkerPool {
  private readonly workers: WorkerHandle[];
  private flushScheduled = false;
  private roundRobin = 0;
  private readonly shared = new Int32Array(new SharedArrayBuffer(4));

  constructor(config: Readonly<Config>, private readonly log: (msg: string) => void = console.error) {
    const filename = fileURLToPath(new URL('../../workers/shard-worker.js', import.meta.url));
    this.workers = Array.from({ length: config.workers }, (_, index) => {
      const pool = new Piscina({
        filename,
        minThreads: 1,
        maxThreads: 1,
        idleTimeout: Infinity,
        // Tasks await commits and syncs; with one task per worker at a time everything would serialise.
        concurrentTasksPerWorker: 256,
        // The worker's event loop must keep running between tasks: peer messages, the apply loop and lmdb-js
        // commit callbacks live there. With atomics 'sync' the thread would sleep in Atomics.wait instead.
        atomics: 'disabled',
        workerData: { config, index, shared: this.shared },
      });
      // A thread that dies (an uncaught error) is replaced by Piscina; without this listener the error would be
      // re-thrown on the main thread and take the whole server down with it.
      pool.on('error', (error: unknown) => this.log(`worker ${index} died and is being replaced: ${(error as Error)?.stack ?? error}`));
      return new WorkerHandle(index, pool);
    });
  }

  /** Marks start-up complete for current and future worker threads. */
  markStarted(): void {
    Atomics.store(this.shared, STARTED, 1);
  }

  get size(): number {
    return this.workers.length;
  }

  /** Picks the least busy worker, round-robin among equals (every worker can serve any request). */
  pick(): number {
    let best = -1;
    let bestLoad = Infinity;
    const n = this.workers.length;
    for (let k = 0; k < n; k++) {
      const i = (this.roundRobin + k) % n;
      const w = this.workers[i]!;
      const load = w.inFlight;
      if (load < bestLoad) {
        best = i;
        bestLoad = load;
      }
    }
    this.roundRobin = (best + 1) % n;
    return best;
  }

  /** Queues one request for `worker` on `lane`; all requests queued in this tick travel as one task. */
  call(worker: number, lane: Lane, item: TaskItem): Promise<Reply> {
    const w = this.workers[worker]!;
    let pending = w.pending.get(lane);
    if (!pending) w.pending.set(lane, (pending = { items: [], waiters: [] }));
    pending.items.push(item);
    w.inFlight++;
    const promise = new Promise<Reply>((resolve, reject) => pending!.waiters.push({ resolve, reject }));
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return promise;
  }

  /** Sends a control task (start-up, shutdown) to one worker, unbatched. */
  control<T>(worker: number, task: object, transferList: ArrayBuffer[] = []): Promise<T> {
    return this.workers[worker]!.pool.run(task, { transferList: transferList as never });
  }

  async destroy(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.pool.destroy()));
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const w of this.workers) {
      for (const lane of LANES) {
        const pending = w.pending.get(lane);
        if (!pending || pending.items.length === 0) continue;
        w.pending.delete(lane);
        this.send(w, pending);
      }
    }
  }

  private send(w: WorkerHandle, pending: Pending): void {
    const bytes = packForTransfer({ items: pending.items });
    const done = () => {
      w.inFlight -= pending.waiters.length;
    };
    w.pool.run(bytes, { transferList: [bytes.buffer] as never }).then(
      (out: Uint8Array) => {
        done();
        const { replies } = unpack<ReplyBatch>(out);
        pending.waiters.forEach((waiter, i) => waiter.resolve(replies[i]!));
      },
      (error: unknown) => {
        done();
        for (const waiter of pending.waiters) waiter.reject(error);
      },
    );
  }
}
