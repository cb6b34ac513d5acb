/**
 * Waiting, in a request, for work the node's scheduler does (on worker 0, whichever worker took the request): the
 * record is read again every POLL_MS from the metadata store, which every worker sees, until `read` says it is
 * done or as long as a query may take. For Quill's "check now" and "deliver now".
 */
import type { WorkerRuntime } from '../runtime.js';

const POLL_MS = 50;

export async function untilSettled<T>(rt: WorkerRuntime, read: () => { value: T; done: boolean }): Promise<{ value: T; done: boolean }> {
  // The computation's own budget, the scheduler's tick and the first delivery attempts (a webhook waits up to 10 s).
  const deadline = Date.now() + rt.config.queryTimeoutS * 1000 + rt.config.alertsTickMs + 15_000;
  for (;;) {
    rt.meta.env.resetReadTxn();
    const seen = read();
    if (seen.done || Date.now() >= deadline) return seen;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
