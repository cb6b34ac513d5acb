/**
 * Failure injection for tests of failure handling (QUILL_FAULT_INJECTION=1; answers 404 otherwise):
 * `POST /_fault/throw` makes this operation throw (the request must get a 500 body, the server keeps serving);
 * `POST /_fault/crash` kills the worker thread shortly after answering (Piscina must replace it and the new
 * thread must reopen its shards by itself).
 */
import { Errors } from '../../protocol/errors.js';
import { json } from '../reply.js';
import type { OpHandler } from './types.js';

export const injectFault: OpHandler = (item, rt) => {
  if (!rt.config.faultInjection) throw Errors.notFound();
  switch (item.params.kind) {
    case 'throw':
      throw new Error('injected failure');
    case 'crash':
      setTimeout(() => {
        throw new Error(`injected crash of worker ${rt.index}`);
      }, 20);
      return json(202, { crashing: rt.index });
    default:
      throw Errors.notFound();
  }
};
