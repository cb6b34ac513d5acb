/**
 * The `limit` smallest of the items added, by `compare`, in order, holding at most twice that many at a time (a
 * list ordered by something no index holds reads every row, but keeps only a page's worth).
 */
export class SmallestK<T> {
  private items: T[] = [];

  constructor(private readonly limit: number, private readonly compare: (a: T, b: T) => number) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length >= 2 * this.limit + 64) this.trim();
  }

  result(): T[] {
    this.trim();
    return this.items;
  }

  private trim(): void {
    this.items.sort(this.compare);
    if (this.items.length > this.limit) this.items.length = this.limit;
  }
}
