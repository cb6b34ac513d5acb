/**
 * A worker's part of the memory budget (QUILL_MEMORY_MB, src/front/memory-guard.ts). Refusing new events does not
 * shrink the process by itself: measured under the sustained load, the memory kept growing while the apply drained
 * the backlog, from the caches it refilled. So while the process is over its budget the caches this thread fills
 * are held small — decoded analytics columns not kept at all, hot persons at a quarter of QUILL_HOT_PERSONS_MB, both
 * rebuilt from LMDB on demand — at the price of a slower apply and slower analyses until it is back under.
 *
 * Garbage is not enough either: after a drain the heaps keep the space they grew to (measured: 414 MB reserved for
 * 237 MB used, the process 803 MB against an 800 MB budget with nothing left to apply, so it would refuse events
 * with nothing to wait for). So while over, each worker runs a full collection every FULL_GC_EVERY_MS, which gives
 * V8's empty pages back to the system. It pauses this thread for tens of milliseconds on a heap of hundreds of MB:
 * a price paid only while the process is over its budget.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { WorkerRuntime } from './runtime.js';

const CHECK_MS = 250;
/** Share of the hot-persons budget kept while over: 64 MB instead of 96 cost the apply ~15 %, a quarter more. */
const HOT_PERSONS_SHARE_OVER = 0.25;
const FULL_GC_EVERY_MS = 5_000;

/** V8's full collection, exposed at run time (only processes with a memory budget ever ask for it). */
let fullGc: (() => void) | null = null;
function collectFully(): void {
  if (!fullGc) {
    setFlagsFromString('--expose-gc');
    fullGc = runInNewContext('gc') as () => void;
  }
  fullGc();
}

export class MemoryRelief {
  private wasOver = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly rt: WorkerRuntime) {
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  private lastGc = 0;

  private check(): void {
    const over = this.rt.shared.memoryOver;
    if (over !== this.wasOver) {
      this.wasOver = over;
      if (over) this.holdCachesSmall();
      else this.restoreCaches();
    }
    // After the caches let go, so that what they held is collected too.
    if (over && Date.now() - this.lastGc >= FULL_GC_EVERY_MS) {
      this.lastGc = Date.now();
      collectFully();
    }
  }

  private holdCachesSmall(): void {
    const before = this.rt.columnCache.heldBytes + this.rt.ingest.hotPersons.approxBytes;
    this.rt.columnCache.setShare(0);
    this.rt.ingest.hotPersons.setShare(HOT_PERSONS_SHARE_OVER);
    const after = this.rt.columnCache.heldBytes + this.rt.ingest.hotPersons.approxBytes;
    this.rt.log.info(`memory over budget: caches held small until it is back under (column cache emptied, hot persons at ${HOT_PERSONS_SHARE_OVER * 100} %; ~${Math.round((before - after) / 1048576)} MB let go)`);
  }

  private restoreCaches(): void {
    this.rt.columnCache.setShare(1);
    this.rt.ingest.hotPersons.setShare(1);
    this.rt.log.info('memory back under budget: caches at their full size again');
  }

  close(): void {
    clearInterval(this.timer);
  }
}
