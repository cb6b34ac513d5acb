// The pure parts of the ClickHouse export: PostHog's table statements, rows from Quill's records, deletion
// statements, and the batch tokens that make retries idempotent.
import t from 'tap';
import { personUuid } from '../../src/domain/ingest/index.js';
import { chTime, eventLine, eventPerson, eventRow, storedForm, personRow, distinctIdRow, overrideRows } from '../../src/stores/clickhouse/rows.js';
import { deletionStatement, schemaStatements, sqlString } from '../../src/stores/clickhouse/schema.js';
import { eventsToken } from '../../src/worker/export/event-exporter.js';
import { changesToken } from '../../src/worker/export/person-exporter.js';

t.test('single node: PostHog engines, partitioning and sort keys, with a deduplication window', async (t) => {
  const sql = schemaStatements({ database: 'posthog', cluster: null });
  t.match(sql[0], /^CREATE DATABASE IF NOT EXISTS posthog$/);
  const events = sql.find((s) => s.includes('posthog.events'))!;
  t.match(events, /ENGINE = ReplacingMergeTree\(_timestamp\)/);
  t.match(events, /PARTITION BY toYYYYMM\(timestamp\)/);
  t.match(events, /ORDER BY \(team_id, toDate\(timestamp\), event, cityHash64\(distinct_id\), cityHash64\(uuid\)\)/);
  t.match(events, /non_replicated_deduplication_window = \d+/);
  t.match(events, /`\$group_0` String MATERIALIZED/);
  t.match(sql.find((s) => s.includes('posthog.person\n'))!, /ReplacingMergeTree\(version\)\nORDER BY \(team_id, id\)/);
  t.match(sql.find((s) => s.includes('posthog.person_distinct_id2'))!, /ReplacingMergeTree\(version\)\nORDER BY \(team_id, distinct_id\)/);
  t.match(sql.find((s) => s.includes('posthog.person_distinct_id_overrides'))!, /distinct_id String,\n    person_id UUID,[\s\S]*ReplacingMergeTree\(version\)\nORDER BY \(team_id, distinct_id\)/,
    "PostHog's override table: person_distinct_id2's columns");
  t.ok(sql.every((s) => s.includes('IF NOT EXISTS')), 'every statement is idempotent');
});

