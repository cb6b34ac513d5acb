/**
 * A small tmpfs for tests of a full disk (needs root, i.e. CAP_SYS_ADMIN). A real full file system is the only
 * honest way to see ENOSPC on every write path at once; injected faults cover the ingest log alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  dir: string;
  /** Changes the size limit (e.g. to give space back); sizes as mount takes them: `256k`, `24m`. */
  resize(size: string): void;
  unmount(): void;
}

/** Mounts a tmpfs of `size` on a fresh directory; returns the reason as a string when that is not possible. */
export function mountTmpfs(size: string, prefix = 'quill-tmpfs-'): Tmpfs | string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a ${size} tmpfs here (${String((error as Error).message).split('\n')[0]})`;
  }
  let mounted = true;
  return {
    dir,
    resize: (to) => execFileSync('mount', ['-o', `remount,size=${to}`, dir], { stdio: 'pipe' }),
    unmount() {
      if (!mounted) return;
      mounted = false;
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      } catch {
        /* already gone */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
