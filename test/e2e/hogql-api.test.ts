/**
 * HogQLQuery over HTTP: PostHog's response shape (rows, columns, [name, type] pairs, the default page of 100 with
 * hasMore), the refresh modes, constructs Quill does not support answered 400 with the construct named, statements
 * that write refused without touching anything, and a `query:read` key that can query and do nothing else.
 */
import t from 'tap';
import { PROJECT_KEY, quillForFile, type Client } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
let api: Client;

const START = Date.UTC(2026, 9, 1);
const EVENTS = 150;

async function query(client: Client, sql: string, extra: Record<string, unknown> = {}, body: Record<string, unknown> = {}) {
  return client.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query: sql, ...extra }, ...body });
}

async function count(): Promise<number> {
  const res = await query(api, 'SELECT count() FROM events', {}, { refresh: 'force_blocking' });
  return res.body.results[0][0];
}

t.before(async () => {
  api = server.api;
  const batch = Array.from({ length: EVENTS }, (_, i) => ({
    event: i % 3 === 0 ? 'signed_up' : '$pageview',
    distinct_id: `user-${String(i).padStart(3, '0')}`,
    timestamp: new Date(START + i * 3_600_000).toISOString(),
    properties: { $browser: i % 2 ? 'Chrome' : 'Safari', price: i, $set: { plan: i % 5 ? 'free' : 'pro' } },
  }));
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch }) });
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
});

t.test('the answer has the shape of PostHog\'s HogQLQueryResponse', async (t) => {
  const res = await query(api, 'SELECT event, count() AS c, min(timestamp), toDate(min(timestamp)) FROM events GROUP BY event ORDER BY event');
  t.equal(res.status, 200, res.text);
  const b = res.body;
  t.same(b.results, [['$pageview', 100, '2026-10-01T01:00:00Z', '2026-10-01'], ['signed_up', 50, '2026-10-01T00:00:00Z', '2026-10-01']]);
  t.same(b.columns, ['event', 'c', 'min(timestamp)', 'toDate(min(timestamp))']);
  t.same(b.types, [['event', 'String'], ['c', 'Int64'], ['min(timestamp)', "DateTime64(6, 'UTC')"], ['toDate(min(timestamp))', 'Date']]);
  t.match(b.hogql, /^SELECT event, count\(\) AS c, .* FROM events GROUP BY event ORDER BY event ASC LIMIT 101$/);
  t.equal(b.hasMore, false);
  t.equal(b.limit, 100);
  t.equal(b.offset, 0);
  t.equal(b.is_cached, false);
  t.type(b.last_refresh, 'string');
  t.ok(Array.isArray(b.timings) && b.timings.every((x: { k: string; t: number }) => typeof x.k === 'string' && typeof x.t === 'number'));
  const again = await query(api, 'SELECT event, count() AS c, min(timestamp), toDate(min(timestamp)) FROM events GROUP BY event ORDER BY event');
  t.same(again.body.results, b.results, 'asked again (perhaps answered from a cache), the same rows');
});

t.test('a query without LIMIT gets the first 100 rows and hasMore; its own LIMIT is kept, up to 50,000', async (t) => {
  const paged = await query(api, 'SELECT distinct_id FROM events ORDER BY distinct_id');
  t.equal(paged.body.results.length, 100);
  t.equal(paged.body.hasMore, true);
  t.same(paged.body.results[99], ['user-099']);
  const limited = await query(api, 'SELECT distinct_id FROM events ORDER BY distinct_id LIMIT 120');
  t.equal(limited.body.results.length, 120);
  t.equal(limited.body.hasMore, null, 'no paging when the query has its own LIMIT');
  const huge = await query(api, 'SELECT distinct_id FROM events ORDER BY distinct_id LIMIT 1000000');
  t.equal(huge.body.results.length, EVENTS);
  t.match(huge.body.hogql, /LIMIT 50000$/);
  const offset = await query(api, 'SELECT distinct_id FROM events ORDER BY distinct_id LIMIT 2 OFFSET 5');
  t.same(offset.body.results, [['user-005'], ['user-006']]);
});

