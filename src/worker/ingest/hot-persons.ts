/**
 * The persons an apply loop saw recently, by distinct id, so that the next events of a visitor do not read the
 * distinct-id mapping and decode the person row from LMDB again.
 *
 * Exactness: every write of a person row bumps its slot's apply counter inside the writing transaction
 * (src/protocol/shared-state.ts), and the apply loops read persons only inside write transactions, which LMDB runs
 * one at a time across threads. So when an entry's recorded counter still matches, no transaction has written that
 * person since the entry was made: the cached row is the committed one. A mismatch (or a slot shared with another
 * person) only costs a read. A distinct id that has no person is never cached: its first event creates one.
 *
 * Rows are shared with the person processor, which copies a row before changing it (copy-on-write), so a cached
 * row is never modified in place.
 */
import type { SharedState } from '../../protocol/shared-state.js';
import type { PersonRow } from '../../stores/persons/person-store.js';

interface Entry {
  row: PersonRow;
  version: number;
}

/**
 * Entries kept per worker thread at most; the least recently used go first. Within it, what the entries hold is
 * bounded by bytes (QUILL_HOT_PERSONS_MB): 200,000 persons of ~20 properties measured ~190 MB a worker, the
 * largest part of the sustained case's peak memory (`quill_memory_bytes{component="hot_persons"}`).
 */
const MAX_ENTRIES = 200_000;
const SAMPLE_EVERY = 64;
/** A full cache evicts this fraction of its bound at once (1/32: ~6,000 entries of 200,000). */
const EVICT_BATCH_FRACTION = 32;
/** An entry's key string, map slot and row object headers, in bytes; the row's content is counted from its JSON. */
const ENTRY_BYTES = 160;

export class HotPersons {
  private readonly entries = new Map<string, Entry>();
  hits = 0;
  misses = 0;
  /** Bytes an entry holds, estimated from a sample of the rows put (every SAMPLE_EVERY-th), for /metrics. */
  private bytesPerEntry = 0;
  private puts = 0;
  /** Fraction of the byte budget in use: lowered while the process is over its memory budget (MemoryRelief). */
  private share = 1;

  constructor(
    private readonly shared: SharedState,
    private readonly budgetBytes = Infinity,
  ) {}

  private static key(team: number, distinctId: string): string {
    return `${team}\u0000${distinctId}`;
  }

  /** The person of a distinct id, if cached and still exact; only inside a persons write transaction. */
  get(team: number, distinctId: string): PersonRow | undefined {
    const key = HotPersons.key(team, distinctId);
    const e = this.entries.get(key);
    if (e === undefined) {
      this.misses++;
      return undefined;
    }
    if (this.shared.personApplyVersion(team, e.row.id) !== e.version) {
      this.entries.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return e.row;
  }

  /**
   * Remembers a row as committed now (read inside the write transaction, or written by it: its counter has moved
   * already, so the entry records the moved value). Keyed by every distinct id of the row.
   */
  put(row: PersonRow): void {
    if (this.puts++ % SAMPLE_EVERY === 0) {
      const bytes = ENTRY_BYTES + 2 * JSON.stringify(row).length;
      this.bytesPerEntry = this.bytesPerEntry === 0 ? bytes : 0.9 * this.bytesPerEntry + 0.1 * bytes;
    }
    const version = this.shared.personApplyVersion(row.team, row.id);
    for (const d of row.distinct_ids) {
      const key = HotPersons.key(row.team, d);
      this.entries.delete(key);
      this.entries.set(key, { row, version });
    }
    this.evictToBudget();
  }

  /** Uses `share` (0..1) of the byte budget from now on, evicting the least recently used beyond it at once. */
  setShare(share: number): void {
    this.share = share;
    this.evictToBudget();
  }

  private evictToBudget(): void {
    const budget = this.budgetBytes * this.share;
    const most = this.bytesPerEntry > 0 ? Math.min(MAX_ENTRIES, Math.floor(budget / this.bytesPerEntry)) : this.share === 0 ? 0 : MAX_ENTRIES;
    if (this.entries.size <= most) return;
    // The least recently used go in batches, in one walk of the map. One at a time, each `keys().next()` walked
    // from the map's start over the slots earlier deletions left there (V8 keeps them until the table is rebuilt):
    // on a full cache that walk was ~15 % of the apply's CPU (`perf`, 300,000 events after 2.7 million).
    const keep = most - Math.ceil(most / EVICT_BATCH_FRACTION);
    for (const key of this.entries.keys()) {
      if (this.entries.size <= keep) break;
      this.entries.delete(key);
    }
  }

  /** Forgets the distinct ids of a row that no longer exists (merged away, deleted). */
  forget(row: PersonRow): void {
    for (const d of row.distinct_ids) this.entries.delete(HotPersons.key(row.team, d));
  }

  /** Forgets everything (a persons write that failed: rows it cached as committed were not). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** About what the cache holds in memory (a row kept under several distinct ids counts for each). */
  get approxBytes(): number {
    return Math.round(this.entries.size * this.bytesPerEntry);
  }
}
