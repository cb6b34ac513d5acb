/** Building worker replies. Every body Quill sends is built here or by an ApiError. */
import { ApiError, Errors } from '../protocol/errors.js';
import type { Reply } from '../protocol/worker-messages.js';

export function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return jsonText(status, JSON.stringify(value), headers);
}

/**
 * A reply whose JSON text is already written. The body travels as UTF-8 bytes: encoding here, in one of several
 * workers, spares the single front thread a string conversion per response (it writes the bytes as they are).
 */
export function jsonText(status: number, text: string, headers?: Record<string, string>): Reply {
  const reply: Reply = { status, body: Buffer.from(text, 'utf8'), contentType: 'application/json' };
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
  return error.emptyBody ? { status: error.status, body: '' } : { status: error.status, body: error.body(), contentType: 'application/json' };
}

/** Turns anything thrown by an operation into a reply; unexpected errors become a 500 and are logged. */
export function replyForThrown(error: unknown, op: string, log: (msg: string) => void): Reply {
  if (error instanceof ApiError) return errorReply(error);
  log(`operation ${op} failed: ${(error as Error)?.stack ?? String(error)}`);
  return errorReply(Errors.server());
}
