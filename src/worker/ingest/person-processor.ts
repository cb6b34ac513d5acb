/**
 * Person processing for ingested events (ingestion-and-api.md §2): create on first sight, `$set_once` → `$set`
 * → `$unset` in ingestion order, `$identify` / `$create_alias` / `$merge_dangerously` merges with the illegal-id
 * lists and the is_identified guard, `$groupidentify`, `$groups` → `$group_<n>`, `$process_person_profile`.
 *
 * Events without a profile (`$process_person_profile: false`) whose distinct id has no person count under the
 * distinct id's personless actor (src/domain/ingest/personless.ts): an id from the person sequence held by the
 * distinct id's deterministic uuid, made the first time it is seen (one read per such event, one write per new
 * anonymous distinct id); a person later created for that distinct id takes the actor's id and uuid, and one it
 * joins records the actor as merged into it, so its earlier events count for that person.
 *
 * A processor lives for one write transaction of the persons environment (PersonStore.write): everything it
 * reads and writes is atomic with respect to other workers. Person rows are copied on first change and written
 * once at `flush`, so a chunk with many events of one person writes that person once.
 */
import { randomUUID } from 'node:crypto';
import {
  addGroupIndexes, applyPersonUpdates, isIllegalDistinctId, MAX_ID_LENGTH, mergedPersonPlan, PERSONLESS_CREATED_AT, personProfileMode,
  personUpdatesOf, personUuid, truncateCodePoints, type NormalizedEvent,
} from '../../domain/ingest/index.js';
import { mergeProperties } from '../../domain/merge-properties.js';
import type { GroupTypes } from '../../domain/model.js';
import type { PersonRow, PersonStore } from '../../stores/persons/person-store.js';
import type { HotPersons } from './hot-persons.js';

export interface PersonOutcome {
  personId: number | null;
  personUuid: string;
  /** The person's properties right after this event (an immutable snapshot: rows are copied on write). */
  properties: Readonly<Record<string, unknown>>;
  /** The person's created_at: PostHog's 1970-01-01 00:00:05 for a personless actor; null when the event has no person. */
  createdAt: string | null;
  /** Counted for its distinct id's personless actor (no person: `$process_person_profile: false`). */
  personless?: true;
}

const NO_PROPERTIES: Readonly<Record<string, unknown>> = Object.freeze({});

/** Person ids reserved per counter write: few gaps in the ids, few writes for a chunk of new persons. */
const ID_BLOCK = 64;

export class PersonProcessor {
  private readonly loaded = new Map<number, PersonRow>();
  private readonly dirty = new Set<number>();
  /** Updates rejected for passing MAX_PERSON_PROPERTIES_SIZE (PostHog's `person_properties_size_violation`). */
  sizeViolations = 0;
  /** Person ids reserved for this transaction and not used yet (see `newPersonId`). */
  private idsFrom = 0;
  private idsLeft = 0;
  /** Personless actors of this transaction by distinct id: a visitor's events in one chunk read the store once. */
  private readonly actors = new Map<string, { id: number; uuid: string }>();

  constructor(
    private readonly store: PersonStore,
    private readonly team: number,
    private readonly groupTypes: GroupTypes,
    /** How many new persons this transaction may create (its event count): ids are reserved in one write. */
    private readonly expectedEvents = 1,
    /** The worker's recently seen persons (read only inside the persons write transaction). */
    private readonly hot: HotPersons | null = null,
  ) {}

  private newPersonId(): number {
    if (this.idsLeft === 0) {
      this.idsLeft = Math.min(Math.max(1, this.expectedEvents), ID_BLOCK);
      this.idsFrom = this.store.reservePersonIds(this.idsLeft);
    }
    this.idsLeft--;
    return this.idsFrom++;
  }

  /** Returns the id `newPersonId` has just handed out, unused (the next call hands it out again). */
  private unusedPersonId(): void {
    this.idsLeft++;
    this.idsFrom--;
  }

  /** Returns the event's person, or null when the event must be dropped (§2.9). Mutates `ev.properties`. */
  process(ev: NormalizedEvent): PersonOutcome | null {
    const props = ev.properties;
    addGroupIndexes(props, this.groupTypes);
    const mode = personProfileMode(ev);
    if (mode === 'drop_event') return null;
    if (mode === 'skip_person') {
      delete props.$set;
      delete props.$set_once;
      delete props.$unset;
      const existing = this.byDistinctId(ev.distinct_id);
      if (existing) return { personId: existing.id, personUuid: existing.uuid, properties: existing.properties, createdAt: existing.created_at };
      const actor = this.personlessActor(ev.distinct_id);
      return { personId: actor.id, personUuid: actor.uuid, properties: NO_PROPERTIES, createdAt: PERSONLESS_CREATED_AT, personless: true };
    }
    delete props.$process_person_profile;

    switch (ev.event) {
      case '$identify':
        if (typeof props.$anon_distinct_id === 'string' || typeof props.$anon_distinct_id === 'number') {
          this.merge(mergedId(props.$anon_distinct_id), ev.distinct_id, true, ev.timestamp);
        }
        break;
      case '$create_alias':
        if (props.alias !== undefined && props.alias !== null) this.merge(mergedId(props.alias), ev.distinct_id, true, ev.timestamp);
        break;
      case '$merge_dangerously':
        if (props.alias !== undefined && props.alias !== null) this.merge(mergedId(props.alias), ev.distinct_id, false, ev.timestamp);
        break;
      case '$groupidentify':
        this.identifyGroup(props, ev.timestamp);
        break;
    }

    const person = this.byDistinctId(ev.distinct_id) ?? this.create([ev.distinct_id], ev.timestamp, false);
    const updated = applyPersonUpdates(person.properties, personUpdatesOf(ev));
    if (updated.rejected) this.sizeViolations++;
    const row = updated.changed ? this.change(person) : person;
    if (updated.changed) row.properties = updated.properties;
    return { personId: row.id, personUuid: row.uuid, properties: row.properties, createdAt: row.created_at };
  }

