// The HogQL -> ClickHouse printer: printed SQL for representative queries, the team guard on every stored table
// read at every level (FROM, JOIN, subquery, CTE, UNION, IN, scalar subquery), user text as parameters only, and
// the refusals (unknown tables, table functions, unknown functions, {filters}).
import t from 'tap';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import { printClickHouse, storedTableReads, type ClickHousePrintOptions } from '../../src/domain/hogql/clickhouse-printer.js';
import type { Query } from '../../src/domain/hogql/ast.js';
import { parseQuery } from '../../src/domain/hogql/parser.js';

const OPTS: ClickHousePrintOptions = { team: 42, database: 'posthog', timeZone: 'America/New_York', now: Date.UTC(2026, 10, 8), values: { ev: "x' OR 1=1 --" } };

const print = (text: string, opts: Partial<ClickHousePrintOptions> = {}) => printClickHouse(parseQuery(text), [], { ...OPTS, ...opts });

function refused(tt: Tap.Test, text: string, detail: RegExp): void {
  try {
    print(text);
    tt.fail(`printed: ${text}`);
  } catch (error) {
    tt.ok(error instanceof AnalyticsInputError, `a 400-class error: ${text}`);
    tt.match((error as Error).message, detail, text);
  }
}

/** Every stored table the SQL reads is guarded by team 42, and there are as many reads as expected. */
function guardedReads(tt: Tap.Test, text: string, tables: string[]): void {
  const { sql } = print(text);
  const reads = storedTableReads(sql, 'posthog');
  tt.same(reads.map((r) => r.table).sort(), [...tables].sort(), `tables read: ${text}`);
  tt.ok(reads.every((r) => r.team === 42), `each guarded by team_id = 42: ${text}`);
  // No other mention of a stored table than through the guard.
  const mentions = [...sql.matchAll(/`posthog`\.`([a-z_0-9]+)`/g)].length;
  tt.equal(mentions, reads.length, 'no unguarded mention of a stored table');
}

const EVENTS = ['events'];
/** Events read with their current persons (the query reads person_id). */
const EVENTS_PERSONS = ['events', 'person_distinct_id2'];

t.test('every table reference is a guarded subquery, at every level', async (tt) => {
  guardedReads(tt, 'SELECT count() FROM events', EVENTS);
  guardedReads(tt, 'SELECT count() FROM persons', ['person']);
  guardedReads(tt, 'SELECT count() FROM person_distinct_ids', ['person_distinct_id2']);
  guardedReads(tt, 'SELECT count() FROM groups', ['groups']);
  guardedReads(tt, 'SELECT count() FROM events e JOIN persons p ON e.person_id = p.id', [...EVENTS_PERSONS, 'person']);
  guardedReads(tt, 'SELECT uniq(person_id) FROM events', EVENTS_PERSONS);
  guardedReads(tt, 'SELECT count() FROM (SELECT person.id AS p FROM events) WHERE p IN (SELECT person_id FROM events)', [...EVENTS_PERSONS, ...EVENTS_PERSONS]);
  guardedReads(tt, 'SELECT count() FROM events a LEFT JOIN events b ON a.distinct_id = b.distinct_id', [...EVENTS, ...EVENTS]);
  guardedReads(tt, 'SELECT count() FROM (SELECT * FROM (SELECT event FROM events))', EVENTS);
  guardedReads(tt, 'WITH x AS (SELECT event FROM events) SELECT count() FROM x a JOIN x b ON a.event = b.event', [...EVENTS, ...EVENTS]);
  guardedReads(tt, "SELECT event FROM events UNION ALL SELECT toString(id) FROM persons", [...EVENTS, 'person']);
  guardedReads(tt, 'SELECT count() FROM events WHERE person_id IN (SELECT id FROM persons)', [...EVENTS_PERSONS, 'person']);
  guardedReads(tt, 'SELECT (SELECT count() FROM groups), count() FROM events', [...EVENTS, 'groups']);
  guardedReads(tt, 'WITH a AS (SELECT distinct_id FROM person_distinct_ids) SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM a WHERE distinct_id IN (SELECT distinct_id FROM events))', [...EVENTS, 'person_distinct_id2', ...EVENTS]);
  guardedReads(tt, "SELECT 1 + 2 AS x", []);
  guardedReads(tt, 'SELECT group_0.properties.name, group_2.created_at FROM events', [...EVENTS, 'groups', 'groups']);
  guardedReads(tt, 'SELECT group_1.properties.name, uniq(person_id) FROM events GROUP BY 1', [...EVENTS_PERSONS, 'groups']);
  guardedReads(tt, 'SELECT group_0.key FROM events', EVENTS);
  guardedReads(tt, 'SELECT * FROM events', EVENTS_PERSONS);
  guardedReads(tt, 'SELECT p.*, e.event FROM events e JOIN persons p ON e.person_id = p.id', [...EVENTS_PERSONS, 'person']);
});

