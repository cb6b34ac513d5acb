import t from 'tap';

/** Whether `fn` throws an instance of `type` (tap matches thrown errors by shape, not class). */
function throwsA(tt: { ok(v: unknown, m?: string): void }, fn: () => unknown, type: new (...a: never[]) => Error, message: string): void {
  try {
    fn();
    tt.ok(false, `${message}: did not throw`);
  } catch (error) {
    tt.ok(error instanceof type, message);
  }
}
import { BucketIndex, bucketDay, bucketLabel, bucketStarts, parseDate, resolveDateRange, DateParseError, EARLIEST_DATE_MS, LATEST_DATE_MS } from '../../src/domain/analytics/date-range.js';
import { stickinessIntervals } from '../../src/domain/analytics/stickiness.js';
import { addIntervals, fromLocal, localIso, toLocal, truncate, utc } from '../../src/domain/analytics/time-zone.js';
import { parseEventDate } from '../../src/worker/ops/events/dates.js';

const NY = 'America/New_York';
const iso = (ms: number, tz = 'UTC') => localIso(ms, tz);

t.test('local wall-clock conversions around daylight-saving changes', async (t) => {
  // 2026-03-08 02:00 does not exist in New York; 2026-11-01 01:30 happens twice.
  t.equal(iso(fromLocal({ year: 2026, month: 3, day: 8 }, NY), NY), '2026-03-08T00:00:00-05:00');
  t.equal(iso(fromLocal({ year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, NY), NY), '2026-03-08T03:30:00-04:00', 'a time in the gap moves forward');
  t.equal(iso(fromLocal({ year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, NY), NY), '2026-11-01T01:30:00-04:00', 'the first of two 01:30s');
  const day = fromLocal({ year: 2026, month: 11, day: 1 }, NY);
  t.equal((addIntervals(day, 'day', 1, NY) - day) / 3_600_000, 25, 'the fall-back day has 25 hours');
  const spring = fromLocal({ year: 2026, month: 3, day: 8 }, NY);
  t.equal((addIntervals(spring, 'day', 1, NY) - spring) / 3_600_000, 23, 'the spring-forward day has 23 hours');
  t.equal(iso(truncate(Date.UTC(2026, 10, 1, 6, 30), 'hour', NY), NY), '2026-11-01T01:00:00-05:00', 'the second 01:00 hour stays its own hour');
  t.equal(iso(truncate(Date.UTC(2026, 10, 4, 12), 'week', NY), NY), '2026-11-01T00:00:00-04:00', 'weeks start on Sunday');
  t.equal(iso(truncate(Date.UTC(2026, 0, 31, 12), 'month', 'Asia/Kolkata'), 'Asia/Kolkata'), '2026-01-01T00:00:00+05:30');
  t.equal(iso(addIntervals(Date.UTC(2026, 0, 31), 'month', 1, 'UTC')), '2026-02-28T00:00:00+00:00', 'month arithmetic clamps the day');
});

t.test('date parameters (§0.4)', async (t) => {
  const now = Date.UTC(2026, 10, 23, 15, 30);
  const at = (text: string, tz = 'UTC') => iso(parseDate(text, now, tz).ms, tz);
  t.equal(at('-7d'), '2026-11-16T15:30:00+00:00');
  t.equal(at('-24h'), '2026-11-22T15:30:00+00:00');
  t.equal(at('mStart'), '2026-11-01T00:00:00+00:00');
  t.equal(at('-1mStart'), '2026-10-01T00:00:00+00:00');
  t.equal(at('-1mEnd'), '2026-10-31T23:59:59+00:00');
  t.equal(at('dStart'), '2026-11-23T00:00:00+00:00');
  t.equal(at('yStart'), '2026-01-01T00:00:00+00:00');
  t.equal(at('2026-1-5'), '2026-01-05T00:00:00+00:00', 'unpadded dates');
  t.equal(at('2026-01-05', NY), '2026-01-05T00:00:00-05:00', 'dates are local to the project');
  t.equal(at('2026-01-05T10:00:00Z', NY), '2026-01-05T05:00:00-05:00', 'an explicit offset is kept');
  t.equal(at('2026-01-05T10:00', NY), '2026-01-05T10:00:00-05:00', 'a time without offset is local');
  for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '-7x', '']) throwsA(t, () => parseDate(bad, now, 'UTC'), DateParseError, bad);
});

