import { HEADER_BYTES, MAX_PAYLOAD_BYTES, payloadCrc } from './framing.js';
import type { SegmentFile } from './io.js';

export type ScannedRecord =
  | { readonly ok: true; readonly payload: Buffer; readonly start: number; readonly end: number }
  | { readonly ok: false; readonly offset: number; readonly reason: string };

const DEFAULT_CHUNK_BYTES = 1024 * 1024;

/**
 * Reads the records of one segment file between byte offsets `start` (a record boundary) and `end`.
 *
 * Yields every valid record in order; at the first invalid one (short header, zero or oversized length, length
 * running past `end`, CRC mismatch, file shorter than `end`) it yields one `{ ok: false }` item and stops. Whether that
 * is a torn tail to cut off (open) or corruption to refuse (replay) is the caller's decision.
 *
 * Payloads are views into a freshly allocated read chunk that is never written again, so they stay valid after the
 * next iteration; keeping one alive pins its chunk (about 1 MiB), so copy payloads you retain long-term.
 */
export async function* scanSegment(
  file: SegmentFile,
  start: number,
  end: number,
  chunkBytes = DEFAULT_CHUNK_BYTES,
): AsyncGenerator<ScannedRecord, void, undefined> {
  let base = start; // file offset of buf[0]
  let buf: Buffer = Buffer.alloc(0);
  let i = 0; // parse cursor inside buf

  for (;;) {
    // Parse every complete record already in memory.
    for (;;) {
      const at = base + i;
      if (at === end) return;
      if (end - at < HEADER_BYTES) {
        yield { ok: false, offset: at, reason: `truncated header (${end - at} bytes left)` };
        return;
      }
      const avail = buf.length - i;
      if (avail < HEADER_BYTES) break;
      const len = buf.readUInt32LE(i);
      if (len === 0 || len > MAX_PAYLOAD_BYTES) {
        yield { ok: false, offset: at, reason: `invalid length ${len}` };
        return;
      }
      if (at + HEADER_BYTES + len > end) {
        yield { ok: false, offset: at, reason: `record of ${len} bytes runs past end of data (${end - at - HEADER_BYTES} left)` };
        return;
      }
      if (avail < HEADER_BYTES + len) break;
      const payload = buf.subarray(i + HEADER_BYTES, i + HEADER_BYTES + len);
      if (payloadCrc(payload) !== buf.readUInt32LE(i + 4)) {
        yield { ok: false, offset: at, reason: 'crc mismatch' };
        return;
      }
      i += HEADER_BYTES + len;
      yield { ok: true, payload, start: at, end: base + i };
    }

    // Refill: carry the unparsed remainder into a new buffer (never overwrite one whose views were handed out).
    const rest = buf.subarray(i);
    const needed = rest.length >= HEADER_BYTES ? HEADER_BYTES + rest.readUInt32LE(0) : HEADER_BYTES;
    const readFrom = base + buf.length;
    const want = Math.min(end - readFrom, Math.max(chunkBytes, needed - rest.length));
    const next = Buffer.allocUnsafe(rest.length + want);
    rest.copy(next, 0);
    let filled = rest.length;
    while (filled < next.length) {
      const n = await file.read(next, filled, next.length - filled, readFrom + (filled - rest.length));
      if (n === 0) break;
      filled += n;
    }
    if (filled < next.length) {
      yield { ok: false, offset: base + i, reason: `unexpected end of file at ${readFrom + filled - rest.length}` };
      return;
    }
    base += i;
    buf = next;
    i = 0;
  }
}

/** Length of the longest valid record prefix of a segment, and why the scan stopped early (null if it did not). */
export async function findValidEnd(file: SegmentFile, size: number): Promise<{ validEnd: number; reason: string | null }> {
  let validEnd = 0;
  for await (const rec of scanSegment(file, 0, size)) {
    if (!rec.ok) return { validEnd, reason: rec.reason };
    validEnd = rec.end;
  }
  return { validEnd, reason: null };
}
