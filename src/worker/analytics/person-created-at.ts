/**
 * Persons' `created_at` read from their rows, kept for the next query. Lifecycle needs it for every person
 * something was merged into (a merge keeps the earlier `created_at` of the two, which the person's own events may
 * not show); reading and decoding those rows on every query took ~10 µs each, 150 ms of a 350 ms lifecycle over
 * 2M events with 15,600 merge targets.
 *
 * Exactness, as in PersonCache (src/worker/person-cache.ts): every committed write or removal of a person row bumps
 * its slot's counter in shared memory, whichever worker wrote it. An entry is used only while the counter it was
 * read under is unchanged, and counters are read before the fresh snapshot the rows come from, so an entry is at
 * worst re-read once more, never stale.
 */
import type { SharedState } from '../../protocol/shared-state.js';
import type { PersonStore } from '../../stores/persons/person-store.js';

interface Entry {
  /** Milliseconds since the epoch; null when the person has no row (deleted). */
  createdAt: number | null;
  version: number;
}

/** Entries kept per worker thread, all projects together; past it the cache starts over. */
const MAX_ENTRIES = 1_000_000;

export class PersonCreatedAt {
  private readonly byTeam = new Map<number, Map<number, Entry>>();
  private size = 0;

  constructor(private readonly store: PersonStore, private readonly shared: SharedState) {}

  /** The `created_at` of each person of `ids`, in their order (null for one without a row), as committed now. */
  of(team: number, ids: readonly number[]): (number | null)[] {
    let entries = this.byTeam.get(team);
    if (entries === undefined) this.byTeam.set(team, (entries = new Map()));
    const out = new Array<number | null>(ids.length);
    const missing: number[] = [];
    const versions: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const version = this.shared.personVersion(team, ids[i]!);
      const hit = entries.get(ids[i]!);
      if (hit !== undefined && hit.version === version) {
        out[i] = hit.createdAt;
      } else {
        missing.push(i);
        versions.push(version);
      }
    }
    if (missing.length === 0) return out;
    if (this.size + missing.length > MAX_ENTRIES) {
      this.byTeam.clear();
      this.byTeam.set(team, (entries = new Map()));
      this.size = 0;
    }
    // Counters first (above), then a snapshot at least as new as the writes that set them.
    this.store.env.resetReadTxn();
    missing.forEach((i, k) => {
      const id = ids[i]!;
      const row = this.store.person(team, id);
      const createdAt = row ? Date.parse(row.created_at) : null;
      if (!entries.has(id)) this.size++;
      entries.set(id, { createdAt, version: versions[k]! });
      out[i] = createdAt;
    });
    return out;
  }
}
