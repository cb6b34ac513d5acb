/**
 * Where things live in a data directory (QUILL_DATA_DIR):
 *
 *   meta.mdb                    metadata environment (src/stores/meta)
 *   persons.mdb                 shared persons environment (src/stores/persons)
 *   shards/<n>/events.mdb       a shard's events, counters and scan layout (src/stores/events, src/stores/scan)
 *   shards/<n>/log/             a shard's ingest log segments (src/stores/ingest-log)
 *   shards/<n>/recordings.mdb   the session recordings whose session id hashes to the shard (src/stores/recordings)
 *   quill.pid                   the running server's lock: its pid and start time (src/worker/data-dir-lock.ts)
 *   .quill.pid.*                the lock being written or taken over (exists for an instant)
 *   upgrade-backups/            copies made before a format upgrade (src/worker/upgrade.ts)
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const META_ENV = 'meta.mdb';
export const PERSONS_ENV = 'persons.mdb';
export const UPGRADE_BACKUPS = 'upgrade-backups';
export const RECORDINGS_ENV = 'recordings.mdb';

export function shardDir(dataDir: string, shard: number): string {
  return join(dataDir, 'shards', String(shard));
}

export function eventsEnvPath(dataDir: string, shard: number): string {
  return join(shardDir(dataDir, shard), 'events.mdb');
}

/** A shard's session recordings (their chunks and metadata; sessions are sharded by session id). */
export function recordingsEnvPath(dataDir: string, shard: number): string {
  return join(shardDir(dataDir, shard), RECORDINGS_ENV);
}

/** The ingest log directory of a shard (owners read records there by position). */
export function shardLogDir(dataDir: string, shard: number): string {
  return join(shardDir(dataDir, shard), 'log');
}

/** The shard numbers with a directory under `shards/`, ascending. */
export function listShards(dataDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(join(dataDir, 'shards'));
  } catch {
    return [];
  }
  return names.filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);
}
