/**
 * Pure ingestion building blocks (ingestion-and-api.md §1, §2, §5.5–5.6): request decoding, token and sent_at
 * lookup, event normalisation, person-property updates, illegal ids, element chains, UUIDs.
 * No I/O; time comes in as `now` (epoch ms). Randomness is used only for generated UUIDv7s.
 */
export type {
  DecodeErrorCode,
  DecodeResult,
  ElementRecord,
  NormalizeContext,
  NormalizedEvent,
  NormalizeOutcome,
  NormalizeSkipReason,
  PersonProfileMode,
  PersonUpdates,
  RawRequest,
} from './types.js';
export { compressionHint, decodePayload, type CompressionHint } from './decode-payload.js';
export { decompressLz64 } from './lz-string.js';
export { parseJson } from './json.js';
export { extractToken } from './token.js';
export { extractSentAt } from './sent-at.js';
export { eventsOf } from './events-of.js';
export { acceptEvents, type AcceptedEvents, type DropReason, type Refusal } from './accept-events.js';
export { decodeLogRecord, encodeLogRecord, recordUuid, type RecordUuid } from './log-record.js';
export { MAX_ID_LENGTH, normalizeEvent, truncateCodePoints } from './normalize-event.js';
export {
  MAX_FUTURE_MS,
  parseIsoUtc,
  parseTimestamp,
  resolveEventTime,
  toIso,
  type EventTimeInput,
  type TimestampWarning,
} from './timestamp.js';
export { isUuid, PERSON_UUID_NAMESPACE, personUuid, uuidv5, uuidv7 } from './uuid.js';
export { isIllegalDistinctId } from './illegal-ids.js';
export { applyPersonUpdates, deepEqual, personProfileMode, personUpdatesOf } from './person-properties.js';
export { elementsChainFromElements, elementsChainFromRecords, parseElementsChain } from './elements-chain.js';
export { addGroupIndexes } from './group-properties.js';
export { mergedPersonPlan, PERSONLESS_CREATED_AT, PERSONLESS_CREATED_AT_MS, type MergedPersonPlan } from './personless.js';
