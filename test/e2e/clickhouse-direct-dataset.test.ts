// The analytics dataset generated inside ClickHouse (bench/lib/clickhouse-direct-dataset.ts, the loader of
// `npm run bench:analytics-direct`): at 20,000 events it holds exactly that many, every event has a person, and a
// Quill that acknowledged no event, answering with QUILL_ANALYTICS=clickhouse, answers a trend and a DAU from it
// equal to plain SQL on the same table.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClickHouseProcess } from '../../bench/lib/clickhouse-process.js';
import { DEFAULT_DATASET } from '../../bench/lib/analytics-dataset.js';
import { dayEventsSql, distinctIdsSql, eventsPerDay, extraEventsSql, personCreatedAtSql, personsSql, signUpEventsSql } from '../../bench/lib/clickhouse-direct-dataset.js';
import { schemaStatements } from '../../src/stores/clickhouse/schema.js';
import { Client, removeDir, startQuill } from '../helpers/quill.js';

const opts = { ...DEFAULT_DATASET, events: 20_000, persons: 600, days: 7 };
const TEAM = 1;
const from = new Date(opts.end - opts.days * 86_400_000).toISOString().slice(0, 10);
const to = new Date(opts.end - 86_400_000).toISOString().slice(0, 10);

t.test('a dataset loaded straight into ClickHouse is answered from ClickHouse as SQL counts it', async (t) => {
  const ch = new ClickHouseProcess(mkdtempSync(join(tmpdir(), 'quill-ch-direct-')));
  await ch.start();
  t.teardown(async () => {
    if (!t.passing()) console.error(`ClickHouse shim output:\n${ch.output}`);
    await ch.stop();
    removeDir(ch.dataDir);
  });
  for (const sql of schemaStatements({ database: 'posthog', cluster: null })) await ch.query(sql);
  const [{ extra }] = await ch.query<{ extra: string }>(extraEventsSql(opts));
  const perDay = eventsPerDay(opts, opts.events - Number(extra));
  for (let day = 0; day < opts.days; day++) await ch.query(dayEventsSql(opts, TEAM, 'posthog', day, perDay[day]!));
  await ch.query(signUpEventsSql(opts, TEAM, 'posthog'));
  await ch.query(personsSql(TEAM, 'posthog'));
  await ch.query(distinctIdsSql(TEAM, 'posthog'));
  for (const sql of personCreatedAtSql(TEAM, 'posthog')) await ch.query(sql);

  const [counts] = await ch.query<Record<string, string>>(`SELECT count() AS events, countIf(person_created_at <= toDateTime64(0, 3)) AS without_person,
    uniqExact(uuid) AS uuids, countIf(timestamp < '${from}' OR timestamp >= toDate('${to}') + 1) AS outside FROM posthog.events`);
  t.same(counts, { events: '20000', without_person: '0', uuids: '20000', outside: '0' }, 'every event, each with its own uuid, a person and a time in the dataset');
  const [persons] = await ch.query<Record<string, string>>(`SELECT (SELECT count() FROM posthog.person) AS persons,
    (SELECT uniqExact(person_id) FROM posthog.events) AS of_events, (SELECT uniqExact(distinct_id) FROM posthog.events) AS ids,
    (SELECT count() FROM posthog.person_distinct_id2) AS id_rows`);
  t.equal(persons!.persons, persons!.of_events, 'a person row for every person of the events');
  t.equal(persons!.id_rows, persons!.ids, 'a distinct id row for every distinct id');

  const quill = await startQuill({ env: { QUILL_CLICKHOUSE_URL: ch.url, QUILL_CLICKHOUSE_DATABASE: 'posthog', QUILL_ANALYTICS: 'clickhouse' } });
  t.teardown(async () => {
    await quill.stop();
    removeDir(quill.dataDir);
  });
  const api = new Client(quill.base);
  t.equal((await api.get('/api/projects/@current/')).body.id, TEAM, 'the rows are the project\'s');

  const perDaySql = (value: string) => `SELECT toString(toDate(timestamp)) AS day, ${value} AS v FROM posthog.events
    WHERE event = '$pageview' GROUP BY day ORDER BY day`;
  for (const [math, value] of [['total', 'count()'], ['dau', 'uniqExact(person_id)']] as const) {
    const res = await api.get(`/api/projects/@current/insights/trend/?events=${encodeURIComponent(JSON.stringify([{ id: '$pageview', math }]))}&date_from=${from}&date_to=${to}&refresh=true`);
    t.equal(res.status, 200);
    t.same(res.body.clickhouse, { fallback: null }, `${math}: answered by ClickHouse`);
    const answered = Object.fromEntries(res.body.result[0].days.map((d: string, i: number) => [d, res.body.result[0].data[i]]));
    const counted = Object.fromEntries((await ch.query<{ day: string; v: string }>(perDaySql(value), 'posthog')).map((r) => [r.day, Number(r.v)]));
    t.equal(Object.keys(counted).length, opts.days);
    t.same(answered, counted, `${math} per day equals the SQL count`);
  }
});
