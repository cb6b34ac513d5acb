/**
 * A worker's cache of persons for flag evaluation, by (project, distinct id). Reading a person from LMDB and
 * decoding its properties was the largest single cost of a `/flags/` request with a few flags (about a sixth of a
 * worker's time, measured with --cpu-prof); the same persons ask for flags again and again.
 *
 * Staleness: every committed write of a person row bumps that person's counter in shared memory
 * (PersonStore `onChanged` → SharedState.personsChanged), whichever worker wrote it. An entry remembers the counter
 * it was read under and is used only while the counter is unchanged. A merge writes both persons, so an entry for
 * a distinct id that moved to another person is dropped too. On a miss the counter is read before a fresh LMDB
 * snapshot is taken, so an entry can be older than its counter says only never: at worst it is re-read once more.
 * Only reads outside write transactions use it (the apply loop reads inside its transaction).
 */
import type { SharedState } from '../protocol/shared-state.js';
import type { PersonRow, PersonStore } from '../stores/persons/person-store.js';

interface Entry {
  row: PersonRow;
  version: number;
}

const MAX_ENTRIES = 50_000;

export class PersonCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly store: PersonStore, private readonly shared: SharedState) {}

  /** The person a distinct id belongs to now, or undefined. The row is shared: do not modify it. */
  byDistinctId(team: number, distinctId: string): PersonRow | undefined {
    const key = `${team}\u0000${distinctId}`;
    const hit = this.entries.get(key);
    if (hit !== undefined && this.shared.personVersion(team, hit.row.id) === hit.version) return hit.row;

    const id = this.store.personIdOf(team, distinctId);
    if (id === undefined) {
      if (hit !== undefined) this.entries.delete(key);
      return undefined;
    }
    // Counter first, then a snapshot at least as new as the write that set it.
    const version = this.shared.personVersion(team, id);
    this.store.env.resetReadTxn();
    const row = this.store.personByDistinctId(team, distinctId);
    if (row === undefined || row.id !== id) {
      this.entries.delete(key);
      return row;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { row, version });
    return row;
  }
}
