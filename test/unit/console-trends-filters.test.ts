// The console's trends page state <-> PostHog's legacy trends filter (src/console/app/lib/trends-filters.ts): what
// the page sends to /insights/trend/ and stores in a saved insight, and reads back.
import t from 'tap';
import { DEFAULT_TRENDS, seriesLabel, trendsFilter, trendsStateOf, type TrendsState } from '../../src/console/app/lib/trends-filters.js';

t.test('the filter of a state, and the state of that filter again', async (t) => {
  const state: TrendsState = {
    insight: 'TRENDS',
    series: [{ id: '$pageview', math: 'dau' }, { id: 'purchase', math: 'sum', math_property: 'amount' }],
    interval: 'week', dateFrom: '-30d', dateTo: '2024-03-10', breakdown: '$browser', breakdownType: 'person',
    display: 'ActionsBar', compare: true, properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }],
  };
  const filter = trendsFilter(state);
  t.same(filter, {
    insight: 'TRENDS',
    events: [{ id: '$pageview', type: 'events', order: 0, math: 'dau' }, { id: 'purchase', type: 'events', order: 1, math: 'sum', math_property: 'amount' }],
    interval: 'week', date_from: '-30d', date_to: '2024-03-10', display: 'ActionsBar', breakdown: '$browser', breakdown_type: 'person',
    compare: true, properties: [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }],
  });
  t.same(trendsStateOf(JSON.parse(JSON.stringify(filter))), state, 'round trip through JSON');
});

t.test('defaults: no breakdown, compare or date_to in the filter; unknown values fall back', async (t) => {
  t.same(trendsFilter(DEFAULT_TRENDS), {
    insight: 'TRENDS', events: [{ id: '$pageview', type: 'events', order: 0, math: 'total' }], interval: 'day', date_from: '-7d', display: 'ActionsLineGraph',
  });
  t.same(trendsStateOf({ interval: 'fortnight', display: 'Pie', events: 'nope' }), DEFAULT_TRENDS);
  t.same(trendsFilter({ ...DEFAULT_TRENDS, series: [{ id: 'x', math: 'total', math_property: 'amount' }] }).events, [{ id: 'x', type: 'events', order: 0, math: 'total' }],
    'a property only for property maths');
});

t.test('lifecycle and stickiness: their insight, no breakdown or comparison; a lifecycle is drawn stacked', async (t) => {
  const lifecycle = trendsFilter({ ...DEFAULT_TRENDS, insight: 'LIFECYCLE', breakdown: '$browser', compare: true, display: 'ActionsStackedBar' });
  t.same(lifecycle, {
    insight: 'LIFECYCLE', events: [{ id: '$pageview', type: 'events', order: 0, math: 'total' }], interval: 'day', date_from: '-7d', display: 'ActionsStackedBar',
  });
  t.equal(trendsStateOf({ insight: 'LIFECYCLE' }).display, 'ActionsStackedBar');
  t.equal(trendsStateOf({ insight: 'STICKINESS' }).insight, 'STICKINESS');
  t.equal(trendsStateOf({ insight: 'FUNNELS' }).insight, 'TRENDS', 'another kind is not read as one of these');
});

t.test('series labels: the breakdown group once, "none" for the group without a value, and the compare label', async (t) => {
  const base = { label: '$pageview', data: [], labels: [], days: [] };
  t.equal(seriesLabel(base), '$pageview');
  t.equal(seriesLabel({ ...base, label: '$pageview - Chrome', breakdown_value: 'Chrome', compare_label: 'previous' }), '$pageview - Chrome · previous', 'the value is not repeated');
  t.equal(seriesLabel({ ...base, label: '$pageview - ', breakdown_value: '' }), '$pageview - none');
  t.equal(seriesLabel({ ...base, label: '$pageview - Paying', breakdown_value: 7 }), '$pageview - Paying', 'a cohort: its name, not its id');
});
