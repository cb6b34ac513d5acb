import { mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LogIo } from './io.js';

const SEGMENT_NAME = /^(\d{20})\.log$/;

/** `00000000000000000001.log`: zero-padded so a plain directory listing sorts in log order. */
export function segmentFileName(seq: number): string {
  return `${String(seq).padStart(20, '0')}.log`;
}

export function segmentPath(dir: string, seq: number): string {
  return join(dir, segmentFileName(seq));
}

/** Sequence numbers of the segment files in `dir`, ascending. Other files are ignored. Gaps are allowed. */
export async function listSegments(dir: string): Promise<number[]> {
  const seqs: number[] = [];
  for (const name of await readdir(dir)) {
    const m = SEGMENT_NAME.exec(name);
    if (m) seqs.push(Number(m[1]));
  }
  return seqs.sort((a, b) => a - b);
}

/**
 * Creates `dir` (and missing parents). With `durable`, fsyncs the parent of every directory it created so the new
 * directory entries survive power loss; otherwise the first segment's fsynced bytes could sit in a directory that
 * does not exist after a reboot.
 */
export async function ensureDir(dir: string, io: LogIo, durable: boolean): Promise<void> {
  const firstCreated = await mkdir(dir, { recursive: true });
  if (!durable || firstCreated === undefined) return;
  for (let p = dir; ; p = dirname(p)) {
    await io.syncDir(dirname(p));
    if (p === firstCreated || dirname(p) === p) break;
  }
}
