/**
 * Shared types of the pure ingestion building blocks. Everything here is plain data so it can cross a
 * worker-thread boundary unchanged.
 */
import type { ShapeViolation } from './event-shape.js';

/** What the HTTP layer hands to {@link decodePayload}: a snapshot of one capture/decide request. */
export interface RawRequest {
  /** Raw request body exactly as received (possibly gzip bytes, a form, base64 text...). */
  body: Uint8Array;
  /** Query parameters, already percent-decoded (a `+` may therefore have become a space). */
  query: Record<string, string>;
  /** `Content-Type` header value ('' when absent). */
  contentType: string;
  /** `Content-Encoding` header value ('' when absent). */
  contentEncoding: string;
  /** Upper-case HTTP method. */
  method: string;
}

export type DecodeErrorCode = 'no_data' | 'invalid_payload' | 'request_too_large';

export type DecodeResult =
  | {
      ok: true;
      /** The parsed JSON value (object, array, or — for odd clients — a scalar). */
      payload: unknown;
      /** The JSON text it was parsed from, after every decoding layer (what the ingest log keeps). */
      text: string;
      /** Parsed urlencoded form fields when the body was a form, else null. Needed by token/sent_at lookup. */
      form: Record<string, string> | null;
    }
  | { ok: false; code: DecodeErrorCode; detail: string };

export interface NormalizedEvent {
  /** Valid client uuid (lower-cased), else a generated UUIDv7. */
  uuid: string;
  /** Event name; non-strings JSON-stringified; at most 200 code points. */
  event: string;
  /** Distinct id; non-strings stringified; at most 200 code points. */
  distinct_id: string;
  /**
   * Event properties. Top-level `$set`/`$set_once` are merged in (top-level wins), `$ip` is added from the
   * request unless present, `$elements`/`$elements_chain` are removed (see `elements_chain`). `$groups` stays.
   */
  properties: Record<string, unknown>;
  /** Final event time, ISO-8601 UTC with milliseconds (`2024-01-02T03:04:05.678Z`). */
  timestamp: string;
  /** Autocapture element chain (§5.6), '' when the event has none. */
  elements_chain: string;
}

export type NormalizeSkipReason = 'missing_event_name' | 'missing_distinct_id' | 'not_an_object' | ShapeViolation;

export type NormalizeOutcome =
  | { ok: true; event: NormalizedEvent }
  | { ok: false; reason: NormalizeSkipReason };

export interface NormalizeContext {
  /** Server receive time, epoch ms. */
  now: number;
  /** Client send time (see extractSentAt), epoch ms, or null. */
  sentAt: number | null;
  /** Request IP (X-Forwarded-For aware, already resolved by the HTTP layer), or null to not add `$ip`. */
  ip: string | null;
  /**
   * True for `/engage/` requests whose body was a single object: the event name is forced to `$identify`
   * (Django [2021] behaviour for legacy posthog-js people calls). The caller decides "single object".
   */
  engage?: boolean;
}

/** Person property operations carried by one event, in application order $set_once → $set → $unset. */
export interface PersonUpdates {
  set: Record<string, unknown>;
  setOnce: Record<string, unknown>;
  unset: string[];
}

export type PersonProfileMode = 'process' | 'skip_person' | 'drop_event';

/** One element of an autocapture chain, in the shape of the stored-event `elements` field (§5.5). */
export interface ElementRecord {
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  /** Every other attribute of the chain entry, normally the `attr__*` ones. */
  attributes: Record<string, string>;
  /** Position in the chain: 0 = the clicked element, then ancestors outward. */
  order: number;
}
