/**
 * The HogQL differential corpus: each query beside its DuckDB translation (test/e2e/hogql-differential.test.ts runs
 * both on the reference dataset), and the same HogQL run by Quill's engine and by ClickHouse
 * (test/e2e/hogql-clickhouse.test.ts). DuckDB's `events` has the dataset's fields as columns: `browser`, `url`,
 * `session`, `price`, `plan`, `company`, `person`, `ts`.
 */
export interface Case {
  hogql: string;
  duck: string;
  /** Compare in order (the ORDER BY decides it); otherwise as multisets. */
  ordered?: boolean;
  extra?: Record<string, unknown>;
}

const pv = "event = '$pageview'";

/** The corpus in the project's default zone, UTC. */
export const UTC_CASES: Case[] = [
  // counts and filters
  { hogql: 'SELECT count() FROM events', duck: 'SELECT count(*) FROM events' },
  { hogql: "SELECT count(*) FROM events WHERE event = '$pageview'", duck: `SELECT count(*) FROM events WHERE ${pv}` },
  { hogql: "SELECT count() FROM events WHERE event != '$pageview'", duck: "SELECT count(*) FROM events WHERE event <> '$pageview'" },
  { hogql: "SELECT count() FROM events WHERE event IN ('$pageview', 'purchase')", duck: "SELECT count(*) FROM events WHERE event IN ('$pageview', 'purchase')" },
  { hogql: "SELECT count() FROM events WHERE event NOT IN ('$pageview', 'purchase')", duck: "SELECT count(*) FROM events WHERE event NOT IN ('$pageview', 'purchase')" },
  { hogql: "SELECT count() FROM events WHERE properties.$browser = 'Chrome'", duck: "SELECT count(*) FROM events WHERE browser = 'Chrome'" },
  { hogql: "SELECT count() FROM events WHERE properties.$browser = 'Chrome' AND event = '$pageview'", duck: `SELECT count(*) FROM events WHERE browser = 'Chrome' AND ${pv}` },
  { hogql: "SELECT count() FROM events WHERE properties.$browser = 'Chrome' OR properties.$browser = 'Safari'", duck: "SELECT count(*) FROM events WHERE browser = 'Chrome' OR browser = 'Safari'" },
  { hogql: "SELECT count() FROM events WHERE NOT (properties.$browser = 'Chrome')", duck: "SELECT count(*) FROM events WHERE NOT (browser = 'Chrome')" },
  { hogql: 'SELECT count() FROM events WHERE properties.price > 100', duck: 'SELECT count(*) FROM events WHERE price > 100' },
  { hogql: 'SELECT count() FROM events WHERE properties.price BETWEEN 50 AND 60', duck: 'SELECT count(*) FROM events WHERE price BETWEEN 50 AND 60' },
  { hogql: 'SELECT count() FROM events WHERE properties.price IS NULL', duck: 'SELECT count(*) FROM events WHERE price IS NULL' },
  { hogql: 'SELECT count() FROM events WHERE properties.price IS NOT NULL', duck: 'SELECT count(*) FROM events WHERE price IS NOT NULL' },
  { hogql: "SELECT count() FROM events WHERE properties.$current_url LIKE '%/docs/%'", duck: "SELECT count(*) FROM events WHERE url LIKE '%/docs/%'" },
  { hogql: "SELECT count() FROM events WHERE properties.$current_url ILIKE '%/DOCS/%'", duck: "SELECT count(*) FROM events WHERE url ILIKE '%/DOCS/%'" },
  { hogql: "SELECT count() FROM events WHERE properties.$current_url NOT LIKE '%/blog/%'", duck: "SELECT count(*) FROM events WHERE url NOT LIKE '%/blog/%'" },
  { hogql: "SELECT count() FROM events WHERE timestamp >= '2026-11-01' AND timestamp < '2026-11-03'", duck: "SELECT count(*) FROM events WHERE ts >= TIMESTAMP '2026-11-01' AND ts < TIMESTAMP '2026-11-03'" },
  { hogql: "SELECT count() FROM events WHERE timestamp > toDateTime('2026-11-05 12:00:00')", duck: "SELECT count(*) FROM events WHERE ts > TIMESTAMP '2026-11-05 12:00:00'" },
  { hogql: "SELECT count() FROM events WHERE toDate(timestamp) = '2026-11-02'", duck: "SELECT count(*) FROM events WHERE CAST(ts AS DATE) = DATE '2026-11-02'" },
  { hogql: "SELECT count() FROM events WHERE distinct_id LIKE 'user-%'", duck: "SELECT count(*) FROM events WHERE distinct_id LIKE 'user-%'" },
  { hogql: "SELECT count() FROM events WHERE lower(properties.$browser) = 'firefox'", duck: "SELECT count(*) FROM events WHERE lower(browser) = 'firefox'" },
  { hogql: "SELECT count() FROM events WHERE match(properties.$current_url, '/app/view-4[0-9]$')", duck: "SELECT count(*) FROM events WHERE regexp_matches(url, '/app/view-4[0-9]$')" },
  { hogql: "SELECT count() FROM events WHERE properties.$current_url =~ 'page-[1-3]'", duck: "SELECT count(*) FROM events WHERE regexp_matches(url, 'page-[1-3]')" },
  { hogql: "SELECT countIf(event = 'purchase'), countIf(event = 'signed_up') FROM events", duck: "SELECT count(*) FILTER (WHERE event = 'purchase'), count(*) FILTER (WHERE event = 'signed_up') FROM events" },
  { hogql: 'SELECT count(properties.price) FROM events', duck: 'SELECT count(price) FROM events' },
  { hogql: 'SELECT count(DISTINCT distinct_id) FROM events', duck: 'SELECT count(DISTINCT distinct_id) FROM events' },
  { hogql: 'SELECT uniq(person_id) FROM events', duck: 'SELECT count(DISTINCT person) FROM events' },
  { hogql: "SELECT uniqExact(properties.$session_id) FROM events WHERE event = '$pageview'", duck: `SELECT count(DISTINCT session) FROM events WHERE ${pv}` },
  { hogql: "SELECT sum(properties.price), avg(properties.price), min(properties.price), max(properties.price) FROM events WHERE event = 'purchase'", duck: "SELECT sum(price), avg(price), min(price), max(price) FROM events WHERE event = 'purchase'" },
  { hogql: 'SELECT min(timestamp), max(timestamp) FROM events', duck: 'SELECT min(ts), max(ts) FROM events' },
  { hogql: "SELECT quantile(0.9)(properties.price) FROM events WHERE event = 'purchase'", duck: "SELECT quantile_cont(price, 0.9) FROM events WHERE event = 'purchase'" },
  { hogql: 'SELECT median(properties.price) FROM events', duck: 'SELECT quantile_cont(price, 0.5) FROM events' },
  { hogql: "SELECT sumIf(properties.price, properties.$browser = 'Chrome') FROM events", duck: "SELECT sum(price) FILTER (WHERE browser = 'Chrome') FROM events" },
  { hogql: "SELECT avgIf(properties.price, event = 'purchase') FROM events", duck: "SELECT avg(price) FILTER (WHERE event = 'purchase') FROM events" },
  { hogql: "SELECT uniqIf(person_id, event = 'signed_up') FROM events", duck: "SELECT count(DISTINCT person) FILTER (WHERE event = 'signed_up') FROM events" },
  { hogql: "SELECT count() FROM events WHERE properties.$groups.company = 'company-7'", duck: "SELECT count(*) FROM events WHERE company = 'company-7'" },
  { hogql: 'SELECT count() FROM events WHERE properties.$groups.company IS NOT NULL', duck: 'SELECT count(*) FROM events WHERE company IS NOT NULL' },

  // GROUP BY
  { hogql: 'SELECT event, count() FROM events GROUP BY event ORDER BY event', duck: 'SELECT event, count(*) FROM events GROUP BY event ORDER BY event', ordered: true },
  { hogql: 'SELECT properties.$browser AS b, count() AS c FROM events GROUP BY b ORDER BY c DESC, b', duck: 'SELECT browser AS b, count(*) AS c FROM events GROUP BY b ORDER BY c DESC, b', ordered: true },
  { hogql: 'SELECT properties.$browser, uniq(person_id) FROM events GROUP BY 1', duck: 'SELECT browser, count(DISTINCT person) FROM events GROUP BY 1' },
  { hogql: 'SELECT event, properties.$browser, count() FROM events GROUP BY event, properties.$browser', duck: 'SELECT event, browser, count(*) FROM events GROUP BY event, browser' },
  { hogql: 'SELECT person.properties.plan, count(), uniq(person_id) FROM events GROUP BY 1', duck: 'SELECT plan, count(*), count(DISTINCT person) FROM events GROUP BY 1' },
  { hogql: 'SELECT properties.$groups.company AS company, count() FROM events WHERE company IS NOT NULL GROUP BY company ORDER BY count() DESC, company LIMIT 10', duck: 'SELECT company, count(*) FROM events WHERE company IS NOT NULL GROUP BY company ORDER BY count(*) DESC, company LIMIT 10', ordered: true },
  { hogql: 'SELECT event, sum(properties.price) FROM events GROUP BY event', duck: 'SELECT event, sum(price) FROM events GROUP BY event' },
  { hogql: 'SELECT event, avg(properties.price), max(properties.price) FROM events GROUP BY event', duck: 'SELECT event, avg(price), max(price) FROM events GROUP BY event' },
  { hogql: 'SELECT distinct_id, count() FROM events GROUP BY distinct_id ORDER BY count() DESC, distinct_id LIMIT 20', duck: 'SELECT distinct_id, count(*) FROM events GROUP BY distinct_id ORDER BY count(*) DESC, distinct_id LIMIT 20', ordered: true },
  { hogql: 'SELECT toStartOfDay(timestamp) AS day, count() FROM events GROUP BY day ORDER BY day', duck: "SELECT date_trunc('day', ts) AS day, count(*) FROM events GROUP BY day ORDER BY day", ordered: true },
  { hogql: "SELECT toStartOfDay(timestamp) AS day, uniq(person_id) FROM events WHERE event = '$pageview' GROUP BY day ORDER BY day", duck: `SELECT date_trunc('day', ts) AS day, count(DISTINCT person) FROM events WHERE ${pv} GROUP BY day ORDER BY day`, ordered: true },
  { hogql: "SELECT toStartOfHour(timestamp) AS h, count() FROM events WHERE timestamp >= '2026-11-03' AND timestamp < '2026-11-04' GROUP BY h ORDER BY h", duck: "SELECT date_trunc('hour', ts) AS h, count(*) FROM events WHERE ts >= TIMESTAMP '2026-11-03' AND ts < TIMESTAMP '2026-11-04' GROUP BY h ORDER BY h", ordered: true },
  { hogql: 'SELECT toStartOfWeek(timestamp) AS w, count() FROM events GROUP BY w ORDER BY w', duck: "SELECT strftime(date_trunc('week', ts + INTERVAL 1 DAY) - INTERVAL 1 DAY, '%Y-%m-%d') AS w, count(*) FROM events GROUP BY w ORDER BY w", ordered: true },
  { hogql: 'SELECT toStartOfWeek(timestamp, 1) AS w, count() FROM events GROUP BY w ORDER BY w', duck: "SELECT strftime(date_trunc('week', ts), '%Y-%m-%d') AS w, count(*) FROM events GROUP BY w ORDER BY w", ordered: true },
  { hogql: 'SELECT toStartOfMonth(timestamp) AS m, count() FROM events GROUP BY m ORDER BY m', duck: "SELECT strftime(date_trunc('month', ts), '%Y-%m-%d') AS m, count(*) FROM events GROUP BY m ORDER BY m", ordered: true },
  { hogql: 'SELECT toDate(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d', duck: "SELECT strftime(ts, '%Y-%m-%d') AS d, count(*) FROM events GROUP BY d ORDER BY d", ordered: true },
  { hogql: 'SELECT toHour(timestamp) AS h, count() FROM events GROUP BY h ORDER BY h', duck: 'SELECT hour(ts) AS h, count(*) FROM events GROUP BY h ORDER BY h', ordered: true },
  { hogql: 'SELECT toDayOfWeek(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d', duck: 'SELECT isodow(ts) AS d, count(*) FROM events GROUP BY d ORDER BY d', ordered: true },
  { hogql: 'SELECT toYear(timestamp), toMonth(timestamp), count() FROM events GROUP BY 1, 2 ORDER BY 1, 2', duck: 'SELECT year(ts), month(ts), count(*) FROM events GROUP BY 1, 2 ORDER BY 1, 2', ordered: true },
  { hogql: 'SELECT event, toStartOfDay(timestamp) AS d, count() FROM events GROUP BY event, d ORDER BY d, event', duck: "SELECT event, date_trunc('day', ts) AS d, count(*) FROM events GROUP BY event, d ORDER BY d, event", ordered: true },
  { hogql: "SELECT toStartOfMinute(timestamp) AS m, count() FROM events WHERE timestamp >= '2026-11-03 10:00:00' AND timestamp < '2026-11-03 12:00:00' GROUP BY m ORDER BY m LIMIT 500", duck: "SELECT date_trunc('minute', ts) AS m, count(*) FROM events WHERE ts >= TIMESTAMP '2026-11-03 10:00:00' AND ts < TIMESTAMP '2026-11-03 12:00:00' GROUP BY m ORDER BY m", ordered: true },
  { hogql: 'SELECT toStartOfInterval(timestamp, INTERVAL 1 HOUR) AS h, uniq(distinct_id) FROM events WHERE toDate(timestamp) = \'2026-11-04\' GROUP BY h ORDER BY h', duck: "SELECT date_trunc('hour', ts) AS h, count(DISTINCT distinct_id) FROM events WHERE CAST(ts AS DATE) = DATE '2026-11-04' GROUP BY h ORDER BY h", ordered: true },
  { hogql: 'SELECT toStartOfDay(timestamp + INTERVAL 6 HOUR) AS d, count() FROM events GROUP BY d ORDER BY d', duck: "SELECT date_trunc('day', ts + INTERVAL 6 HOUR) AS d, count(*) FROM events GROUP BY d ORDER BY d", ordered: true },

  // functions
  { hogql: "SELECT if(properties.price > 100, 'high', 'low') AS bucket, count() FROM events WHERE event = 'purchase' GROUP BY bucket ORDER BY bucket", duck: "SELECT CASE WHEN price > 100 THEN 'high' ELSE 'low' END AS bucket, count(*) FROM events WHERE event = 'purchase' GROUP BY bucket ORDER BY bucket", ordered: true },
  { hogql: "SELECT multiIf(properties.price < 50, 'a', properties.price < 150, 'b', 'c') AS t, count() FROM events WHERE event = 'purchase' GROUP BY t ORDER BY t", duck: "SELECT CASE WHEN price < 50 THEN 'a' WHEN price < 150 THEN 'b' ELSE 'c' END AS t, count(*) FROM events WHERE event = 'purchase' GROUP BY t ORDER BY t", ordered: true },
  { hogql: "SELECT CASE WHEN properties.$browser = 'Chrome' THEN 1 ELSE 0 END AS chrome, count() FROM events GROUP BY chrome ORDER BY chrome", duck: "SELECT CASE WHEN browser = 'Chrome' THEN 1 ELSE 0 END AS chrome, count(*) FROM events GROUP BY chrome ORDER BY chrome", ordered: true },
  { hogql: "SELECT CASE event WHEN 'purchase' THEN 'money' WHEN 'signed_up' THEN 'growth' ELSE 'other' END AS kind, count() FROM events GROUP BY kind", duck: "SELECT CASE event WHEN 'purchase' THEN 'money' WHEN 'signed_up' THEN 'growth' ELSE 'other' END AS kind, count(*) FROM events GROUP BY kind" },
  { hogql: "SELECT coalesce(properties.$current_url, 'none') AS u, count() FROM events GROUP BY u ORDER BY count() DESC, u LIMIT 5", duck: "SELECT coalesce(url, 'none') AS u, count(*) FROM events GROUP BY u ORDER BY count(*) DESC, u LIMIT 5", ordered: true },
  { hogql: 'SELECT count() FROM events WHERE ifNull(properties.price, 0) > 190', duck: 'SELECT count(*) FROM events WHERE coalesce(price, 0) > 190' },
  { hogql: 'SELECT substring(properties.$current_url, 20, 5) AS s, count() FROM events WHERE properties.$current_url IS NOT NULL GROUP BY s ORDER BY s', duck: 'SELECT substring(url, 20, 5) AS s, count(*) FROM events WHERE url IS NOT NULL GROUP BY s ORDER BY s', ordered: true },
  { hogql: "SELECT concat(event, '/', properties.$browser) AS k, count() FROM events GROUP BY k ORDER BY k", duck: "SELECT concat(event, '/', browser) AS k, count(*) FROM events GROUP BY k ORDER BY k", ordered: true },
  { hogql: 'SELECT length(distinct_id) AS l, count() FROM events GROUP BY l ORDER BY l', duck: 'SELECT length(distinct_id) AS l, count(*) FROM events GROUP BY l ORDER BY l', ordered: true },
  { hogql: 'SELECT upper(properties.$browser) AS b, count() FROM events GROUP BY b ORDER BY b', duck: 'SELECT upper(browser) AS b, count(*) FROM events GROUP BY b ORDER BY b', ordered: true },
  { hogql: "SELECT floor(properties.price / 10) * 10 AS bucket, count() FROM events WHERE event = 'purchase' GROUP BY bucket ORDER BY bucket", duck: "SELECT floor(price / 10) * 10 AS bucket, count(*) FROM events WHERE event = 'purchase' GROUP BY bucket ORDER BY bucket", ordered: true },
  { hogql: 'SELECT toString(toDate(timestamp)) AS d, count() FROM events GROUP BY d ORDER BY d LIMIT 3', duck: "SELECT strftime(ts, '%Y-%m-%d') AS d, count(*) FROM events GROUP BY d ORDER BY d LIMIT 3", ordered: true },
  { hogql: "SELECT toFloat(properties.price) * 2 AS x FROM events WHERE event = 'purchase' ORDER BY x DESC LIMIT 5", duck: "SELECT price * 2 AS x FROM events WHERE event = 'purchase' ORDER BY x DESC LIMIT 5", ordered: true },
  { hogql: "SELECT intDiv(toInt(properties.price), 50) AS b, count() FROM events WHERE event = 'purchase' GROUP BY b ORDER BY b", duck: "SELECT CAST(trunc(price) AS BIGINT) // 50 AS b, count(*) FROM events WHERE event = 'purchase' GROUP BY b ORDER BY b", ordered: true },
  { hogql: "SELECT startsWith(distinct_id, 'anon') AS a, count() FROM events GROUP BY a ORDER BY a", duck: "SELECT starts_with(distinct_id, 'anon') AS a, count(*) FROM events GROUP BY a ORDER BY a", ordered: true },
  { hogql: "SELECT replaceAll(properties.$current_url, 'https://example.com', '') AS p, count() FROM events WHERE event = '$pageview' GROUP BY p ORDER BY count() DESC, p LIMIT 10", duck: `SELECT replace(url, 'https://example.com', '') AS p, count(*) FROM events WHERE ${pv} GROUP BY p ORDER BY count(*) DESC, p LIMIT 10`, ordered: true },
  { hogql: "SELECT count() FROM events WHERE dateDiff('hour', toStartOfDay(timestamp), timestamp) < 6", duck: "SELECT count(*) FROM events WHERE date_diff('hour', date_trunc('day', ts), ts) < 6" },
  { hogql: "SELECT count() FROM events WHERE timestamp > toDateTime('2026-11-07 00:00:00') - INTERVAL 2 DAY", duck: "SELECT count(*) FROM events WHERE ts > TIMESTAMP '2026-11-05 00:00:00'" },
  { hogql: 'SELECT count() FROM events WHERE toDayOfWeek(timestamp) IN (6, 7)', duck: 'SELECT count(*) FROM events WHERE isodow(ts) IN (6, 7)' },
  { hogql: "SELECT greatest(properties.price, 100) AS g FROM events WHERE event = 'purchase' ORDER BY g DESC LIMIT 3", duck: "SELECT greatest(price, 100) AS g FROM events WHERE event = 'purchase' ORDER BY g DESC LIMIT 3", ordered: true },
  { hogql: 'SELECT event, min(properties.$current_url) FROM events GROUP BY event', duck: 'SELECT event, min(url) FROM events GROUP BY event' },
  { hogql: "SELECT dateDiff('day', min(timestamp), max(timestamp)) FROM events", duck: "SELECT date_diff('day', min(ts), max(ts)) FROM events" },
  { hogql: "SELECT event, count() FROM events WHERE position(distinct_id, '-1') > 0 GROUP BY event", duck: "SELECT event, count(*) FROM events WHERE position('-1' IN distinct_id) > 0 GROUP BY event" },

  // persons: on events (as at the event) and current (joined)
  { hogql: 'SELECT p.properties.plan AS plan, count() FROM events e JOIN persons p ON e.person_id = p.id GROUP BY plan ORDER BY plan', duck: 'SELECT plan, count(*) FROM events GROUP BY plan ORDER BY plan', ordered: true },
  { hogql: 'SELECT count() FROM persons', duck: 'SELECT count(DISTINCT person) FROM events' },
  { hogql: 'SELECT properties.plan, count() FROM persons GROUP BY 1 ORDER BY 1', duck: 'SELECT plan, count(*) FROM (SELECT DISTINCT person, plan FROM events) GROUP BY 1 ORDER BY 1', ordered: true },
  { hogql: 'SELECT count() FROM person_distinct_ids', duck: 'SELECT count(DISTINCT distinct_id) FROM events' },
  { hogql: "SELECT count() FROM events e LEFT JOIN persons p ON e.person_id = p.id WHERE p.properties.plan = 'pro'", duck: "SELECT count(*) FROM events WHERE plan = 'pro'" },
  { hogql: 'SELECT pdi.person_id = e.person_id AS same, count() FROM events e JOIN person_distinct_ids pdi ON e.distinct_id = pdi.distinct_id GROUP BY same', duck: 'SELECT true AS same, count(*) FROM events' },
  { hogql: 'SELECT person.properties.plan, uniq(person_id) FROM events GROUP BY 1 ORDER BY 1', duck: 'SELECT plan, count(DISTINCT person) FROM events GROUP BY 1 ORDER BY 1', ordered: true },
  { hogql: "SELECT p.properties.plan AS plan, uniq(e.person_id) FROM events e INNER JOIN persons p ON p.id = e.person_id WHERE e.event = 'purchase' GROUP BY plan ORDER BY plan", duck: "SELECT plan, count(DISTINCT person) FROM events WHERE event = 'purchase' GROUP BY plan ORDER BY plan", ordered: true },
  { hogql: "SELECT count() FROM events e JOIN person_distinct_ids d ON e.distinct_id = d.distinct_id JOIN persons p ON d.person_id = p.id WHERE p.properties.plan = 'free'", duck: "SELECT count(*) FROM events WHERE plan = 'free'" },
  { hogql: 'SELECT count() AS c FROM events GROUP BY person_id ORDER BY c DESC LIMIT 5', duck: 'SELECT count(*) AS c FROM events GROUP BY person ORDER BY c DESC LIMIT 5', ordered: true },
  { hogql: "SELECT person_id, count(), max(properties.price) FROM events WHERE event = 'purchase' GROUP BY person_id LIMIT 10000", duck: "SELECT person, count(*), max(price) FROM events WHERE event = 'purchase' GROUP BY person" },
  { hogql: "SELECT e.event, count() FROM events e JOIN (SELECT person_id, min(timestamp) AS first FROM events GROUP BY person_id) f ON e.person_id = f.person_id WHERE e.timestamp = f.first GROUP BY e.event ORDER BY e.event", duck: 'SELECT e.event, count(*) FROM events e JOIN (SELECT person, min(ts) AS first FROM events GROUP BY person) f ON e.person = f.person WHERE e.ts = f.first GROUP BY e.event ORDER BY e.event', ordered: true },
  { hogql: "SELECT a.d, a.c, b.c FROM (SELECT toDate(timestamp) AS d, count() AS c FROM events WHERE event = '$pageview' GROUP BY d) a JOIN (SELECT toDate(timestamp) AS d, count() AS c FROM events WHERE event = 'purchase' GROUP BY d) b ON a.d = b.d ORDER BY a.d", duck: `SELECT a.d, a.c, b.c FROM (SELECT strftime(ts, '%Y-%m-%d') AS d, count(*) AS c FROM events WHERE ${pv} GROUP BY d) a JOIN (SELECT strftime(ts, '%Y-%m-%d') AS d, count(*) AS c FROM events WHERE event = 'purchase' GROUP BY d) b ON a.d = b.d ORDER BY a.d`, ordered: true },
  { hogql: "SELECT x.b, y.c FROM (SELECT DISTINCT properties.$browser AS b FROM events) x LEFT JOIN (SELECT properties.$browser AS b, count() AS c FROM events WHERE event = 'purchase' AND properties.price > 199 GROUP BY b) y ON x.b = y.b ORDER BY x.b", duck: "SELECT x.b, y.c FROM (SELECT DISTINCT browser AS b FROM events) x LEFT JOIN (SELECT browser AS b, count(*) AS c FROM events WHERE event = 'purchase' AND price > 199 GROUP BY b) y ON x.b = y.b ORDER BY x.b", ordered: true },
  { hogql: "SELECT e.distinct_id, e.timestamp FROM events e JOIN (SELECT person_id FROM events WHERE event = 'purchase' AND properties.price > 199) big ON e.person_id = big.person_id WHERE e.event = 'signed_up' ORDER BY e.timestamp, e.distinct_id", duck: "SELECT e.distinct_id, e.ts FROM events e JOIN (SELECT person FROM events WHERE event = 'purchase' AND price > 199) big ON e.person = big.person WHERE e.event = 'signed_up' ORDER BY e.ts, e.distinct_id", ordered: true },

  // subqueries in FROM, WITH
  { hogql: 'SELECT avg(c) FROM (SELECT person_id, count() AS c FROM events GROUP BY person_id)', duck: 'SELECT avg(c) FROM (SELECT person, count(*) AS c FROM events GROUP BY person)' },
  { hogql: 'SELECT max(c), min(c) FROM (SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id)', duck: 'SELECT max(c), min(c) FROM (SELECT distinct_id, count(*) AS c FROM events GROUP BY distinct_id)' },
  { hogql: "SELECT c, count() FROM (SELECT person_id, count() AS c FROM events WHERE event = 'purchase' GROUP BY person_id) GROUP BY c ORDER BY c", duck: "SELECT c, count(*) FROM (SELECT person, count(*) AS c FROM events WHERE event = 'purchase' GROUP BY person) GROUP BY c ORDER BY c", ordered: true },
  { hogql: 'SELECT day, avg(n) FROM (SELECT toStartOfDay(timestamp) AS day, person_id, count() AS n FROM events GROUP BY day, person_id) GROUP BY day ORDER BY day', duck: "SELECT day, avg(n) FROM (SELECT date_trunc('day', ts) AS day, person, count(*) AS n FROM events GROUP BY day, person) GROUP BY day ORDER BY day", ordered: true },
  { hogql: "SELECT count() FROM (SELECT DISTINCT person_id FROM events WHERE event = 'signed_up')", duck: "SELECT count(*) FROM (SELECT DISTINCT person FROM events WHERE event = 'signed_up')" },
  { hogql: "SELECT sum(c) FROM (SELECT event, count() AS c FROM events GROUP BY event) WHERE event LIKE '$%'", duck: "SELECT sum(c) FROM (SELECT event, count(*) AS c FROM events GROUP BY event) WHERE event LIKE '$%'" },
  { hogql: "WITH buyers AS (SELECT person_id FROM events WHERE event = 'purchase' GROUP BY person_id) SELECT count() FROM buyers", duck: "WITH buyers AS (SELECT person FROM events WHERE event = 'purchase' GROUP BY person) SELECT count(*) FROM buyers" },
  { hogql: "SELECT count() FROM (SELECT * FROM (SELECT event, timestamp FROM events WHERE event = 'purchase') WHERE timestamp >= '2026-11-01')", duck: "SELECT count(*) FROM (SELECT * FROM (SELECT event, ts FROM events WHERE event = 'purchase') WHERE ts >= TIMESTAMP '2026-11-01')" },
  { hogql: "WITH daily AS (SELECT toDate(timestamp) AS d, uniq(person_id) AS u FROM events WHERE event = '$pageview' GROUP BY d) SELECT max(u), min(u), sum(u) FROM daily", duck: `WITH daily AS (SELECT CAST(ts AS DATE) AS d, count(DISTINCT person) AS u FROM events WHERE ${pv} GROUP BY d) SELECT max(u), min(u), sum(u) FROM daily` },

  // IN subqueries and scalar subqueries
  { hogql: "SELECT count() FROM events WHERE person_id IN (SELECT person_id FROM events WHERE event = 'purchase')", duck: "SELECT count(*) FROM events WHERE person IN (SELECT person FROM events WHERE event = 'purchase')" },
  { hogql: "SELECT uniq(person_id) FROM events WHERE event = '$pageview' AND person_id NOT IN (SELECT person_id FROM events WHERE event = 'signed_up')", duck: `SELECT count(DISTINCT person) FROM events WHERE ${pv} AND person NOT IN (SELECT person FROM events WHERE event = 'signed_up')` },
  { hogql: 'SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE properties.price > 199)', duck: 'SELECT count(*) FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE price > 199)' },
  { hogql: 'SELECT count() FROM events WHERE properties.price > (SELECT avg(properties.price) FROM events)', duck: 'SELECT count(*) FROM events WHERE price > (SELECT avg(price) FROM events)' },

  // HAVING, DISTINCT, ORDER BY, LIMIT, OFFSET, UNION ALL, no FROM
  { hogql: 'SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id HAVING c > 40 ORDER BY c DESC, distinct_id', duck: 'SELECT distinct_id, count(*) AS c FROM events GROUP BY distinct_id HAVING c > 40 ORDER BY c DESC, distinct_id', ordered: true },
  { hogql: 'SELECT properties.$browser AS b, count() AS c FROM events GROUP BY b HAVING count() > 1000 ORDER BY b', duck: 'SELECT browser AS b, count(*) AS c FROM events GROUP BY b HAVING count(*) > 1000 ORDER BY b', ordered: true },
  { hogql: 'SELECT DISTINCT event FROM events ORDER BY event', duck: 'SELECT DISTINCT event FROM events ORDER BY event', ordered: true },
  { hogql: 'SELECT DISTINCT properties.$browser, event FROM events ORDER BY 1, 2', duck: 'SELECT DISTINCT browser, event FROM events ORDER BY 1, 2', ordered: true },
  { hogql: 'SELECT event, count() AS c FROM events GROUP BY event ORDER BY event LIMIT 2 OFFSET 1', duck: 'SELECT event, count(*) AS c FROM events GROUP BY event ORDER BY event LIMIT 2 OFFSET 1', ordered: true },
  { hogql: 'SELECT distinct_id FROM events ORDER BY timestamp DESC, distinct_id LIMIT 10', duck: 'SELECT distinct_id FROM events ORDER BY ts DESC, distinct_id LIMIT 10', ordered: true },
  { hogql: "SELECT timestamp, event FROM events WHERE event = 'purchase' ORDER BY timestamp, distinct_id LIMIT 5 OFFSET 10", duck: "SELECT ts, event FROM events WHERE event = 'purchase' ORDER BY ts, distinct_id LIMIT 5 OFFSET 10", ordered: true },
  { hogql: 'SELECT timestamp FROM events ORDER BY timestamp DESC LIMIT 3', duck: 'SELECT ts FROM events ORDER BY ts DESC LIMIT 3', ordered: true },
  { hogql: "SELECT properties.price AS p FROM events WHERE event IN ('purchase', 'signed_up') ORDER BY p ASC NULLS FIRST LIMIT 3", duck: "SELECT price AS p FROM events WHERE event IN ('purchase', 'signed_up') ORDER BY p ASC NULLS FIRST LIMIT 3", ordered: true },
  { hogql: "SELECT properties.price AS p FROM events WHERE event IN ('purchase', 'signed_up') ORDER BY p DESC LIMIT 3", duck: "SELECT price AS p FROM events WHERE event IN ('purchase', 'signed_up') ORDER BY p DESC NULLS LAST LIMIT 3", ordered: true },
  { hogql: "SELECT event, count() FROM (SELECT event FROM events WHERE event = 'purchase' UNION ALL SELECT event FROM events WHERE event = 'signed_up') GROUP BY event ORDER BY event", duck: "SELECT event, count(*) FROM (SELECT event FROM events WHERE event = 'purchase' UNION ALL SELECT event FROM events WHERE event = 'signed_up') GROUP BY event ORDER BY event", ordered: true },
  { hogql: "SELECT 'a' AS k, count() FROM events WHERE event = 'purchase' UNION ALL SELECT 'b', count() FROM events WHERE event = '$pageleave'", duck: "SELECT 'a' AS k, count(*) FROM events WHERE event = 'purchase' UNION ALL SELECT 'b', count(*) FROM events WHERE event = '$pageleave'" },
  { hogql: "SELECT 1 + 2 AS x, 'text' AS y, 7 / 2 AS z, 7 % 3 AS w", duck: "SELECT 3 AS x, 'text' AS y, 3.5::DOUBLE AS z, 1 AS w" },
  { hogql: "SELECT count() FROM events WHERE event = '$pageview' LIMIT 1", duck: `SELECT count(*) FROM events WHERE ${pv}` },
  { hogql: "SELECT event, count() FROM events WHERE event = 'nothing-like-this' GROUP BY event", duck: "SELECT event, count(*) FROM events WHERE event = 'nothing-like-this' GROUP BY event" },
  { hogql: "SELECT count(), sum(properties.price) FROM events WHERE event = 'nothing-like-this'", duck: "SELECT count(*), sum(price) FROM events WHERE event = 'nothing-like-this'" },

  // placeholders
  {
    hogql: 'SELECT count() FROM events WHERE {filters}', duck: "SELECT count(*) FROM events WHERE browser = 'Chrome' AND ts >= TIMESTAMP '2026-11-01' AND ts < TIMESTAMP '2026-11-05'",
    extra: { filters: { properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }], dateRange: { date_from: '2026-11-01', date_to: '2026-11-05' } } },
  },
  {
    hogql: "SELECT event, count() FROM events WHERE event != '$pageview' AND {filters} GROUP BY event", duck: "SELECT event, count(*) FROM events WHERE event <> '$pageview' AND plan = 'pro' GROUP BY event",
    extra: { filters: { properties: [{ key: 'plan', value: 'pro', type: 'person' }] } },
  },
  { hogql: 'SELECT count() FROM events WHERE {filters}', duck: 'SELECT count(*) FROM events', extra: { filters: {} } },
  { hogql: 'SELECT count() FROM events WHERE event = {ev} AND properties.price > {min}', duck: "SELECT count(*) FROM events WHERE event = 'purchase' AND price > 150", extra: { values: { ev: 'purchase', min: 150 } } },
];

