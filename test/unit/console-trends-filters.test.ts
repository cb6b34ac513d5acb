// The console's trends page state <-> PostHog's legacy trends filter (src/console/app/lib/trends-filters.ts): what
// the page sends to /insights/trend/ and stores in a saved insight, and reads back.
import t from 'tap';
import { DEFAULT_TRENDS, mathOptions, seriesLabel, seriesProblems, trendsFilter, trendsStateOf, type TrendsState } from '../../src/console/app/lib/trends-filters.js';

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

t.test('a property aggregation without its property is named in the form, not sent', async (t) => {
  const state = { insight: 'TRENDS' as const, series: [{ id: '$pageview', math: 'total' }, { id: 'purchase', math: 'sum' }, { id: 'purchase', math: 'avg', math_property: ' ' }, { id: 'purchase', math: 'max', math_property: 'amount' }] };
  t.same([...seriesProblems(state)], [[1, 'Choose the numeric property for “Sum of property”.'], [2, 'Choose the numeric property for “Average of property”.']]);
  t.same([...seriesProblems({ ...state, insight: 'STICKINESS' })], [], 'other kinds aggregate no property');
});

t.test('the aggregation offered by kind says what the values count', async (t) => {
  t.equal(mathOptions('TRENDS').length > 4, true);
  t.same(mathOptions('STICKINESS'), [['total', 'Persons, by intervals active']], 'stickiness counts persons');
  t.same(mathOptions('LIFECYCLE'), [['total', 'Total count']]);
});
