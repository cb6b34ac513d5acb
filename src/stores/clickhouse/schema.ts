/**
 * PostHog's ClickHouse tables, as Quill creates them for its export (design.md §4b): `events`, `person`,
 * `person_distinct_id2`, `person_distinct_id_overrides` and `groups`, with PostHog's columns, engines, partitioning and sort keys, so that queries
 * written for PostHog's schema run unchanged. Pure: statements only; src/stores/clickhouse/sink.ts runs them.
 *
 * Single node: the tables themselves. On a cluster (`QUILL_CLICKHOUSE_CLUSTER`): `sharded_events` replicated per
 * shard with `events` as a Distributed table over it (sharded by `sipHash64(distinct_id)`, as PostHog does), and
 * the person tables replicated to every node (`noshard` in the keeper path). Every table keeps a deduplication
 * window, since the exporter's retries of a batch carry the same `insert_deduplication_token` (exactly once in effect).
 *
 * `$group_0…4`, `$session_id` and `$window_id` are materialized from `properties`, as in PostHog's schema.
 */

/** Raised whenever a statement below changes; `quill_schema_version` records what a database has. */
export const SCHEMA_VERSION = 2;

/** Insert blocks remembered per table for deduplication (PostHog's replicated tables keep their default window). */
const DEDUPLICATION_WINDOW = 10_000;

export interface SchemaTarget {
  database: string;
  cluster: string | null;
}

const GROUPS = [0, 1, 2, 3, 4];

const EVENT_COLUMNS = `
    uuid UUID,
    event String,
    properties String CODEC(ZSTD(3)),
    timestamp DateTime64(6, 'UTC'),
    team_id Int64,
    distinct_id String,
    elements_chain String,
    created_at DateTime64(6, 'UTC'),
    person_id UUID,
    person_created_at DateTime64(3),
    person_properties String CODEC(ZSTD(3)),
${GROUPS.map((g) => `    group${g}_properties String,\n    group${g}_created_at DateTime64(3),`).join('\n')}
    person_mode Enum8('full' = 0, 'propertyless' = 1, 'force_upgrade' = 2),
${GROUPS.map((g) => `    \`$group_${g}\` String MATERIALIZED replaceRegexpAll(JSONExtractRaw(properties, '$group_${g}'), '^"|"$', ''),`).join('\n')}
    \`$window_id\` String MATERIALIZED replaceRegexpAll(JSONExtractRaw(properties, '$window_id'), '^"|"$', ''),
    \`$session_id\` String MATERIALIZED replaceRegexpAll(JSONExtractRaw(properties, '$session_id'), '^"|"$', ''),
    inserted_at Nullable(DateTime64(6, 'UTC')) DEFAULT NULL,
    _timestamp DateTime,
    _offset UInt64`;

const PERSON_COLUMNS = `
    id UUID,
    created_at DateTime64(3),
    team_id Int64,
    properties String,
    is_identified Int8,
    is_deleted Int8 DEFAULT 0,
    version UInt64,
    _timestamp DateTime,
    _offset UInt64`;

const DISTINCT_ID_COLUMNS = `
    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted Int8,
    version Int64 DEFAULT 1,
    _timestamp DateTime,
    _offset UInt64,
    _partition UInt64`;

const GROUP_COLUMNS = `
    group_type_index UInt8,
    group_key String,
    created_at DateTime64(3),
    team_id Int64,
    group_properties String,
    _timestamp DateTime,
    _offset UInt64`;

interface TableSpec {
  name: string;
  columns: string;
  /** Engine name without its Replicated prefix, and its arguments. */
  engine: string;
  engineArgs: string;
  tail: string;
  /** Sharded across the cluster's nodes (events) rather than replicated to every node (persons, groups). */
  sharded: boolean;
}