/** The same questions in a zone with a daylight-saving change inside the dataset (2026-11-01). */
const local = "timezone('America/New_York', ts AT TIME ZONE 'UTC')";
export const NEW_YORK_CASES: Case[] = [
  { hogql: 'SELECT toStartOfDay(timestamp) AS day, count() FROM events GROUP BY day ORDER BY day', duck: `SELECT timezone('America/New_York', date_trunc('day', ${local})) AS day, count(*) FROM events GROUP BY day ORDER BY day`, ordered: true },
  { hogql: 'SELECT toDate(timestamp) AS d, uniq(person_id) FROM events GROUP BY d ORDER BY d', duck: `SELECT strftime(${local}, '%Y-%m-%d') AS d, count(DISTINCT person) FROM events GROUP BY d ORDER BY d`, ordered: true },
  { hogql: 'SELECT toHour(timestamp) AS h, count() FROM events GROUP BY h ORDER BY h', duck: `SELECT hour(${local}) AS h, count(*) FROM events GROUP BY h ORDER BY h`, ordered: true },
  { hogql: "SELECT count() FROM events WHERE timestamp >= '2026-11-01' AND timestamp < '2026-11-02'", duck: `SELECT count(*) FROM events WHERE ${local} >= TIMESTAMP '2026-11-01' AND ${local} < TIMESTAMP '2026-11-02'` },
  { hogql: "SELECT toStartOfHour(timestamp) AS h, count() FROM events WHERE toDate(timestamp) = '2026-11-01' GROUP BY h ORDER BY h", duck: `SELECT date_trunc('hour', ts) AS h, count(*) FROM events WHERE CAST(${local} AS DATE) = DATE '2026-11-01' GROUP BY h ORDER BY h`, ordered: true },
  { hogql: 'SELECT toStartOfWeek(timestamp) AS w, count() FROM events GROUP BY w ORDER BY w', duck: `SELECT strftime(date_trunc('week', ${local} + INTERVAL 1 DAY) - INTERVAL 1 DAY, '%Y-%m-%d') AS w, count(*) FROM events GROUP BY w ORDER BY w`, ordered: true },
  { hogql: "SELECT toStartOfDay(timestamp) AS day, uniq(person_id) FROM events WHERE event = '$pageview' GROUP BY day ORDER BY day", duck: `SELECT timezone('America/New_York', date_trunc('day', ${local})) AS day, count(DISTINCT person) FROM events WHERE ${pv} GROUP BY day ORDER BY day`, ordered: true },
  { hogql: "SELECT dateDiff('day', toDateTime('2026-10-30 12:00:00'), timestamp) AS n, count() FROM events GROUP BY n ORDER BY n", duck: `SELECT date_diff('day', TIMESTAMP '2026-10-30 12:00:00', ${local}) AS n, count(*) FROM events GROUP BY n ORDER BY n`, ordered: true },
];
