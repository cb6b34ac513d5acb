/**
 * Opening LMDB environments. lmdb-js requires that every opener of an environment (every worker thread) uses the
 * same sync flags, or it throws / silently drops to another mode (stack-notes §1c). All environments are therefore
 * opened through this one function with one options object.
 *
 * Durability model: lmdb-js' default `overlappingSync` makes a resolved write "committed and visible, written to
 * the OS"; it is flushed to disk afterwards. Writers that promise durability (management API writes, the ingest
 * apply loop before it advances its checkpoint) additionally `await env.flushed`.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { META_ENV, PERSONS_ENV, RECORDINGS_ENV } from './data-dir/paths.js';
import { meterFor, type TxnMeter } from './txn-meter.js';
import { inLane } from './write-lane.js';

const ENV_OPTIONS = { maxDbs: 32, compression: false } as const;

/** Values are plain msgpack maps: records keep free-form maps (properties, filters) out of shared structures. */
const VALUE_OPTIONS = { encoder: { useRecords: false } } as const;

export type Env = RootDatabase;
export type Table<V = unknown, K extends import('lmdb').Key = import('lmdb').Key> = Database<V, K>;

export function openEnv(path: string): Env {
  mkdirSync(dirname(path), { recursive: true });
  return open({ path, ...ENV_OPTIONS, ...VALUE_OPTIONS });
}

export function openTable<V, K extends import('lmdb').Key = import('lmdb').Key>(env: Env, name: string): Table<V, K> {
  return env.openDB<V, K>(name, { ...VALUE_OPTIONS } as object);
}

/**
 * A table whose values are JSON text. For rows that are mostly a free-form map (person and group properties)
 * lmdb-js' JSON decoding is faster than msgpack maps: reading a person with 23 properties took 4.7 µs instead of
 * 7.2 µs (each a get plus decode, on this machine).
 */
export function openJsonTable<V, K extends import('lmdb').Key = import('lmdb').Key>(env: Env, name: string): Table<V, K> {
  return env.openDB<V, K>(name, { encoding: 'json' } as object);
}

/** A key-only index table (values are empty); lmdb stores `null` compactly. */
export function openIndex<K extends import('lmdb').Key = import('lmdb').Key>(env: Env, name: string): Table<null, K> {
  return env.openDB<null, K>(name, { ...VALUE_OPTIONS } as object);
}

/**
 * Runs `fn` in a write transaction of `env` that is all or nothing. lmdb-js commits what a transaction callback
 * wrote before it threw (measured with lmdb 3.5.6: a put followed by a throw was committed), so a half-done change
 * would persist; here `fn` runs in a child transaction, which LMDB rolls back when it throws. Costs ~15 µs.
 * `fn` must be synchronous (its result is boxed so lmdb-js never mistakes a returned promise for an async callback).
 * Like every write callback it goes through the environment's lane, which bounds what one transaction carries.
 */
export function atomically<T>(env: Env, fn: () => T): Promise<T> {
  return inLane(env, metered(env, () => {
    const box = {} as { result: T };
    env.transactionSync(() => {
      box.result = fn();
    });
    return box;
  })).then((box) => box.result);
}

/**
 * Runs `fn` in a write transaction of `env` through its lane (src/stores/write-lane.ts), without `atomically`'s
 * roll-back: for writes of one put or of derived data. `fn` must be synchronous.
 */
export function transact<T>(env: Env, fn: () => T): Promise<T> {
  return inLane(env, metered(env, fn));
}

/** `transact`, resolving once the commit is on disk (`env.flushed`): for progress that a restart must find. */
export async function transactDurably<T>(env: Env, fn: () => T): Promise<T> {
  const result = await transact(env, fn);
  await env.flushed;
  return result;
}

/** `callback` with its time noted in the environment's transaction meter (src/stores/txn-meter.ts). */
function metered<T>(env: Env, callback: () => T): () => T {
  const meter = meterOf(env);
  return () => {
    const started = performance.now();
    try {
      return callback();
    } finally {
      meter.note(runningTxn(env), env.getWriteTxnId(), (performance.now() - started) / 1000);
    }
  };
}

/**
 * The write transaction a callback runs in. lmdb-js makes a new object for each batch it runs in one LMDB
 * transaction; LMDB's transaction id would not do, since a transaction that wrote nothing commits without taking a
 * new id, and its neighbours would count as one.
 */
function runningTxn(env: Env): object {
  return (env as unknown as { env: { writeTxn: object } }).env.writeTxn;
}

/** The transaction meter of an environment, labelled by its file (`persons`, `meta`, `recordings`, `events`: src/stores/txn-meter.ts). */
function meterOf(env: Env): TxnMeter {
  const path = (env as { path?: string }).path ?? '';
  const label = path.endsWith(PERSONS_ENV) ? 'persons' : path.endsWith(META_ENV) ? 'meta' : path.endsWith(RECORDINGS_ENV) ? 'recordings' : 'events';
  return meterFor(label);
}

/** Materialises a lazy lmdb range (its typings call `asArray` a promise; iteration is synchronous). */
export function all<T>(range: Iterable<T>): T[] {
  return Array.from(range);
}
