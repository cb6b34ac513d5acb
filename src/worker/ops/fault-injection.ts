/**
 * Failure injection for tests of failure handling (QUILL_FAULT_INJECTION=1; answers 404 otherwise):
 * `POST /_fault/throw` makes this operation throw (the request must get a 500 body, the server keeps serving);
 * `POST /_fault/crash` kills the worker thread shortly after answering (Piscina must replace it and the new
 * thread must reopen its shards by itself); `POST /_fault/pause-apply` and `/_fault/resume-apply` stop and restart
 * every shard's apply loop (acknowledged events pile up, as under an overload: the backlog bound's test).
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
