// Subscriptions' schedule (src/domain/subscriptions/recurrence.ts): the subset of iCalendar rules PostHog's
// subscriptions use, with the occurrences dateutil's rrule gives for them, and PostHog's summary.
import t from 'tap';
import { occurrenceAfter, recurrenceSummary, type Recurrence } from '../../src/domain/subscriptions/recurrence.js';

const rule = (over: Partial<Recurrence>): Recurrence => ({ frequency: 'daily', interval: 1, byweekday: null, bysetpos: null, count: null, start_date: '2026-12-02T09:30:00.000Z', until_date: null, ...over });
/** The first `n` occurrences after `from`. */
function occurrences(r: Recurrence, from: string, n: number): string[] {
  const out: string[] = [];
  let after = Date.parse(from);
  while (out.length < n) {
    const next = occurrenceAfter(r, after);
    if (next === null) break;
    out.push(new Date(next).toISOString().slice(0, 16));
    after = next;
  }
  return out;
}

t.test('daily, weekly, monthly, yearly from the start', async (t) => {
  t.same(occurrences(rule({}), '2026-12-01T00:00:00Z', 3), ['2026-12-02T09:30', '2026-12-03T09:30', '2026-12-04T09:30'], 'the start is the first');
  t.same(occurrences(rule({}), '2026-12-02T09:30:00Z', 1), ['2026-12-03T09:30'], 'strictly after');
  t.same(occurrences(rule({ interval: 3 }), '2026-12-01T00:00:00Z', 3), ['2026-12-02T09:30', '2026-12-05T09:30', '2026-12-08T09:30']);
  t.same(occurrences(rule({ frequency: 'weekly' }), '2026-12-02T10:00:00Z', 2), ['2026-12-09T09:30', '2026-12-16T09:30'], 'its weekday');
  t.same(occurrences(rule({ frequency: 'weekly', byweekday: ['monday', 'friday'] }), '2026-12-01T00:00:00Z', 4), ['2026-12-04T09:30', '2026-12-07T09:30', '2026-12-11T09:30', '2026-12-14T09:30'], 'named days, none before the start');
  t.same(occurrences(rule({ frequency: 'weekly', interval: 2, byweekday: ['monday'] }), '2026-12-01T00:00:00Z', 3), ['2026-12-14T09:30', '2026-12-28T09:30', '2027-01-11T09:30'], 'every other week from the week of the start');
  t.same(occurrences(rule({ frequency: 'daily', byweekday: ['saturday'] }), '2026-12-01T00:00:00Z', 2), ['2026-12-05T09:30', '2026-12-12T09:30'], 'daily, only on the named days');
  t.same(occurrences(rule({ frequency: 'monthly', start_date: '2026-01-31T08:00:00Z' }), '2026-01-01T00:00:00Z', 4), ['2026-01-31T08:00', '2026-03-31T08:00', '2026-05-31T08:00', '2026-07-31T08:00'], 'months without the 31st are skipped');
  t.same(occurrences(rule({ frequency: 'monthly', byweekday: ['friday'], bysetpos: -1 }), '2026-12-01T00:00:00Z', 3), ['2026-12-25T09:30', '2027-01-29T09:30', '2027-02-26T09:30'], 'the last Friday');
  t.same(occurrences(rule({ frequency: 'monthly', byweekday: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], bysetpos: 1 }), '2026-12-01T00:00:00Z', 3), ['2027-01-01T09:30', '2027-02-01T09:30', '2027-03-01T09:30'], 'the first working day (1 December is before the start)');
  t.same(occurrences(rule({ frequency: 'yearly', start_date: '2028-02-29T12:00:00Z' }), '2028-01-01T00:00:00Z', 2), ['2028-02-29T12:00', '2032-02-29T12:00'], 'a 29 February: leap years only');
  t.same(occurrences(rule({ frequency: 'yearly', byweekday: ['monday'], bysetpos: 1 }), '2026-12-01T00:00:00Z', 2), ['2027-01-04T09:30', '2028-01-03T09:30'], 'the first Monday of the year');
});

t.test('count and until end it', async (t) => {
  t.same(occurrences(rule({ count: 3 }), '2026-11-01T00:00:00Z', 10), ['2026-12-02T09:30', '2026-12-03T09:30', '2026-12-04T09:30']);
  t.equal(occurrenceAfter(rule({ count: 3 }), Date.parse('2026-12-04T09:30:00Z')), null, 'after the third, none');
  t.same(occurrences(rule({ until_date: '2026-12-04T09:30:00Z' }), '2026-11-01T00:00:00Z', 10), ['2026-12-02T09:30', '2026-12-03T09:30', '2026-12-04T09:30'], 'until is inclusive');
  t.same(occurrences(rule({ frequency: 'weekly', byweekday: ['monday', 'friday'], count: 3 }), '2026-12-01T00:00:00Z', 10), ['2026-12-04T09:30', '2026-12-07T09:30', '2026-12-11T09:30']);
});

t.test('a start long ago: the next occurrence after now, without walking every period', async (t) => {
  const started = performance.now();
  t.equal(new Date(occurrenceAfter(rule({ start_date: '2001-01-01T07:00:00Z' }), Date.parse('2026-12-02T10:00:00Z'))!).toISOString(), '2026-12-03T07:00:00.000Z');
  t.equal(new Date(occurrenceAfter(rule({ frequency: 'monthly', interval: 5, start_date: '2001-01-15T07:00:00Z' }), Date.parse('2026-12-02T10:00:00Z'))!).toISOString(), '2027-04-15T07:00:00.000Z', 'every 5 months: 2026-11-15 has passed, 2027-04-15 is next');
  t.ok(performance.now() - started < 200, 'fast');
});

t.test("PostHog's summary", async (t) => {
  t.equal(recurrenceSummary(rule({})), 'sent every day');
  t.equal(recurrenceSummary(rule({ frequency: 'weekly', interval: 2 })), 'sent every 2 weeks');
  t.equal(recurrenceSummary(rule({ frequency: 'monthly', byweekday: ['friday'], bysetpos: -1 })), 'sent every month on the last Friday');
  t.equal(recurrenceSummary(rule({ frequency: 'monthly', byweekday: ['monday', 'tuesday'], bysetpos: 2 })), 'sent every month on the second day');
  t.equal(recurrenceSummary(rule({ frequency: 'yearly', byweekday: ['monday'], bysetpos: null })), 'sent every year');
});
