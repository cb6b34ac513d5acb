/**
 * Query budgets (design.md §4a): no analysis or query may hold a worker beyond its time and memory.
 *
 * The budget travels with the work, not with its call sites: the worker sets it for the duration of a request
 * (src/worker/entry.ts), an AsyncLocalStorage carries it through every await, peer calls made on the request's
 * behalf carry it to the other workers (src/worker/peers.ts), and every slice of long work checks it when it yields
 * (src/worker/analytics/slices.ts). So a scan started by any analysis, on any worker, stops at its deadline
 * without the analysis' code passing anything down.
 *
 * Cost: an AsyncLocalStorage makes Node track contexts across promises in the thread (~50 ns an await, measured);
 * a flag request awaits a handful of times.
 *
 * Memory is measured as the growth of this thread's V8 heap since the budget reached it. With several queries on
 * a thread at once each is charged the others' growth too, and garbage counts until a collection: the bound
 * errs towards refusing early, never towards an out-of-memory kill.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { getHeapStatistics } from 'node:v8';

/** Plain data: it crosses threads in peer messages. */
export interface QueryBudget {
  /** Epoch milliseconds past which the work is abandoned. */
  readonly deadline: number;
  /** What the request was given, for the message. */
  readonly timeoutS: number;
  /** Heap growth allowed while it runs on one thread, bytes. */
  readonly memoryBytes: number;
  /** An async query's status ([project, id]): its work stops at a slice once the status says cancelled. */
  readonly cancelKey?: readonly [number, string];
}

/** The query ran past its time budget: PostHog's ClickHouseQueryTimeOut (504). */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutS: number) {
    super(
      `Query has hit the max execution time before completing (${timeoutS} s). Try a shorter date range, fewer ` +
        'breakdown values or simpler filters.',
    );
  }
}

/** The query's state outgrew its memory budget: a 400 the user can act on. */
export class QueryMemoryError extends Error {
  constructor(readonly limitMb: number) {
    super(
      `Query has reached the max memory limit (${limitMb} MB) before completing. Try a shorter date range, a ` +
        'breakdown with fewer values or a smaller limit.',
    );
  }
}

/** An async query cancelled by `DELETE query/:id` (the status record says so): its work stops at the next slice. */
export class QueryCancelledError extends Error {
  constructor() {
    super('The query was cancelled.');
  }
}

/** The worker is closing: queries still running stop at their next slice and answer 503 shutting_down. */
export class QueriesAbandonedError extends Error {
  constructor() {
    super('Quill is shutting down.');
  }
}

let abandoned = false;

/** From now on every query on this thread stops at its next slice (the worker is closing its stores). */
export function abandonQueries(): void {
  abandoned = true;
}

/**
 * Whether an async query's status says cancelled, set by the worker (the status records live in its metadata
 * store, shared by every worker, so a cancel reaching any worker stops the work on all of them). Asked at most
 * every CANCEL_CHECK_MS per budget: a read of a record, against slices of milliseconds.
 */
let isCancelled: ((team: number, id: string) => boolean) | null = null;
const CANCEL_CHECK_MS = 50;
const lastCancelCheck = new WeakMap<QueryBudget, number>();

export function onCancelCheck(check: (team: number, id: string) => boolean): void {
  isCancelled = check;
}

const store = new AsyncLocalStorage<QueryBudget>();
/** Heap size when a budget first reached this thread (a budget received from a peer is a new object per call). */
const heapAtStart = new WeakMap<QueryBudget, number>();

export function budgetFor(timeoutS: number, memoryMb: number, now = Date.now()): QueryBudget {
  return { deadline: now + timeoutS * 1000, timeoutS, memoryBytes: memoryMb * 1024 * 1024 };
}

/** Runs `fn` (and everything it awaits or calls on peers) under `budget`; no budget: runs it as it is. */
export function withBudget<T>(budget: QueryBudget | undefined, fn: () => T): T {
  if (budget === undefined) return fn();
  if (!heapAtStart.has(budget)) heapAtStart.set(budget, getHeapStatistics().used_heap_size);
  return store.run(budget, fn);
}

/** The budget of the request this code runs for, if any. */
export function currentBudget(): QueryBudget | undefined {
  return store.getStore();
}

/** Throws when the current request is past its deadline or its memory budget (called at each slice's end). */
export function checkBudget(now = Date.now()): void {
  if (abandoned) throw new QueriesAbandonedError();
  const budget = store.getStore();
  if (budget === undefined) return;
  if (now > budget.deadline) throw new QueryTimeoutError(budget.timeoutS);
  if (budget.cancelKey !== undefined && isCancelled !== null && now - (lastCancelCheck.get(budget) ?? 0) >= CANCEL_CHECK_MS) {
    lastCancelCheck.set(budget, now);
    if (isCancelled(budget.cancelKey[0], budget.cancelKey[1])) throw new QueryCancelledError();
  }
  const start = heapAtStart.get(budget);
  if (start !== undefined && getHeapStatistics().used_heap_size - start > budget.memoryBytes) {
    throw new QueryMemoryError(Math.round(budget.memoryBytes / 1024 / 1024));
  }
}