  /** Writes every changed person row. Call once, at the end of the transaction. */
  flush(): void {
    for (const id of this.dirty) {
      const row = this.loaded.get(id)!;
      row.version += 1;
      this.store.savePerson(row);
    }
    // Written rows have moved their counters already: the cache records them as committed by this transaction.
    if (this.hot) for (const id of this.dirty) this.hot.put(this.loaded.get(id)!);
    this.dirty.clear();
  }

  /**
   * The personless actor of a distinct id that has no person: whatever id holds its deterministic uuid (PostHog
   * counts the event for that uuid), or a new one.
   */
  private personlessActor(distinctId: string): { id: number; uuid: string } {
    let actor = this.actors.get(distinctId);
    if (actor === undefined) {
      const uuid = personUuid(this.team, distinctId);
      let id = this.store.idOfUuid(this.team, uuid);
      if (id === undefined) this.store.putPersonless(this.team, distinctId, uuid, (id = this.newPersonId()));
      this.actors.set(distinctId, (actor = { id, uuid }));
    }
    return actor;
  }

  /**
   * The personless actor of a distinct id, if it has one (an id holding its deterministic uuid with no person row;
   * persons made or changed in this transaction are not written yet, so those are looked for in it first).
   */
  private personlessIdOf(distinctId: string): number | undefined {
    const id = this.store.idOfUuid(this.team, personUuid(this.team, distinctId));
    return id !== undefined && !this.loaded.has(id) && !this.store.persons.doesExist([this.team, id]) ? id : undefined;
  }

  private byDistinctId(distinctId: string): PersonRow | undefined {
    const cached = this.hot?.get(this.team, distinctId);
    if (cached !== undefined) {
      const mine = this.loaded.get(cached.id);
      if (mine) return mine;
      this.loaded.set(cached.id, cached);
      return cached;
    }
    const id = this.store.personIdOf(this.team, distinctId);
    if (id === undefined) return undefined;
    let row = this.loaded.get(id);
    if (!row) {
      row = this.store.person(this.team, id);
      if (row) {
        this.loaded.set(id, row);
        this.hot?.put(row);
      }
    }
    return row;
  }

  /** Copy-on-write: the first change of a row in this transaction copies it. */
  private change(row: PersonRow): PersonRow {
    if (!this.dirty.has(row.id)) {
      const copy: PersonRow = { ...row, properties: { ...row.properties }, distinct_ids: [...row.distinct_ids] };
      this.loaded.set(row.id, copy);
      this.dirty.add(row.id);
      return copy;
    }
    return row;
  }

  /**
   * A new person with these distinct ids; its uuid is the first one's deterministic uuid. When that uuid is held by a
   * personless actor (the distinct id's events came without a profile), the person takes the actor's id, so those
   * events are the person's with nothing to resolve; `adopt` names that actor when the caller knows it already.
   */
  private create(distinctIds: string[], timestamp: string, identified: boolean, adopt: number | null = null): PersonRow {
    const deterministic = personUuid(this.team, distinctIds[0]!);
    let id: number;
    let uuid: string;
    if (adopt !== null) {
      id = adopt;
      uuid = deterministic;
    } else {
      id = this.newPersonId();
      const claimed = this.store.claimUuid(this.team, deterministic, id);
      if (claimed !== null) {
        uuid = claimed;
      } else {
        const actor = this.personlessIdOf(distinctIds[0]!);
        if (actor !== undefined) {
          this.unusedPersonId();
          id = actor;
          uuid = deterministic;
        } else {
          // The deterministic uuid can already belong to a live person (e.g. after a split); never share one.
          uuid = this.claimRandomUuid(id);
        }
      }
    }
    const row: PersonRow = {
      id, team: this.team, uuid, properties: {}, created_at: timestamp,
      is_identified: identified, version: -1, distinct_ids: distinctIds,
    };
    for (const d of distinctIds) this.store.distinctIds.put([this.team, d], row.id);
    this.loaded.set(row.id, row);
    this.dirty.add(row.id);
    return row;
  }

