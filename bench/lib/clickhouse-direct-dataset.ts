/**
 * The analytics dataset generated inside ClickHouse, straight into the export's tables (src/stores/clickhouse/
 * schema.ts): `INSERT … SELECT … FROM numbers(n)` a day at a time, then the `person` and `person_distinct_id2` rows
 * derived from the events. For datasets too large to send through Quill (100M events): Quill then answers from
 * ClickHouse without having acknowledged a single event itself.
 *
 * Same shape and distribution as bench/lib/analytics-dataset.ts, not the same events (that generator is sequential
 * and seeded by mulberry32; this one is a hash of (seed, day, row) per row):
 * - persons with one device (70 %) or two, each device with its browser and OS, a plan, a company for 40 %;
 * - visits of 5 events about a minute apart (the JS generator: 2-7, 5-125 s apart) at a random time of the day,
 *   the day's count weighted as there (weekends 0.6);
 * - each event: `$pageview` of one of the 50 URLs (60 %), `$autocapture` with one of the 3 chains (20 %),
 *   `purchase` with a `price` (15 %, signed-up persons after their sign-up), else `$pageleave`;
 * - 90 % of persons sign up once, at a uniformly drawn instant: a `signed_up` from the first device's anonymous id
 *   and a `$identify` as `user-<n>` a second later; a second device is identified (a `$identify` with its
 *   `$anon_distinct_id`) within 14 days after, if that is still in the dataset. (The JS generator signs a person
 *   up at a visit, so persons with more visits sign up earlier.)
 * - a device's events use `user-<n>` once it is identified, `anon-<n>-<device>` before; an event's person is its
 *   device's final person: the person's own when the device was ever identified, else a person of the device.
 *
 * The events' `person_created_at` is set afterwards, from the person rows (personCreatedAtSql).
 *
 * Pure: SQL text only; the bench (bench/analytics-clickhouse-direct.bench.ts) runs it.
 */
import { BROWSERS, CHAINS, OSES, PATHS, PLANS, type DatasetOptions } from './analytics-dataset.js';
import { sqlString } from '../../src/stores/clickhouse/schema.js';

const DAY_MS = 86_400_000;
/** Events per visit. */
export const VISIT = 5;

const list = (xs: readonly string[]) => `[${xs.map(sqlString).join(', ')}]`;

/** Per-person columns from a person number `p` (an expression), the same wherever they are computed. */
function personColumns(o: DatasetOptions, p: string): string {
  const start = o.end - o.days * DAY_MS;
  const h = (tag: number) => `cityHash64(${o.seed}, ${p}, ${tag})`;
  return [
    `${h(1)} % 100 < 30 AS two`,
    `${h(6)} % 100 < 90 AS signs`,
    // Sign-up somewhere in the dataset but its last day (so the identify a second later is in it too).
    `toInt64(${start} + ${h(7)} % ${(o.days - 1) * DAY_MS}) AS su`,
    `toInt64(su + ${h(8)} % ${14 * DAY_MS}) AS su2`,
    `${list(PLANS)}[${h(3)} % ${PLANS.length} + 1] AS plan`,
    `if(${h(4)} % 100 < 40, concat('company-', toString(${h(5)} % 2000)), '') AS company`,
  ].join(', ');
}

/** Columns of a device `dev` (an expression) of person `p`. */
function deviceColumns(o: DatasetOptions, p: string, dev: string): string {
  return [
    `${list(BROWSERS)}[cityHash64(${o.seed}, ${p}, 10 + ${dev}) % ${BROWSERS.length} + 1] AS browser`,
    `${list(OSES)}[cityHash64(${o.seed}, ${p}, 20 + ${dev}) % ${OSES.length} + 1] AS os`,
    // The device's final person: its person's own once ever identified, else one of its own.
    `signs AND (${dev} = 0 OR su2 < ${o.end}) AS identified_ever`,
    `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(toUInt64(if(identified_ever, ${p}, ${o.persons} + 2 * ${p} + ${dev})))), 12, '0'))) AS person_uuid`,
  ].join(', ');
}