const TABLES: TableSpec[] = [
  {
    name: 'events', columns: EVENT_COLUMNS, engine: 'ReplacingMergeTree', engineArgs: '_timestamp', sharded: true,
    tail: `PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))
SAMPLE BY cityHash64(distinct_id)`,
  },
  { name: 'person', columns: PERSON_COLUMNS, engine: 'ReplacingMergeTree', engineArgs: 'version', sharded: false, tail: 'ORDER BY (team_id, id)' },
  {
    name: 'person_distinct_id2', columns: DISTINCT_ID_COLUMNS, engine: 'ReplacingMergeTree', engineArgs: 'version', sharded: false,
    tail: 'ORDER BY (team_id, distinct_id)',
  },
  // PostHog's small table of the distinct ids whose events may carry another person id than their person's (its
  // queries join it instead of person_distinct_id2; version 2 of this schema).
  {
    name: 'person_distinct_id_overrides', columns: DISTINCT_ID_COLUMNS, engine: 'ReplacingMergeTree', engineArgs: 'version', sharded: false,
    tail: 'ORDER BY (team_id, distinct_id)',
  },
  { name: 'groups', columns: GROUP_COLUMNS, engine: 'ReplacingMergeTree', engineArgs: '_timestamp', sharded: false, tail: 'ORDER BY (team_id, group_type_index, group_key)' },
];

function onCluster(t: SchemaTarget): string {
  return t.cluster ? ` ON CLUSTER '${t.cluster}'` : '';
}

/** The statements that create the database and every table; each is idempotent (`IF NOT EXISTS`). */
export function schemaStatements(t: SchemaTarget): string[] {
  const db = t.database;
  const out = [`CREATE DATABASE IF NOT EXISTS ${db}${onCluster(t)}`];
  for (const table of TABLES) {
    if (!t.cluster) {
      out.push(`CREATE TABLE IF NOT EXISTS ${db}.${table.name}
(${table.columns}
) ENGINE = ${table.engine}(${table.engineArgs})
${table.tail}
SETTINGS non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`);
      continue;
    }
    const local = table.sharded ? `sharded_${table.name}` : table.name;
    const path = table.sharded ? `/clickhouse/tables/{shard}/${db}.${local}` : `/clickhouse/tables/noshard/${db}.${local}`;
    const replica = table.sharded ? '{replica}' : '{replica}-{shard}';
    out.push(`CREATE TABLE IF NOT EXISTS ${db}.${local}${onCluster(t)}
(${table.columns}
) ENGINE = Replicated${table.engine}('${path}', '${replica}', ${table.engineArgs})
${table.tail}
SETTINGS replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`);
    if (table.sharded) {
      out.push(`CREATE TABLE IF NOT EXISTS ${db}.${table.name}${onCluster(t)} AS ${db}.${local}
ENGINE = Distributed('${t.cluster}', '${db}', '${local}', sipHash64(distinct_id))`);
    }
  }
  out.push(`CREATE TABLE IF NOT EXISTS ${db}.quill_schema_version${onCluster(t)}
(
    version UInt32,
    applied_at DateTime
) ENGINE = ${t.cluster ? `ReplicatedMergeTree('/clickhouse/tables/noshard/${db}.quill_schema_version', '{replica}-{shard}')` : 'MergeTree'}
ORDER BY version`);
  return out;
}

/** The tables the exporter inserts into (on a cluster: events through the Distributed table). */
export const EXPORT_TABLES = { events: 'events', person: 'person', distinctIds: 'person_distinct_id2', overrides: 'person_distinct_id_overrides', groups: 'groups' } as const;

/** A string literal of ClickHouse SQL. */
export function sqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Events to delete, as Quill deleted them (src/stores/persons/person-store.ts, MirroredDeletion). */
export type EventDeletion =
  | { kind: 'person_events'; team: number; distinctIds: string[] }
  | { kind: 'retention'; team: number; before: number };

/**
 * The statement deleting those events (a mutation, as PostHog deletes persons' events: `ALTER TABLE … DELETE`; on a
 * cluster on every shard's `sharded_events`).
 */
export function deletionStatement(t: SchemaTarget, deletion: EventDeletion): string {
  const table = t.cluster ? `${t.database}.sharded_events${onCluster(t)}` : `${t.database}.events`;
  const where = deletion.kind === 'person_events'
    ? `distinct_id IN (${deletion.distinctIds.map(sqlString).join(', ')})`
    : `timestamp < toDateTime64(${sqlString(new Date(deletion.before).toISOString().slice(0, 23).replace('T', ' '))}, 3, 'UTC')`;
  return `ALTER TABLE ${table} DELETE WHERE team_id = ${Math.trunc(deletion.team)} AND ${where}`;
}
