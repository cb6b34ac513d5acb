// Insight alerts' pure parts (src/domain/alerts/): which alerts are refused, what a check finds in a trend's answer
// (PostHog's posthog/tasks/alerts/trends.py rules and wording), the state it leaves and who is told, when the next
// check comes, and snoozes.
import t from 'tap';
import { alertConfigProblem, type AlertSpec } from '../../src/domain/alerts/alert-config.js';
import { AlertCheckError, alertQuery, checkOutcome, evaluateTrendsAlert } from '../../src/domain/alerts/evaluate.js';
import { nextCheckAt, snoozeUntil, SnoozeError } from '../../src/domain/alerts/schedule.js';

const trends = (extra: Record<string, unknown> = {}) => ({ kind: 'TrendsQuery', interval: 'day', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra });
const spec = (over: Partial<{ condition: string; type: string; lower: number | null; upper: number | null; series: number; ongoing: boolean }> = {}): AlertSpec => ({
  condition: { type: (over.condition ?? 'absolute_value') as AlertSpec['condition']['type'] },
  threshold: { type: (over.type ?? 'absolute') as 'absolute', bounds: { lower: over.lower ?? null, upper: over.upper ?? null } },
  config: { type: 'TrendsAlertConfig', series_index: over.series ?? 0, ...(over.ongoing ? { check_ongoing_interval: true } : {}) },
});
const series = (data: number[], label = '$pageview') => ({ label, data });

t.test('which alerts are refused, as PostHog words it', async (t) => {
  t.equal(alertConfigProblem({ kind: 'InsightVizNode', source: trends() }, spec({ upper: 1 })), null, 'a trend in its wrapper');
  t.equal(alertConfigProblem(trends(), spec({ upper: 1 })), null, 'a bare trend');
  t.same(alertConfigProblem({ kind: 'InsightVizNode', source: { kind: 'FunnelsQuery' } }, spec()), { attr: 'insight', detail: "Alert's insight query kind 'FunnelsQuery' is not supported (only TrendsQuery)" });
  t.same(alertConfigProblem(null, spec()), { attr: 'insight', detail: "Alert's insight query kind 'null' is not supported (only TrendsQuery)" });
  t.match(alertConfigProblem(trends(), spec({ type: 'percentage', upper: 0.1 })), { attr: 'threshold', detail: /require an absolute threshold/ });
  t.same(alertConfigProblem(trends(), spec({ series: 1, upper: 1 })), { attr: 'config', detail: 'series_index 1 is out of range (query has 1 series)' });
  t.equal(alertConfigProblem(trends({ trendsFilter: { formula: 'A*2' }, series: [{}, {}] }), spec({ series: 0, upper: 1 })), null);
  t.match(alertConfigProblem(trends({ trendsFilter: { formula: 'A*2' }, series: [{}, {}] }), spec({ series: 1, upper: 1 })), { attr: 'config', detail: /query has 1 series/ }, 'a formula answers one result');
  t.match(alertConfigProblem(trends(), spec({ lower: 1, ongoing: true })), { attr: 'config', detail: /only supported for alert condition absolute_value when upper threshold is specified/ });
  t.equal(alertConfigProblem(trends(), spec({ condition: 'relative_decrease', lower: 1, ongoing: true })), null, 'a decrease ignores the flag: it never looks at the ongoing interval');
  t.match(alertConfigProblem(trends({ trendsFilter: { display: 'BoldNumber' } }), spec({ condition: 'relative_increase', upper: 1 })), { attr: 'condition', detail: /not compatible with non time series trends/ });
  t.match(alertConfigProblem(trends(), spec({ lower: 5, upper: 1 })), { attr: 'threshold' });
});

t.test('the query a check runs: the last intervals up to now, no comparison', async (t) => {
  t.same(alertQuery(trends({ dateRange: { date_from: '-30d' }, compareFilter: { compare: true } }), spec()).dateRange, { date_from: '-2d', date_to: null });
  t.notOk('compareFilter' in alertQuery(trends({ compareFilter: { compare: true } }), spec()), 'result i is series i');
  t.same(alertQuery(trends({ interval: 'hour' }), spec({ condition: 'relative_increase' })).dateRange, { date_from: '-3h', date_to: null });
  t.same(alertQuery(trends({ interval: 'week' }), spec()).dateRange, { date_from: '-2w', date_to: null });
  t.same(alertQuery(trends({ interval: 'month' }), spec({ condition: 'relative_decrease' })).dateRange, { date_from: '-3m', date_to: null });
  t.same(alertQuery(trends({ trendsFilter: { display: 'BoldNumber' }, dateRange: { date_from: '-14d' } }), spec()).dateRange, { date_from: '-14d' }, 'a number over its own range');
});