t.test('the guard check itself sees an unguarded or foreign read', async (tt) => {
  tt.same(storedTableReads('SELECT 1 FROM `posthog`.`events` AS raw WHERE 1', 'posthog'), [{ table: 'events', team: null }]);
  tt.same(storedTableReads('SELECT 1 FROM `posthog`.`person` AS raw WHERE raw.team_id = 7 GROUP BY raw.id', 'posthog'), [{ table: 'person', team: 7 }]);
  tt.same(storedTableReads('SELECT 1 FROM `posthog`.`person` AS raw WHERE raw.team_id = 42.5', 'posthog'), [{ table: 'person', team: null }]);
});

t.test('printed SQL of representative queries', async (tt) => {
  const a = print("SELECT properties.$browser AS b, count() FROM events WHERE event = 'purchase' AND properties.price > 100 GROUP BY b ORDER BY b");
  tt.match(a.sql, /toTimeZone\(raw\.timestamp, \{p0:String\}\)/, 'timestamps in the project zone');
  tt.equal(a.params.p0, 'America/New_York');
  tt.match(a.sql, /nullIf\(nullIf\(JSONExtractRaw\(`events`\.`properties`, \{p\d+:String\}\), ''\), 'null'\) AS `b`/, 'a property is its raw JSON');
  tt.match(a.sql, /toFloat64OrNull\(nullIf\(nullIf\(JSONExtractRaw\(`events`\.`properties`, \{p\d+:String\}\), ''\), 'null'\)\), 100\)/, 'read as a number next to a number');
  tt.ok(Object.values(a.params).includes('$browser') && Object.values(a.params).includes('purchase'), 'keys and literals are parameters');
  tt.notMatch(a.sql, /person_distinct_id2/, 'no join to the persons when the query does not read person_id');
  tt.match(print('SELECT uniq(person_id) FROM events').sql, /argMax\(raw\.person_id, raw\.version\)/, 'persons through person_distinct_id2 by version');
  const overridden = print('SELECT uniq(person_id) FROM events', { personLookup: 'overrides' }).sql;
  tt.match(overridden, /`posthog`\.`person_distinct_id_overrides` AS raw WHERE raw\.team_id = 42 GROUP BY raw\.distinct_id/, "with personLookup 'overrides': PostHog's override table, guarded");
  tt.notMatch(overridden, /person_distinct_id2/, 'and not every distinct id');
  tt.same(storedTableReads(overridden, 'posthog').map((r) => [r.table, r.team]).sort(), [['events', 42], ['person_distinct_id_overrides', 42]], 'every read guarded');
  tt.match(print('SELECT count() FROM person_distinct_ids', { personLookup: 'overrides' }).sql, /person_distinct_id2/, 'the person_distinct_ids table is still every distinct id');
  tt.notMatch(a.sql, /purchase/, 'no user text in the SQL');

  const b = print('SELECT uniq(person_id), sum(properties.price), quantile(0.9)(properties.price) FROM events');
  tt.match(b.sql, /uniqExact\(/, 'uniq is exact');
  tt.match(b.sql, /sumOrNull\(/, 'sum of nothing is NULL');
  tt.match(b.sql, /quantileExactInclusiveOrNull\(0\.9\)/, 'interpolated quantile');

  const c = print('SELECT count() FROM events WHERE event = {ev}');
  tt.ok(Object.values(c.params).includes("x' OR 1=1 --"), 'a placeholder value is a parameter');
  tt.notMatch(c.sql, /OR 1=1/, 'never in the text');

  const d = print('SELECT `a``b` FROM (SELECT event AS `a``b` FROM events)');
  tt.match(d.sql, /`a\\`b`/, 'identifiers are backquoted with their quotes escaped');

  const f = print('SELECT count() FROM events WHERE {filters}', { filters: { properties: [{ key: '$browser', value: 'Chrome', type: 'event' }, { key: 'plan', value: 'pro', type: 'person', operator: 'is_not' }], dateRange: { date_from: '2026-11-01' } } });
  tt.match(f.sql, /ifNull\(\(isNotNull\(nullIf\(nullIf\(JSONExtractRaw\(`events`\.`properties`/, '{filters}: an event property filter, two-valued');
  tt.match(f.sql, /NOT ifNull\(.*`events`\.`person_properties`/, 'a person property filter, negated');
  tt.match(f.sql, /`events`\.`timestamp` >= fromUnixTimestamp64Milli\(toInt64\(\d+\)/, 'the date range');
  tt.ok(Object.values(f.params).includes('Chrome'), 'the filter value is a parameter');

  const g = print('SELECT group_3.properties.name FROM events');
  tt.match(g.sql, /raw\.team_id = 42 AND raw\.group_type_index = 3 GROUP BY raw\.group_key\) AS group_3 ON raw\.`\$group_3` = group_3\.key/, 'a group of events: its type\'s current rows, by the event\'s key');

  const e = print("SELECT count() FROM events WHERE timestamp >= '2026-11-01'");
  tt.match(e.sql, /parseDateTime64BestEffort\(\{p\d+:String\}, 6, \{p0:String\}\)/, 'a string time is parsed in the project zone');
});

t.test('refusals name the construct', async (tt) => {
  for (const fn of ['url', 'file', 'remote', 's3', 'input', 'numbers']) refused(tt, `SELECT * FROM ${fn}('x')`, new RegExp(`table function ${fn}`));
  refused(tt, "SELECT file('x')", /file/);
  refused(tt, 'SELECT count() FROM person', /Unknown table "person"/);
  refused(tt, 'SELECT count() FROM posthog.events', /posthog\.events/);
  refused(tt, 'SELECT count() FROM events SETTINGS readonly = 0', /SETTINGS/);
  refused(tt, "INSERT INTO events (event) VALUES ('x')", /INSERT/);
  refused(tt, 'ALTER TABLE events DELETE WHERE 1', /ALTER/);
  refused(tt, 'DROP TABLE events', /DROP/);
  refused(tt, 'SELECT count() FROM persons WHERE {filters}', /\{filters\}/);
  refused(tt, 'SELECT currentDatabase()', /currentDatabase/);
  refused(tt, 'SELECT someFunction(event) FROM events', /Unknown function someFunction/);
  refused(tt, 'SELECT count() FROM events e RIGHT JOIN persons p ON e.person_id = p.id', /RIGHT JOIN/);
  refused(tt, 'WITH x AS (SELECT event FROM x) SELECT count() FROM x', /recursive WITH/);
  refused(tt, 'WITH a AS (SELECT event FROM b), b AS (SELECT event FROM a) SELECT count() FROM a', /recursive WITH/);
  refused(tt, 'SELECT 1 AS `a\u0001events0\u0001`', /control characters/);
});

t.test('a table the AST names outside the dialect is refused even when built by hand', async (tt) => {
  const ast: Query = { k: 'select', ctes: [], distinct: false, columns: [{ k: 'call', name: 'count', args: [] }], from: { table: 'system.tables' }, joins: [], where: null, groupBy: [], having: null, orderBy: [], limit: null, offset: null };
  tt.throws(() => printClickHouse(ast, [], OPTS), /Unknown table/);
  const fn: Query = { ...ast, from: { table: 's3' } };
  tt.throws(() => printClickHouse(fn, [], OPTS), /table function s3/);
});
