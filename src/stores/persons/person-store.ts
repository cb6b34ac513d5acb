/**
 * The persons environment, shared by every worker: persons, the distinct-id → person mapping, merge overrides,
 * groups, experience-continuity hash keys and static cohort membership.
 *
 * Why one environment for all shards: `$identify` and `$create_alias` join distinct ids that hash to different
 * shards. Keeping the mapping in one LMDB environment lets a worker do a whole merge in one write transaction;
 * LMDB's write lock serialises such transactions across threads, so no event sees half a merge and no property
 * update is lost to a race (design.md §1).
 */
import { join } from 'node:path';
import { personUuid } from '../../domain/ingest/uuid.js';
import { PERSONS_ENV } from '../data-dir/paths.js';
import { all, atomically, openIndex, openJsonTable, openTable, openEnv, type Env, type Table } from '../lmdb-env.js';
import { PersonChangeLog, type MirroredDeletion, type PersonChanges } from './change-log.js';
import { EventSnapshots } from './event-snapshots.js';

export interface PersonRow {
  id: number;
  team: number;
  uuid: string;
  properties: Record<string, unknown>;
  created_at: string;
  is_identified: boolean;
  version: number;
  /** In insertion order; the first is the one the person was created with. */
  distinct_ids: string[];
}

export interface GroupRow {
  team: number;
  type_index: number;
  key: string;
  properties: Record<string, unknown>;
  created_at: string;
}

const MAX = Number.MAX_SAFE_INTEGER;

export class PersonStore {
  readonly env: Env;
  readonly persons: Table<PersonRow, [number, number]>;
  readonly distinctIds: Table<number, [number, string]>;
  /**
   * [team, uuid] → id: each live person's uuid, and the deterministic uuid of every distinct id whose events came
   * without a person profile (`$process_person_profile: false`) → the id those events count under (a personless
   * actor: an id from the person sequence with no person row; see `personlessIdOf`).
   */
  readonly uuids: Table<number, [number, string]>;
  /** [team, id of a personless actor] → its distinct id (the actor's uuid is that distinct id's deterministic one). */
  readonly personless: Table<string, [number, number]>;
  /**
   * Person ids merged away -> the person they were merged into (events keep their ingestion-time person id). Key
   * [team, 0] (no person has id 0) counts the project's merges: analyses cache the resolved overrides by it.
   */
  readonly merged: Table<number, [number, number]>;
  readonly groups: Table<GroupRow, [number, number, string]>;
  readonly hashKeyOverrides: Table<string, [number, number, string]>;
  /** [team, person id, cohort id] for static cohorts; and the reverse for listing a cohort's people. */
  readonly staticCohortsByPerson: Table<null, [number, number, number]>;
  readonly staticCohortPeople: Table<null, [number, number, number]>;
  private readonly sequences: Table<number, string>;
  /** What each write transaction changed, for the ClickHouse export (written once `exportChanges()` turned it on). */
  readonly changes: PersonChangeLog;
  /** The person properties each event was applied with, until the ClickHouse export sent it (written while it is on). */
  readonly eventSnapshots: EventSnapshots;
  private logChanges = false;

  constructor(
    dataDir: string,
    private readonly onChanged?: (teamsAndIds: number[]) => void,
    /** Told inside the transaction, at once, of every person row written (the apply loops' cache). */
    private readonly onWriting?: (team: number, id: number) => void,
  ) {
    this.env = openEnv(join(dataDir, PERSONS_ENV));
    this.persons = openJsonTable(this.env, 'persons_json');
    this.distinctIds = openTable(this.env, 'distinct_ids');
    this.uuids = openTable(this.env, 'person_uuids');
    this.personless = openTable(this.env, 'personless_distinct_ids');
    this.merged = openTable(this.env, 'merged_persons');
    this.groups = openJsonTable(this.env, 'groups_json');
    this.hashKeyOverrides = openTable(this.env, 'hash_key_overrides');
    this.staticCohortsByPerson = openIndex(this.env, 'static_cohorts_by_person');
    this.staticCohortPeople = openIndex(this.env, 'static_cohort_people');
    this.sequences = openTable(this.env, 'sequences');
    this.changes = new PersonChangeLog(this.env);
    this.eventSnapshots = new EventSnapshots(this.env);
  }

