/**
 * Which exported events count for a person in the analyses on ClickHouse (unique users, stickiness, retention,
 * lifecycle, funnels, paths).
 * Every event Quill applies now counts for someone: its person, or — sent with `$process_person_profile: false` by a
 * distinct id that has no person — that distinct id's personless actor, which the export writes as PostHog does
 * (person_id the distinct id's deterministic uuid, person_created_at 1970-01-01 00:00:05; src/domain/ingest/
 * personless.ts), so ClickHouse counts it as the local engine does. Events an older Quill applied without any actor
 * (person id 0 in their block, never counted by the local engine) were exported with person_created_at at the epoch
 * itself (src/stores/clickhouse/rows.ts), a time no person or personless actor has: those are left out here.
 */

/** A HogQL condition over `events`: the event counts for an actor; the epoch becomes a parameter. */
export function hadActor(values: Record<string, unknown>): string {
  values.no_person = new Date(0);
  return 'person.created_at > {no_person}';
}
