// Web analytics queries: the message checks, the periods (also across a DST change) and the overview items.
import t from 'tap';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import { localIso } from '../../src/domain/analytics/time-zone.js';
import { overviewItem, roundHalfEven } from '../../src/domain/web-analytics/overview.js';
import { periodOf, periodsOf, webQueryOf } from '../../src/domain/web-analytics/query.js';

const NY = 'America/New_York';
const now = Date.UTC(2026, 10, 5, 15); // Thursday 5 November 2026, 10:00 in New York (EST since 1 November)

function rejects(t: Tap.Test, q: Record<string, unknown>, attr: string): void {
  try {
    webQueryOf(q);
    t.fail(`accepted ${JSON.stringify(q)}`);
  } catch (error) {
    t.ok(error instanceof AnalyticsInputError, 'an input error');
    t.equal((error as AnalyticsInputError).attr, attr);
  }
}

t.test('messages', async (t) => {
  const q = webQueryOf({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }, { key: '$channel_type', value: 'Direct', operator: 'exact', type: 'session' }], includeScrollDepth: true });
  t.match(q, { breakdownBy: 'InitialPage', includeBounceRate: true, includeScrollDepth: true, filter: { and: true, children: [{ key: '$browser' }] }, sessionFilters: [{ key: '$channel_type' }] });
  rejects(t, { kind: 'WebStatsTableQuery' }, 'breakdownBy');
  rejects(t, { kind: 'WebStatsTableQuery', breakdownBy: 'Nope' }, 'breakdownBy');
  rejects(t, { kind: 'WebOverviewQuery', dateRange: { date_from: 7 } }, 'dateRange__date_from');
  rejects(t, { kind: 'WebOverviewQuery', properties: [{ key: '$nope', value: 1, type: 'session' }] }, 'properties');
  rejects(t, { kind: 'WebOverviewQuery', limit: 0 }, 'limit');
});

t.test('periods in the project time zone, across a DST change', async (t) => {
  const p = periodsOf({ dateFrom: '-7d', dateTo: null, explicitDate: false, compare: true, compareTo: null }, NY, now, null);
  t.equal(localIso(p.current.from, NY), '2026-10-29T00:00:00-04:00', 'seven local days back, in daylight time');
  t.equal(localIso(p.current.to, NY), '2026-11-05T23:59:59-05:00');
  const length = p.current.to + 1 - p.current.from;
  t.equal(length, 8 * 86_400_000 + 3_600_000, 'eight local days, one of them 25 hours');
  t.equal(p.previous!.to, p.current.from - 1, 'the previous period ends where the current starts');
  t.equal(p.previous!.to + 1 - p.previous!.from, length, 'and lasts as long');
  const week = periodsOf({ dateFrom: '-7d', dateTo: null, explicitDate: false, compare: true, compareTo: '-1w' }, NY, now, null);
  t.equal(localIso(week.previous!.from, NY), '2026-10-22T00:00:00-04:00', 'compare_to moves by local weeks');
  t.equal(localIso(week.previous!.to, NY), '2026-10-29T23:59:59-04:00');
  t.equal(periodOf(week, week.current.from), 0);
  t.equal(periodOf(week, week.previous!.from), 1);
  t.equal(periodOf(week, week.current.to + 1), -1);
});

t.test('overview items as PostHog computes them', async (t) => {
  t.same(overviewItem('bounce rate', 'percentage', 0.25, 0.5, true), { key: 'bounce rate', kind: 'percentage', isIncreaseBad: true, value: 25, previous: 50, changeFromPreviousPct: -50 });
  t.same(overviewItem('visitors', 'unit', 3, 0), { key: 'visitors', kind: 'unit', isIncreaseBad: null, value: 3, previous: 0, changeFromPreviousPct: null }, 'no change from zero');
  t.same(overviewItem('session duration', 'duration_s', NaN, null).value, null, 'the mean of no session');
  t.same([roundHalfEven(2.5), roundHalfEven(3.5), roundHalfEven(-2.5), roundHalfEven(-3.5), roundHalfEven(1.4)], [2, 4, -2, -4, 1], "Python's round");
  t.equal(overviewItem('views', 'unit', 7, 8).changeFromPreviousPct, -12, '-12.5 rounds to even');
});