  /** From now on every write transaction also records what it changed (`changeLog`), for the ClickHouse export. */
  exportChanges(): void {
    this.logChanges = true;
  }

  /** Up to `limit` persons after `after` ([team, id]; null: from the first), in key order. */
  personsAfter(after: (number | string)[] | null, limit: number): PersonRow[] {
    const start = after ? [after[0] as number, (after[1] as number) + 1] : [0, 0];
    return all(this.persons.getRange({ start: start as [number, number], limit }).map((e) => e.value));
  }

  /** Up to `limit` groups after `after` ([team, type index, key]; null: from the first), in key order. */
  groupsAfter(after: (number | string)[] | null, limit: number): GroupRow[] {
    const rows = all(this.groups.getRange({ ...(after ? { start: after as [number, number, string] } : {}), limit: limit + 1 }).map((e) => e.value));
    return after ? rows.filter((g) => !(g.team === after[0] && g.type_index === after[1] && g.key === after[2])).slice(0, limit) : rows.slice(0, limit);
  }

  /** Person rows written in the transaction callback now running (see `write`). */
  private touched: number[] | null = null;
  private removed: PersonChanges['r'] = [];
  private groupsWritten: PersonChanges['g'] = [];
  private deletions: MirroredDeletion[] = [];

  /**
   * Atomic read-modify-write across all persons tables (see the class comment). Once it has committed, the ids
   * of the person rows it wrote or removed (teams and ids, flattened) go to `onChanged`: readers that cache
   * persons (the flag evaluation path) drop what they hold of them.
   */
  write<T>(fn: () => T): Promise<T> {
    let touched: number[] = [];
    // All or nothing (see `atomically`): an event that throws halfway through a chunk leaves no half-made person.
    return atomically(this.env, () => {
      this.touched = touched = [];
      this.removed = [];
      this.groupsWritten = [];
      this.deletions = [];
      try {
        const result = fn();
        if (this.logChanges && (touched.length > 0 || this.groupsWritten.length > 0 || this.deletions.length > 0)) {
          this.changes.record({ p: touched, r: this.removed, g: this.groupsWritten, ...(this.deletions.length > 0 ? { m: this.deletions } : {}) });
        }
        return result;
      } finally {
        this.touched = null;
      }
    }).then((result) => {
      if (touched.length > 0) this.onChanged?.(touched);
      return result;
    });
  }

  /** Only inside `write`: stores a person row (its distinct-id and uuid rows are not touched). */
  savePerson(row: PersonRow): void {
    this.persons.put([row.team, row.id], row);
    this.changed(row.team, row.id);
  }

  private changed(team: number, id: number): void {
    this.touched?.push(team, id);
    this.onWriting?.(team, id);
  }

  /** Only inside `write`. Person ids are global integers, like PostHog's primary keys. */
  nextPersonId(): number {
    return this.reservePersonIds(1);
  }

  /**
   * Only inside `write`: reserves `count` consecutive person ids and returns the first. The apply loop reserves
   * a chunk's worth at once (one counter write per chunk instead of one per new person); ids it does not use are
   * simply skipped, as database sequences do.
   */
  reservePersonIds(count: number): number {
    const first = (this.sequences.get('person') ?? 0) + 1;
    this.sequences.put('person', first + count - 1);
    return first;
  }

  /** The highest person id handed out so far (person bitmaps of the analyses are sized by it). */
  maxPersonId(): number {
    return this.sequences.get('person') ?? 0;
  }

  /** Every merge override of a project: merged-away person id → the id it was merged into (one hop). */
  *mergesOf(team: number): Iterable<[number, number]> {
    for (const { key, value } of this.merged.getRange({ start: [team, 1], end: [team, MAX] })) yield [key[1], value];
  }

  /** Records a merge override; call inside a persons write transaction (the merge count is read and written in it). */
  recordMerge(team: number, from: number, into: number): void {
    this.merged.put([team, from], into);
    this.merged.put([team, 0], this.mergeCount(team) + 1);
  }