/** A time-ordered uuid of an event (like the JS generator's): its time in ms, a kind (day, or a special), a serial. */
const uuidOf = (t: string, kind: string, serial: string) =>
  `toUUID(concat(substring(leftPad(lower(hex(toUInt64(${t}))), 12, '0'), 1, 8), '-', substring(leftPad(lower(hex(toUInt64(${t}))), 12, '0'), 9, 4), '-7',
    leftPad(lower(hex(toUInt64(${kind}))), 3, '0'), '-8', leftPad(lower(hex(toUInt64(bitShiftRight(${serial}, 48)))), 3, '0'), '-', leftPad(lower(hex(toUInt64(bitAnd(${serial}, 281474976710655)))), 12, '0')))`;

const INSERT_COLUMNS = 'uuid, event, properties, timestamp, team_id, distinct_id, elements_chain, created_at, person_id, person_created_at, person_properties, person_mode, _timestamp, _offset';

/** The properties every event has, as the start of a JSON object (no closing brace). */
const baseProperties = `concat('{"$browser":"', browser, '","$os":"', os, '","$session_id":"', session, '","$lib":"web","$set":{"plan":"', plan, '"}')`;

function row(team: number, uuid: string): string {
  return `${uuid}, event, properties, fromUnixTimestamp64Milli(t, 'UTC'), ${team}, distinct_id, elements_chain, fromUnixTimestamp64Milli(t, 'UTC'),
    person_uuid, toDateTime64(0, 3), concat('{"plan":"', plan, '"}'), 'full', now(), _offset`;
}

/** How many events the sign-ups and identifies add (they are taken off the visits' events, so the total is `events`). */
export function extraEventsSql(o: DatasetOptions): string {
  return `SELECT toUInt64(countIf(signs) * 2 + countIf(signs AND two AND su2 < ${o.end})) AS extra
    FROM (SELECT number AS p, ${personColumns(o, 'p')} FROM numbers(${o.persons}))`;
}