t.test('async refresh: 202 with a query status, polled until complete', async (t) => {
  const res = await query(api, "SELECT count() FROM events WHERE properties.$browser = 'Chrome'", {}, { refresh: 'force_async', client_query_id: 'mine' });
  t.equal(res.status, 202, res.text);
  t.equal(res.body.client_query_id, 'mine');
  const id = res.body.query_status.id;
  let status: any = res.body.query_status;
  for (let i = 0; i < 200 && !status.complete; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = (await api.get(`/api/projects/@current/query/${id}/`)).body.query_status;
  }
  t.equal(status.complete, true);
  t.equal(status.error, false);
  t.same(status.results.results, [[75]]);
});

t.test('{filters} and values placeholders', async (t) => {
  const res = await query(api, 'SELECT count() FROM events WHERE {filters}', {
    filters: { properties: [{ key: '$browser', value: 'Safari', operator: 'exact', type: 'event' }], dateRange: { date_from: '2026-10-02', date_to: '2026-10-03' } },
  });
  t.same(res.body.results, [[12]], 'Safari events on 2026-10-02: 24 hourly events, every other one');
  const values = await query(api, 'SELECT count() FROM events WHERE event = {name} AND properties.price < {below}', { values: { name: 'signed_up', below: 30 } });
  t.same(values.body.results, [[10]]);
  const missing = await query(api, 'SELECT count() FROM events WHERE event = {name}');
  t.equal(missing.status, 400);
  t.match(missing.body.detail, /\{name\} has no value/);
});

t.test('what Quill does not support answers 400 naming the construct', async (t) => {
  const cases: [string, RegExp][] = [
    ['SELECT count() OVER () FROM events', /Window functions \(OVER\)/],
    ['SELECT arrayJoin([1, 2])', /arrayJoin/],
    ['SELECT event FROM events ARRAY JOIN [1, 2] AS x', /ARRAY JOIN/],
    ['SELECT event FROM events LIMIT 1 BY event', /LIMIT … BY/],
    ['SELECT 1 SETTINGS max_threads = 1', /SETTINGS/],
    ['SELECT 1 FORMAT JSON', /FORMAT/],
    ['SELECT count() FROM sessions', /The table sessions/],
    ['SELECT count() FROM numbers(10)', /table function numbers\(\)/],
    ['SELECT count() FROM events e RIGHT JOIN persons p ON e.person_id = p.id', /RIGHT JOIN/],
    ['SELECT count() FROM events e FULL OUTER JOIN persons p ON e.person_id = p.id', /FULL JOIN/],
    ['SELECT count() FROM events e ANY LEFT JOIN persons p ON e.person_id = p.id', /JOIN/],
    ['SELECT created_at FROM events', /events\.created_at/],
    ['SELECT arrayMap(x -> x * 2, [1, 2])', /Lambda functions/],
    ['SELECT quantiles(0.5, 0.9)(properties.price) FROM events', /quantiles\(\)/],
    ['SELECT sum(DISTINCT properties.price) FROM events', /sum\(DISTINCT …\)/],
    ["SELECT toTimeZone(timestamp, 'UTC') FROM events", /toTimeZone\(\)/],
    ['SELECT event FROM events UNION SELECT event FROM events', /UNION without ALL/],
    ['SELECT 1 INTERSECT SELECT 1', /INTERSECT/],
    ['SELECT count() FROM events GROUP BY event WITH TOTALS', /WITH TOTALS/],
    ['SELECT count() FROM events FINAL', /FINAL/],
    ['SELECT count() FROM events e JOIN events f ON e.timestamp < f.timestamp', /without an equality/],
    ["SELECT count() FROM events WHERE properties.x::String = 'a'", /:: cast/],
    ['SELECT sleep(3)', /sleep\(\)/],
    ['SELECT count() FROM events SAMPLE 0.1', /SAMPLE/],
    ['SELECT DISTINCT ON (event) event FROM events', /DISTINCT ON/],
    ['WITH 1 AS x SELECT x', /scalar WITH/],
  ];
  for (const [sql, detail] of cases) {
    const res = await query(api, sql);
    t.equal(res.status, 400, sql);
    t.equal(res.body.type, 'validation_error', sql);
    t.match(res.body.detail, detail, sql);
  }
});

