/**
 * Keys minted outside the running server (`npm run quill -- create-key`, another process writing the metadata
 * environment) are not in the front's cache until the next refresh. On a miss the front asks a worker for that
 * one key (the internal `auth.key` operation: one LMDB read in a fresh read transaction) and learns it.
 *
 * Why a lookup on a miss rather than polling or a file watch: it costs nothing while nobody presents an unknown
 * key, the new key works on its first request, and it needs no channel between the two processes but the LMDB
 * environment they already share. An unknown key now costs a worker round trip (as any private request does);
 * lookups of one digest are coalesced and at most MAX_IN_FLIGHT run at once, beyond which an unknown key is
 * refused without one (under a flood of invalid keys, a brand-new key may need a retry).
 */
import type { AuthKeyLookup, RequestMeta, TaskItem } from '../protocol/worker-messages.js';
import type { AuthCache } from './auth-cache.js';
import type { WorkerPool } from './worker-pool.js';

const MAX_IN_FLIGHT = 64;

export class KeyLookup {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly pool: WorkerPool, private readonly auth: AuthCache) {}

  /** Resolves once the key with `digest` is in the cache if it is stored; never rejects. */
  learn(digest: string, meta: RequestMeta): Promise<void> {
    const pending = this.inFlight.get(digest);
    if (pending) return pending;
    if (this.inFlight.size >= MAX_IN_FLIGHT) return Promise.resolve();
    const version = this.auth.version;
    const item: TaskItem = { op: 'auth.key', meta, params: {}, principal: null, body: { digest }, raw: null };
    const done = this.pool.call(this.pool.pick(), item).then(
      (reply) => {
        if (reply.status === 200 && typeof reply.body === 'string') this.auth.learn(JSON.parse(reply.body) as AuthKeyLookup, version);
      },
      () => undefined,
    ).finally(() => this.inFlight.delete(digest));
    this.inFlight.set(digest, done);
    return done;
  }
}