  private claimRandomUuid(id: number): string {
    for (;;) {
      const uuid = this.store.claimUuid(this.team, randomUUID(), id);
      if (uuid !== null) return uuid;
    }
  }

  /** Adds a distinct id that has no person; its personless actor, if any, is recorded as merged into the person. */
  private addDistinctId(person: PersonRow, distinctId: string): PersonRow {
    const actor = this.personlessIdOf(distinctId);
    const row = this.change(person);
    row.distinct_ids.push(distinctId);
    this.store.distinctIds.put([this.team, distinctId], row.id);
    if (actor !== undefined) this.store.recordMerge(this.team, actor, row.id);
    return row;
  }

  private markIdentified(person: PersonRow): void {
    if (!person.is_identified) this.change(person).is_identified = true;
  }

  /** §2.3: join `other` (the anonymous id or alias) into `target` (the event's distinct id). */
  private merge(other: string, target: string, guardIdentified: boolean, timestamp: string): void {
    if (other === target || isIllegalDistinctId(other) || isIllegalDistinctId(target)) return;
    const pOther = this.byDistinctId(other);
    const pTarget = this.byDistinctId(target);
    if (!pOther && !pTarget) {
      const plan = mergedPersonPlan(target, other, this.personlessIdOf(target), this.personlessIdOf(other));
      const row = this.create(plan.distinctIds, timestamp, true, plan.adopt);
      if (plan.merged !== null) this.store.recordMerge(this.team, plan.merged, row.id);
    } else if (pOther && !pTarget) {
      this.markIdentified(this.addDistinctId(pOther, target));
    } else if (!pOther && pTarget) {
      this.markIdentified(this.addDistinctId(pTarget, other));
    } else if (pOther!.id === pTarget!.id) {
      this.markIdentified(pTarget!);
    } else if (!(guardIdentified && pOther!.is_identified)) {
      this.mergeInto(pOther!, pTarget!);
    }
  }

  /** The target survives: its properties win, the earliest created_at is kept, every distinct id moves to it. */
  private mergeInto(source: PersonRow, target: PersonRow): void {
    const t = this.change(target);
    t.properties = mergeProperties(source.properties, t.properties);
    if (source.created_at < t.created_at) t.created_at = source.created_at;
    t.is_identified = true;
    for (const d of source.distinct_ids) {
      if (!t.distinct_ids.includes(d)) t.distinct_ids.push(d);
      this.store.distinctIds.put([this.team, d], t.id);
    }
    // Its distinct ids were re-pointed above; removePerson leaves them alone (they no longer point at it).
    this.store.removePerson(source);
    this.hot?.forget(source);
    this.store.recordMerge(this.team, source.id, t.id);
    this.loaded.delete(source.id);
    this.dirty.delete(source.id);
    // Experience-continuity hash keys and static cohort membership follow the surviving person.
    const targetKeys = this.store.hashKeysOf(this.team, t.id);
    for (const [flagKey, hashKey] of Object.entries(this.store.hashKeysOf(this.team, source.id))) {
      if (!(flagKey in targetKeys)) this.store.hashKeyOverrides.put([this.team, t.id, flagKey], hashKey);
      this.store.hashKeyOverrides.remove([this.team, source.id, flagKey]);
    }
    for (const cohortId of this.store.staticCohortIdsOf(this.team, source.id)) {
      this.store.removeFromStaticCohort(this.team, cohortId, source.id);
      this.store.addToStaticCohort(this.team, cohortId, t.id);
    }
  }

  /** §2.8: upsert the group; `$group_set` merges into its properties in ingestion order. */
  private identifyGroup(props: Record<string, unknown>, timestamp: string): void {
    const type = props.$group_type;
    const key = props.$group_key;
    if (typeof type !== 'string' || key === undefined || key === null) return;
    const index = this.groupTypes[type];
    if (index === undefined) return;
    const groupKey = String(key);
    const existing = this.store.group(this.team, index, groupKey);
    const set = props.$group_set && typeof props.$group_set === 'object' ? (props.$group_set as Record<string, unknown>) : {};
    const properties = mergeProperties(existing?.properties ?? {}, set);
    const created_at = existing && existing.created_at < timestamp ? existing.created_at : timestamp;
    this.store.putGroup({ team: this.team, type_index: index, key: groupKey, properties, created_at });
  }
}

/**
 * The distinct id a merge names (`$anon_distinct_id`, `alias`), cut to 200 characters as an event's own distinct id
 * is (src/domain/ingest/normalize-event.ts): it becomes a key of the persons environment like any distinct id.
 */
function mergedId(value: unknown): string {
  return truncateCodePoints(String(value), MAX_ID_LENGTH);
}

/** Group type names an event introduces (from `$groups` and `$groupidentify`). */
export function groupTypeNamesOf(ev: NormalizedEvent): string[] {
  const names: string[] = [];
  const groups = ev.properties.$groups;
  if (groups && typeof groups === 'object' && !Array.isArray(groups)) names.push(...Object.keys(groups));
  if (ev.event === '$groupidentify' && typeof ev.properties.$group_type === 'string') names.push(ev.properties.$group_type);
  return names;
}
