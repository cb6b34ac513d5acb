// HogQL answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb (behind ClickHouse's HTTP
// interface, bench/lib/clickhouse-process.ts) and answering from it, one Quill with its own engine, fed the same
// events; the differential corpus (test/helpers/hogql-corpus.ts) must answer the same on both, in UTC and in
// New York. Then the security matrix: a second project's events in the same ClickHouse database are never seen
// from the first, whatever construct names the table; table functions, SETTINGS and writes are refused.
import t from 'tap';
import { ClickHouseReader } from '../../src/stores/clickhouse/reader.js';
import { NEW_YORK_CASES, UTC_CASES, type Case } from '../helpers/hogql-corpus.js';
import { event } from '../helpers/ingest.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';
import { nearlyEqual } from '../helpers/insight-compare.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);

/** Per Quill: person uuid -> a name both Quills share (the person's smallest distinct id). */
const personNames = new Map<Client, Map<string, string>>();

/** A small deterministic dataset: 30 visitors, two thirds of them identified (merges), over two weeks across DST. */
function dataset(): ReturnType<typeof event>[][] {
  const browsers = ['Chrome', 'Safari', 'Firefox'];
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 30; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const plan = u % 2 ? 'pro' : 'free';
    const batch: ReturnType<typeof event>[] = [];
    for (let k = 0; k < 12; k++) {
      const at = new Date(START + ((u * 37 + k * 29) % 14) * DAY + ((u * 13 + k * 7) % 24) * 3_600_000 + k * 61_000).toISOString();
      const id = u % 3 !== 0 && k >= 6 ? user : anon;
      const props: Record<string, unknown> = {
        $browser: browsers[(u + k) % 3], $current_url: `https://example.com/${['docs', 'blog', 'app'][k % 3]}/view-4${(u + k) % 10}`,
        $session_id: `s-${u}-${k % 3}`,
      };
      if (k === 0) props.$set = { plan };
      if (k % 4 === 1) props.$groups = { company: `company-${u % 9}` };
      const name = k % 5 === 3 ? 'purchase' : k === 2 ? 'signed_up' : k % 7 === 4 ? '$pageleave' : '$pageview';
      if (name === 'purchase') props.price = (u * 37 + k * 11) % 250;
      batch.push(event(id, name, props, { timestamp: at }));
      if (u % 3 !== 0 && k === 5) batch.push(event(user, '$identify', { $anon_distinct_id: anon, $set: { plan } }, { timestamp: at }));
    }
    batches.push(batch);
  }
  // Groups with properties, for group_0.… (company is group type 0 in both Quills: the only type).
  batches.push(Array.from({ length: 8 }, (_, c) =>
    event('admin', '$groupidentify', { $group_type: 'company', $group_key: `company-${c}`, $group_set: { name: `Company ${c}`, size: c * 10 } }, { timestamp: new Date(START).toISOString() })));
  return batches;
}

const engines = twoEngines(t, dataset);

async function hogql(api: Client, query: string, extra: Record<string, unknown> = {}, project = '@current'): Promise<{ status: number; body: any }> {
  const res = await api.post(`/api/projects/${project}/query/`, { query: { kind: 'HogQLQuery', query, ...extra }, refresh: 'force_blocking' });
  return { status: res.status, body: res.body };
}

