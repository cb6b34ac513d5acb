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