t.test('mistakes answer 400 with what is wrong', async (t) => {
  const cases: [string, RegExp][] = [
    ['SELEC 1', /must start with SELECT/],
    ['SELECT (1', /Expected "\)"/],
    ["SELECT 'unterminated", /Unterminated string/],
    ['SELECT nosuchfunction(1)', /Unknown function nosuchfunction\(\)/],
    ['SELECT nosuchfield FROM events', /Unknown field nosuchfield/],
    ['SELECT count() FROM nosuchtable', /Unknown table "nosuchtable"/],
    ['SELECT event, count() FROM events', /The column event is neither in GROUP BY nor inside an aggregate function/],
    ['SELECT count(count()) FROM events', /inside another aggregate function/],
    ['SELECT event FROM events WHERE count() > 1', /not allowed in WHERE/],
    ['SELECT {filters}', /does not select from the events table/],
    ['SELECT toStartOfDay()', /takes 1 to 2 arguments, 0 given/],
    ['SELECT properties FROM events e JOIN persons p ON e.distinct_id = p.properties.email', /ambiguous/],
    ['SELECT event FROM events LIMIT -1', /LIMIT must be a whole number/],
    ['SELECT intDiv(1, toInt(properties.price) - toInt(properties.price)) FROM events', /Division by zero/],
  ];
  for (const [sql, detail] of cases) {
    const res = await query(api, sql);
    t.equal(res.status, 400, sql);
    t.match(res.body.detail, detail, sql);
  }
  const noText = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery' } });
  t.equal(noText.status, 400);
  t.equal(noText.body.attr, 'query');
});

t.test('no statement can write: every one is refused and the data stays as it was', async (t) => {
  const before = await count();
  const persons = (await query(api, 'SELECT count() FROM persons', {}, { refresh: 'force_blocking' })).body.results[0][0];
  const writes = [
    "INSERT INTO events (event, distinct_id) VALUES ('x', 'y')",
    'DELETE FROM events WHERE 1',
    'ALTER TABLE events DELETE WHERE 1',
    "ALTER TABLE events UPDATE event = 'x' WHERE 1",
    'DROP TABLE events',
    'TRUNCATE TABLE events',
    'CREATE TABLE x (a Int8) ENGINE = Memory',
    'SELECT 1; DROP TABLE events',
    'SELECT count() FROM events; DELETE FROM events WHERE 1',
    'OPTIMIZE TABLE events FINAL',
    'SYSTEM DROP DNS CACHE',
    "UPDATE events SET event = 'x'",
    "SELECT * FROM events INTO OUTFILE 'x'",
    'KILL QUERY WHERE 1',
    'RENAME TABLE events TO gone',
    'GRANT ALL ON *.* TO someone',
    "SET param_x = 'y'",
    'EXPLAIN SELECT 1',
    "WITH x AS (SELECT 1) INSERT INTO events SELECT * FROM x",
  ];
  for (const sql of writes) {
    const res = await query(api, sql);
    t.equal(res.status, 400, sql);
    t.equal(res.body.type, 'validation_error', sql);
  }
  t.equal(await count(), before, 'every event is still there');
  t.equal((await query(api, 'SELECT count() FROM persons', {}, { refresh: 'force_blocking' })).body.results[0][0], persons, 'every person is still there');
  const listed = await api.get('/api/projects/@current/events/?limit=1000');
  t.equal(listed.body.results.length, EVENTS, 'the events list agrees');
});

