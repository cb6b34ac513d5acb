/**
 * HogQL against DuckDB on the same events: a generated dataset (bench/lib/analytics-dataset.ts, with identify
 * merges whose distinct ids live on different shards) goes into Quill through /batch/ and into DuckDB, and a corpus
 * of SQL queries — counts, filters, functions, GROUP BY, time buckets in two time zones, persons on events, joins to
 * persons, subqueries in FROM and IN, HAVING, DISTINCT, LIMIT/OFFSET, UNION ALL, {filters} — runs on both: each
 * HogQL query through POST /query/ with its DuckDB translation beside it, and the rows must be equal.
 *
 * DuckDB's `events` table has the dataset's fields as columns: `properties.$browser` is `browser`,
 * `properties.$current_url` is `url`, `properties.$session_id` is `session`, `properties.price` is `price`,
 * `person.properties.plan` is `plan`, `properties.$groups.company` is `company`, and `person_id` is `person` (the
 * dataset's person number; Quill's person uuids are mapped to it before comparing).
 */
import t from 'tap';
import type { Dataset } from '../../bench/lib/analytics-dataset.js';
import type { DuckReference } from '../../bench/lib/duckdb-reference.js';
import { quillForFile, type Client } from '../helpers/quill.js';
import { NEW_YORK_CASES, UTC_CASES, type Case } from '../helpers/hogql-corpus.js';
import { loadReferenceDataset } from '../helpers/reference-dataset.js';
import { nearlyEqual } from '../helpers/insight-compare.js';

const END = Date.UTC(2026, 10, 8);
const OPTIONS = { events: Number(process.env.QUILL_TEST_HOGQL_EVENTS ?? 40_000), persons: 2_000, days: 14, end: END, seed: 11 };

const server = quillForFile(t, { workers: 2 });
let api: Client;
let duck: DuckReference;
let dataset: Dataset;
/** Quill person uuid -> the dataset's person number. */
const personNumber = new Map<string, number>();

async function load(): Promise<void> {
  ({ dataset, duck } = await loadReferenceDataset(server.q.base, api, OPTIONS));
  // Which dataset person each Quill person is: through any of its distinct ids.
  const persons = await hogql('SELECT person_id, min(distinct_id) FROM events GROUP BY person_id LIMIT 50000');
  for (const [uuid, distinctId] of persons.results as [string, string][]) {
    const [kind, p, d] = distinctId.split('-');
    personNumber.set(uuid, kind === 'user' ? Number(p) : dataset.personOfDevice(Number(p) * 2 + Number(d)));
  }
}

async function hogql(query: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query, ...extra }, refresh: 'force_blocking' });
  if (res.status !== 200) throw new Error(`${query}\n  answered ${res.status}: ${res.text}`);
  return res.body;
}

async function duckRows(sql: string): Promise<unknown[][]> {
  const reader = await duck.db.runAndReadAll(sql);
  return reader.getRowsJS() as unknown[][];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;

/** One value in a comparable form: instants as epoch ms, person uuids as dataset numbers, big ints as numbers. */
function norm(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    if (ISO.test(v)) return Date.parse(v);
    if (personNumber.has(v)) return personNumber.get(v);
  }
  if (typeof v === 'object' && v !== null && 'micros' in v) return Number((v as { micros: bigint }).micros / 1000n);
  return v;
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return nearlyEqual(a, b);
  return a === b;
}

const rowKey = (r: unknown[]) => JSON.stringify(r.map((v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));


async function check(tt: { ok(v: unknown, m: string, extra?: object): void }, c: Case): Promise<void> {
  const body = await hogql(c.hogql, c.extra);
  const got = (body.results as unknown[][]).map((r) => r.map(norm));
  const want = (await duckRows(c.duck)).map((r) => r.map(norm));
  const a = c.ordered ? got : [...got].sort((x, y) => rowKey(x).localeCompare(rowKey(y)));
  const b = c.ordered ? want : [...want].sort((x, y) => rowKey(x).localeCompare(rowKey(y)));
  const equal = a.length === b.length && a.every((row, i) => row.length === b[i]!.length && row.every((v, j) => same(v, b[i]![j])));
  tt.ok(equal, c.hogql, equal ? {} : { quill: a.slice(0, 12), duckdb: b.slice(0, 12), quillRows: a.length, duckdbRows: b.length });
}

t.before(async () => {
  api = server.api;
  await load();
});
t.teardown(() => duck?.close());

t.test('the SQL corpus against DuckDB, in UTC', async (tt) => {
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
  for (const c of UTC_CASES) await check(tt, c);
});

t.test('the SQL corpus against DuckDB, in America/New_York', async (tt) => {
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  for (const c of NEW_YORK_CASES) await check(tt, c);
  tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test('the corpus holds at least 100 queries', async (tt) => {
  tt.ok(UTC_CASES.length + NEW_YORK_CASES.length >= 100, `${UTC_CASES.length + NEW_YORK_CASES.length} queries`);
});
