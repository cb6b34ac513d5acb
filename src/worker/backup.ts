/**
 * Backups made from inside the server: POST /_backup, and the copy made before a format upgrade at start-up.
 * The order and why it is consistent are in src/stores/data-dir/backup.ts; this file only says how a worker
 * copies each LMDB environment. The metadata and persons environments are open in every worker: this thread's
 * handle copies them. A shard's events environment is copied by the worker owning the shard, with the handle its
 * shard uses (lmdb-js must not see a second handle on an environment its thread already has open). Before the
 * shards are open (start-up), nobody has it open, and it is opened just for the copy.
 */
import { ownerOf } from '../domain/shard-of.js';
import { envPath, type EnvCopier } from '../stores/data-dir/backup.js';
import { openEnv } from '../stores/lmdb-env.js';
import type { PeerHandler, WorkerRuntime } from './runtime.js';
import { RECORDINGS } from './recordings/recordings-service.js';

export const BACKUP_ENV = 'backup.env';

interface BackupEnvMessage {
  kind: typeof BACKUP_ENV;
  shard: number;
  target: string;
  [k: string]: unknown;
}

/** Copies with the running server's handles; `shardsOpen: false` before start-up opened them. */
export function workerCopier(rt: WorkerRuntime, shardsOpen: boolean): EnvCopier {
  return async (env, target) => {
    if (env.kind === 'meta') return rt.meta.env.backup(target, false);
    if (env.kind === 'persons') return rt.persons.env.backup(target, false);
    if (env.kind === 'recordings') {
      // Every worker has every recordings environment open once its services started: this thread's handle copies it.
      const store = RECORDINGS.of(rt.services).all()[env.shard];
      return store ? store.env.backup(target, false) : copyClosedEnv(envPath(rt.config.dataDir, env), target);
    }
    if (!shardsOpen) return copyClosedEnv(envPath(rt.config.dataDir, env), target);
    const msg: BackupEnvMessage = { kind: BACKUP_ENV, shard: env.shard, target };
    await rt.peers.call(ownerOf(env.shard, rt.workerCount), msg);
  };
}

/** Copies an environment no one in this process has open: opened for the copy, then closed. */
export async function copyClosedEnv(path: string, target: string): Promise<void> {
  const env = openEnv(path);
  try {
    await env.backup(target, false);
  } finally {
    await env.close();
  }
}

/** Peer message: copy a shard this worker owns. */
export const backupEnvHandler: PeerHandler = async (rt, msg) => {
  const { shard, target } = msg as BackupEnvMessage;
  const owned = rt.ingest.shards.get(shard);
  if (!owned) throw new Error(`shard ${shard} is not owned by worker ${rt.index}`);
  await owned.events.env.backup(target, false);
  return true;
};