/** Events per day of the visits (the JS generator's weights), summing to `events`. */
export function eventsPerDay(o: DatasetOptions, events: number): number[] {
  const start = o.end - o.days * DAY_MS;
  const weights = Array.from({ length: o.days }, (_, d) => (new Date(start + d * DAY_MS).getUTCDay() % 6 === 0 ? 0.6 : 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const out: number[] = [];
  let left = events;
  for (let d = 0; d < o.days; d++) {
    const n = d === o.days - 1 ? left : Math.round((events * weights[d]!) / total);
    out.push(n);
    left -= n;
  }
  return out;
}

/** The `count` visit events of day `day` (0-based). */
export function dayEventsSql(o: DatasetOptions, team: number, database: string, day: number, count: number): string {
  const dayStart = o.end - (o.days - day) * DAY_MS;
  const hv = (tag: number) => `cityHash64(${o.seed}, ${day}, v, ${tag})`;
  const hn = (tag: number) => `cityHash64(${o.seed}, ${day}, n, ${tag})`;
  const chains = CHAINS.map((c) => sqlString(JSON.stringify(c)));
  return `INSERT INTO ${database}.events (${INSERT_COLUMNS})
SELECT ${row(team, uuidOf('t', String(day), 'n'))}
FROM (
  SELECT *, ${deviceColumns(o, 'p', 'dev')},
    if(signs AND t >= if(dev = 0, su + 1000, su2), concat('user-', toString(p)), concat('anon-', toString(p), '-', toString(dev))) AS distinct_id,
    concat('s-', toString(p), '-', toString(dev), '-', toString(${day}), '-', toString(v)) AS session,
    multiIf(roll < 600, '$pageview', roll < 800, '$autocapture', signs AND t > su AND roll < 950, 'purchase', '$pageleave') AS event,
    if(event = '$autocapture', pick, 0) AS chain,
    if(chain > 0, ${list(CHAINS)}[chain], '') AS elements_chain,
    concat(${baseProperties},
      if(company != '' AND (p + k) % 3 = 0, concat(',"$groups":{"company":"', company, '"}'), ''),
      multiIf(event = '$pageview', concat(',"$current_url":"https://example.com', ${list(PATHS)}[${hn(6)} % ${PATHS.length} + 1], '"'),
        event = '$autocapture', concat(',"$event_type":"click","$elements_chain":', [${chains.join(', ')}][chain]),
        event = 'purchase', concat(',"price":', toString((${hn(7)} % 20001) / 100)),
        ''),
      '}') AS properties,
    n AS _offset
  FROM (
    SELECT number AS n, intDiv(number, ${VISIT}) AS v, number % ${VISIT} AS k,
      ${hv(1)} % ${o.persons} AS p, ${personColumns(o, 'p')},
      if(two AND ${hv(2)} % 100 < 40, 1, 0) AS dev,
      toInt64(${dayStart} + ${hv(3)} % ${DAY_MS - 3_600_000} + k * 65000 + ${hn(4)} % 60000) AS t,
      ${hn(5)} % 1000 AS roll,
      ${hn(8)} % ${CHAINS.length} + 1 AS pick
    FROM numbers(${count})
  )
)`;
}

/**
 * Every person's sign-up (`signed_up` from its first device, `$identify` as `user-<n>` a second later) and its second
 * device's `$identify` when that falls in the dataset.
 */
export function signUpEventsSql(o: DatasetOptions, team: number, database: string): string {
  return `INSERT INTO ${database}.events (${INSERT_COLUMNS})
SELECT ${row(team, uuidOf('t', '3840 + kind', 'p'))}
FROM (
  SELECT *, ${deviceColumns(o, 'p', 'dev')},
    concat('s-', toString(p), '-', toString(dev), '-signup') AS session,
    ['signed_up', '$identify', '$identify'][kind + 1] AS event,
    if(kind = 0, concat('anon-', toString(p), '-0'), concat('user-', toString(p))) AS distinct_id,
    '' AS elements_chain,
    concat(${baseProperties}, if(kind = 0, '', concat(',"$anon_distinct_id":"anon-', toString(p), '-', toString(dev), '"')), '}') AS properties,
    p AS _offset
  FROM (
    SELECT number AS p, ${personColumns(o, 'p')}, arrayJoin([0, 1, 2]) AS kind, if(kind = 2, 1, 0) AS dev,
      multiIf(kind = 0, su, kind = 1, su + 1000, su2) AS t
    FROM numbers(${o.persons})
    WHERE signs AND (kind < 2 OR (two AND su2 < ${o.end}))
  )
)`;
}

/** The persons: one row each, created at its first event, identified when it has a `user-` id. */
export function personsSql(team: number, database: string): string {
  return `INSERT INTO ${database}.person (id, created_at, team_id, properties, is_identified, is_deleted, version, _timestamp, _offset)
SELECT person_id, min(timestamp), ${team}, any(person_properties), max(startsWith(distinct_id, 'user-')), 0, 1, now(), 0
FROM ${database}.events WHERE team_id = ${team} GROUP BY person_id`;
}

/**
 * The events' `person_created_at` (persons on events; the analyses count an event for a person only when it is after
 * the epoch, src/domain/analytics/clickhouse/person-events.ts): the person rows' created_at, through a Join table,
 * as one mutation of that column.
 */
export function personCreatedAtSql(team: number, database: string): string[] {
  return [
    `CREATE TABLE ${database}.direct_person_created (person_id UUID, created_at DateTime64(3)) ENGINE = Join(ANY, LEFT, person_id)`,
    `INSERT INTO ${database}.direct_person_created SELECT id, created_at FROM ${database}.person WHERE team_id = ${team}`,
    `ALTER TABLE ${database}.events UPDATE person_created_at = joinGet('${database}.direct_person_created', 'created_at', person_id) WHERE team_id = ${team}`,
    `DROP TABLE ${database}.direct_person_created`,
  ];
}

/** Each distinct id's (final) person. */
export function distinctIdsSql(team: number, database: string): string {
  return `INSERT INTO ${database}.person_distinct_id2 (team_id, distinct_id, person_id, is_deleted, version, _timestamp, _offset, _partition)
SELECT ${team}, distinct_id, any(person_id), 0, 1, now(), 0, 0
FROM ${database}.events WHERE team_id = ${team} GROUP BY distinct_id`;
}
