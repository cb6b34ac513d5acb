import { writevSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * The file operations the log performs, behind a tiny interface.
 *
 * TEST SEAM: production code uses `nodeIo`. Tests wrap it to make a write, datasync, truncate or open fail (ENOSPC,
 * EIO, short writes) and then recover, which a real disk cannot do on demand. Keep this interface minimal: only the
 * write path and replay go through it; directory listing, stat and unlink use node:fs directly.
 */
export interface SegmentFile {
  /** Positional gather write. May write fewer bytes than given (the caller loops); returns the bytes written. */
  writev(buffers: Buffer[], position: number): Promise<number>;
  /** Positional read; returns bytes read (0 at end of file). */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

/**
 * `read`: read-only (replay). `existing`: read/write, must exist (the last segment at open).
 * `create`: read/write, created or truncated to empty (a new segment at rotation).
 */
export type OpenMode = 'read' | 'existing' | 'create';

export interface LogIo {
  open(path: string, mode: OpenMode): Promise<SegmentFile>;
  /** fsync a directory so that entries created or removed in it survive power loss. */
  syncDir(path: string): Promise<void>;
}

const FLAGS: Record<OpenMode, string> = { read: 'r', existing: 'r+', create: 'w+' };

export const nodeIo: LogIo = {
  async open(path, mode) {
    const fh = await open(path, FLAGS[mode]);
    return {
      // Never O_APPEND: Linux ignores the position for O_APPEND files, and we need positional writes so that a retry
      // after a failed write lands exactly at the durable end instead of after leftover junk.
      // Synchronous on purpose: copying a group into the page cache takes microseconds, while a round trip through
      // libuv's thread pool costs two thread wake-ups on the acknowledgement path (only the fdatasync that follows
      // waits for the disk, and that one stays asynchronous).
      writev: async (buffers, position) => writevSync(fh.fd, buffers, position),
      read: async (buffer, offset, length, position) => (await fh.read(buffer, offset, length, position)).bytesRead,
      datasync: () => fh.datasync(),
      truncate: (length) => fh.truncate(length),
      size: async () => (await fh.stat()).size,
      close: () => fh.close(),
    };
  },
  async syncDir(path) {
    const fh = await open(path, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
};
