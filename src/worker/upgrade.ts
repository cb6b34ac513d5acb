/**
 * Data-directory upgrades at start-up (src/stores/data-dir/format.ts lists the versions). Before anything is
 * migrated the directory is copied into `<data dir>/upgrade-backups/format-<old>-<time>/` (the same consistent
 * copy as `npm run backup`), so a failed or regretted upgrade can be undone by starting the older Quill on that
 * copy. Each migration moves the directory one version up; all of them and the new version marker are written in
 * one metadata transaction, so an interrupted upgrade leaves the directory at its old version (and the next start
 * tries again, with a new copy).
 */
import { join } from 'node:path';
import { all } from '../stores/lmdb-env.js';
import { backupDataDir } from '../stores/data-dir/backup.js';
import { DATA_FORMAT_VERSION } from '../stores/data-dir/format.js';
import { UPGRADE_BACKUPS } from '../stores/data-dir/paths.js';
import type { MetaStore } from '../stores/meta/meta-store.js';
import { workerCopier } from './backup.js';
import { backupName } from './ops/backup.js';
import type { WorkerRuntime } from './runtime.js';

interface Migration {
  /** The version this migration upgrades from (to from + 1). */
  from: number;
  describe: string;
  /** Runs inside the upgrade's metadata write transaction. */
  run(meta: MetaStore): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    from: 1,
    describe: 'projects get event_retention_days (null: events are kept)',
    run(meta) {
      for (const project of all(meta.projects.getRange().map((e) => e.value))) {
        if (project.event_retention_days === undefined) meta.projects.put(project.id, { ...project, event_retention_days: null });
      }
    },
  },
];

/** Backs the directory up, then migrates it from `from` to DATA_FORMAT_VERSION. Runs before the shards open. */
export async function upgradeDataDir(rt: WorkerRuntime, from: number): Promise<string> {
  const dataDir = rt.config.dataDir;
  const target = join(dataDir, UPGRADE_BACKUPS, `format-${from}-${backupName(new Date()).replace(/^quill-/, '')}`);
  rt.log.info({ event: 'upgrade_backup', from, to: DATA_FORMAT_VERSION, target }, `data directory format ${from} is older than ${DATA_FORMAT_VERSION}: copying it to ${target} first`);
  const report = await backupDataDir(dataDir, target, workerCopier(rt, false), from);
  rt.metrics.backupFinished(true);
  const steps = MIGRATIONS.filter((m) => m.from >= from && m.from < DATA_FORMAT_VERSION).sort((a, b) => a.from - b.from);
  await rt.meta.write(() => {
    for (const step of steps) step.run(rt.meta);
    rt.meta.setFormatVersion(DATA_FORMAT_VERSION);
  });
  rt.log.info(
    { event: 'upgrade', from, to: DATA_FORMAT_VERSION, backup: target, backup_ms: report.durationMs, steps: steps.map((s) => s.describe) },
    `data directory upgraded from format ${from} to ${DATA_FORMAT_VERSION} (backup in ${target})`,
  );
  return target;
}
