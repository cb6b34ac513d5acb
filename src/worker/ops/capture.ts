/**
 * Public event ingestion: `/capture/`, `/batch/`, `/e/`, `/i/v0/e/`, `/track/`, `/engage/`. Decodes whatever the
 * SDK sent, authenticates the project token, normalises the events and answers `200 {"status": 1}` only once
 * every accepted event is durable in its shard's ingest log. Events that cannot be stored (no name, no distinct
 * id, not an object, past the shape bounds of src/domain/ingest/event-shape.ts) are dropped and counted by reason in `/_stats`; a request none of whose
 * events can be stored gets a 400 naming the problem (src/domain/ingest/accept-events.ts has the rule).
 */
import { acceptEvents, decodePayload, encodeLogRecord, eventsOf, extractSentAt, extractToken, type NormalizeContext, type NormalizedEvent, type Refusal } from '../../domain/ingest/index.js';
import { MAX_ARRAY_LENGTH, MAX_EVENT_SIZE, MAX_GROUP_KEY, MAX_PROPERTIES } from '../../domain/ingest/event-shape.js';
import { MAX_JSON_DEPTH } from '../../domain/json-depth.js';
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

/**
 * The answer to a refused request: the field at fault and what is wrong with it. 400, except an event over the
 * size bound: 413, as PostHog's capture answers an event past its Kafka message limit (EventTooBig).
 */
const REFUSALS: Record<Refusal, { attr: string | null; detail: string; status?: number }> = {
  missing_distinct_id: { attr: 'distinct_id', detail: 'Event submitted without a distinct_id.' },
  missing_event_name: { attr: 'event', detail: 'Event submitted without an event name.' },
  not_an_object: { attr: 'batch', detail: 'Every event must be a JSON object.' },
  too_deep: { attr: 'properties', detail: `Event nested deeper than ${MAX_JSON_DEPTH} levels.` },
  message_size_too_large: { attr: null, detail: `Event larger than ${MAX_EVENT_SIZE} bytes.`, status: 413 },
  too_many_properties: { attr: 'properties', detail: `Event with more than ${MAX_PROPERTIES} properties (or $set, $set_once, $groups keys).` },
  array_too_long: { attr: 'properties', detail: `Event with an array of more than ${MAX_ARRAY_LENGTH} elements.` },
  group_key_too_long: { attr: 'properties', detail: `Group type or key longer than ${MAX_GROUP_KEY} characters.` },
  invalid_batch: { attr: 'batch', detail: 'batch must be a list of events.' },
};

/** `$feature_flag_called` events count as uses of the flag they name (src/worker/flag-usage.ts), once acknowledged. */
function noteFlagCalls(rt: WorkerRuntime, projectId: number, events: readonly NormalizedEvent[], now: number): void {
  for (const event of events) {
    if (event.event !== '$feature_flag_called') continue;
    const key = event.properties.$feature_flag;
    if (typeof key === 'string') rt.flagUsage.noteCalled(projectId, rt.cache.flagSet(projectId), key, now);
  }
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
    const accepted = acceptEvents(decoded.payload, raws, ctx);
    if (accepted.refusal !== null) {
      rt.ingest.countDropped(accepted.dropped);
      rt.ingest.sampleDropped(project.id, accepted.dropped, decoded.text);
      const { attr, detail, status } = REFUSALS[accepted.refusal];
      throw Errors.invalidEvents(accepted.refusal, attr, detail, status);
    }
    try {
      // The log keeps the request as sent, not the normalised events (src/domain/ingest/log-record.ts).
      if (accepted.events.length > 0) {
        await rt.ingest.ingest(project.id, accepted.events, encodeLogRecord(project.id, ctx, accepted.uuids, decoded.text));
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      rt.log.error({ event: 'disk_error', code: (error as NodeJS.ErrnoException)?.code ?? null }, `ingest failed (answering 503): ${(error as Error)?.message ?? error}`);
      throw Errors.unavailable();
    }
    noteFlagCalls(rt, project.id, accepted.events, item.meta.now);
    rt.ingest.countDropped(accepted.dropped);
    if (accepted.dropped.size > 0) rt.ingest.sampleDropped(project.id, accepted.dropped, decoded.text);
    return OK;
  };
}

export const captureEvents = capture(false);
export const engageEvents = capture(true);
