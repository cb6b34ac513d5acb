/**
 * The time and memory one apply attempt may take (design.md §4a: a bound only some call sites respect is a hole,
 * so it sits in the loops every event goes through: src/worker/ingest/shard.ts calls `check` per event while it
 * processes persons and stores events). Past it, `check` throws; the apply then treats the chunk like one with a
 * poison event: applied again in halves, down to single events, and whatever exceeds the budget alone is set aside
 * in the dead-letter store with the reason, while the apply goes on.
 *
 * The bounds are far above what any chunk of bounded events costs (a chunk aims at 4-250 ms of work:
 * src/worker/ingest/chunk-limit.ts; an event is at most 1 MB: src/domain/ingest/event-shape.ts), so they only
 * ever catch what nothing else bounded: a stall costs the shard a few seconds once, not forever.
 */
import { getHeapStatistics } from 'node:v8';

/**
 * Time spent in one attempt's transaction callbacks (not the waits for LMDB's write lock between them); the default of
 * config applyBudgetS (QUILL_APPLY_BUDGET_S).
 */
export const APPLY_BUDGET_MS = 5_000;
/** Heap growth (JavaScript heap and the buffers it holds) during one attempt. */
export const APPLY_BUDGET_BYTES = 1024 * 1024 * 1024;
/** Events between heap reads (a heap read costs a few microseconds; the clock, read per event, ~40 ns). */
const HEAP_EVERY = 1024;

export class ApplyBudgetExceeded extends Error {
  override readonly name = 'ApplyBudgetExceeded';
}

function heapBytes(): number {
  const h = getHeapStatistics();
  return h.used_heap_size + h.external_memory;
}

export class ApplyBudget {
  /** Callback time of the attempt before the callback running now, and when that one began. */
  private spent = 0;
  private enteredAt = 0;
  private heapAtStart = 0;
  private events = 0;

  constructor(private readonly ms = APPLY_BUDGET_MS, private readonly bytes = APPLY_BUDGET_BYTES) {}

  /** A new attempt starts: its time and its heap baseline. */
  start(): void {
    this.spent = 0;
    this.heapAtStart = heapBytes();
    this.events = 0;
  }

  /** A transaction callback of the attempt begins. */
  enter(): void {
    this.enteredAt = performance.now();
  }

  /** That callback ended (whether or not it threw). */
  leave(): void {
    this.spent += performance.now() - this.enteredAt;
  }

  /**
   * Called before each event is processed and after each step that is not per event (storing a chunk's events,
   * with `heap`); throws ApplyBudgetExceeded past the budget.
   */
  check(heap = false): void {
    if (this.spent + performance.now() - this.enteredAt > this.ms) throw new ApplyBudgetExceeded(`the apply of one chunk passed its ${this.ms} ms budget`);
    if ((heap || ++this.events % HEAP_EVERY === 0) && heapBytes() - this.heapAtStart > this.bytes) {
      throw new ApplyBudgetExceeded(`the apply of one chunk grew the heap by more than ${Math.round(this.bytes / 1024 / 1024)} MB`);
    }
  }
}
