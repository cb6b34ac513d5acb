/** Building worker replies. Every body Quill sends is built here or by an ApiError. */
import { ApiError, Errors } from '../protocol/errors.js';
import type { Reply } from '../protocol/worker-messages.js';
import { isStorageFailure } from '../stores/storage-failure.js';
import { AnalyticsInputError } from '../domain/analytics/errors.js';
import { QueriesAbandonedError, QueryCancelledError, QueryMemoryError, QueryTimeoutError } from './query-budget.js';

export function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return jsonText(status, JSON.stringify(value), headers);
}

/**
 * A reply whose JSON text is already written. The body stays a string: sending UTF-8 bytes instead (to spare the
 * front the conversion) was measured slower end to end — flags with 5 flags went from 69 to 131 µs of CPU per
 * request under `npm run bench` — so the front converts.
 */
export function jsonText(status: number, text: string, headers?: Record<string, string>): Reply {
  const reply: Reply = { status, body: text, contentType: 'application/json' };
  if (headers) reply.headers = headers;
  return reply;
}

export function empty(status: number): Reply {
  return { status, body: '' };
}

export function csv(text: string, filename: string): Reply {
  return {
    status: 200,
    body: text,
    contentType: 'text/csv; charset=utf-8',
    headers: { 'Content-Disposition': `attachment; filename="${filename}"` },
  };
}

export function errorReply(error: ApiError): Reply {
  const reply: Reply = error.emptyBody ? { status: error.status, body: '' } : { status: error.status, body: error.body(), contentType: 'application/json' };
  if (error.headers) reply.headers = { ...error.headers };
  return reply;
}

/**
 * The answer an error thrown below the ops layer stands for, when it is one a request answers with: invalid input
 * to an analysis (400), a query past its time (504) or memory (400) budget. Null for anything unexpected.
 */
export function answerFor(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (error instanceof AnalyticsInputError) return Errors.validation(error.attr, error.code, error.message);
  if (error instanceof QueryTimeoutError) return Errors.queryTimeout(error.message);
  if (error instanceof QueryMemoryError) return Errors.queryMemory(error.message);
  if (error instanceof QueriesAbandonedError) return Errors.shuttingDown();
  if (error instanceof QueryCancelledError) return Errors.validation(null, 'query_cancelled', error.message);
  return null;
}

/**
 * Turns anything thrown by an operation into a reply: an answerable error (above) as itself, a storage failure
 * (full disk…) as a 503 the client may retry, anything else unexpected as a 500; the last two are logged.
 */
export function replyForThrown(error: unknown, op: string, log: (msg: string) => void): Reply {
  const answer = answerFor(error);
  if (answer !== null) return errorReply(answer);
  log(`operation ${op} failed: ${(error as Error)?.stack ?? String(error)}`);
  return errorReply(isStorageFailure(error) ? Errors.unavailable() : Errors.server());
}
