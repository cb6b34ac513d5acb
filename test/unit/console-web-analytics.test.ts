// The console's Web analytics page, its pure parts (src/console/app/lib/web-analytics.ts, annotations.ts): how an
// overview item and its change read, web vitals' bands at web.dev's thresholds, the filter a row click adds, which
// filters trends take, and where annotations sit on a chart (a day in the project's time zone).
import t from 'tap';
import { dateMarkerOf, dayIn, markersFor } from '../../src/console/app/lib/annotations.js';
import { changeTone, eventFilters, itemText, lastMeasuredDay, rowFilter, TABLE_GROUPS, valueOnDay, vitalBand, vitalText } from '../../src/console/app/lib/web-analytics.js';

t.test('overview items', async (t) => {
  t.equal(itemText('unit', 12345), '12,345');
  t.equal(itemText('percentage', 43.21), '43.2%');
  t.equal(itemText('duration_s', 42.4), '42s');
  t.equal(itemText('duration_s', 125), '2m 05s');
  t.equal(itemText('unit', null), '–');
  t.equal(changeTone({ changeFromPreviousPct: 12, isIncreaseBad: null }), 'good');
  t.equal(changeTone({ changeFromPreviousPct: 12, isIncreaseBad: true }), 'bad', 'more bounces are bad news');
  t.equal(changeTone({ changeFromPreviousPct: -5, isIncreaseBad: true }), 'good');
  t.equal(changeTone({ changeFromPreviousPct: null, isIncreaseBad: null }), 'flat');
});

t.test('web vitals bands', async (t) => {
  t.same([vitalBand('LCP', 2500), vitalBand('LCP', 2501), vitalBand('LCP', 4000), vitalBand('LCP', 4001)], ['good', 'needs_improvements', 'needs_improvements', 'poor']);
  t.same([vitalBand('CLS', 0.1), vitalBand('CLS', 0.2), vitalBand('CLS', 0.3)], ['good', 'needs_improvements', 'poor']);
  t.same([vitalBand('INP', 150), vitalBand('FCP', 3500)], ['good', 'poor']);
  t.same([vitalText('LCP', 1234), vitalText('INP', 180.4), vitalText('CLS', 0.0421), vitalText('FCP', null)], ['1.23 s', '180 ms', '0.042', '–']);
  t.equal(lastMeasuredDay([3, 5, 0, 0]), 1, 'the latest day with samples');
  t.equal(valueOnDay([1800, 2100, 0, 0], lastMeasuredDay([3, 5, 0, 0])), 2100, 'a day without samples shows 0: not a measurement');
  t.equal(valueOnDay([0, 0.0], lastMeasuredDay([0, 0])), null, 'no samples at all');
});

t.test('filters from rows', async (t) => {
  const tabs = TABLE_GROUPS.flatMap((g) => g.tabs);
  const channels = tabs.find((x) => x.breakdown === 'InitialChannelType')!;
  t.same(rowFilter(channels, 'Direct'), { type: 'session', key: '$channel_type', value: 'Direct', operator: 'exact' });
  t.same(rowFilter(tabs.find((x) => x.breakdown === 'Page')!, '/pricing'), { type: 'event', key: '$pathname', value: '/pricing', operator: 'exact' });
  t.equal(rowFilter(tabs.find((x) => x.breakdown === 'Language')!, 'en-US'), null, 'languages are not a property value');
  t.equal(rowFilter(channels, null), null, 'the (none) row');
  t.same(eventFilters([{ type: 'session', key: '$channel_type', value: 'Direct', operator: 'exact' }, { type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }]).map((f) => f.key), ['$browser']);
});

t.test('annotations on a chart', async (t) => {
  t.equal(dayIn('2026-11-02T03:00:00Z', 'America/New_York'), '2026-11-01', 'the day in the project time zone');
  const list = [
    { id: 1, content: 'Launch', date_marker: '2026-11-02T15:00:00Z', scope: 'project', dashboard_item: null },
    { id: 2, content: 'Other insight', date_marker: '2026-11-02T15:00:00Z', scope: 'dashboard_item', dashboard_item: 9 },
    { id: 3, content: 'Offsite', date_marker: '2026-11-03T01:00:00Z', scope: 'organization', dashboard_item: null },
    { id: 4, content: 'Outside', date_marker: '2026-12-25T12:00:00Z', scope: 'project', dashboard_item: null },
  ];
  const days = ['2026-11-01', '2026-11-02', '2026-11-03'];
  t.same(markersFor(list, days, 'UTC'), [{ at: 1, text: 'Launch' }, { at: 2, text: 'Offsite' }]);
  t.same(markersFor(list, days, 'America/New_York', 9), [{ at: 1, text: 'Launch' }, { at: 1, text: 'Other insight' }, { at: 1, text: 'Offsite' }], "an insight's own too, by local day");
});

t.test('an annotation made on a chart day is stored on that day in the project time zone', async (t) => {
  for (const tz of ['UTC', 'America/New_York', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kolkata']) {
    const marker = dateMarkerOf('2026-11-01', tz);
    t.equal(dayIn(marker, tz), '2026-11-01', `${tz}: ${marker}`);
    t.same(markersFor([{ id: 1, content: 'x', date_marker: marker, scope: 'project', dashboard_item: null }], ['2026-10-31', '2026-11-01'], tz), [{ at: 1, text: 'x' }]);
  }
});
