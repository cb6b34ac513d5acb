/**
 * One queue per shard in shared memory, through which the worker that logged a request hands each owning shard a
 * reference to the record (a part: source shard, record end, payload length, events owned). Many producers (every
 * worker), one consumer (the thread owning the shard).
 *
 * Why shared memory: the acknowledgement of a request waits until every owner has its part queued, which gives the
 * order of a log partitioned by distinct id (src/worker/ingest/shard.ts). As a message to the owning worker, that
 * cost a round trip through the other thread's event loop on every acknowledgement, and the other thread was often
 * busy for milliseconds (parsing a batch, applying a chunk). Publishing into the ring is a few atomic operations,
 * and a part published before an acknowledgement is ahead of every part published after it, whatever thread
 * publishes.
 *
 * Layout per ring: Int32 `[tail, head, events, unused]` (reservation and consumption counters, wrapping: only their
 * difference matters; the events of the parts in the ring, for the backlog bound), then per slot an Int32 `ready` word (the counter value + 1 once the slot's contents are written),
 * three Int32 (source, bytes, events) and one Float64 (the record's end, a position number).
 */
export interface RingPart {
  source: number;
  end: number;
  bytes: number;
  events: number;
}

/** Slots per ring (a power of two). The owner drains its ring every few milliseconds into its own queue. */
export const RING_SLOTS = 8192;
const MASK = RING_SLOTS - 1;
/** Four, not three: the Float64 ends that follow the slots must stay 8-byte aligned. */
const HEADER_INTS = 4;
const TAIL = 0;
const HEAD = 1;
const EVENTS = 2;
const RING_BYTES = HEADER_INTS * 4 + RING_SLOTS * 4 + RING_SLOTS * 12 + RING_SLOTS * 8;

export function ringBytes(rings: number): number {
  return rings * RING_BYTES;
}

class Ring {
  private readonly header: Int32Array;
  private readonly ready: Int32Array;
  private readonly ints: Int32Array;
  private readonly ends: Float64Array;

  constructor(buffer: SharedArrayBuffer, offset: number) {
    this.header = new Int32Array(buffer, offset, HEADER_INTS);
    this.ready = new Int32Array(buffer, offset + HEADER_INTS * 4, RING_SLOTS);
    this.ints = new Int32Array(buffer, offset + HEADER_INTS * 4 + RING_SLOTS * 4, RING_SLOTS * 3);
    this.ends = new Float64Array(buffer, offset + HEADER_INTS * 4 + RING_SLOTS * 16, RING_SLOTS);
  }

  push(part: RingPart): boolean {
    let ticket: number;
    for (;;) {
      ticket = Atomics.load(this.header, TAIL);
      if (((ticket - Atomics.load(this.header, HEAD)) | 0) >= RING_SLOTS) return false;
      if (Atomics.compareExchange(this.header, TAIL, ticket, (ticket + 1) | 0) === ticket) break;
    }
    const slot = ticket & MASK;
    this.ints[slot * 3] = part.source;
    this.ints[slot * 3 + 1] = part.bytes;
    this.ints[slot * 3 + 2] = part.events;
    this.ends[slot] = part.end;
    // Counted before the part can be taken, so the count never goes below what the ring holds.
    Atomics.add(this.header, EVENTS, part.events);
    // The atomic store publishes the plain writes above to a consumer that sees it with Atomics.load.
    Atomics.store(this.ready, slot, (ticket + 1) | 0);
    return true;
  }

  take(max: number): RingPart[] {
    const out: RingPart[] = [];
    let head = Atomics.load(this.header, HEAD);
    while (out.length < max) {
      const slot = head & MASK;
      // A reserved slot not yet written stops the take: its producer is writing it right now.
      if (Atomics.load(this.ready, slot) !== ((head + 1) | 0)) break;
      out.push({ source: this.ints[slot * 3]!, bytes: this.ints[slot * 3 + 1]!, events: this.ints[slot * 3 + 2]!, end: this.ends[slot]! });
      head = (head + 1) | 0;
    }
    if (out.length > 0) {
      Atomics.store(this.header, HEAD, head);
      let events = 0;
      for (const p of out) events += p.events;
      Atomics.sub(this.header, EVENTS, events);
    }
    return out;
  }

  events(): number {
    return Atomics.load(this.header, EVENTS);
  }
}

export class PartRings {
  private readonly rings: Ring[];

  /** `rings` rings laid out in `buffer` from byte `offset` (a multiple of 8). */
  constructor(buffer: SharedArrayBuffer, offset: number, rings: number) {
    this.rings = Array.from({ length: rings }, (_, i) => new Ring(buffer, offset + i * RING_BYTES));
  }

  /** Queues a part for `shard`; false if its ring is full (the owner is behind: try again shortly). */
  push(shard: number, part: RingPart): boolean {
    return this.rings[shard]!.push(part);
  }

  /** Takes up to `max` parts queued for `shard`, in the order they were published. Only its owner calls this. */
  take(shard: number, max: number): RingPart[] {
    return this.rings[shard]!.take(max);
  }

  /** Events of the parts published for `shard` and not taken yet. */
  events(shard: number): number {
    return this.rings[shard]!.events();
  }
}