  /** How many merges the project has had (0 for directories written before the count existed: it counts from there). */
  mergeCount(team: number): number {
    return this.merged.get([team, 0]) ?? 0;
  }

  personIdOf(team: number, distinctId: string): number | undefined {
    return this.distinctIds.get([team, distinctId]);
  }

  person(team: number, id: number): PersonRow | undefined {
    return this.persons.get([team, id]);
  }

  personByDistinctId(team: number, distinctId: string): PersonRow | undefined {
    const id = this.distinctIds.get([team, distinctId]);
    return id === undefined ? undefined : this.persons.get([team, id]);
  }

  personByUuid(team: number, uuid: string): PersonRow | undefined {
    const id = this.uuids.get([team, uuid]);
    return id === undefined ? undefined : this.persons.get([team, id]);
  }

  /** The id a uuid names: a live person's, or a personless actor's (PostHog's events name both by uuid). */
  idOfUuid(team: number, uuid: string): number | undefined {
    return this.uuids.get([team, uuid]);
  }

  /**
   * The personless actor of a distinct id: the id holding its deterministic uuid with no person row (undefined: its
   * events have always had a person, or it never sent any). PostHog writes such events with the person id
   * `uuidFromDistinctId(team, distinct id)` and no person; Quill gives that uuid an id from the person sequence the
   * first time it sees it (`putPersonless`), so analyses count it like any person id.
   */
  personlessIdOf(team: number, distinctId: string): number | undefined {
    const id = this.uuids.get([team, personUuid(team, distinctId)]);
    return id !== undefined && !this.persons.doesExist([team, id]) ? id : undefined;
  }

  /**
   * Only inside `write`: `id` (fresh from the person sequence) becomes the personless actor of `distinctId`, whose
   * deterministic uuid is `uuid` and not held yet. Two puts: the uuid row (what the apply reads) and the id's row
   * (what turns the id back into its uuid when a query shows it), appended since ids only grow.
   */
  putPersonless(team: number, distinctId: string, uuid: string, id: number): void {
    this.uuids.put([team, uuid], id);
    this.personless.put([team, id], distinctId);
  }

  /** The uuid of a personless actor (undefined: `id` is not one, or it has a person row now: ask `person`). */
  personlessUuid(team: number, id: number): string | undefined {
    const distinctId = this.personless.get([team, id]);
    return distinctId === undefined ? undefined : personUuid(team, distinctId);
  }

  /** Follows merge overrides to the person an old person id now lives in (or undefined if it was deleted). */
  resolve(team: number, id: number): PersonRow | undefined {
    let current = id;
    for (let hops = 0; hops < 32; hops++) {
      const row = this.persons.get([team, current]);
      if (row) return row;
      const next = this.merged.get([team, current]);
      if (next === undefined) return undefined;
      current = next;
    }
    return undefined;
  }

  /** All persons of a project, newest id first. */
  /** Up to `limit` persons of the project with ids below `beforeId`, newest first (a page of `personsOf`). */
  personsBefore(team: number, beforeId: number, limit: number): PersonRow[] {
    if (beforeId <= 0) return [];
    return all(this.persons.getRange({ start: [team, beforeId - 1], end: [team, 0], reverse: true, limit }).map((e) => e.value));
  }

  countOf(team: number): number {
    return this.persons.getKeysCount({ start: [team, 0], end: [team, MAX] });
  }

  /** Puts a person and its uuid and distinct-id rows. Only inside `write`. */
  putPerson(row: PersonRow): void {
    this.savePerson(row);
    this.uuids.put([row.team, row.uuid], row.id);
    for (const d of row.distinct_ids) this.distinctIds.put([row.team, d], row.id);
  }

  /**
   * Only inside `write`: makes `uuid` the uuid of person `id` unless a live person holds it already (then null). One
   * B-tree descent where a lookup and a put took two: with the uuid derived from a distinct id at random, each was a
   * cache miss on a store of millions of persons.
   */
  claimUuid(team: number, uuid: string, id: number): string | null {
    // lmdb-js (3.5.6) types putSync as void; inside a write transaction it returns whether the put took place.
    const put = this.uuids.putSync([team, uuid], id, { noOverwrite: true }) as unknown as boolean;
    return put ? uuid : null;
  }

