/**
 * Per-shard durable ingest log: append-only segments of CRC-framed records, acknowledged after fdatasync with group
 * commit. See ingest-log.ts for the durability invariants.
 */
export {
  IngestLog,
  SYNC_BOUNDS_MS,
  syncBucket,
  type IngestLogOptions,
  type IngestLogStats,
  type RecoveryReport,
  type ReplayedRecord,
} from './ingest-log.js';
export { comparePositions, formatPosition, positionNumber, positionOf, type LogPosition } from './position.js';
export { IngestLogClosedError, IngestLogCorruptError } from './errors.js';
export { nodeIo, type LogIo, type OpenMode, type SegmentFile } from './io.js';
export { MAX_PAYLOAD_BYTES } from './framing.js';
export { segmentPath } from './segment-files.js';
export { LogRecordReader, RecordReadError, type RecordRef } from './record-reader.js';