t.test('dates out of range: a relative date past the years 1 to 9999 is refused as an absolute one is', async (t) => {
  const now = Date.UTC(2026, 10, 23, 15, 30);
  const DAY = 86_400_000;
  const refusal = (text: string, attr?: string) => {
    try {
      parseDate(text, now, NY, attr);
      return null;
    } catch (error) {
      return error instanceof DateParseError ? { message: error.message, attr: error.attr } : String(error);
    }
  };
  const outside = ['-99999999999d', '-800000d', '-99999999999h', '-9999999999M', '-110000w', '-30000m', '-9000q', '-99999y', '-2026yStart',
    '-9'.padEnd(400, '9') + 'd', '0000-12-31', '0000-12-31T23:59:59Z', '99999-01-01', '9999-12-31T23:00:00-05:00'];
  for (const text of outside) t.same(refusal(text), { message: `Invalid date: ${text}`, attr: 'date_from' }, text);
  t.same([refusal('-99999999999d', 'date_to'), refusal('99999-01-01', 'date_to')],
    [{ message: 'Invalid date: -99999999999d', attr: 'date_to' }, { message: 'Invalid date: 99999-01-01', attr: 'date_to' }], 'relative and absolute alike, naming their parameter');

  t.equal(parseDate('0001-01-01T00:00:00Z', now, NY).ms, EARLIEST_DATE_MS, 'the first instant of the year 1');
  t.equal(parseDate('9999-12-31T23:59:59.999Z', now, NY).ms, LATEST_DATE_MS, 'the last of 9999');
  const n = Math.floor((now - EARLIEST_DATE_MS) / DAY);
  t.equal(parseDate(`-${n}d`, now, 'UTC').ms, now - n * DAY, `-${n}d: the year 1, in range`);
  t.same(refusal(`-${n + 1}d`), { message: `Invalid date: -${n + 1}d`, attr: 'date_from' }, `-${n + 1}d: the year 0`);

  // Years 1 to 99 are themselves, not 1901 to 1999 (Date.UTC's reading), relative or absolute, in any zone.
  t.equal(parseDate('0050-03-01', now, 'UTC').ms, Date.parse('0050-03-01T00:00:00Z'));
  t.match(iso(parseDate('0050-03-01', now, NY).ms, NY), /^0050-03-01T00:00:00-04:56$/, 'local midnight (New York kept local mean time then)');
  t.equal(new Date(parseDate('-730000d', now, 'UTC').ms).toISOString(), new Date(now - 730_000 * DAY).toISOString());
  t.equal(toLocal(parseDate('-730000d', now, NY).ms, NY).year, new Date(now - 730_000 * DAY).getUTCFullYear());
  t.same(toLocal(EARLIEST_DATE_MS, NY), { year: 0, month: 12, day: 31, hour: 19, minute: 3, second: 58, ms: 0 }, 'New York was still in the year 0 (1 BC)');
  t.equal(utc(0, 0, 1), Date.parse('0000-01-01T00:00:00Z'));
  t.equal(utc(99, 12, 1), Date.parse('0100-01-01T00:00:00Z'), 'months past December roll into the year 100');
  const ancient = resolveDateRange({ dateFrom: '0001-01-02', dateTo: null, explicitDate: false }, 'month', 'UTC', now, null);
  t.equal(bucketDay(bucketStarts(ancient)[0]!, 'month', 'UTC'), '0001-01-01', 'a monthly range from the year 1');
  t.equal(bucketStarts(ancient).length, 2025 * 12 + 11);
  t.same(refusalOf(() => resolveDateRange({ dateFrom: '-7d', dateTo: '-99999999999d', explicitDate: false }, 'day', 'UTC', now, null)), 'date_to', 'resolveDateRange names date_to');

  // The events list's own parser (src/worker/ops/events/dates.ts) keeps the same bounds.
  for (const text of ['-999999d', '-99999999999d', '0000-01-01', '0000-12-31T23:59:59Z', '9999-12-31T23:00:00-05:00']) t.equal(parseEventDate(text, now), null, `events: ${text}`);
  t.equal(parseEventDate('0001-01-01', now), EARLIEST_DATE_MS);
  t.equal(parseEventDate('9999-12-31T23:59:59.999Z', now), LATEST_DATE_MS);
  t.equal(parseEventDate(`-${n}d`, now), Date.UTC(2026, 10, 23) - n * DAY);
});

