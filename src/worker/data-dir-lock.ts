/**
 * One Quill process per data directory. Each ingest log must have exactly one writer: a second process appending
 * to the same log would silently overwrite acknowledged records. The lock is a pid file created exclusively; a
 * file left by a process that no longer runs (kill -9) is taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'quill.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new Error(`data directory ${dataDir} is in use by another Quill process (pid ${holder})`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock data directory ${dataDir}`);
}