async function rows(api: Client, query: string, extra: Record<string, unknown> = {}): Promise<unknown[][]> {
  const res = await hogql(api, query, extra);
  if (res.status !== 200) throw new Error(`${query}\n  answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.results as unknown[][];
}

async function learnPersons(api: Client): Promise<void> {
  const names = new Map<string, string>();
  for (const [uuid, distinctId] of (await rows(api, 'SELECT person_id, min(distinct_id) FROM events GROUP BY person_id LIMIT 50000')) as [string, string][]) {
    names.set(uuid, `person:${distinctId}`);
  }
  personNames.set(api, names);
}

/** JSON text with its keys sorted: a whole `properties` is the same object whatever order its keys are written in. */
function sortedJson(text: string): string {
  const sort = (v: unknown): unknown => (v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])]))
    : Array.isArray(v) ? v.map(sort) : v);
  try {
    return JSON.stringify(sort(JSON.parse(text)));
  } catch {
    return text;
  }
}

function norm(api: Client, v: unknown): unknown {
  if (typeof v === 'string') return personNames.get(api)!.get(v) ?? (v.startsWith('{') ? sortedJson(v) : v);
  return v ?? null;
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return nearlyEqual(a, b);
  return a === b;
}

const rowKey = (r: unknown[]) => JSON.stringify(r.map((v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));



async function compare(tt: Tap.Test, c: Case): Promise<void> {
  const [fromCh, fromLocal] = await Promise.all([rows(engines.chApi, c.hogql, c.extra), rows(engines.localApi, c.hogql, c.extra)]);
  const got = fromCh.map((r) => r.map((v) => norm(engines.chApi, v)));
  const want = fromLocal.map((r) => r.map((v) => norm(engines.localApi, v)));
  const a = c.ordered ? got : [...got].sort((x, y) => rowKey(x).localeCompare(rowKey(y)));
  const b = c.ordered ? want : [...want].sort((x, y) => rowKey(x).localeCompare(rowKey(y)));
  const equal = a.length === b.length && a.every((row, i) => row.length === b[i]!.length && row.every((v, j) => same(v, b[i]![j])));
  tt.ok(equal, c.hogql, equal ? {} : { clickhouse: a.slice(0, 8), local: b.slice(0, 8), clickhouseRows: a.length, localRows: b.length });
}


t.test('read-your-writes: the first query after the last batch sees every event, person and distinct id', async (tt) => {
  // No polling: the query itself waits until the export covers the events and person changes acknowledged before it.
  const query = 'SELECT (SELECT count() FROM persons), (SELECT count() FROM person_distinct_ids), (SELECT uniq(person_id) FROM events), (SELECT count() FROM events)';
  const fromCh = await hogql(engines.chApi, query);
  const fromLocal = await rows(engines.localApi, query);
  tt.equal(fromCh.status, 200);
  tt.equal(fromCh.body.clickhouse_export?.caught_up, true, 'the export had caught up');
  tt.same(fromCh.body.results, fromLocal, 'persons, distinct ids, persons of events and events as the local engine has them');
  await learnPersons(engines.chApi);
  await learnPersons(engines.localApi);
});


t.test('the answer says where it came from and that the export had caught up', async (tt) => {
  const res = await hogql(engines.chApi, "SELECT count() FROM events WHERE event = '$pageview'");
  tt.equal(res.status, 200);
  tt.equal(res.body.clickhouse_export?.caught_up, true, 'caught up');
  tt.match(res.body.clickhouse, /team_id = 1\b/, 'the ClickHouse SQL, guarded');
  // The export wrote PostHog's override table from this database's start: events' persons are looked up there.
  const persons = await hogql(engines.chApi, 'SELECT uniq(person_id) FROM events');
  tt.match(persons.body.clickhouse, /person_distinct_id_overrides/, "events' current persons through PostHog's override table");
  tt.notMatch(persons.body.clickhouse, /person_distinct_id2/, 'not through every distinct id');
  tt.same(res.body.columns, ['count()']);
  tt.same(res.body.types, [['count()', 'Int64']]);
  const localRes = await hogql(engines.localApi, "SELECT count() FROM events WHERE event = '$pageview'");
  tt.same(res.body.results, localRes.body.results, 'the same count as the local engine');
  tt.equal(localRes.body.clickhouse_export, undefined, 'the local engine says nothing of the export');
});

t.test('the differential corpus in UTC: ClickHouse answers as the local engine', async (tt) => {
  for (const c of UTC_CASES) await compare(tt, c);
});

/** {filters} with the operators a property filter has, over event and person properties. */
const FILTER_CASES: Case[] = [
  [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }],
  [{ key: '$browser', value: 'Chrome', operator: 'is_not', type: 'event' }],
  [{ key: '$current_url', value: 'DOCS', operator: 'icontains', type: 'event' }],
  [{ key: '$current_url', value: 'docs', operator: 'not_icontains', type: 'event' }],
  [{ key: '$current_url', value: 'view-4[1-3]$', operator: 'regex', type: 'event' }],
  [{ key: '$current_url', value: 'view-4[1-3]$', operator: 'not_regex', type: 'event' }],
  [{ key: 'price', value: 100, operator: 'gt', type: 'event' }],
  [{ key: 'price', value: '100', operator: 'lte', type: 'event' }],
  [{ key: 'price', operator: 'is_set', type: 'event' }],
  [{ key: 'price', operator: 'is_not_set', type: 'event' }],
  [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }],
  { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'free', type: 'person' }, { key: '$browser', value: 'Firefox', type: 'event' }] }, { type: 'AND', values: [{ key: 'price', value: 200, operator: 'gte', type: 'event' }] }] },
].map((properties) => ({ hogql: 'SELECT event, count() FROM events WHERE {filters} GROUP BY event', duck: '', extra: { filters: { properties, dateRange: { date_from: '2026-10-28', date_to: '2026-11-05' } } } }));

/** Fields the corpus does not have: groups of events, materialized columns. */
const MORE_CASES: Case[] = [
  'SELECT group_0.properties.name AS n, count() FROM events GROUP BY n ORDER BY n',
  'SELECT count() FROM events WHERE group_0.properties.size > 30',
  'SELECT $group_0, group_0.key, count() FROM events GROUP BY 1, 2 ORDER BY 1, 2',
  "SELECT e.event, g.properties.name, count() FROM events e JOIN groups g ON e.$group_0 = g.key WHERE g.index = 0 GROUP BY 1, 2",
  'SELECT count() FROM events WHERE $session_id IS NULL',
  'SELECT $session_id AS s, count() FROM events GROUP BY s ORDER BY s LIMIT 5',
  'SELECT uniq(person_id), max(group_0.properties.size) FROM events WHERE group_0.key IS NOT NULL',
  "SELECT * FROM events WHERE event = 'purchase' ORDER BY timestamp, distinct_id LIMIT 20",
  'SELECT * FROM person_distinct_ids',
  'SELECT g.*, 1 AS one FROM groups g ORDER BY key',
].map((hogql) => ({ hogql, duck: '', ordered: /ORDER BY/.test(hogql) }));

t.test('groups of events and materialized columns', async (tt) => {
  for (const c of MORE_CASES) await compare(tt, c);
  const named = await rows(engines.chApi, MORE_CASES[0]!.hogql);
  tt.ok(named.some((r) => r[0] === 'Company 1' && Number(r[1]) > 0), 'the groups are found (not only nulls on both sides)');
});

t.test("SELECT * FROM persons on ClickHouse is the Quill's own persons (its persons API)", async (tt) => {
  // Against the same Quill, not the other one: which person survives a merge of ids on two shards, and so its
  // created_at and $initial_ properties, may differ between two Quills fed the same events.
  const fromCh = await rows(engines.chApi, 'SELECT * FROM persons LIMIT 1000');
  const own = (await engines.chApi.get('/api/projects/@current/persons/?limit=1000')).body.results as { uuid: string; created_at: string; properties: Record<string, unknown>; is_identified: boolean }[];
  tt.equal(fromCh.length, own.length, `${own.length} persons`);
  const byUuid = new Map(own.map((p) => [p.uuid, p]));
  const mismatches = fromCh.filter(([id, createdAt, properties, identified]) => {
    const p = byUuid.get(id as string);
    return !p || Date.parse(createdAt as string) !== Date.parse(p.created_at) || sortedJson(properties as string) !== sortedJson(JSON.stringify(p.properties)) || identified !== p.is_identified;
  });
  tt.same(mismatches, [], 'each person as the persons API has it: id, created_at, properties, is_identified');
});

t.test('{filters} with every kind of property filter', async (tt) => {
  for (const c of FILTER_CASES) await compare(tt, c);
});

t.test('the differential corpus in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  for (const c of NEW_YORK_CASES) await compare(tt, c);
  // The UTC corpus's time buckets and string times, in a zone with a DST change inside the data.
  for (const c of UTC_CASES.filter((x) => /timestamp|\{filters\}/.test(x.hogql))) await compare(tt, c);
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test("security: another project's rows in the same ClickHouse database are never seen", async (tt) => {
  const created = await engines.chApi.post('/api/projects/', { name: 'other team' });
  tt.equal(created.status, 201);
  const other = String(created.body.id);
  const batch = [
    event('b-visitor', 'b-secret', { secret: 'b', $set: { secret: 'b' }, $groups: { company: 'b-corp' } }),
    event('b-visitor', 'b-secret', { secret: 'b' }),
    event('anon-1', 'b-secret', { secret: 'b' }), // a distinct id project A has too
    event('b-admin', '$groupidentify', { $group_type: 'company', $group_key: 'b-corp', $group_set: { secret: 'b' } }),
  ];
  const sent = await fetch(`${engines.onClickHouse.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  tt.equal(sent.status, 200);
  // Project B sees its own rows through the same path (so a 0 from A means guarded, not missing), at once: the
  // query waits for the export of what was acknowledged before it.
  const res = await hogql(engines.chApi, "SELECT (SELECT count() FROM events WHERE event = 'b-secret'), (SELECT count() FROM persons WHERE properties.secret = 'b'), (SELECT count() FROM groups WHERE properties.secret = 'b')", {}, other);
  tt.equal(res.status, 200);
  const own = res.body.results[0];
  tt.same(own, [3, 1, 1], 'project B sees its events, person and group');
  const fromA: [string, string][] = [
    ['FROM', "SELECT count() FROM events WHERE event = 'b-secret' OR properties.secret = 'b'"],
    ['JOIN', "SELECT count() FROM events a JOIN events b ON a.distinct_id = b.distinct_id WHERE b.event = 'b-secret' OR a.event = 'b-secret'"],
    ['LEFT JOIN', "SELECT countIf(p.properties.secret = 'b') FROM events e LEFT JOIN persons p ON e.person_id = p.id"],
    ['JOIN person_distinct_ids', "SELECT count() FROM events e JOIN person_distinct_ids d ON e.distinct_id = d.distinct_id WHERE d.distinct_id = 'b-visitor'"],
    ['subquery', "SELECT count() FROM (SELECT event, properties.secret AS s FROM events) WHERE event = 'b-secret' OR s = 'b'"],
    ['nested subqueries', "SELECT count() FROM (SELECT * FROM (SELECT event FROM events)) WHERE event = 'b-secret'"],
    ['CTE', "WITH x AS (SELECT event FROM events) SELECT count() FROM x WHERE event = 'b-secret'"],
    ['CTE in a subquery', "WITH x AS (SELECT distinct_id, event FROM events) SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM x WHERE event = 'b-secret')"],
    ['UNION ALL', "SELECT count() FROM (SELECT event FROM events WHERE event = 'nothing' UNION ALL SELECT event FROM events) WHERE event = 'b-secret'"],
    ['IN (SELECT …)', "SELECT count() FROM events WHERE event IN (SELECT event FROM events WHERE event = 'b-secret')"],
    ['scalar subquery', "SELECT (SELECT count() FROM events WHERE event = 'b-secret')"],
    ['persons', "SELECT count() FROM persons WHERE properties.secret = 'b'"],
    ['person_distinct_ids', "SELECT count() FROM person_distinct_ids WHERE distinct_id IN ('b-visitor', 'b-admin')"],
    ['groups', "SELECT count() FROM groups WHERE key = 'b-corp'"],
  ];
  for (const [construct, query] of fromA) {
    const res = await hogql(engines.chApi, query);
    tt.equal(res.status, 200, `${construct}: answered`);
    tt.same(res.body.results, [[0]], `${construct}: nothing of project B`);
    tt.equal(res.body.clickhouse_export?.caught_up, true, `${construct}: after the export caught up`);
  }
  // The shared distinct id anon-1 resolves to project A's person only.
  const mine = await rows(engines.chApi, "SELECT uniq(person_id), count() FROM events WHERE distinct_id = 'anon-1'");
  const mineLocal = await rows(engines.localApi, "SELECT uniq(person_id), count() FROM events WHERE distinct_id = 'anon-1'");
  tt.same(mine, mineLocal, "a distinct id both projects have: project A's events and person only");
});

t.test('security: table functions, SETTINGS and writes are refused with a 400 naming them', async (tt) => {
  const refused: [string, RegExp][] = [
    ["SELECT * FROM url('http://127.0.0.1:1/x', CSV)", /url/],
    ["SELECT * FROM file('x.csv')", /file/],
    ["SELECT * FROM remote('127.0.0.1', posthog.events)", /remote/],
    ["SELECT * FROM s3('http://x/y.csv')", /s3/],
    ["SELECT * FROM input('x String')", /input/],
    ['SELECT * FROM numbers(10)', /numbers/],
    ["SELECT count() FROM events e JOIN url('http://127.0.0.1:1/x', CSV) u ON e.event = u.c1", /url/],
    ["SELECT count() FROM events WHERE event IN (SELECT * FROM file('x'))", /file/],
    ["SELECT file('x')", /file/],
    ['SELECT count() FROM posthog.events', /posthog\.events/],
    ['SELECT count() FROM person', /person/],
    ['SELECT count() FROM events SETTINGS readonly = 0', /SETTINGS/],
    ['SELECT count() FROM (SELECT event FROM events SETTINGS max_execution_time = 1000)', /SETTINGS/],
    ["INSERT INTO events (event) VALUES ('x')", /INSERT/],
    ['ALTER TABLE events DELETE WHERE 1', /ALTER/],
    ['DROP TABLE events', /DROP/],
    ['SELECT 1; DROP TABLE events', /DROP|;/],
    ["SELECT count() FROM events FORMAT JSON", /FORMAT/],
    ['WITH x AS (SELECT event FROM x) SELECT count() FROM x', /recursive WITH/],
  ];
  for (const [query, name] of refused) {
    for (const api of [engines.chApi, engines.localApi]) {
      const res = await hogql(api, query);
      tt.equal(res.status, 400, `refused${api === engines.localApi ? ' by the local engine too' : ''}: ${query}`);
      tt.match(String(res.body?.detail), name, `naming it: ${res.body?.detail}`);
    }
  }
  // Below the printer, the connection itself cannot write: a statement that reached it would fail as read-only.
  const reader = await ClickHouseReader.open({ url: engines.ch.url, user: null, password: null, database: 'posthog', cluster: null });
  await tt.rejects(
    reader.select("INSERT INTO posthog.events (uuid, event, team_id, timestamp, _timestamp) SELECT generateUUIDv4(), 'written', 1, now(), now()", {}, { maxExecutionS: 10, maxMemoryBytes: 1e9 }),
    { code: '164' }, 'an INSERT on the query connection: READONLY',
  );
  await reader.close();
  const still = await rows(engines.chApi, 'SELECT count() FROM events');
  const stillLocal = await rows(engines.localApi, 'SELECT count() FROM events');
  tt.same(still, stillLocal, 'the events are all still there');
});

t.test('a query ClickHouse refuses while running: the reason, never the SQL Quill printed', async (tt) => {
  const res = await hogql(engines.chApi, 'SELECT intDiv(count(), 0) FROM events');
  tt.equal(res.status, 400);
  tt.match(String(res.body?.detail), /^ClickHouse could not run the query: .*ILLEGAL_DIVISION|Division by zero/, `the reason: ${res.body?.detail}`);
  tt.notMatch(String(res.body?.detail), /SELECT|team_id|FROM/, 'no SQL');
});

t.test('ClickHouse down: the query answers 503 clickhouse_unavailable, and again once it is back', async (tt) => {
  await engines.ch.stop();
  const res = await hogql(engines.chApi, 'SELECT count() FROM events');
  tt.equal(res.status, 503, 'a 503');
  tt.equal(res.body?.code, 'clickhouse_unavailable', 'saying ClickHouse did not answer');
  await engines.ch.start();
  const back = await rows(engines.chApi, "SELECT count() FROM events WHERE event = 'purchase'");
  tt.same(back, await rows(engines.localApi, "SELECT count() FROM events WHERE event = 'purchase'"), 'answers again, from the same data');
});

t.test('QUILL_ANALYTICS=clickhouse without QUILL_CLICKHOUSE_URL is refused at start-up', async (tt) => {
  const failed = await startQuill({ env: { QUILL_ANALYTICS: 'clickhouse' }, workers: 1 }).then(
    async (q) => {
      await q.stop();
      removeDir(q.dataDir);
      return null;
    },
    (error: unknown) => String((error as Error).message ?? error),
  );
  tt.ok(failed !== null, 'Quill does not start');
  tt.match(failed ?? '', /QUILL_ANALYTICS=clickhouse needs QUILL_CLICKHOUSE_URL/, 'and says why');
});