t.test('stickiness of a range that ends before it starts has no points (was an invalid array length)', async (t) => {
  const now = Date.UTC(2026, 10, 23, 15, 30);
  const future = resolveDateRange({ dateFrom: '9999-12-31', dateTo: null, explicitDate: false }, 'day', 'UTC', now, null);
  t.equal(stickinessIntervals(future), 1);
});

function refusalOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof DateParseError ? error.attr : String(error);
  }
}

t.test('ranges and buckets (§0.4-0.5)', async (t) => {
  const now = Date.UTC(2026, 10, 23, 15, 30);
  const r = resolveDateRange({ dateFrom: null, dateTo: null, explicitDate: false }, 'day', 'UTC', now, null);
  t.equal(iso(r.from), '2026-11-16T00:00:00+00:00', 'default -7d widened to the day');
  t.equal(iso(r.to), '2026-11-23T23:59:59+00:00');
  t.equal(bucketStarts(r).length, 8, '-7d gives 8 daily buckets');
  const hourly = resolveDateRange({ dateFrom: '-24h', dateTo: null, explicitDate: false }, 'hour', 'UTC', now, null);
  t.equal(iso(hourly.from), '2026-11-22T15:00:00+00:00', 'hour ranges round to the hour');
  t.equal(iso(hourly.to), '2026-11-23T15:31:00+00:00', 'now + 1 minute');
  const weekly = resolveDateRange({ dateFrom: '2026-11-11', dateTo: '2026-11-23', explicitDate: false }, 'week', 'UTC', now, null);
  t.equal(iso(weekly.from), '2026-11-08T00:00:00+00:00', 'date_from rounds down to its week');
  t.same(bucketStarts(weekly).map((b) => bucketDay(b, 'week', 'UTC')), ['2026-11-08', '2026-11-15', '2026-11-22']);
  const all = resolveDateRange({ dateFrom: 'all', dateTo: null, explicitDate: false }, 'day', 'UTC', now, Date.UTC(2026, 10, 20, 8));
  t.equal(iso(all.from), '2026-11-20T00:00:00+00:00', 'all = the first event, widened');
  t.equal(bucketLabel(Date.UTC(2023, 0, 5), 'day', 'UTC'), '5-Jan-2023');
  t.equal(bucketLabel(Date.UTC(2023, 0, 5, 13), 'hour', 'UTC'), '5-Jan-2023 13:00');
  t.equal(bucketDay(Date.UTC(2023, 0, 5, 13), 'hour', 'UTC'), '2023-01-05 13:00:00');
  const explicit = resolveDateRange({ dateFrom: '2026-11-20T10:00:00Z', dateTo: '2026-11-21T10:00:00Z', explicitDate: false }, 'day', 'UTC', now, null);
  t.equal(iso(explicit.to), '2026-11-21T10:00:00+00:00', 'a date-time is not widened');
});

t.test('finding an instant\'s bucket', async (t) => {
  const starts = [0, 10, 20, 30];
  const index = new BucketIndex(starts, 39);
  t.same([-1, 0, 9, 10, 25, 39, 40].map((x) => index.of(x)), [-1, 0, 0, 1, 2, 3, -1]);
  t.same([35, 5, 15].map((x) => index.of(x)), [3, 0, 1], 'in any order');
});
