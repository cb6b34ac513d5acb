/**
 * A query Quill cannot answer: a syntax error, an unknown name, or a construct of the dialect it does not support.
 * Answered as a 400 validation error (src/domain/analytics/errors.ts), never as a wrong result.
 */
import { invalidInput } from '../analytics/errors.js';

export function hogqlError(detail: string): never {
  return invalidInput(null, detail, 'query_error');
}

/** A construct of HogQL/ClickHouse that Quill does not support, named in the message. */
export function unsupported(construct: string, hint = ''): never {
  return hogqlError(`${construct} is not supported by Quill's HogQL.${hint ? ` ${hint}` : ''}`);
}

/**
 * What the printer finds only while printing an analysis that ClickHouse cannot compute for it (a static cohort, a
 * cohort the query's context does not hold): the analysis is answered by the local engine and says why.
 */
export class NotPrintable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