t.test('a query:read key can query and do nothing else', async (t) => {
  const created = await api.post('/api/personal_api_keys/', { label: 'sql only', scopes: ['query:read'] });
  t.equal(created.status, 201);
  const key = api.withKey(created.body.value);
  const res = await query(key, 'SELECT count() FROM events', {}, { refresh: 'force_blocking' });
  t.equal(res.status, 200);
  t.same(res.body.results, [[EVENTS]]);
  const started = await query(key, 'SELECT 1', {}, { refresh: 'force_async' });
  t.equal(started.status, 202);
  t.equal((await key.get(`/api/projects/@current/query/${started.body.query_status.id}/`)).status, 200, 'its async queries can be polled');
  const denied: [string, string, unknown?][] = [
    ['GET', '/api/projects/@current/persons/'],
    ['GET', '/api/projects/@current/feature_flags/'],
    ['POST', '/api/projects/@current/feature_flags/', { key: 'nope' }],
    ['GET', '/api/projects/@current/cohorts/'],
    ['GET', '/api/projects/@current/insights/trend/?events=%5B%7B%22id%22%3A%22%24pageview%22%7D%5D'],
    ['GET', '/api/projects/@current/event_definitions/'],
    ['PATCH', '/api/projects/@current/', { timezone: 'Europe/Paris' }],
    ['GET', '/api/users/@me/'],
    ['POST', '/api/personal_api_keys/', { label: 'more', scopes: ['*'] }],
    ['GET', '/api/organizations/@current/'],
  ];
  for (const [method, path, body] of denied) {
    const r = await key.request(method, path, body);
    t.equal(r.status, 403, `${method} ${path}`);
    t.equal(r.body.code, 'permission_denied', `${method} ${path}`);
  }
  t.equal((await api.get('/api/projects/@current/')).body.timezone, 'UTC', 'the project was not changed');
});

t.test('events.uuid is the uuid the events API shows', async (t) => {
  const listed = await api.get('/api/projects/@current/events/?distinct_id=user-007');
  t.equal(listed.body.results.length, 1);
  const id = listed.body.results[0].id as string;
  const res = await query(api, "SELECT uuid, distinct_id FROM events WHERE distinct_id = 'user-007'", {}, { refresh: 'force_blocking' });
  t.equal(res.status, 200, res.text);
  t.same(res.body.results, [[id, 'user-007']]);
  const byUuid = await query(api, `SELECT count(), any(distinct_id) FROM events WHERE uuid = '${id}'`, {}, { refresh: 'force_blocking' });
  t.same(byUuid.body.results, [[1, 'user-007']], 'filtered by uuid');
  const star = await api.post('/api/projects/@current/query/', { query: { kind: 'EventsQuery', select: ['*'], after: 'all', where: ["distinct_id = 'user-007'"] }, refresh: 'force_blocking' });
  t.equal(star.body.results[0][0].uuid, id, 'EventsQuery * carries the uuid');
});

