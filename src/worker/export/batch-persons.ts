/**
 * The person of each event of one export batch, as its rows carry it: a visitor's events in a batch share one read
 * of the persons store (and one JSON of its properties, made only for events whose own snapshot was not kept). Made
 * per batch, on a fresh read of the store.
 */
import { eventPerson, type EventPerson } from '../../stores/clickhouse/rows.js';
import type { PersonStore } from '../../stores/persons/person-store.js';

export class BatchPersons {
  private readonly byDistinctId = new Map<string, EventPerson | null>();

  constructor(private readonly store: PersonStore) {
    store.env.resetReadTxn();
  }

  /** The person a distinct id belongs to now (null: none, e.g. events captured without a profile). */
  of(team: number, distinctId: string): EventPerson | null {
    const key = `${team}:${distinctId}`;
    let person = this.byDistinctId.get(key);
    if (person === undefined) {
      const row = this.store.personByDistinctId(team, distinctId);
      person = row ? eventPerson(row) : null;
      this.byDistinctId.set(key, person);
    }
    return person;
  }
}
