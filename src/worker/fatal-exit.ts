/**
 * What a shard worker thread does with an exception nobody caught. Left to Node, the thread ends at once with its
 * LMDB environments open and lmdb-js's native work for them still running (the background flush that an
 * `overlappingSync` commit leaves, a transaction in flight); lmdb-js then tears the environments down under that
 * work, and the whole process died of SIGSEGV — measured under /batch/ load, within the first ~15 injected worker
 * crashes of every run (test/e2e/worker-crash-soak.test.ts). So the thread first stops taking requests and closes
 * its stores, letting their pending work finish (bounded by `closeTimeoutMs`), and then dies of the same error: the
 * front reports the death and Piscina starts the replacement, which replays the logs, exactly as before.
 */
import type { Logger } from '../observability/logger.js';

export function installFatalExit(closeStores: () => Promise<void>, log: Logger, closeTimeoutMs = 5_000): void {
  let dying = false;
  const onUncaught = (error: unknown) => {
    // A second uncaught exception while closing changes nothing: the thread is already on its way out.
    if (dying) return;
    dying = true;
    log.error(`uncaught exception; closing this thread's stores before it ends: ${(error as Error)?.stack ?? error}`);
    let rethrown = false;
    const die = () => {
      if (rethrown) return;
      rethrown = true;
      process.off('uncaughtException', onUncaught);
      // Thrown outside any handler, so the thread ends the way it would have, with the original error.
      setImmediate(() => {
        throw error;
      });
    };
    const deadline = setTimeout(() => {
      log.error(`closing the stores took over ${closeTimeoutMs} ms; ending the thread anyway`);
      die();
    }, closeTimeoutMs);
    closeStores().then(
      () => undefined,
      (closeError: unknown) => log.error(`closing the stores failed: ${(closeError as Error)?.stack ?? closeError}`),
    ).finally(() => {
      clearTimeout(deadline);
      die();
    });
  };
  process.on('uncaughtException', onUncaught);
}