t.test('EventsQuery: PostHog\'s events table, answered by the same engine', async (t) => {
  const events = (body: Record<string, unknown>) => api.post('/api/projects/@current/query/', { query: { kind: 'EventsQuery', ...body }, refresh: 'force_blocking' });
  const recent = await events({ select: ['*'] });
  t.equal(recent.status, 200, recent.text);
  t.same(recent.body.results, [], 'by default only the last 24 hours, and these events are older');
  const all = await events({ select: ['*', 'person'], after: 'all', limit: 2 });
  t.equal(all.body.results.length, 2);
  t.equal(all.body.hasMore, true);
  const [star, person] = all.body.results[0];
  t.match(star, { event: 'signed_up', distinct_id: 'user-000', timestamp: '2026-10-01T00:00:00Z', team_id: 1, elements_chain: '' });
  t.match(star.properties, { $browser: 'Safari', price: 0 }, 'properties as an object');
  t.match(person, { distinct_id: 'user-000', properties: { plan: 'pro' } });
  t.type(person.uuid, 'string');
  t.same(all.body.columns, ['*', 'person']);

  const grouped = await events({ select: ['event', 'count()'], after: 'all' });
  t.same(grouped.body.results, [['$pageview', 100], ['signed_up', 50]], 'grouped by the other columns, count() descending');
  t.same(grouped.body.columns, ['event', 'count()']);
  t.same(grouped.body.types, ['String', 'Int64']);

  const filtered = await events({
    select: ['distinct_id', 'properties.price -- Price', 'timestamp'], after: '2026-10-02T00:00:00Z', before: '2026-10-03T00:00:00Z',
    event: 'signed_up', where: ['properties.price > 25'], properties: [{ key: '$browser', value: 'Safari', operator: 'exact', type: 'event' }],
  });
  t.same(filtered.body.results.map((r: unknown[]) => r[0]), ['user-042', 'user-036', 'user-030'], 'newest first by default when timestamp is selected');
  t.same(filtered.body.columns, ['distinct_id', 'properties.price -- Price', 'timestamp']);

  const paged = await events({ select: ['distinct_id'], orderBy: ['distinct_id DESC'], after: 'all', limit: 3, offset: 3 });
  t.same(paged.body.results, [['user-146'], ['user-145'], ['user-144']]);
  t.equal(paged.body.offset, 3);

  const personUuid = person.uuid;
  const mine = await events({ select: ['distinct_id', 'count()'], personId: personUuid, after: 'all' });
  t.same(mine.body.results, [['user-000', 1]], 'personId: the events of that person');
  const having = await events({ select: ['event', 'count()'], where: ['count() > 60'], after: 'all' });
  t.same(having.body.results, [['$pageview', 100]], 'a condition with an aggregate is a HAVING');
  const bad = await events({ select: ['nosuch(1)'] });
  t.equal(bad.status, 400);
});

t.test('ActorsQuery: PostHog\'s persons table, answered by the same engine', async (t) => {
  const actors = (body: Record<string, unknown>) => api.post('/api/projects/@current/query/', { query: { kind: 'ActorsQuery', ...body }, refresh: 'force_blocking' });
  const all = await actors({ limit: 10 });
  t.equal(all.status, 200, all.text);
  t.same(all.body.columns, ['person', 'id', 'person.$delete']);
  t.equal(all.body.results.length, 10);
  t.equal(all.body.hasMore, true);
  const [person, id, del] = all.body.results[0];
  t.equal(person.id, id, 'the person object carries the uuid of the id column');
  t.equal(del, 1);
  t.ok(Array.isArray(person.distinct_ids) && person.distinct_ids.length === 1);
  t.equal(all.body.missing_actors_count, 0);

  const search = await actors({ search: 'USER-01', select: ['person', 'created_at'], limit: 100 });
  t.same(search.body.results.map((r: any) => r[0].distinct_ids[0]).sort(), Array.from({ length: 10 }, (_, i) => `user-01${i}`), 'a distinct id containing the text');
  const created = search.body.results.map((r: any) => Date.parse(r[1]));
  t.same(created, [...created].sort((a, b) => b - a), 'created_at newest first when selected');

  const pro = await actors({ select: ['count()'], properties: [{ key: 'plan', value: 'pro', type: 'person' }] });
  t.same(pro.body.results, [[30]], 'a person property filter');
  const plans = await actors({ select: ['properties.plan', 'count()'] });
  t.same(plans.body.results, [['free', 120], ['pro', 30]], 'grouped by the other columns, count() descending');
  const cohort = await actors({ properties: [{ key: 'id', value: 1, type: 'cohort' }] });
  t.equal(cohort.status, 400);
  t.match(cohort.body.detail, /cohort filter in an ActorsQuery/);
});
