/**
 * Which events of a capture request are stored, and what becomes of the others (ingestion-and-api.md §1.3, §1.5).
 *
 * Rule (PostHog's Rust capture, where the seed-era Django answered 200 for everything): events that can be stored
 * are; each one that cannot is dropped and counted by reason. A request with events of which none can be stored is
 * refused (400, the first event's reason), so a client is told its data went nowhere; an empty batch is accepted
 * (the spec's recommendation). A `batch` that is not a list, or a payload that is not an event, a batch or a list,
 * is refused.
 *
 * Events past the shape bounds (src/domain/ingest/event-shape.ts: nesting, size, property counts, array lengths) are
 * dropped by normalisation, before the acknowledgement: storing them would cost the apply loop, long after the
 * client was told "stored", more than any one event may.
 */
import { recordUuid, type RecordUuid } from './log-record.js';
import { normalizeEvent } from './normalize-event.js';
import type { NormalizeContext, NormalizedEvent, NormalizeSkipReason } from './types.js';

/** Why an event of a request was not stored (the keys of `/_stats` `dropped`). */
export type DropReason = NormalizeSkipReason;

/** Why a whole request is refused. */
export type Refusal = DropReason | 'invalid_batch';

export interface AcceptedEvents {
  /** The events to log, in request order. */
  events: NormalizedEvent[];
  /** One entry per raw event of the request, for the log record (src/domain/ingest/log-record.ts). */
  uuids: RecordUuid[];
  /** Dropped events by reason. */
  dropped: Map<DropReason, number>;
  /** Set when the request must be answered 400: nothing in it can be stored. */
  refusal: Refusal | null;
}

/** `raws` is eventsOf(payload); `payload` is needed only to tell a malformed batch from an empty one. */
export function acceptEvents(payload: unknown, raws: readonly unknown[], ctx: NormalizeContext): AcceptedEvents {
  const events: NormalizedEvent[] = [];
  const uuids: RecordUuid[] = [];
  const dropped = new Map<DropReason, number>();
  let firstDrop: DropReason | null = null;
  for (const raw of raws) {
    const outcome = normalizeEvent(raw, ctx);
    if (outcome.ok) {
      events.push(outcome.event);
      uuids.push(recordUuid(outcome.event, raw));
    } else {
      uuids.push(null);
      dropped.set(outcome.reason, (dropped.get(outcome.reason) ?? 0) + 1);
      firstDrop ??= outcome.reason;
    }
  }
  let refusal: Refusal | null = events.length === 0 ? firstDrop : null;
  if (raws.length === 0) refusal = shapeRefusal(payload);
  return { events, uuids, dropped, refusal };
}

/** A request without events: an empty batch or list is fine, anything else is not a capture payload. */
function shapeRefusal(payload: unknown): Refusal | null {
  if (Array.isArray(payload)) return null;
  if (payload === null || typeof payload !== 'object') return 'not_an_object';
  const batch = (payload as Record<string, unknown>)['batch'];
  return Array.isArray(batch) ? null : 'invalid_batch';
}
