/**
 * How many events an apply chunk may hold so that its write transactions stay within a time bound. The events of
 * a chunk are written in one persons and one events transaction callback each; what a callback costs per event
 * grows with the store (new persons dirty random B-tree pages, and LMDB's dirty-page list costs more per page as
 * it grows) and with the kind of traffic (new visitors against returning ones). Counting events alone let a
 * catch-up chunk on a store of millions of persons run for seconds; the sizer instead learns the cost per event
 * from the chunks applied and caps the next chunk so that its longest callback is expected to take about
 * CALLBACK_TARGET_S. With the write lane (src/stores/write-lane.ts) this bounds a transaction's time as well as
 * its callbacks.
 *
 * 0.25 s: the catch-up chunk of 8,000 events took up to 0.21 s a callback on a fresh store (`npm run bench:apply`,
 * 300,000 events, distinct ids from a million), so the cap binds only as the store grows, where a larger chunk's
 * fewer commits no longer pay for its longer pauses.
 */
export const CALLBACK_TARGET_S = 0.25;

export class ChunkSizer {
  /** Seconds of the longest callback per event, smoothed over recent chunks; 0 until a chunk was measured. */
  private secondsPerEvent = 0;

  constructor(
    private readonly minEvents: number,
    private readonly maxEvents: number,
    private readonly targetS = CALLBACK_TARGET_S,
  ) {}

  /** The cap on the next chunk's events. */
  get cap(): number {
    if (this.secondsPerEvent === 0) return this.maxEvents;
    return Math.max(this.minEvents, Math.min(this.maxEvents, Math.floor(this.targetS / this.secondsPerEvent)));
  }

  /**
   * A chunk of `events` was applied; its longest transaction callback took `longestS`. Chunks under the cap's
   * floor are not counted: their fixed cost (a callback's set-up, a commit's reads) would pass for a cost per event.
   */
  observe(events: number, longestS: number): void {
    if (events < this.minEvents) return;
    const perEvent = longestS / events;
    // Cost follows the store's growth and the traffic: recent chunks count most, one outlier counts half.
    this.secondsPerEvent = this.secondsPerEvent === 0 ? perEvent : (this.secondsPerEvent + perEvent) / 2;
  }
}
