// Funnel correlation folded inside ClickHouse (src/domain/analytics/clickhouse/correlation-fold-sql.ts) against the
// local engine's correlationReducer (src/worker/analytics/correlation.ts): generated persons' events, each with a
// name, every funnel shape the fold answers, run by chdb over the same rows, must give the same population (converted
// and not), the same persons per event name, and the same persons behind an entry.
import t from 'tap';
import { correlationFoldSql, correlationPersonsSql } from '../../src/domain/analytics/clickhouse/correlation-fold-sql.js';
import type { FunnelShape } from '../../src/domain/analytics/funnel.js';
import { correlationReducer, type CorrelationParams, type CorrelationPartial } from '../../src/worker/analytics/correlation.js';
import { chdbRows, foldRows, gatheredOf, HOUR, personsOfRows, ROWS_FROM, type FoldRow } from '../helpers/fold-rows.js';
import { Random } from '../helpers/fuzz.js';

const NAMES = ['$pageview', 'signup', 'purchase', 'clicked', 'scrolled', "O'Neil \\ said", 'rage'];
/** The steps' own names and one excluded by the request: never counted. */
const SKIP = ['signup', 'purchase', 'rage'];
/** The range's end: the last instant of the generated events (a dropped person's window is cut here). */
const TO = ROWS_FROM + 96 * HOUR + 59 * 60_000;

const shape = (steps: number, order: 'ordered' | 'strict' | 'unordered', windowH: number, exclusions: [from: number, to: number][] = []): FunnelShape => ({
  steps, order, windowMs: windowH * HOUR, exclusions: exclusions.map(([from, to], i) => ({ bit: steps + i, from, to })),
});

const CASES: [string, FunnelShape][] = [
  ['ordered, 2 steps, 14 days', shape(2, 'ordered', 14 * 24)],
  ['ordered, 3 steps, 5-hour window', shape(3, 'ordered', 5)],
  ['strict, 2 steps', shape(2, 'strict', 14 * 24)],
  ['ordered, exclusion between steps 0 and 1', shape(3, 'ordered', 14 * 24, [[0, 1]])],
  ['unordered, 3 steps, 10-hour window', shape(3, 'unordered', 10)],
];

function onLocal(rows: FoldRow[], s: FunnelShape, personsOf: string | null): { partial: CorrelationPartial; uuids: string[] } {
  const params: CorrelationParams = { shape: s, skip: SKIP, to: TO, personsOf };
  const reducer = correlationReducer(params);
  const out = reducer.empty();
  const uuids: string[] = [];
  for (const mine of personsOfRows(rows)) {
    uuids.push(mine[0]![0]);
    reducer.add(out, {
      pid: uuids.length, n: mine.length, ts: Float64Array.from(mine, (e) => e[1]), mask: Uint32Array.from(mine, (e) => e[2]),
      value: new Int32Array(mine.length).fill(-1), values: [], name: Int32Array.from(mine, (e) => NAMES.indexOf(e[3])), names: NAMES,
    });
  }
  return { partial: out, uuids };
}

const sorted = (m: Map<string, [number, number]>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

t.test('correlation: the same population and persons per event name as the local engine, over generated persons', async (t) => {
  for (const [k, [name, s]] of CASES.entries()) {
    for (const seed of [31 + k, 2000 + k]) {
      const rows = foldRows(new Random(seed), 120, s.steps + s.exclusions.length, NAMES, s.order === 'unordered' ? s.steps : null);
      const { partial } = onLocal(rows, s, null);
      t.ok(partial.success > 0 && partial.failure > 0 && partial.events.size > 0, `${name}, seed ${seed}: persons convert (${partial.success}) and drop (${partial.failure})`);
      const answer = chdbRows(correlationFoldSql(gatheredOf(rows), s, TO, SKIP));
      const totals = answer.find((row) => row[0] === null);
      t.same(totals && [Number(totals[1]), Number(totals[2])], [partial.success, partial.failure], `${name}, seed ${seed}: the population`);
      const events = new Map(answer.filter((row) => row[0] !== null).map((row) => [String(row[0]), [Number(row[1]), Number(row[2])] as [number, number]]));
      t.same(sorted(events), sorted(partial.events), `${name}, seed ${seed}: persons per event name`);
    }
  }
});

t.test('correlation: the persons of the population and of an entry, as the local engine keeps them', async (t) => {
  for (const [k, [name, s]] of CASES.entries()) {
    const rows = foldRows(new Random(500 + k), 150, s.steps + s.exclusions.length, NAMES, s.order === 'unordered' ? s.steps : null);
    for (const personsOf of ['', 'clicked', "O'Neil \\ said", 'signup']) {
      const { partial, uuids } = onLocal(rows, s, personsOf);
      const local = partial.persons.map(([pid, converted]) => `${uuids[pid - 1]} ${converted}`).sort();
      const got = chdbRows(correlationPersonsSql(gatheredOf(rows), s, TO, SKIP, personsOf)).map(([u, c]) => `${u} ${Number(c) === 1}`).sort();
      if (personsOf === 'signup') t.same(got, [], `${name}: a step's own event has no persons`);
      else t.ok(got.length > 0, `${name}, ${JSON.stringify(personsOf)}: persons (${got.length})`);
      t.same(got, local, `${name}, ${JSON.stringify(personsOf)}: the local engine's persons`);
    }
  }
});
