/**
 * How many events the next apply chunk takes (src/worker/ingest/shard.ts applies them in one persons and one
 * events transaction each). A chunk's callbacks hold the worker's thread, so its size trades the apply's throughput
 * (fewer commits, fewer turns of the shared persons lock) against the wait of the requests that arrive meanwhile;
 * which side wins depends on what the worker is doing, which ApplyPacer observes and `Lag` below tracks.
 */
import type { ChunkSizer } from './chunk-sizer.js';

/** What the apply pacer (src/worker/ingest/apply-pacer.ts) says of the requests arriving and the CPUs. */
export interface Pace {
  readonly interactive: boolean;
  readonly contended: boolean;
  readonly busy: boolean;
  readonly quiet: boolean;
}

/**
 * Events applied per chunk: large enough to amortise transactions, small enough to hold the persons lock briefly.
 * Measured with `npm run bench:million`: 2,000 applied 14.4k events/s, 10,000 16.3k/s but doubled the ack p99
 * (the chunk's person updates run synchronously on the worker's event loop). While requests are arriving, chunks
 * are smaller: each blocks this worker's requests for its whole length (~50 µs per event). Measured with wrk c8 on
 * /capture/: 250 gave a p99 of 15-18 ms, 60 gave 9-12 ms, at the same rate; 100 keeps most of that gain with
 * fewer commits.
 */
export const CHUNK_EVENTS = 2000;
const CHUNK_EVENTS_BUSY = 100;
/**
 * While flag evaluations or other requests besides ingestion arrive (ApplyPacer.interactive), chunks are sized by
 * time rather than count: such a request waits for the transaction callback running when it arrives, so a chunk's
 * callbacks aim at INTERACTIVE_TARGET_S each (ChunkSizer), between 25 events (under a saturating ingestion on 2
 * cores a chunk's person processing measured 10-100 ms for 100 events: `npm run bench`, isolation case) and 400.
 * A fixed 25 events made the apply wait on two commits per 25 events: with flags asked 200 times a second, a
 * worker was 71 % idle while its backlog drained at 7.4-8.8k events/s; sized for 4 ms it drained 11.1-12.4k
 * (`QUILL_BENCH_PRELOAD=300000 QUILL_BENCH_EVENTS=100000 QUILL_BENCH_FLAG_RPS=200 npm run bench:apply`, 5 pairs).
 * Only while the CPUs have room (not ApplyPacer.contended): under a saturating ingestion the larger chunks took CPU
 * from the acknowledgements and the flags (isolation case: /batch/ 157k instead of 173-192k events/s, flags p50
 * 6.6 instead of 5.3 ms), so there the chunks stay at 25.
 */
const INTERACTIVE_TARGET_S = 0.004;
const CHUNK_EVENTS_INTERACTIVE = 25;
const CHUNK_EVENTS_INTERACTIVE_MAX = 400;
/**
 * Chunks while requests are rare (ApplyPacer.quiet) and a deep backlog waits (catching up after a burst or a
 * restart). Most of a chunk's persons commit is spent waiting for the previous commit's fdatasync: lmdb-js keeps
 * the shared persons write lock through that wait once a transaction dirtied more than 500 pages, which a chunk of
 * new visitors does (each dirties a page of the distinct-id and the person-uuid tables, keyed at random), so every
 * worker's apply queues behind one sync per chunk. A larger chunk syncs once for more events, and the pages it
 * dirties are shared by more of them. Measured with `npm run bench:apply` (300,000 events, distinct ids from a
 * million, 2 workers): see bench/README.md. The cost is a longer pause of the worker's requests while a chunk's
 * persons are processed, which is why it is taken only when requests are rare and the backlog is deep.
 */
