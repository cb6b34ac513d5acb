/**
 * The person of each event of one export batch, as its rows carry it: a visitor's events in a batch share one read
 * of the persons store (and one JSON of its properties, made only for events whose own snapshot was not kept). Made
 * per batch, on a fresh read of the store.
 */
import { chTime, eventPerson, type EventActor, type EventPerson } from '../../stores/clickhouse/rows.js';
import { PERSONLESS_SNAPSHOT, type KeptPerson } from '../../stores/persons/event-snapshots.js';
import type { PersonStore } from '../../stores/persons/person-store.js';

/**
 * Who a logged event counts for in ClickHouse, as the apply stored it: an event it applied without a person (its
 * snapshot says so) goes out as PostHog writes one, whatever person its distinct id has by now — ClickHouse's
 * person_id of the event then follows that person through person_distinct_id2, as the local engine's does through
 * the merge overrides, and its person_created_at stays the one the local engine stored. Without a snapshot (applied
 * before the export was on), the person its distinct id has now, or none: personless when it came without a
 * profile. `personless`: the event came with `$process_person_profile: false`.
 *
 * An event whose apply kept its person (`kept`) goes out with that person, as its column block has it: the local
 * engine follows merges from there through its overrides, and ClickHouse through person_distinct_id2 (or
 * person_distinct_id_overrides, which holds every distinct id whose person is not the one its own uuid names), so
 * no person is read here for it.
 */
export function actorOf(people: BatchPersons, team: number, distinctId: string, personless: boolean, snapshot: string | undefined, kept?: KeptPerson): EventActor {
  if (snapshot === PERSONLESS_SNAPSHOT) return 'personless';
  if (kept !== undefined && snapshot !== undefined) return { uuid: kept.uuid, createdAt: chTime(kept.createdAt), propertiesJson: snapshot };
  return people.of(team, distinctId) ?? (snapshot === undefined && personless ? 'personless' : 'none');
}

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