  /** The distinct ids of a person row that still point at it (a merge or split re-points some before the row changes). */
  distinctIdsOf(row: PersonRow): string[] {
    return row.distinct_ids.filter((d) => this.distinctIds.get([row.team, d]) === row.id);
  }

  /** Removes a person with its uuid and distinct-id rows (not its hash keys or cohort rows). Only inside `write`. */
  removePerson(row: PersonRow): void {
    this.persons.remove([row.team, row.id]);
    this.changed(row.team, row.id);
    // Distinct ids still pointing here go with it (a merge re-points them first, and their new person is written).
    const gone = this.distinctIdsOf(row);
    if (this.logChanges) this.removed.push({ team: row.team, uuid: row.uuid, d: gone });
    this.uuids.remove([row.team, row.uuid]);
    for (const d of gone) this.distinctIds.remove([row.team, d]);
  }

  /**
   * Deletes a person for good (DELETE /persons/:id/): its row, uuid and distinct-id rows, its experience-continuity
   * hash keys and its static cohort memberships. Only inside `write`.
   */
  purgePerson(row: PersonRow): void {
    // Personless actors merged into it go too: its distinct ids' events are deleted with it, and one coming back
    // without a profile starts a new actor, as it would in PostHog (where its deterministic uuid names no person).
    for (const d of this.distinctIdsOf(row)) {
      const ghost = this.personlessIdOf(row.team, d);
      if (ghost !== undefined) this.uuids.remove([row.team, personUuid(row.team, d)]);
    }
    this.removePerson(row);
    for (const flagKey of Object.keys(this.hashKeysOf(row.team, row.id))) this.hashKeyOverrides.remove([row.team, row.id, flagKey]);
    for (const cohortId of this.staticCohortIdsOf(row.team, row.id)) this.removeFromStaticCohort(row.team, cohortId, row.id);
  }

  /** With the export on, records a deletion of events for ClickHouse (nothing otherwise). Only inside `write`. */
  mirrorDeletion(deletion: MirroredDeletion): void {
    if (this.logChanges) this.deletions.push(deletion);
  }

  /** Whether person changes are recorded for the ClickHouse export. */
  get exporting(): boolean {
    return this.logChanges;
  }

  /** Stores a group row. Only inside `write`. */
  putGroup(row: GroupRow): void {
    this.groups.put([row.team, row.type_index, row.key], row);
    if (this.logChanges) this.groupsWritten.push([row.team, row.type_index, row.key]);
  }

  group(team: number, typeIndex: number, key: string): GroupRow | undefined {
    return this.groups.get([team, typeIndex, key]);
  }

  groupsOf(team: number, typeIndex: number): GroupRow[] {
    return all(this.groups.getRange({ start: [team, typeIndex, ''], end: [team, typeIndex + 1, ''] }).map((e) => e.value));
  }

  /** Hash keys stored for a person, flag key -> hash key. */
  hashKeysOf(team: number, personId: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const { key, value } of this.hashKeyOverrides.getRange({ start: [team, personId, ''], end: [team, personId + 1, ''] })) {
      out[key[2]] = value;
    }
    return out;
  }

  staticCohortIdsOf(team: number, personId: number): Set<number> {
    const out = new Set<number>();
    for (const key of this.staticCohortsByPerson.getKeys({ start: [team, personId, 0], end: [team, personId + 1, 0] })) out.add(key[2]);
    return out;
  }

  staticCohortMembers(team: number, cohortId: number): number[] {
    return all(this.staticCohortPeople.getKeys({ start: [team, cohortId, 0], end: [team, cohortId + 1, 0] })).map((k) => k[2]);
  }

  addToStaticCohort(team: number, cohortId: number, personId: number): void {
    this.staticCohortsByPerson.put([team, personId, cohortId], null);
    this.staticCohortPeople.put([team, cohortId, personId], null);
  }

  removeFromStaticCohort(team: number, cohortId: number, personId: number): void {
    this.staticCohortsByPerson.remove([team, personId, cohortId]);
    this.staticCohortPeople.remove([team, cohortId, personId]);
  }

  close(): Promise<void> {
    return this.env.close();
  }
}
