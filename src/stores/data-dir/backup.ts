/**
 * A consistent copy of a data directory, made while the server runs and ingests (`npm run backup`, POST /_backup,
 * and before a format upgrade). The copy starts with every event acknowledged before the backup began.
 *
 * Why this order works. An acknowledged event is in its source shard's ingest log (fdatasync'ed before the 200),
 * and a log segment is released only after every shard owning one of its events has applied and flushed them.
 *   1. The ingest log segments of every shard are copied first. An event acknowledged before the backup began is
 *      either in these copies, or its segment was released before it was copied — then it had been applied and
 *      flushed by its owner before step 2 began.
 *   2. Then each shard's events environment (LMDB's own copy: a consistent snapshot, writers keep going). Each
 *      snapshot holds its rows together with how far it applied every source's log (written in one transaction).
 *   3. Then the persons environment, then the metadata environment: each is at least as recent as every events
 *      snapshot, so the persons, group types and event definitions of every copied event are there (the state a
 *      crash between the apply loop's persons and events transactions leaves, which start-up handles).
 *   4. The copy is then adjusted so that its start-up replays what the logs hold: each source's checkpoint is
 *      dropped (its snapshot may be newer than an owner's, so it could skip a record the owner's copy lacks), and
 *      each owner's applied position is capped at the end of the copied log (an owner copied later than a log may
 *      have applied records past the copy's end; new records after a restore will take those positions).
 * Replay applies whatever an owner's snapshot lacks and skips the rest (applied positions, then uuids), so the copy
 * holds every acknowledged event once. Replay is bounded by what the logs held: the backlog and the segments not
 * yet released.
 *
 * The copy is complete once `backup.json` (written last) exists. Cost while it runs: reading the data directory
 * (LMDB copies the used pages of each environment, sequentially) and writing it out; ingestion goes on.
 */
import { copyFile, mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { IngestLog, positionNumber } from '../ingest-log/index.js';
import { listSegments, segmentPath } from '../ingest-log/segment-files.js';
import { openEnv, openTable, transact } from '../lmdb-env.js';
import { STATE_KEYS } from '../events/event-store.js';
import { eventsEnvPath, listShards, META_ENV, PERSONS_ENV, recordingsEnvPath, shardLogDir } from './paths.js';

/** Which environment of the data directory. */
export type EnvName = { kind: 'meta' } | { kind: 'persons' } | { kind: 'events'; shard: number } | { kind: 'recordings'; shard: number };

/**
 * Copies one environment with LMDB's copy (`env.backup`) to `target`. Whoever runs the backup decides how: a
 * separate process opens the environment itself; a worker uses the one it (or the worker owning it) has open.
 */
export type EnvCopier = (env: EnvName, target: string) => Promise<void>;

export interface BackupReport {
  target: string;
  shards: number;
  startedAt: string;
  durationMs: number;
  bytes: number;
  /** Log segment files copied (they are replayed when the copy starts). */
  logSegments: number;
  formatVersion: number;
}

export const MANIFEST = 'backup.json';

/** Names in the source data directory that a backup copies (the rest — the lock, upgrade copies — it leaves). */
export function envPath(dataDir: string, env: EnvName): string {
  if (env.kind === 'events') return eventsEnvPath(dataDir, env.shard);
  if (env.kind === 'recordings') return recordingsEnvPath(dataDir, env.shard);
  return join(dataDir, env.kind === 'meta' ? META_ENV : PERSONS_ENV);
}

export class BackupError extends Error {}

/** Copies `dataDir` into `target` (a new or empty directory). See the module comment for the order. */
export async function backupDataDir(dataDir: string, target: string, copyEnv: EnvCopier, formatVersion: number): Promise<BackupReport> {
  const started = Date.now();
  const t0 = performance.now();
  await prepareTarget(target);
  // No shard yet is possible: a first start that stopped before it opened them. The environments are still copied.
  const shards = listShards(dataDir);

  let logSegments = 0;
  for (const shard of shards) logSegments += await copyLog(shardLogDir(dataDir, shard), shardLogDir(target, shard));
  for (const shard of shards) await copyEnv({ kind: 'events', shard }, envPath(target, { kind: 'events', shard }));
  // Session recordings: a store of their own, acknowledged once in their environment (no log to replay), so its
  // snapshot holds every chunk acknowledged before the copy began. A directory that never had one has none.
  for (const shard of shards) {
    const recordings: EnvName = { kind: 'recordings', shard };
    if (existsSync(envPath(dataDir, recordings))) await copyEnv(recordings, envPath(target, recordings));
  }
  await copyEnv({ kind: 'persons' }, envPath(target, { kind: 'persons' }));
  await copyEnv({ kind: 'meta' }, envPath(target, { kind: 'meta' }));
  await replayFromLogs(target, shards);

  const report: BackupReport = {
    target, shards: shards.length, startedAt: new Date(started).toISOString(), durationMs: Math.round(performance.now() - t0),
    bytes: await treeBytes(target), logSegments, formatVersion,
  };
  await writeFile(join(target, MANIFEST), JSON.stringify({ ...report, source: dataDir, finishedAt: new Date().toISOString() }, null, 2) + '\n');
  return report;
}

async function prepareTarget(target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  const present = await readdir(target);
  if (present.length > 0) throw new BackupError(`${target} is not empty: a backup goes into a new or empty directory`);
}

/**
 * Copies a shard's log segments as they are now. A segment released (deleted) while this runs was applied and
 * flushed by every owner before the environments are copied, so it is not needed. The active segment may be
 * copied in the middle of a write: start-up cuts such a torn tail (it holds nothing acknowledged before the backup).
 */
async function copyLog(from: string, to: string): Promise<number> {
  await mkdir(to, { recursive: true });
  let copied = 0;
  for (const seq of await listSegments(from)) {
    try {
      await copyFile(segmentPath(from, seq), segmentPath(to, seq));
      copied++;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  for (const seq of await listSegments(to)) await syncFile(segmentPath(to, seq));
  return copied;
}

async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

/** The copy's start-up replays its logs from their start (step 4 of the module comment). */
async function replayFromLogs(target: string, shards: number[]): Promise<void> {
  const ends = new Map<number, number>();
  for (const shard of shards) {
    // Opening the copied log also cuts a torn tail of its last segment, so its end is a record boundary.
    const log = await IngestLog.open({ dir: shardLogDir(target, shard), warn: () => undefined });
    ends.set(shard, positionNumber(log.endPosition));
    await log.close();
  }
  for (const shard of shards) {
    const env = openEnv(envPath(target, { kind: 'events', shard }));
    try {
      const state = openTable<unknown, string>(env, 'state');
      await transact(env, () => {
        state.remove(STATE_KEYS.logCheckpoint);
        const applied = state.get(STATE_KEYS.appliedFrom) as Record<string, number> | undefined;
        if (!applied) return;
        const capped: Record<string, number> = {};
        for (const [source, position] of Object.entries(applied)) capped[source] = Math.min(position, ends.get(Number(source)) ?? 0);
        state.put(STATE_KEYS.appliedFrom, capped);
      });
      await env.flushed;
    } finally {
      await env.close();
    }
  }
}

async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).blocks * 512;
  }
  return total;
}

/** Removes a partial copy after a failure (nothing of it is usable without its manifest). */
export async function discardPartial(target: string): Promise<void> {
  await rm(target, { recursive: true, force: true });
}