const CHUNK_EVENTS_CATCH_UP = 8000;
const CATCH_UP_BACKLOG = 2 * CHUNK_EVENTS_CATCH_UP;
/**
 * The time bound of a transaction callback when no request waits (catch-up and full chunks): the catch-up chunk of
 * 8,000 events took up to 0.21 s a callback on a fresh store (`npm run bench:apply`, 300,000 events, distinct ids
 * from a million) and 0.52 s on a store of 3 million, so the bound binds as the store grows, where a larger
 * chunk's fewer commits no longer pay for its longer pauses. With at most 8 callbacks a transaction (write-lane.ts)
 * a transaction's callbacks stay within 2 s.
 */
const CALLBACK_TARGET_S = 0.25;
const SIZED_CHUNK_MIN = 500;

/**
 * Keeping up with a steady load. The short chunks above suit a burst that no apply could keep up with (the
 * acknowledgements come first, the backlog waits on disk), but under a load the apply can follow they made it fall
 * behind for good: 25-event chunks on a store of millions of persons pay two commits and a turn of the shared
 * persons lock for every 25 events, so at half the sustained rate (`QUILL_BENCH_ONLY=sustained,visibility npm run
 * bench`) the backlog grew for the whole run and events took p50 8.4 s / p99 11.8 s to become visible. So once the
 * oldest waiting event is BEHIND_LAG_MS old and the backlog is not an overload (`Lag`), chunks are sized for
 * BEHIND_TARGET_S callbacks whatever the requests, and the apply does not pause: it catches up within a few chunks,
 * and a flag request waits at most one such callback (the front sends it to the other worker when this one has
 * one unanswered: WorkerPool.pick).
 */
const BEHIND_LAG_MS = 250;
const BEHIND_TARGET_S = 0.016;
/**
 * A backlog this deep is an overload (a burst faster than any apply), not a lag to catch up with: the rules above
 * keep the acknowledgements first. It stops being one under a quarter of it, so that a load near the apply's
 * capacity does not flip between the two every chunk. Per shard: a saturating `/batch/` load (~90k events/s a
 * shard on 2 cores) crosses it within a second, a load at half the sustained rate (~5k a shard) never does.
 */
const OVERLOAD_BACKLOG = 50_000;

/**
 * Events per chunk: a few milliseconds' worth while flag or API requests arrive, small while any requests arrive
 * (a chunk blocks them), large when catching up on a deep backlog, some milliseconds' worth while keeping up with a
 * load that fell behind (`behind`: Lag.behind), and never past the callback time bound.
 */
export function chunkLimit(pace: Pace, backlog: number, sizer: ChunkSizer, behind: boolean): number {
  if (catchingUp(pace, backlog)) return sizer.events(CALLBACK_TARGET_S, SIZED_CHUNK_MIN, CHUNK_EVENTS_CATCH_UP);
  if (behind) return sizer.events(BEHIND_TARGET_S, CHUNK_EVENTS_INTERACTIVE, CHUNK_EVENTS);
  if (pace.interactive) {
    return pace.contended ? CHUNK_EVENTS_INTERACTIVE : sizer.events(INTERACTIVE_TARGET_S, CHUNK_EVENTS_INTERACTIVE, CHUNK_EVENTS_INTERACTIVE_MAX);
  }
  if (pace.busy) return CHUNK_EVENTS_BUSY;
  return sizer.events(CALLBACK_TARGET_S, SIZED_CHUNK_MIN, CHUNK_EVENTS);
}

/** Whether the next chunk is a catch-up chunk: a deep backlog waits and requests are rare. */
export function catchingUp(pace: Pace, backlog: number): boolean {
  return !pace.busy && backlog >= CATCH_UP_BACKLOG && pace.quiet;
}

/** Whether a shard's apply fell behind a load it can keep up with, remembering whether its backlog is an overload. */
export class Lag {
  private overloaded = false;

  /** `oldestAgeMs`: how long the oldest waiting event has waited (null when none waits). */
  behind(backlog: number, oldestAgeMs: number | null): boolean {
    if (backlog > OVERLOAD_BACKLOG) this.overloaded = true;
    else if (backlog < OVERLOAD_BACKLOG / 4) this.overloaded = false;
    return !this.overloaded && oldestAgeMs !== null && oldestAgeMs >= BEHIND_LAG_MS;
  }
}
