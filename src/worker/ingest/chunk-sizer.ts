/**
 * How many events an apply chunk may hold so that its transaction callbacks take about a given time. The events
 * of a chunk are written in one persons and one events transaction callback each, and each callback holds the
 * worker's thread for its whole length; what it costs per event grows with the store (new persons dirty random
 * B-tree pages, and LMDB's dirty-page list costs more per page as it grows) and with the kind of traffic (new
 * visitors against returning ones). Counting events alone let a catch-up chunk on a store of millions of persons
 * run for seconds, and held chunks small where they were cheap; the sizer instead learns the cost per event from
 * the chunks applied and sizes the next chunk for a time target, within the bounds its caller sets (shard.ts).
 * With the write lane (src/stores/write-lane.ts) this bounds a transaction's time as well as its callbacks.
 */
export class ChunkSizer {
  /** Seconds of the longest callback per event, smoothed over recent chunks; 0 until a chunk was measured. */
  private secondsPerEvent = 0;

  /** Events that fit in `targetS`, between `minEvents` and `maxEvents` (`maxEvents` before any chunk was measured). */
  events(targetS: number, minEvents: number, maxEvents: number): number {
    if (this.secondsPerEvent === 0) return maxEvents;
    return Math.max(minEvents, Math.min(maxEvents, Math.floor(targetS / this.secondsPerEvent)));
  }

  /**
   * A chunk of `events` was applied; its longest transaction callback took `longestS`. Chunks under MIN_MEASURED
   * events are not counted: their fixed cost (a callback's set-up) would pass for a cost per event.
   */
  observe(events: number, longestS: number): void {
    if (events < MIN_MEASURED) return;
    const perEvent = longestS / events;
    // Cost follows the store's growth and the traffic: recent chunks count most, one outlier counts half.
    this.secondsPerEvent = this.secondsPerEvent === 0 ? perEvent : (this.secondsPerEvent + perEvent) / 2;
  }
}

const MIN_MEASURED = 20;
