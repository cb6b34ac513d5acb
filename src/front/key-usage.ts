/**
 * When each personal API key was last used (PostHog's `last_used_at`), recorded without a write per request.
 *
 * The front authenticates keys from memory (src/front/auth-cache.ts); each use costs a Map lookup here. A key's use
 * is queued at most once a minute (`RECORD_EVERY_MS`): a use less than a minute after the last queued one is not
 * recorded, so the stored value is the first use of each minute a key was used in. Queued uses are sent in one
 * batch to a worker (the internal `auth.key_usage` operation, src/worker/ops/accounts.ts), which writes them in
 * one metadata transaction; a batch leaves `FLUSH_DELAY_MS` after the first use queued since the last one, so a
 * server whose keys are used all the time writes one small transaction per minute per key at most, and nothing
 * while no key crosses its minute.
 */

/** A key's stored `last_used_at` is rewritten at most once in this long. */
export const RECORD_EVERY_MS = 60_000;
/** How long queued uses wait for company before they are sent (one transaction for all of them). */
export const FLUSH_DELAY_MS = 1_000;

/** One key's use: the key's digest, and when (epoch ms). */
export type KeyUse = [digest: string, at: number];

export class KeyUsage {
  /** When each key's latest recorded use happened (the throttle); entries older than a minute are dropped on `take`. */
  private readonly recorded = new Map<string, number>();
  private pending: KeyUse[] = [];

  /**
   * Notes that the key `digest` was used at `now`. Returns true when the use was queued and is the first of a batch
   * (the caller then schedules a flush).
   */
  note(digest: string, now: number): boolean {
    const last = this.recorded.get(digest);
    if (last !== undefined && now - last < RECORD_EVERY_MS) return false;
    this.recorded.set(digest, now);
    this.pending.push([digest, now]);
    return this.pending.length === 1;
  }

  /** The queued uses (emptied), and forgets throttles that no longer hold back anything. */
  take(now: number): KeyUse[] {
    const batch = this.pending;
    this.pending = [];
    for (const [digest, at] of this.recorded) if (now - at >= RECORD_EVERY_MS) this.recorded.delete(digest);
    return batch;
  }

  get queued(): number {
    return this.pending.length;
  }
}