t.test('absolute value: the last complete interval, or the ongoing one', async (t) => {
  const q = trends();
  t.same(evaluateTrendsAlert(spec({ upper: 4 }), q, [series([1, 5, 9])]), { value: 5, breaches: ['The insight value ($pageview) for previous day (5) is more than upper threshold (4)'] });
  t.same(evaluateTrendsAlert(spec({ lower: 6 }), q, [series([1, 5, 9])]), { value: 5, breaches: ['The insight value ($pageview) for previous day (5) is less than lower threshold (6)'] });
  t.same(evaluateTrendsAlert(spec({ lower: 1, upper: 10 }), q, [series([1, 5, 9])]), { value: 5, breaches: [] });
  t.same(evaluateTrendsAlert(spec({ lower: 5, upper: 5 }), q, [series([1, 5, 9])]), { value: 5, breaches: [] }, 'the bounds themselves are inside');
  t.same(evaluateTrendsAlert(spec({ upper: 8, ongoing: true }), q, [series([1, 5, 9])]), { value: 9, breaches: ['The insight value ($pageview) for current day (9) is more than upper threshold (8)'] });
  t.same(evaluateTrendsAlert(spec({ upper: 2.5 }), trends({ interval: 'hour' }), [series([0, 2.75, 1])]).breaches, ['The insight value ($pageview) for previous hour (2.75) is more than upper threshold (2.5)']);
  const bold = trends({ trendsFilter: { display: 'BoldNumber' } });
  t.same(evaluateTrendsAlert(spec({ upper: 10 }), bold, [{ label: 'Total', aggregated_value: 12 }]), { value: 12, breaches: ['The insight value (Total) for current interval (12) is more than upper threshold (10)'] });
  t.same(evaluateTrendsAlert(spec({ upper: 1, series: 1 }), q, [series([0, 0, 0], 'a'), series([0, 4, 0], 'b')]).value, 4, 'the series of series_index');
});

t.test('relative: the difference with the interval before, or its fraction', async (t) => {
  const q = trends();
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', upper: 2 }), q, [series([2, 5, 0])]), { value: 3, breaches: ['The insight value ($pageview) for previous day (3) increased more than upper threshold (2)'] });
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', type: 'percentage', upper: 1 }), q, [series([2, 5, 0])]), { value: 1.5, breaches: ['The insight value ($pageview) for previous day (150.00%) increased more than upper threshold (100.00%)'] });
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', type: 'percentage', upper: 1 }), q, [series([0, 3, 0])]).value, Infinity, 'from nothing: infinitely more');
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', type: 'percentage', upper: 1 }), q, [series([0, 3, 0])]).breaches, ['The insight value ($pageview) for previous day (inf%) increased more than upper threshold (100.00%)']);
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', type: 'percentage', upper: 1 }), q, [series([0, 0, 7])]), { value: 0, breaches: [] }, 'nothing to nothing: no change');
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', lower: 0 }), q, [series([5, 2, 0])]), { value: -3, breaches: ['The insight value ($pageview) for previous day (-3) increased less than lower threshold (0)'] });
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_increase', upper: 4, ongoing: true }), q, [series([9, 2, 7])]).value, 5, 'ongoing: today against yesterday');
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_decrease', upper: 5 }), q, [series([10, 4, 0])]), { value: 6, breaches: ['The insight value ($pageview) for previous day (6) decreased more than upper threshold (5)'] });
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_decrease', type: 'percentage', upper: 0.5 }), q, [series([10, 4, 0])]), { value: 0.6, breaches: ['The insight value ($pageview) for previous day (60.00%) decreased more than upper threshold (50.00%)'] });
  t.same(evaluateTrendsAlert(spec({ condition: 'relative_decrease', upper: 5 }), q, [series([3, 3, 0])]), { value: 0, breaches: [] });
  t.ok(Object.is(evaluateTrendsAlert(spec({ condition: 'relative_decrease', upper: 5 }), q, [series([3, 3, 0])]).value, 0), 'no -0');
});

t.test('breakdowns, empty answers, missing series, no bounds', async (t) => {
  const q = trends({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } });
  t.same(evaluateTrendsAlert(spec({ upper: 4 }), q, [series([0, 1, 0], 'Chrome'), series([0, 7, 0], 'Firefox')]), { value: 7, breaches: ['The insight value (Firefox) for previous day (7) is more than upper threshold (4)'] }, 'the first breakdown value out of bounds');
  t.same(evaluateTrendsAlert(spec({ upper: 40 }), q, [series([0, 1, 0], 'Chrome'), series([0, 7, 0], 'Firefox')]), { value: null, breaches: [] }, 'none: no single value');
  t.same(evaluateTrendsAlert(spec({ lower: 1 }), trends(), []), { value: 0, breaches: ['The insight value (empty result) for previous day (0) is less than lower threshold (1)'] }, 'an empty answer counts as 0');
  t.same(evaluateTrendsAlert(spec({ lower: null, upper: null }), trends(), [series([9, 9, 9])]), { value: 0, breaches: [] }, 'no bounds, nothing to check');
  t.throws(() => evaluateTrendsAlert(spec({ upper: 1, series: 2 }), trends(), [series([1, 2, 3])]), AlertCheckError);
  t.same(evaluateTrendsAlert(spec({ upper: 1 }), trends(), [series([3])]).value, 0, 'a missing earlier point counts as 0');
});

