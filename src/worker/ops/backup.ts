/**
 * POST /_backup: an online backup of the whole node into QUILL_BACKUP_DIR (off when it is unset), for the operator
 * key or an organization's owner. One at a time: a marker file in the backup directory refuses a second one
 * (409) while the first runs. Answers 201 with where the copy is once it is complete; a failed copy is removed.
 * The backup itself: src/stores/data-dir/backup.ts.
 */
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Errors } from '../../protocol/errors.js';
import { BackupError, backupDataDir, discardPartial } from '../../stores/data-dir/backup.js';
import { DATA_FORMAT_VERSION } from '../../stores/data-dir/format.js';
import { workerCopier } from '../backup.js';
import { json } from '../reply.js';
import { ownerOrOperator } from './stats.js';
import type { OpHandler } from './types.js';
import { principalOf } from './types.js';

const RUNNING_MARKER = '.backup-running';

/** `quill-2026-11-23T10-15-02-123Z`: sorts by time, no characters a shell or a file system objects to. */
export function backupName(now: Date): string {
  return `quill-${now.toISOString().replace(/[:.]/g, '-')}`;
}

export const backupNode: OpHandler = async (item, rt) => {
  ownerOrOperator(rt, principalOf(item), 'Only organization owners (or the operator key) can start a backup.');
  const dir = rt.config.backupDir;
  if (dir === null) throw Errors.notFound('Backups over HTTP are off: set QUILL_BACKUP_DIR.');
  await mkdir(dir, { recursive: true });
  const marker = join(dir, RUNNING_MARKER);
  try {
    closeSync(openSync(marker, 'wx'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw Errors.conflict(`A backup is already running (${marker}).`);
    throw error;
  }
  const target = join(dir, backupName(new Date()));
  try {
    rt.log.info({ event: 'backup_started', target }, `backup to ${target} started`);
    const report = await backupDataDir(rt.config.dataDir, target, workerCopier(rt, true), DATA_FORMAT_VERSION);
    rt.metrics.backupFinished(true);
    rt.log.info({ event: 'backup', ...report }, `backup to ${target} finished in ${report.durationMs} ms (${report.bytes} bytes)`);
    return json(201, { path: target, duration_ms: report.durationMs, bytes: report.bytes, shards: report.shards, log_segments: report.logSegments, format_version: report.formatVersion, started_at: report.startedAt });
  } catch (error) {
    rt.metrics.backupFinished(false);
    rt.log.error({ event: 'backup_failed', target, err: error }, `backup to ${target} failed`);
    // A refused target (not empty) is not ours to remove.
    if (!(error instanceof BackupError)) await discardPartial(target);
    throw error;
  } finally {
    rmSync(marker, { force: true });
  }
};