t.test('cluster: sharded replicated events behind a Distributed table, person tables replicated everywhere', async (t) => {
  const sql = schemaStatements({ database: 'posthog', cluster: 'posthog_cluster' });
  t.ok(sql.every((s) => s.includes("ON CLUSTER 'posthog_cluster'")), 'every statement runs on the cluster');
  t.match(sql.find((s) => s.includes('posthog.sharded_events'))!, /ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/posthog\.sharded_events', '\{replica\}', _timestamp\)/);
  t.match(sql.find((s) => s.includes('posthog.events ON'))!, /Distributed\('posthog_cluster', 'posthog', 'sharded_events', sipHash64\(distinct_id\)\)/);
  t.match(sql.find((s) => s.includes('posthog.person ON'))!, /ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/noshard\/posthog\.person'/);
});

t.test('event rows', async (t) => {
  const ev = {
    uuid: '0190c6c4-0000-7000-8000-000000000001', event: 'purchase', distinct_id: 'd1', elements_chain: '',
    timestamp: '2026-11-28T01:02:03.456Z', properties: { price: 5, $set: { a: 1 }, $process_person_profile: true, $groups: { company: 'acme' } },
  };
  const stored = storedForm(ev, { company: 2 })!;
  t.same(stored.event.properties, { price: 5, $set: { a: 1 }, $groups: { company: 'acme' }, $group_2: 'acme' }, 'as the apply stores it');
  t.equal(stored.event, ev, 'the event itself, changed where it is');
  const person = eventPerson({ uuid: 'p-uuid', properties: { a: 1 }, created_at: '2026-01-01T00:00:00.000Z' });
  const row = eventRow(1, stored.event, false, person, null, Date.parse('2026-11-28T01:02:04Z'), 4294967396, Date.parse('2026-11-28T01:02:05Z'));
  t.equal(row.timestamp, '2026-11-28 01:02:03.456000');
  t.equal(row.created_at, '2026-11-28 01:02:04.000000', 'created_at: when Quill received it');
  t.equal(row.person_id, 'p-uuid');
  t.equal(row.person_properties, '{"a":1}', 'no snapshot kept: the person as exported');
  const atEvent = eventRow(1, stored.event, false, person, '{"a":0}', 0, 1, 0);
  t.equal(atEvent.person_properties, '{"a":0}', 'the snapshot the event was applied with, not the person now');
  t.equal(atEvent.person_id, 'p-uuid', 'the person now (after merges)');
  t.equal(eventRow(3, stored.event, true, person, '{"b":2}', 0, 1, 0).person_properties, '{"b":2}', "a personless event of a distinct id with a person: that person at the event");
  t.equal(row.person_created_at, '2026-01-01 00:00:00.000000');
  t.equal(row.person_mode, 'full');
  t.equal(row._offset, 4294967396);
  t.equal(row._timestamp, '2026-11-28 01:02:05');

  const personless = storedForm({ ...ev, properties: { $process_person_profile: false, $set: { a: 1 }, x: 1 } }, {})!;
  t.ok(personless.personless);
  t.same(personless.event.properties, { $process_person_profile: false, x: 1 }, 'no person operations without a profile');
  const prow = eventRow(3, personless.event, true, 'personless', '{}', NaN, 1, Date.parse('2026-11-28T00:00:00Z'));
  t.equal(prow.person_id, personUuid(3, 'd1'), "PostHog's derived person id");
  t.equal(prow.person_mode, 'propertyless');
  t.equal(prow.person_properties, '{}', 'no person: no person properties');
  t.equal(prow.person_created_at, '1970-01-01 00:00:05.000000', "PostHog's created_at of an event without a person (createFakePerson)");
  const legacy = eventRow(3, personless.event, true, 'none', null, NaN, 1, 0);
  t.same([legacy.person_id, legacy.person_created_at, legacy.person_properties], [personUuid(3, 'd1'), '1970-01-01 00:00:00.000000', '{}'],
    'an event an older Quill applied without any actor: the epoch itself, which the analyses leave out');
  t.equal(prow.created_at, '2026-11-28 00:00:00.000000', 'no receive time (old record format): the export time');
  t.equal(storedForm({ ...ev, event: '$identify', properties: { $process_person_profile: false } }, {}), null, 'a person event without a profile is dropped, as by the apply');
  t.equal(chTime('not a time'), '1970-01-01 00:00:00.000000');
  t.equal(chTime('+275760-09-13T00:00:00.000Z'), '2299-12-31 23:59:59.999000', "clamped to DateTime64's range");
  t.equal(chTime(Date.UTC(1200, 0, 1)), '1900-01-01 00:00:00.000000');
});

t.test('person and distinct id rows carry the change that exported them as version', async (t) => {
  const person = { id: 7, team: 1, uuid: 'u-7', properties: { plan: 'pro' }, created_at: '2026-01-02T03:04:05.000Z', is_identified: true, version: 3, distinct_ids: ['a', 'b'] };
  const row = personRow(person, 42, 0);
  t.same({ id: row.id, version: row.version, is_identified: row.is_identified, is_deleted: row.is_deleted, created_at: row.created_at, properties: row.properties },
    { id: 'u-7', version: 42, is_identified: 1, is_deleted: 0, created_at: '2026-01-02 03:04:05.000000', properties: '{"plan":"pro"}' });
  t.same(distinctIdRow(1, 'a', 'u-7', true, 43, 0).is_deleted, 1);
  // The person of 'anon' took its derived uuid (identify after personless events); 'user' and 'laptop' joined it.
  const uuid = personUuid(1, 'anon');
  const rows = ['anon', 'user', 'laptop'].map((d) => distinctIdRow(1, d, uuid, false, 44, 0));
  t.same(overrideRows([...rows, distinctIdRow(1, 'gone', 'u-9', true, 45, 0), distinctIdRow(1, 'x', personUuid(1, 'x'), true, 45, 0)]).map((r) => [r.distinct_id, r.is_deleted]),
    [['user', 0], ['laptop', 0], ['gone', 1]], "overrides: the distinct ids whose person's uuid is not their own derived one, deletions included");
});

t.test('deletions', async (t) => {
  t.equal(sqlString("it's a \\ test"), "'it\\'s a \\\\ test'");
  t.equal(deletionStatement({ database: 'db', cluster: null }, { kind: 'person_events', team: 4, distinctIds: ['x', "o'neil"] }),
    "ALTER TABLE db.events DELETE WHERE team_id = 4 AND distinct_id IN ('x', 'o\\'neil')");
  t.equal(deletionStatement({ database: 'db', cluster: 'c' }, { kind: 'retention', team: 4, before: Date.parse('2026-10-01T00:00:00Z') }),
    "ALTER TABLE db.sharded_events ON CLUSTER 'c' DELETE WHERE team_id = 4 AND timestamp < toDateTime64('2026-10-01 00:00:00.000', 3, 'UTC')");
});

t.test('tokens: one per batch range, the same for the same range', async (t) => {
  const a = eventsToken(3, { from: { segment: 1, offset: 10 }, to: { segment: 2, offset: 0 } });
  t.equal(a, eventsToken(3, { from: { segment: 1, offset: 10 }, to: { segment: 2, offset: 0 } }));
  t.not(a, eventsToken(3, { from: { segment: 1, offset: 10 }, to: { segment: 2, offset: 5 } }));
  t.not(a, eventsToken(4, { from: { segment: 1, offset: 10 }, to: { segment: 2, offset: 0 } }), 'shards do not share tokens');
  t.equal(eventsToken(0, { from: null, to: { segment: 1, offset: 9 } }), 'quill-events-0-start-1:9');
  t.not(changesToken('person', 0, 10), changesToken('person_distinct_id2', 0, 10), 'tables do not share tokens');
});

t.test('an event row as a line: its JSON columns as objects where the server reads them as text, else escaped', async (t) => {
  const ev = {
    uuid: '0190c6c4-0000-7000-8000-000000000002', event: 'say "hi"\n', distinct_id: 'd\\2', elements_chain: 'a:href="x"',
    timestamp: '2026-11-28T01:02:03.456Z', properties: { text: 'x"y\\z\u2028é', nested: [1, { c: null }], big: 1e21, '': {} },
  };
  const stored = storedForm(ev, {})!;
  const row = eventRow(1, stored.event, false, eventPerson({ uuid: 'p-uuid', properties: {}, created_at: '2026-01-01T00:00:00.000Z' }), '{"plan":"pro \\"x\\""}', 0, 7, 0);
  t.equal(eventLine(row, false), JSON.stringify(row), 'escaped: the row as JSON');
  const line = eventLine(row, true);
  const parsed = JSON.parse(line);
  t.same(Object.keys(parsed), Object.keys(row), 'every column, in order');
  t.same(parsed, { ...row, properties: JSON.parse(row.properties), person_properties: JSON.parse(row.person_properties) }, 'the JSON columns as objects, the rest as they are');
  t.ok(line.includes(`"properties":${row.properties},`), "the properties' text itself, byte for byte");
  t.notMatch(line, /\n/, 'one line');
});
