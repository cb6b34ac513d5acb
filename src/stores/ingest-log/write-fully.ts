import type { SegmentFile } from './io.js';

/**
 * Writes all `buffers` contiguously at `position`, continuing after short writes.
 *
 * Short writes are real: when a disk fills up mid-group, libuv returns the bytes that made it without an error and only
 * the next attempt reports ENOSPC. Treating the short count as success would acknowledge records that are not on disk.
 */
export async function writeFully(file: SegmentFile, buffers: readonly Buffer[], position: number): Promise<void> {
  let pending = buffers.slice();
  let pos = position;
  while (pending.length > 0) {
    const n = await file.writev(pending, pos);
    if (!(n > 0)) {
      throw Object.assign(new Error(`ingest log: write made no progress at offset ${pos}`), { code: 'EIO' });
    }
    pos += n;
    let left = n;
    let k = 0;
    while (k < pending.length && left >= pending[k]!.length) {
      left -= pending[k]!.length;
      k++;
    }
    pending = pending.slice(k);
    if (left > 0) pending[0] = pending[0]!.subarray(left);
  }
}
