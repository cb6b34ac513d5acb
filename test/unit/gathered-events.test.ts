// Rows gathered from ClickHouse as collected events (src/worker/analytics/gathered-events.ts): one at a time as they
// stream in, the columns growing as they fill, the same events as from all the rows at once; persons numbered by
// uuid from a given first number (the parts of a large gathering follow one another).
import t from 'tap';
import { RowEventsBuilder, eventsOfRows } from '../../src/worker/analytics/gathered-events.js';

const columns = { value: (row: readonly unknown[]) => (row[3] === '' ? null : String(row[3])), name: (row: readonly unknown[]) => String(row[4]) };
const rows: unknown[][] = [];
for (let i = 0; i < 1000; i++) rows.push([`p-${(i * 7919) % 97}`, 1_700_000_000_000 + i * 1000, (i % 3) + 1, i % 5 === 0 ? '' : `v${i % 4}`, `e${i % 6}`]);
rows.push(['', 1, 1, 'x', 'y'], ['00000000-0000-0000-0000-000000000000', 2, 1, 'x', 'y']);

t.test('streamed row by row from a tiny capacity: the same events as all at once', async (tt) => {
  const builder = new RowEventsBuilder(columns, 1);
  for (const row of rows) builder.add(row);
  const streamed = builder.done(10);
  const whole = eventsOfRows(rows, columns, 10);
  tt.equal(streamed.n, 1000, 'rows of no person dropped');
  tt.same(streamed.uuids, whole.uuids);
  tt.same(streamed.values, whole.values);
  tt.same(streamed.names, whole.names);
  for (const col of ['pid', 'ts', 'mask', 'value', 'name'] as const) tt.same([...streamed[col].subarray(0, 1000)], [...whole[col].subarray(0, 1000)], col);
});

t.test('persons numbered by uuid from firstPid + 1', async (tt) => {
  const e = eventsOfRows([['b', 1, 1], ['a', 2, 1], ['b', 3, 1]], {}, 5);
  tt.same(e.uuids, ['a', 'b']);
  tt.same([...e.pid.subarray(0, 3)], [7, 6, 7]);
  tt.same([...e.name.subarray(0, 3)], [-1, -1, -1], 'no names');
});
