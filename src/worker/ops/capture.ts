/**
 * Public event ingestion: `/capture/`, `/batch/`, `/e/`, `/i/v0/e/`, `/track/`, `/engage/`. Decodes whatever the
 * SDK sent, authenticates the project token, normalises the events and answers `200 {"status": 1}` only once
 * every accepted event is durable in its shard's ingest log. Events without a name or distinct id are skipped
 * (still 200, as the seed requires).
 */
import { decodePayload, encodeLogRecord, eventsOf, extractSentAt, extractToken, normalizeEvent, recordUuid, type NormalizedEvent, type NormalizeContext, type RecordUuid } from '../../domain/ingest/index.js';
import { ApiError, Errors } from '../../protocol/errors.js';
import type { TaskItem } from '../../protocol/worker-messages.js';
import { json } from '../reply.js';
import type { WorkerRuntime } from '../runtime.js';
import { projectForToken } from './public-auth.js';
import type { OpHandler } from './types.js';

const EMPTY = new Uint8Array(0);
const OK = json(200, { status: 1 });

export function decodeOrThrow(item: TaskItem, rt: WorkerRuntime) {
  const m = item.meta;
  const decoded = decodePayload(
    { body: item.raw ?? EMPTY, query: m.query, contentType: m.contentType, contentEncoding: m.contentEncoding, method: m.method },
    Math.floor(rt.config.maxBodyMb * 1024 * 1024),
  );
  if (decoded.ok) return decoded;
  if (decoded.code === 'request_too_large') throw Errors.tooLarge();
  if (decoded.code === 'no_data') throw Errors.noData();
  throw Errors.invalidPayload(decoded.detail);
}

function capture(engage: boolean): OpHandler {
  return async (item, rt) => {
    const decoded = decodeOrThrow(item, rt);
    const { token, projectId } = extractToken(decoded.payload, decoded.form, item.meta.query, item.meta.method);
    const project = projectForToken(rt, token, projectId);
    const sentAt = extractSentAt(decoded.payload, decoded.form, item.meta.query);
    const raws = eventsOf(decoded.payload);
    // /engage/ renames a single legacy people call to $identify; batches keep their names.
    const single = engage && decoded.payload !== null && typeof decoded.payload === 'object' && !Array.isArray(decoded.payload) && !('batch' in decoded.payload);
    const ctx: NormalizeContext = { now: item.meta.now, sentAt, ip: item.meta.ip || null, engage: single };
    const events: NormalizedEvent[] = [];
    const uuids: RecordUuid[] = [];
    for (const raw of raws) {
      const outcome = normalizeEvent(raw, ctx);
      uuids.push(recordUuid(outcome.ok ? outcome.event : null, raw));
      if (outcome.ok) events.push(outcome.event);
      else rt.metrics.refusedEvent(outcome.reason);
    }
    try {
      // The log keeps the request as sent, not the normalised events (src/domain/ingest/log-record.ts).
      if (events.length > 0) await rt.ingest.ingest(project.id, events, encodeLogRecord(project.id, ctx, uuids, decoded.text));
    } catch (error) {
      if (error instanceof ApiError) throw error;
      rt.log.error({ event: 'disk_error', code: (error as NodeJS.ErrnoException)?.code ?? null }, `ingest failed (answering 503): ${(error as Error)?.message ?? error}`);
      throw Errors.unavailable();
    }
    return OK;
  };
}

export const captureEvents = capture(false);
export const engageEvents = capture(true);
