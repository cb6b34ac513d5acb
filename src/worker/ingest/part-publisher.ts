/**
 * Publishing the parts of durable records in their owners' rings (src/protocol/part-rings.ts), in log order.
 *
 * The order matters for durability, not only for the order of events: an owner records, with each applied chunk,
 * how far into each source's log it has applied (the largest record end of the chunk), and after a crash it skips
 * every replayed part that ends before that position. A part of an earlier record published after a part of a
 * later one of the same source could therefore be applied after it, and if the owner crashed in between, be
 * skipped on replay: an acknowledged event lost. So for each source shard, parts reach every owner in the order of
 * their records in the log, however long one of them has to wait.
 *
 * A record waits before publishing when its owner is over the backlog bound (`backlogHigh` events queued or in its
 * ring) or its ring is full, and every later record of the same source waits behind it. The bound has hysteresis:
 * once over it, publishing resumes when the backlog is back under BACKLOG_RESUME of it. The records are durable
 * already; only their acknowledgements wait.
 */
import type { RingPart } from '../../protocol/part-rings.js';
import type { SharedState } from '../../protocol/shared-state.js';

/** What the owner's backlog must fall under (a fraction of the bound) before a waiting record publishes. */
export const BACKLOG_RESUME = 0.75;
/** How often a waiting record looks again (an apply chunk frees thousands of events; a ring drains in ms). */
const RETRY_MS = 2;

export interface OwnedPart {
  owner: number;
  part: RingPart;
}

export class PartPublisher {
  /** Per source shard: the publication still waiting, which later records of that source queue behind. */
  private readonly waiting = new Map<number, Promise<void>>();

  constructor(private readonly shared: SharedState, private readonly backlogHigh: number) {}

  /**
   * Publishes the parts of one record of `source` (called in log order, once the record is durable). Returns
   * nothing when everything was published at once (the common case, without a single await), else a promise that
   * resolves once it is.
   */
  publish(source: number, parts: readonly OwnedPart[]): Promise<void> | undefined {
    const before = this.waiting.get(source);
    let rest: readonly OwnedPart[] = parts;
    if (!before) {
      rest = this.publishNow(parts);
      if (rest.length === 0) return undefined;
    }
    const remaining = rest;
    const done: Promise<void> = (before ?? Promise.resolve()).catch(() => undefined).then(() => this.publishWaiting(remaining)).finally(() => {
      if (this.waiting.get(source) === done) this.waiting.delete(source);
    });
    this.waiting.set(source, done);
    return done;
  }

  /** Publishes parts in order while their owners admit them; returns those left (from the first refused on). */
  private publishNow(parts: readonly OwnedPart[]): readonly OwnedPart[] {
    for (let i = 0; i < parts.length; i++) {
      const { owner, part } = parts[i]!;
      if (this.shared.behind(owner) > this.backlogHigh || !this.shared.rings.push(owner, part)) return parts.slice(i);
    }
    return [];
  }

  private async publishWaiting(parts: readonly OwnedPart[]): Promise<void> {
    for (const { owner, part } of parts) {
      if (this.shared.behind(owner) > this.backlogHigh) {
        this.shared.countWaiting(owner, 1);
        try {
          while (this.shared.behind(owner) > this.backlogHigh * BACKLOG_RESUME) await sleep(RETRY_MS);
        } finally {
          this.shared.countWaiting(owner, -1);
        }
      }
      // A full ring means that owner is far behind or stopped taking: wait, never drop.
      while (!this.shared.rings.push(owner, part)) await sleep(RETRY_MS);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
