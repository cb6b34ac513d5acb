import { crc32 } from 'node:zlib';

/**
 * Record framing: `[u32 payload length][u32 crc32(payload)][payload]`, little-endian.
 *
 * A record is valid only if its full length is present and its CRC matches; anything else at the end of the last
 * segment is a torn write and is cut off on open.
 */
export const HEADER_BYTES = 8;

/**
 * Upper bound for one payload. It keeps a corrupted length field from making the reader allocate gigabytes and is far
 * above any request body the front accepts.
 */
export const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

/**
 * Builds the on-disk frame, copying the payload.
 *
 * The copy is deliberate: the frame is written later (next group commit), and the caller may reuse its buffer as soon
 * as append() returns. The CRC is computed over the copy, so it always matches what reaches the disk.
 */
export function encodeFrame(payload: Uint8Array): Buffer {
  if (payload.length === 0) {
    // A zero length would be indistinguishable from a zero-filled block, which some file systems expose after a crash
    // when the file size was persisted but the data was not. Rejecting empty payloads lets the reader treat 0 as torn.
    throw new RangeError('ingest log: payload must not be empty');
  }
  if (payload.length > MAX_PAYLOAD_BYTES) {
    throw new RangeError(`ingest log: payload of ${payload.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`);
  }
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.set(payload, HEADER_BYTES);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(crc32(frame.subarray(HEADER_BYTES)) >>> 0, 4);
  return frame;
}

/** CRC32 as stored in a frame header (zlib's CRC-32, unsigned). */
export function payloadCrc(payload: Uint8Array): number {
  return crc32(payload) >>> 0;
}
