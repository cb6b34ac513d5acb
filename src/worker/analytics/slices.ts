/**
 * Long analysis work runs on threads that also owe acknowledgements and flag answers. It runs in slices: after
 * SLICE_MS of work it yields to the event loop (`setImmediate`: pending messages are handled first), so no request
 * waits behind more than a slice of an analysis; and as soon as a flag or API request is on its way to the thread
 * (src/worker/waiting-requests.ts), whatever the slice has run. At each slice's end the request's budget is checked
 * (src/worker/query-budget.ts): past its deadline or memory bound the work throws, on whichever worker it runs.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { checkBudget } from '../query-budget.js';
import { requestsWaiting } from '../waiting-requests.js';

export const SLICE_MS = 2;

export class Slicer {
  private start = performance.now();

  /** Work for a request already past its budget does not start. */
  constructor() {
    checkBudget();
  }

  /**
   * Whether this slice has run its time. A tight loop asks this (synchronously, cheap) and awaits `pace()` only
   * when it says so: an `await` per unit of work costs a promise and, under AsyncLocalStorage, a context copy.
   */
  due(): boolean {
    return performance.now() - this.start >= SLICE_MS || requestsWaiting();
  }

  /** Yields if this slice has run its time; call between units of work. */
  async pace(): Promise<void> {
    if (!this.due()) return;
    checkBudget();
    await yieldToLoop();
    checkBudget();
    this.start = performance.now();
  }
}
