/**
 * A binary min-heap under a caller's order (`before(a, b)`: a comes first). The event store merges blocks with it
 * and reads the open block's rows in order through it (src/stores/events/event-store.ts).
 */
export class BinaryHeap<T> {
  /** Heapifies `items` in place (linear time); the heap owns the array from then on. */
  constructor(private readonly before: (a: T, b: T) => boolean, private readonly items: T[] = []) {
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  get size(): number {
    return this.items.length;
  }

  /** The first item in the order, undefined when empty. */
  head(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!, items[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes the head. */
  pop(): void {
    const last = this.items.pop();
    if (this.items.length === 0 || last === undefined) return;
    this.items[0] = last;
    this.down(0);
  }

  /** Restores the order after the head's own position in it moved later (a cursor that advanced). */
  headMoved(): void {
    this.down(0);
  }

  private down(start: number): void {
    const items = this.items;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < items.length && this.before(items[l]!, items[best]!)) best = l;
      if (r < items.length && this.before(items[r]!, items[best]!)) best = r;
      if (best === i) return;
      this.swap(i, best);
      i = best;
    }
  }

  private swap(a: number, b: number): void {
    const x = this.items[a]!;
    this.items[a] = this.items[b]!;
    this.items[b] = x;
  }
}
