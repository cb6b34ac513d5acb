import { closeSync, openSync, readSync } from 'node:fs';
import { HEADER_BYTES, payloadCrc } from './framing.js';
import { positionOf } from './position.js';
import { segmentPath } from './segment-files.js';

/**
 * Reads single durable records of any shard's ingest log by position, from any worker thread.
 *
 * Why: an event's owner (the shard its distinct id hashes to) no longer receives the events themselves; it receives
 * a reference to the record that holds them in the receiving shard's log and reads it when it applies. Its backlog
 * then lives on disk, in the logs, instead of in memory, and the hand-over costs a few numbers instead of a copy
 * of every event. The log keeps a record until every owner applied it (src/worker/ingest/source-log.ts), so a
 * referenced record is always there to read.
 *
 * Reads are synchronous `pread`s: the records were written moments ago and sit in the page cache, and a round trip
 * through libuv's thread pool would cost more than the copy.
 */

/** A record of one log: where it ends (as positionNumber) and its payload length. */
export interface RecordRef {
  readonly end: number;
  readonly bytes: number;
}

/** Neighbouring records are read with one `pread` while the span stays below this. */
const MAX_SPAN_BYTES = 4 * 1024 * 1024;

export class RecordReadError extends Error {
  override name = 'RecordReadError';
}

export class LogRecordReader {
  /** The segment file open per log directory (records are read in log order, so one suffices). */
  private readonly open = new Map<string, { seq: number; fd: number }>();

  /**
   * Payloads of `refs`, all records of the log in `dir`, in ascending order of their ends. Verifies each record's
   * length and CRC; throws RecordReadError if the log does not hold what was referenced.
   */
  readAll(dir: string, refs: readonly RecordRef[]): Buffer[] {
    const out: Buffer[] = [];
    let i = 0;
    while (i < refs.length) {
      // The run of records in one segment that fits one read.
      const seq = positionOf(refs[i]!.end).segment;
      const from = startOf(refs[i]!);
      let j = i + 1;
      while (j < refs.length && positionOf(refs[j]!.end).segment === seq && offsetOf(refs[j]!.end) - from <= MAX_SPAN_BYTES) j++;
      const to = offsetOf(refs[j - 1]!.end);
      if (to < from) throw new RecordReadError(`${dir}: records out of order at segment ${seq}`);
      const span = Buffer.allocUnsafe(to - from);
      const fd = this.fileOf(dir, seq);
      let filled = 0;
      while (filled < span.length) {
        const n = readSync(fd, span, filled, span.length - filled, from + filled);
        if (n === 0) throw new RecordReadError(`${dir}: segment ${seq} ends before ${to}`);
        filled += n;
      }
      for (let k = i; k < j; k++) out.push(payloadAt(dir, span, startOf(refs[k]!) - from, refs[k]!));
      i = j;
    }
    return out;
  }

  close(): void {
    for (const { fd } of this.open.values()) closeSync(fd);
    this.open.clear();
  }

  private fileOf(dir: string, seq: number): number {
    const current = this.open.get(dir);
    if (current?.seq === seq) return current.fd;
    // The log may delete older segments once they are applied; an open descriptor keeps nothing alive for long.
    if (current) closeSync(current.fd);
    this.open.delete(dir);
    const fd = openSync(segmentPath(dir, seq), 'r');
    this.open.set(dir, { seq, fd });
    return fd;
  }
}

function offsetOf(position: number): number {
  return positionOf(position).offset;
}

function startOf(ref: RecordRef): number {
  return offsetOf(ref.end) - HEADER_BYTES - ref.bytes;
}

function payloadAt(dir: string, span: Buffer, at: number, ref: RecordRef): Buffer {
  const length = span.readUInt32LE(at);
  const payload = span.subarray(at + HEADER_BYTES, at + HEADER_BYTES + ref.bytes);
  if (length !== ref.bytes || payloadCrc(payload) !== span.readUInt32LE(at + 4)) {
    throw new RecordReadError(`${dir}: no valid record of ${ref.bytes} bytes ending at ${offsetOf(ref.end)}`);
  }
  return payload;
}