t.test('the state after a check, and who is told', async (t) => {
  const breach = { value: 9, breaches: ['over'] };
  const fine = { value: 1, breaches: [] };
  t.same(checkOutcome('Not firing', breach), { state: 'Firing', notify: 'firing' });
  t.same(checkOutcome('Firing', breach), { state: 'Firing', notify: null }, 'still firing: told once');
  t.same(checkOutcome('Errored', breach), { state: 'Firing', notify: 'firing' });
  t.same(checkOutcome('Firing', fine), { state: 'Not firing', notify: 'resolved' });
  t.same(checkOutcome('Not firing', fine), { state: 'Not firing', notify: null });
  t.same(checkOutcome('Firing', { error: 'gone' }), { state: 'Errored', notify: null }, 'an error is on the check, nobody is told');
  t.same(checkOutcome('Errored', fine), { state: 'Not firing', notify: null });
});

t.test('when the next check comes', async (t) => {
  const at = (s: string) => Date.parse(s);
  const iso = (ms: number) => new Date(ms).toISOString();
  t.equal(iso(nextCheckAt('hourly', at('2026-12-02T10:15:02Z'), 'UTC', at('2026-12-02T10:15:00Z'))), '2026-12-02T11:15:00.000Z', 'an hour after it was due');
  t.equal(iso(nextCheckAt('hourly', at('2026-12-02T13:40:00Z'), 'UTC', at('2026-12-02T10:15:00Z'))), '2026-12-02T14:15:00.000Z', 'after hours down: once, at the next such minute');
  t.equal(iso(nextCheckAt('hourly', at('2026-12-02T10:20:00Z'), 'UTC')), '2026-12-02T11:20:00.000Z');
  t.equal(iso(nextCheckAt('daily', at('2026-12-02T16:13:20Z'), 'UTC')), '2026-12-03T01:13:20.000Z', 'tomorrow around 1 am');
  t.equal(iso(nextCheckAt('daily', at('2026-12-02T16:13:20Z'), 'America/New_York')), '2026-12-03T06:13:20.000Z', "in the project's time zone");
  t.equal(iso(nextCheckAt('daily', at('2026-12-31T23:30:00Z'), 'UTC')), '2027-01-01T01:30:00.000Z', 'across a year');
  t.equal(iso(nextCheckAt('weekly', at('2026-12-02T16:13:20Z'), 'UTC')), '2026-12-07T03:13:20.000Z', 'a Wednesday: next Monday around 3 am');
  t.equal(iso(nextCheckAt('weekly', at('2026-12-07T16:00:00Z'), 'UTC')), '2026-12-14T03:00:00.000Z', 'a Monday: the one after');
  t.equal(iso(nextCheckAt('weekly', at('2026-12-06T10:00:00Z'), 'UTC')), '2026-12-07T03:00:00.000Z', 'a Sunday: tomorrow');
  t.equal(iso(nextCheckAt('monthly', at('2026-12-15T08:05:00Z'), 'UTC')), '2027-01-01T04:05:00.000Z', 'the first of next month around 4 am');
  t.equal(iso(nextCheckAt('monthly', at('2026-03-31T08:05:00Z'), 'Europe/Paris')), '2026-04-01T02:05:00.000Z', 'summer time in Paris');
});

t.test('snoozes', async (t) => {
  const now = Date.parse('2026-12-02T10:15:00Z');
  const iso = (s: string) => new Date(snoozeUntil(s, now)).toISOString();
  t.equal(iso('2h'), '2026-12-02T12:00:00.000Z', 'hours: to the hour');
  t.equal(iso('+1d'), '2026-12-03T00:00:00.000Z', 'days: to the day');
  t.equal(iso('1w'), '2026-12-09T00:00:00.000Z');
  t.equal(iso('2026-12-24T18:00:00+01:00'), '2026-12-24T17:00:00.000Z', 'a date-time');
  for (const bad of ['yesterday', '2x', '-1d', '', '2026-12-01T00:00:00Z', '0h']) t.throws(() => snoozeUntil(bad, now), SnoozeError, JSON.stringify(bad));
});
