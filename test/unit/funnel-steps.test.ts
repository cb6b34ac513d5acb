/**
 * One event fills at most one step (src/domain/analytics/funnel.ts), in every order, without losing steps that a
 * different sharing of the events would fill.
 */
import t from 'tap';
import { personFunnel, type FunnelOrder, type FunnelShape } from '../../src/domain/analytics/funnel.js';

const shape = (steps: number, order: FunnelOrder): FunnelShape => ({ steps, order, windowMs: 14 * 86_400_000, exclusions: [] });
/** Events as (minute, steps it matches). */
function run(events: [number, number[]][], steps: number, order: FunnelOrder) {
  const ts = Float64Array.from(events.map(([m]) => m * 60_000));
  const mask = Uint32Array.from(events.map(([, s]) => s.reduce((bits, i) => bits | (1 << i), 0)));
  return personFunnel(ts, mask, events.length, shape(steps, order), undefined, 'all');
}

t.test('an event that matches two steps fills one', async (t) => {
  for (const order of ['ordered', 'strict', 'unordered'] as const) {
    t.equal(run([[1, [0, 1]]], 2, order).reached, 1, `${order}: one event, one step`);
    t.equal(run([[1, [0, 1]], [2, [0, 1]]], 2, order).reached, 2, `${order}: two such events, two steps`);
  }
});

t.test('unordered: events are shared out so that as many steps as possible get one', async (t) => {
  // Row 1 matches steps 1 and 2, row 2 only step 1: taking each step's earliest event gives both to row 1.
  const r = run([[0, [0]], [1, [1, 2]], [2, [1]]], 3, 'unordered');
  t.equal(r.reached, 3, 'row 1 to step 2, row 2 to step 1');
  t.same(r.chains[0], [0, 1, 2], 'the attempt uses three distinct events, in time order');
  t.equal(run([[0, [0]], [1, [1, 2]]], 3, 'unordered').reached, 2, 'two events after the start fill at most two steps');
  const distinct = run([[0, [0]], [5, [2]], [3, [1]]].sort((a, b) => a[0] - b[0]) as [number, number[]][], 3, 'unordered');
  t.same(distinct.chains[0], [0, 1, 2], 'steps with events of their own take their earliest one');
});

t.test('ordered: the next step is a later event, at the same time too', async (t) => {
  const r = run([[0, [0, 1]], [0, [1]]], 2, 'ordered');
  t.equal(r.reached, 2, 'another event at the same minute fills step 2');
  t.same(r.averages, [0]);
});
