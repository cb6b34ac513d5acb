/**
 * Regrouping collected events by person (src/worker/analytics/sequences.ts groupByPerson): each person's rows in time
 * order, ties in the order the rows came, every column moved with its row — for rows nearly in order (the local
 * engine's collect) and in no order at all (ClickHouse's storage order), where the sort changes method midway.
 */
import t from 'tap';
import { groupByPerson, type Events } from '../../src/worker/analytics/sequences.js';

/** A small deterministic generator (the same rows every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function eventsOf(rows: { pid: number; ts: number }[]): Events {
  const n = rows.length;
  const e: Events = { n, pid: new Uint32Array(n), ts: new Float64Array(n), mask: new Uint32Array(n), value: new Int32Array(n), values: ['v'], name: new Int32Array(n), names: ['n'] };
  rows.forEach((r, i) => {
    e.pid[i] = r.pid;
    e.ts[i] = r.ts;
    e.mask[i] = i; // the row's arrival index: checks stability and that columns move together
    e.value[i] = i;
    e.name[i] = -i;
  });
  return e;
}

function check(tt: Tap.Test, rows: { pid: number; ts: number }[], what: string): void {
  const g = groupByPerson(eventsOf(rows));
  let bad = 0;
  for (let pid = 1; pid <= g.maxPid; pid++) {
    const expected = rows.map((r, i) => ({ ...r, i })).filter((r) => r.pid === pid).sort((a, b) => a.ts - b.ts || a.i - b.i);
    const from = g.starts[pid]!;
    expected.forEach((r, k) => {
      if (g.ts[from + k] !== r.ts || g.mask[from + k] !== r.i || g.value![from + k] !== r.i || g.name![from + k] !== -r.i) bad++;
    });
  }
  tt.equal(bad, 0, `${what}: every person's rows by time, ties in arrival order, columns together`);
}

t.test('rows nearly in time order, and in no order at all', async (tt) => {
  const next = random(7);
  const nearly: { pid: number; ts: number }[] = [];
  for (let i = 0; i < 20_000; i++) nearly.push({ pid: 1 + Math.floor(next() * 50), ts: i * 10 + Math.floor(next() * 40) });
  check(tt, nearly, 'nearly in order');
  // Few times, many ties: a person of 2,000 rows in no order (past the insertion sort's budget).
  const shuffled: { pid: number; ts: number }[] = [];
  for (let i = 0; i < 6_000; i++) shuffled.push({ pid: 1 + (i % 3), ts: Math.floor(next() * 300) });
  check(tt, shuffled, 'no order, many ties');
  const reversed = Array.from({ length: 5_000 }, (_, i) => ({ pid: 1, ts: 5_000 - i }));
  check(tt, reversed, 'reversed');
});
