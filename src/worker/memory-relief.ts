/**
 * A worker's part of the memory budget (QUILL_MEMORY_MB, src/front/memory-guard.ts): when the process goes over it,
 * the caches this thread fills by itself are emptied once — decoded analytics columns and hot persons, both
 * rebuilt from LMDB on demand — so what the budget refuses (new events) is not all that gives memory back. The
 * apply's queues drain on their own as it goes on applying.
 */
import type { WorkerRuntime } from './runtime.js';

const CHECK_MS = 250;

export class MemoryRelief {
  private wasOver = false;
  private readonly timer: NodeJS.Timeout;
  /** Times this worker emptied its caches (stats). */
  reliefs = 0;

  constructor(private readonly rt: WorkerRuntime) {
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  private check(): void {
    const over = this.rt.shared.memoryOver;
    if (over && !this.wasOver) {
      const freed = this.rt.columnCache.heldBytes + this.rt.ingest.hotPersons.approxBytes;
      this.rt.columnCache.clear();
      this.rt.ingest.hotPersons.clear();
      this.reliefs++;
      this.rt.log.info(`memory over budget: emptied the column and hot-persons caches (~${Math.round(freed / 1048576)} MB)`);
    }
    this.wasOver = over;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
