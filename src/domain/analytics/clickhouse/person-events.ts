/**
 * Which exported events count for a person in the analyses on ClickHouse (unique users, stickiness, retention,
 * lifecycle, funnels).
 * The local engine leaves an event ingested without a person (`$process_person_profile: false` from a distinct id
 * that has no person) out of every person count, even if the distinct id gets a person later. ClickHouse gives
 * such an event a person_id of its own (PostHog's personless id), so it must be left out by hand: the export
 * writes it with person_created_at at the epoch (src/stores/clickhouse/rows.ts), a time no person has.
 */

/** A HogQL condition over `events`: the event had a person when it was ingested; the epoch becomes a parameter. */
export function hadPerson(values: Record<string, unknown>): string {
  values.no_person = new Date(0);
  return 'person.created_at > {no_person}';
}
