/**
 * Failure injection for tests of failure handling (QUILL_FAULT_INJECTION=1; answers 404 otherwise):
 * `POST /_fault/throw` makes this operation throw (the request must get a 500 body, the server keeps serving);
 * `POST /_fault/crash` kills the worker thread shortly after answering (Piscina must replace it and the new
 * thread must reopen its shards by itself); `POST /_fault/pause-apply` and `/_fault/resume-apply` stop and restart
 * every shard's apply loop (acknowledged events pile up, as under an overload: the backlog bound's test);
 * `POST /_fault/block?ms=N` holds this worker's thread in synchronous work for N ms (the watchdog's test).
 */
import { Errors } from '../../protocol/errors.js';
import { json } from '../reply.js';
import type { OpHandler } from './types.js';

export const injectFault: OpHandler = async (item, rt) => {
  if (!rt.config.faultInjection) throw Errors.notFound();
  switch (item.params.kind) {
    case 'pause-apply':
    case 'resume-apply':
      await rt.peers.all({ kind: 'pause-apply', paused: item.params.kind === 'pause-apply' });
      return json(200, { paused: item.params.kind === 'pause-apply' });
    case 'throw':
      throw new Error('injected failure');
    case 'block': {
      // Holds this thread in synchronous work, as a runaway pattern or transaction would (the watchdog's test).
      const ms = Math.min(Number(item.meta.query.ms ?? 5000) || 5000, 120_000);
      rt.log.info(`fault injection: this thread blocks for ${ms} ms`);
      setTimeout(() => {
        const until = Date.now() + ms;
        while (Date.now() < until) {
          // busy: nothing else of this thread runs
        }
      }, 20);
      return json(202, { blocking: rt.index, ms });
    }
    case 'crash':
      rt.log.info(`fault injection: this thread throws in 20 ms`);
      setTimeout(() => {
        throw new Error(`injected crash of worker ${rt.index}`);
      }, 20);
      return json(202, { crashing: rt.index });
    default:
      throw Errors.notFound();
  }
};
