import { statSync } from 'node:fs';

/** Bytes a file takes on disk (LMDB files are sparse until their pages are written), 0 when missing. */
export function diskBytes(path: string): number {
  try {
    const st = statSync(path);
    return st.blocks * 512;
  } catch {
    return 0;
  }
}
