/**
 * Whether flag or API requests are on their way to this worker thread (posted by the front, not started yet:
 * src/protocol/shared-state.ts `interactiveWaiting`). Work that can wait asks before its next piece — the apply
 * before a chunk, an analysis or the export before a slice, the request port before the next ingestion request —
 * and lets the event loop deliver those requests first: a flag answer is owed in milliseconds, the rest is not.
 *
 * One probe per thread, set by the worker's entry once its runtime exists; until then (and in tests of single
 * modules) nothing is waiting.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';

let probe: () => boolean = () => false;

export function setRequestsWaitingProbe(fn: () => boolean): void {
  probe = fn;
}

export function requestsWaiting(): boolean {
  return probe();
}

/**
 * Lets waiting requests start: turns of the event loop until none is waiting, at most `maxMs` (a front that counts
 * a request the thread never receives — its frame failed to pack — must not stop the work for good).
 */
export async function letRequestsPass(maxMs = 20): Promise<void> {
  if (!probe()) return;
  const until = performance.now() + maxMs;
  do await yieldToLoop();
  while (probe() && performance.now() < until);
}
