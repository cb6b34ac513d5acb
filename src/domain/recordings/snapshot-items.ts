/**
 * What a request to the recording endpoint (`/s/`) carries, as posthog-js sends it: a list of `$snapshot` events
 * (bare array, or a `batch`, or one event), each with `properties.$session_id`, `$window_id`, the visitor's
 * distinct id and `$snapshot_data`: an array of rrweb events (older SDKs sent one event object; mobile SDKs name
 * the array `$snapshot_items`). Every `$snapshot` event becomes one chunk of its session. Pure.
 *
 * posthog-js gzips some fields of some rrweb events itself (a full snapshot's `data`, a mutation's lists: `cv:
 * "2024-10"`, each field a latin-1 string of gzip bytes); they are kept as sent. The fold only reads fields that
 * stay plain (types, sources, timestamps, a Meta event's href, console levels).
 */
import { eventsOf } from '../ingest/events-of.js';
import { isUuid } from '../ingest/uuid.js';
import { MAX_ID_LENGTH } from '../ingest/normalize-event.js';
import { isRrwebEvent, type RrwebEvent } from './rrweb.js';

export interface SnapshotItem {
  /** The SDK's uuid of the `$snapshot` event: a retry carries the same one, so a chunk is stored once. */
  uuid: string | null;
  sessionId: string;
  windowId: string | null;
  distinctId: string;
  lib: string | null;
  events: RrwebEvent[];
}

/** Why a `$snapshot` event (or one rrweb event inside one) was not stored; counted in `/_stats`. */
export type SnapshotDrop = 'not_a_snapshot' | 'missing_session_id' | 'missing_distinct_id' | 'no_snapshot_data' | 'invalid_rrweb_event';

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function idOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  const s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v);
  const trimmed = s.trim();
  return trimmed === '' ? null : trimmed.slice(0, MAX_ID_LENGTH);
}

function snapshotDataOf(props: Record<string, unknown>): unknown[] {
  const items = props.$snapshot_items ?? props.$snapshot_data;
  if (Array.isArray(items)) return items;
  return isObject(items) ? [items] : [];
}

export function snapshotItemsOf(payload: unknown): { items: SnapshotItem[]; dropped: Map<SnapshotDrop, number> } {
  const items: SnapshotItem[] = [];
  const dropped = new Map<SnapshotDrop, number>();
  const drop = (reason: SnapshotDrop, n = 1) => dropped.set(reason, (dropped.get(reason) ?? 0) + n);
  for (const raw of eventsOf(payload)) {
    if (!isObject(raw) || raw.event !== '$snapshot') {
      drop('not_a_snapshot');
      continue;
    }
    const props = isObject(raw.properties) ? raw.properties : {};
    const sessionId = idOf(props.$session_id);
    if (sessionId === null) {
      drop('missing_session_id');
      continue;
    }
    const distinctId = idOf(raw.distinct_id ?? raw.$distinct_id ?? props.distinct_id ?? props.$distinct_id);
    if (distinctId === null) {
      drop('missing_distinct_id');
      continue;
    }
    const data = snapshotDataOf(props);
    const events = data.filter(isRrwebEvent);
    if (events.length < data.length) drop('invalid_rrweb_event', data.length - events.length);
    if (events.length === 0) {
      drop('no_snapshot_data');
      continue;
    }
    const uuid = typeof raw.uuid === 'string' && isUuid(raw.uuid) ? raw.uuid.toLowerCase() : null;
    items.push({ uuid, sessionId, windowId: idOf(props.$window_id), distinctId, lib: typeof props.$lib === 'string' ? props.$lib : null, events });
  }
  return { items, dropped };
}

/**
 * A chunk's text as the snapshots API serves it: one line per rrweb event, `[windowId, event]`, the form PostHog's
 * recording blocks hold (JSONL). Built once, when the chunk is stored, so a read only decompresses.
 */
export function chunkLines(item: SnapshotItem): string {
  const prefix = `[${JSON.stringify(item.windowId ?? '')},`;
  let text = '';
  for (const e of item.events) text += `${prefix}${JSON.stringify(e)}]\n`;
  return text;
}
