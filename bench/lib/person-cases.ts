/**
 * The retention, lifecycle and stickiness questions the analytics benchmark times (UTC), each as a Quill request,
 * the DuckDB SQL answering the same question over the dataset's `events` table (and `persons`, for lifecycle's
 * created_at), and how the two answers compare.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import type { Dataset } from './analytics-dataset.js';
import type { DuckReference } from './duckdb-reference.js';

export interface PersonCase {
  name: string;
  /** Path under /api/projects/@current/. */
  path: string;
  sql: string;
  /** Quill's answer and DuckDB's rows, as comparable maps key -> number. */
  quill(body: any): Map<string, number>;
  duck(rows: Record<string, unknown>[]): Map<string, number>;
}

const enc = encodeURIComponent;
const dayMs = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function matrixMap(body: any): Map<string, number> {
  const out = new Map<string, number>();
  body.result.forEach((row: any, i: number) => row.values.forEach((v: any, k: number) => v.count && out.set(`${i}|${k}`, v.count)));
  return out;
}
function rowsMap(rows: Record<string, unknown>[], key: (r: Record<string, unknown>) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (Number(r.v) !== 0) out.set(key(r), Number(r.v));
  return out;
}

/**
 * `end` is the dataset's end (exclusive, a UTC midnight); the questions look at its last 4 weeks / 30 days.
 */
export function personCases(end: number, days: number): PersonCase[] {
  const lastDay = iso(end - dayMs);
  const from = iso(end - days * dayMs);
  // Weekly retention, 4 cohorts ending on the last day: end = last day + 7 d at 00:00, start = 4 weeks before, back to Sunday.
  const wEnd = end - dayMs + 7 * dayMs;
  const wStart0 = wEnd - 28 * dayMs;
  const wStart = wStart0 - new Date(wStart0).getUTCDay() * dayMs;
  const week = (col: string) => `(date_trunc('week', ${col} + INTERVAL 1 DAY) - INTERVAL 1 DAY)`;
  const retentionSql = (first: boolean) => `WITH r AS (SELECT DISTINCT person, date_diff('week', TIMESTAMP '${iso(wStart)}', ${week('ts')}) AS i FROM events
        WHERE event = '$pageview' AND ts >= TIMESTAMP '${iso(wStart)}' AND ts < TIMESTAMP '${iso(wEnd)}'),
      t AS (${first
        ? `SELECT person, date_diff('week', TIMESTAMP '${iso(wStart)}', ${week('f')}) AS i FROM (SELECT person, min(ts) AS f FROM events WHERE event = '$pageview' GROUP BY 1)
           WHERE f >= TIMESTAMP '${iso(wStart)}' AND f < TIMESTAMP '${iso(wEnd)}'`
        : 'SELECT * FROM r'})
    SELECT t.i AS i, r.i - t.i AS k, count(DISTINCT t.person) AS v FROM t JOIN r ON t.person = r.person AND r.i >= t.i GROUP BY 1, 2`;
  const lifecycleSql = `WITH a AS (SELECT DISTINCT person, date_diff('day', TIMESTAMP '${from}', date_trunc('day', ts)) AS p FROM events
        WHERE event = '$pageview' AND ts >= TIMESTAMP '${from}' - INTERVAL 1 DAY AND ts < TIMESTAMP '${lastDay}' + INTERVAL 1 DAY),
      c AS (SELECT person, date_diff('day', TIMESTAMP '${from}', date_trunc('day', created_at)) AS created FROM persons),
      prev AS (SELECT person, p + 1 AS p FROM a),
      cur AS (SELECT a.person, a.p, c.created, prev.person IS NOT NULL AS before FROM a JOIN c USING (person) LEFT JOIN prev ON prev.person = a.person AND prev.p = a.p WHERE a.p >= 0)
    SELECT p, 'new' AS s, count(*) AS v FROM cur WHERE created = p GROUP BY 1
    UNION ALL SELECT p, 'returning', count(*) FROM cur WHERE created <> p AND before GROUP BY 1
    UNION ALL SELECT p, 'resurrecting', count(*) FROM cur WHERE created <> p AND NOT before GROUP BY 1
    UNION ALL SELECT a.p + 1, 'dormant', -count(*) FROM a LEFT JOIN a b ON b.person = a.person AND b.p = a.p + 1
      WHERE b.person IS NULL AND a.p + 1 BETWEEN 0 AND ${days - 1} GROUP BY 1`;
  return [
    {
      name: 'weekly recurring retention, 4 weeks', path: `insights/retention/?period=Week&total_intervals=4&date_to=${lastDay}`,
      sql: retentionSql(false), quill: matrixMap, duck: (rows) => rowsMap(rows, (r) => `${r.i}|${r.k}`),
    },
    {
      name: 'weekly first-time retention, 4 weeks', path: `insights/retention/?period=Week&total_intervals=4&date_to=${lastDay}&retention_type=retention_first_time`,
      sql: retentionSql(true), quill: matrixMap, duck: (rows) => rowsMap(rows, (r) => `${r.i}|${r.k}`),
    },
    {
      name: `daily lifecycle, ${days} days`, path: `insights/trend/?insight=LIFECYCLE&shown_as=Lifecycle&events=${enc('[{"id":"$pageview"}]')}&date_from=${from}&date_to=${lastDay}`,
      sql: lifecycleSql,
      quill: (body) => {
        const out = new Map<string, number>();
        for (const s of body.result) s.data.forEach((v: number, p: number) => v && out.set(`${p}|${s.status}`, v));
        return out;
      },
      duck: (rows) => rowsMap(rows, (r) => `${r.p}|${r.s}`),
    },
    {
      name: `daily stickiness, ${days} days`, path: `insights/trend/?insight=STICKINESS&events=${enc('[{"id":"$pageview"}]')}&date_from=${from}&date_to=${lastDay}`,
      sql: `SELECT k, count(*) AS v FROM (SELECT person, count(DISTINCT date_trunc('day', ts)) AS k FROM events WHERE event = '$pageview'
        AND ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${lastDay}' + INTERVAL 1 DAY GROUP BY 1) GROUP BY 1`,
      quill: (body) => {
        const out = new Map<string, number>();
        body.result[0].data.forEach((v: number, i: number) => v && out.set(String(i + 1), v));
        return out;
      },
      duck: (rows) => rowsMap(rows, (r) => String(r.k)),
    },
  ];
}

/**
 * Quill's persons' created_at into DuckDB's `persons` table (lifecycle's "new" is the period of created_at: the
 * time a person's first event was applied, which cross-shard apply order decides, not the dataset). Read from the
 * persons LMDB environment read-only: the API pages would take minutes for 300,000 persons.
 */
export async function loadPersonsCreatedAt(dataDir: string, dataset: Dataset, duck: DuckReference): Promise<number> {
  const path = join(dataDir, 'persons.mdb');
  if (!existsSync(path)) throw new Error(`no persons environment at ${path}`);
  const env = open({ path, readOnly: true, maxDbs: 32, compression: false });
  const personOf = (distinctId: string) => {
    const [kind, p, d] = distinctId.split('-');
    return kind === 'user' ? Number(p) : dataset.personOfDevice(Number(p) * 2 + Number(d));
  };
  const rows: [number, number][] = [];
  try {
    const table = env.openDB<{ distinct_ids: string[]; created_at: string }, [number, number]>('persons_json', { encoding: 'json' } as object);
    for (const { value } of table.getRange({})) rows.push([personOf(value.distinct_ids[0]!), Date.parse(value.created_at)]);
  } finally {
    await env.close();
  }
  await duck.appendPersons(rows);
  return rows.length;
}
