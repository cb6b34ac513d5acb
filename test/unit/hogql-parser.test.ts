// The HogQL parser and printer: precedence as ClickHouse has it, literals and names as it reads them, placeholders,
// and the statements and constructs it refuses by name.
import t from 'tap';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import { parseExpression, parseQuery } from '../../src/domain/hogql/parser.js';
import { printExpr, printQuery } from '../../src/domain/hogql/print.js';

const expr = (text: string) => printExpr(parseExpression(text));

function refused(t: Tap, text: string, detail: RegExp): void {
  try {
    parseQuery(text);
    t.fail(`${text} parsed`);
  } catch (error) {
    t.ok(error instanceof AnalyticsInputError, text);
    t.match((error as Error).message, detail, text);
  }
}
type Tap = { ok(v: unknown, m?: string): void; fail(m: string): void; match(a: unknown, b: RegExp, m?: string): void };

t.test('operators bind as in ClickHouse', async (t) => {
  t.equal(expr('a OR b AND NOT c = 1'), 'a OR (b AND (NOT (c = 1)))');
  t.equal(expr('1 + 2 * 3 - 4'), '(1 + (2 * 3)) - 4');
  t.equal(expr('-x * 2'), '-x * 2');
  t.equal(expr("event = '$pageview' AND timestamp >= '2024-01-01'"), "(event = '$pageview') AND (timestamp >= '2024-01-01')");
  t.equal(expr('x BETWEEN 1 AND 5'), '(x >= 1) AND (x <= 5)');
  t.equal(expr('x NOT BETWEEN 1 AND 5'), '(x < 1) OR (x > 5)');
  t.equal(expr('x NOT IN (1, 2)'), 'x NOT IN (1, 2)');
  t.equal(expr("x NOT ILIKE '%a%'"), "x NOT ILIKE '%a%'");
  t.equal(expr('x IS NOT NULL'), 'isNotNull(x)');
  t.equal(expr('c ? 1 : 2'), 'if(c, 1, 2)');
  t.equal(expr("CASE WHEN a THEN 'x' WHEN b THEN 'y' END"), "multiIf(a, 'x', b, 'y', NULL)");
  t.equal(expr("CASE e WHEN 'a' THEN 1 ELSE 2 END"), "multiIf(e = 'a', 1, 2)");
  t.equal(expr('now() - INTERVAL 7 DAY'), 'now() - toIntervalDay(7)');
  t.equal(expr("INTERVAL '2 hour'"), 'toIntervalHour(2)');
  t.equal(expr('CAST(x AS Float64)'), 'toFloat(x)');
  t.equal(expr("properties['$browser']"), "arrayElement(properties, '$browser')");
});

t.test('names, literals and calls', async (t) => {
  t.equal(expr('person.properties.`my key`'), 'person.properties.`my key`');
  t.equal(expr('properties.$current_url'), 'properties.$current_url');
  t.equal(expr("'it''s' || 'a\\'b'"), "concat('it\\'s', 'a\\'b')");
  t.equal(expr('quantile(0.9)(properties.price)'), 'quantile(0.9)(properties.price)');
  t.equal(expr('count(DISTINCT person_id)'), 'count(DISTINCT person_id)');
  t.equal(expr('count(*)'), 'count(*)');
  t.equal(expr('1.5e3 + .5 + 0x10'), '(1500 + 0.5) + 16');
  t.equal(expr('{filters}'), '{filters}');
  t.equal(expr('x -- a comment\n + /* another */ 1'), 'x + 1');
  t.same(parseExpression('count() AS c'), { k: 'alias', alias: 'c', expr: { k: 'call', name: 'count', args: [] } });
});

t.test('queries', async (t) => {
  t.equal(printQuery(parseQuery('select event, count() c from events e where e.timestamp > now() group by event having c > 1 order by c desc nulls first limit 5, 10')),
    'SELECT event, count() AS c FROM events AS e WHERE e.timestamp > now() GROUP BY event HAVING c > 1 ORDER BY c DESC NULLS FIRST LIMIT 10 OFFSET 5');
  t.equal(printQuery(parseQuery('WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL (SELECT 2)')), 'WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2');
  t.equal(printQuery(parseQuery('SELECT * FROM events a LEFT OUTER JOIN persons b ON a.person_id = b.id;')), 'SELECT * FROM events AS a LEFT JOIN persons AS b ON a.person_id = b.id');
  t.equal(printQuery(parseQuery('SELECT 1 FROM events a JOIN persons b USING (id)')), 'SELECT 1 FROM events AS a INNER JOIN persons AS b ON a.id = b.id');
  t.equal(printQuery(parseQuery('SELECT x FROM (SELECT 1 AS x) WHERE x IN (SELECT 1)')), 'SELECT x FROM (SELECT 1 AS x) WHERE x IN (SELECT 1)');
});

t.test('only SELECT parses; unsupported constructs are named', async (t) => {
  refused(t, 'INSERT INTO events VALUES (1)', /Only SELECT queries are supported: INSERT/);
  refused(t, 'DROP TABLE events', /Only SELECT queries are supported: DROP/);
  refused(t, 'SELECT 1; DELETE FROM events', /Only one SELECT query can run: found DELETE/);
  refused(t, 'ALTER TABLE events DELETE WHERE 1', /ALTER/);
  refused(t, 'SELECT count() OVER (PARTITION BY event) FROM events', /Window functions \(OVER\)/);
  refused(t, 'SELECT 1 FROM events ARRAY JOIN x', /ARRAY JOIN/);
  refused(t, 'SELECT 1 LIMIT 1 BY x', /LIMIT … BY/);
  refused(t, 'SELECT arrayMap(x -> x, [1])', /Lambda functions/);
  refused(t, 'SELECT 1 UNION SELECT 2', /UNION without ALL/);
  refused(t, 'SELECT 1 FROM events SETTINGS a = 1', /SETTINGS/);
  refused(t, 'SELECT x::Int', /:: cast operator/);
  refused(t, 'SELECT 1 FROM numbers(3)', /table function numbers\(\)/);
  refused(t, 'SELECT (1', /Expected "\)"/);
  refused(t, "SELECT 'open", /Unterminated string/);
  refused(t, 'SELECT 1 FROM events e ASOF JOIN persons p ON 1', /ASOF JOIN/);
});
