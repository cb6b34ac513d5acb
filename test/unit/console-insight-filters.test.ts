// The console's funnel, retention and paths filters (src/console/app/lib/insight-filters.ts) and the stacking of
// lifecycle bars (src/console/app/lib/stack.ts): pure functions of the insight pages.
import t from 'tap';
import { defaultSecondStep, funnelFilter, funnelStateOf, pathsFilter, pathsStateOf, retentionFilter, retentionStateOf } from '../../src/console/app/lib/insight-filters.js';
import { stackOf } from '../../src/console/app/lib/stack.js';

t.test('funnel filter: steps in order, window, order type; and back', async (t) => {
  const state = { steps: ['$pageview', 'signup', 'purchase'], dateFrom: '-30d', dateTo: '', windowDays: 7, order: 'strict' as const };
  const f = funnelFilter(state);
  t.same(f, {
    insight: 'FUNNELS', events: [{ id: '$pageview', type: 'events', order: 0 }, { id: 'signup', type: 'events', order: 1 }, { id: 'purchase', type: 'events', order: 2 }],
    date_from: '-30d', funnel_window_interval: 7, funnel_window_interval_unit: 'day', funnel_order_type: 'strict', funnel_viz_type: 'steps',
  });
  t.same(funnelStateOf(f), state);
  t.same(funnelStateOf({ events: [{ id: 'b', order: 1 }, { id: 'a', order: 0 }] }).steps, ['a', 'b'], 'steps sorted by order');
  t.same(funnelStateOf({}), { steps: ['$pageview', ''], dateFrom: '-7d', dateTo: '', windowDays: 14, order: 'ordered' });
});

t.test('retention filter, and entities given as objects or JSON text', async (t) => {
  const state = { target: 'signup', returning: '$pageview', period: 'Week' as const, intervals: 6, dateTo: '2024-03-31', firstTime: true };
  const f = retentionFilter(state);
  t.same(f, {
    insight: 'RETENTION', target_entity: { id: 'signup', type: 'events' }, returning_entity: { id: '$pageview', type: 'events' }, period: 'Week',
    total_intervals: 6, date_to: '2024-03-31', retention_type: 'retention_first_time',
  });
  t.same(retentionStateOf(f), state);
  t.equal(retentionStateOf({ target_entity: '{"id":"x","type":"events"}' }).target, 'x');
  t.equal(retentionStateOf({ target_entity: 'not json' }).target, '$pageview');
  t.same(retentionStateOf({ period: 'Year' }), { target: '$pageview', returning: '$pageview', period: 'Week', intervals: 8, dateTo: '', firstTime: false }, 'weeks unless told otherwise, as in PostHog');
  t.equal(retentionStateOf({ period: 'Day' }).period, 'Day');
});

t.test('paths filter: event types, anchors, step limit', async (t) => {
  const state = { types: ['$pageview', 'custom_event'], start: '/home', end: '', steps: 4, dateFrom: '-14d', dateTo: '', edges: null };
  const f = pathsFilter(state);
  t.same(f, { insight: 'PATHS', include_event_types: ['$pageview', 'custom_event'], step_limit: 4, date_from: '-14d', start_point: '/home' });
  t.same(pathsStateOf(f), state);
  t.same(pathsStateOf({}).types, ['$pageview']);
  const wide = pathsFilter({ ...state, edges: 200 });
  t.equal(wide.edge_limit, 200, 'Max edges as edge_limit');
  t.equal(pathsStateOf(wide).edges, 200);
});

t.test('a new funnel: $pageview, then the most frequent other event', async (t) => {
  t.equal(defaultSecondStep([{ name: '$pageview' }, { name: '$pageleave' }, { name: 'signup' }, { name: 'purchase' }]), 'signup', 'a custom event before PostHog\'s own');
  t.equal(defaultSecondStep([{ name: '$pageview' }, { name: '$identify' }, { name: '$pageleave' }]), '$pageleave', 'else the next event but bookkeeping ones');
  t.equal(defaultSecondStep([{ name: '$pageview' }, { name: '$identify' }]), '', 'nothing sensible: the user chooses');
});

t.test('stacked bars: positives up, negatives down, in series order', async (t) => {
  const s = stackOf([{ data: [4, 2, 0] }, { data: [0, 2, 2] }, { data: [0, -2, null] }]);
  // A zero (or missing) value is an empty bar on top of the positive stack.
  t.same(s.y0, [[0, 0, 0], [4, 2, 0], [4, 0, 2]]);
  t.same(s.y1, [[4, 2, 0], [4, 4, 2], [4, -2, 2]]);
  t.equal(s.max, 4);
  t.equal(s.min, -2);
  t.same(stackOf([]), { y0: [], y1: [], min: 0, max: 0 });
});
