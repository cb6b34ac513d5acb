/**
 * Events without a person profile (`$process_person_profile: false`, posthog-js's default `person_profiles:
 * 'identified_only'` before a visitor identifies), as PostHog counts them (its handbook, "Person processing":
 * personless mode; plugin-server `processPersonlessStep`, `PersonMergeService.mergeDistinctIds`).
 *
 * PostHog writes such an event, when its distinct id has no person, with the person id
 * `uuidFromDistinctId(team, distinct id)` (Quill's `personUuid`), no person properties and a person created_at of
 * 1970-01-01 00:00:05 (a marker no real person has), and creates no person. Every query counts that uuid as an actor:
 * the same anonymous visitor is one actor across events and days. When the distinct id later gets a person, the
 * person takes that uuid if it can (so nothing moves); when it joins another person, an override sends its earlier
 * events to that person.
 *
 * Quill counts persons by integer ids, so such a distinct id gets an id from the person sequence the first time it
 * is seen (a personless actor), held by its deterministic uuid (src/stores/persons/person-store.ts); the rules of
 * which person takes which id when persons are created are here.
 */

/** The person created_at PostHog gives an event without a person (`createFakePerson`): 1970-01-01 00:00:05 UTC. */
export const PERSONLESS_CREATED_AT = '1970-01-01T00:00:05.000Z';
export const PERSONLESS_CREATED_AT_MS = 5_000;

/** How a person created by a merge of two distinct ids that have no person comes to be (`$identify`, alias). */
export interface MergedPersonPlan {
  /** The person's distinct ids in order: the first names its uuid and, when it had one, gives its actor id. */
  distinctIds: [string, string];
  /** The personless actor whose id the person takes (null: a fresh id). */
  adopt: number | null;
  /** A second personless actor, recorded as merged into the person: its earlier events count for the person. */
  merged: number | null;
}

/**
 * PostHog's choice (`mergeDistinctIds`, neither distinct id has a person): the person is created with the merge's
 * target (the event's distinct id) first, unless only the other one (the anonymous id) was used without a profile:
 * then that one comes first, so the person's uuid is the one its anonymous events already carry and no override is
 * needed. When both were, the target's stays and the other's events get an override.
 */
export function mergedPersonPlan(target: string, other: string, targetActor: number | undefined, otherActor: number | undefined): MergedPersonPlan {
  if (targetActor === undefined && otherActor !== undefined) return { distinctIds: [other, target], adopt: otherActor, merged: null };
  return { distinctIds: [target, other], adopt: targetActor ?? null, merged: targetActor !== undefined && otherActor !== undefined ? otherActor : null };
}
