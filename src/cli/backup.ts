/**
 * `npm run backup -- <target dir>`: an online backup of the data directory (QUILL_DATA_DIR, as the server reads
 * it, or --data-dir), whether the server runs or not. The copy's order and why it is consistent are in
 * src/stores/data-dir/backup.ts. This process opens each LMDB environment beside the server (LMDB allows several
 * processes) for the length of its copy, and only reads the ingest logs: it takes no lock and stops nothing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { backupDataDir, discardPartial, envPath, BackupError, type BackupReport } from '../stores/data-dir/backup.js';
import { DATA_FORMAT_VERSION, newerFormatMessage } from '../stores/data-dir/format.js';
import { META_ENV } from '../stores/data-dir/paths.js';
import { MetaStore } from '../stores/meta/meta-store.js';
import { copyClosedEnv } from '../worker/backup.js';
import { CommandError } from './create-key.js';

export async function backupCommand(dataDir: string, target: string, onStart: () => void = () => undefined): Promise<BackupReport> {
  if (!existsSync(join(dataDir, META_ENV))) throw new CommandError(`${dataDir} is not a Quill data directory (no ${META_ENV})`);
  // Read, then closed: the copy below opens the metadata environment again, and one process must not hold two
  // handles on it.
  const meta = new MetaStore(dataDir);
  const format = meta.formatVersion() ?? 1;
  await meta.close();
  if (format > DATA_FORMAT_VERSION) throw new CommandError(newerFormatMessage(dataDir, format));
  onStart();
  try {
    return await backupDataDir(dataDir, target, (env, to) => copyClosedEnv(envPath(dataDir, env), to), format);
  } catch (error) {
    if (error instanceof BackupError) throw new CommandError(error.message);
    await discardPartial(target);
    throw error;
  }
}
