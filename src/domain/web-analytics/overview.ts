/**
 * `WebOverviewQuery`: visitors, views, sessions, session duration and bounce rate of the sessions that started in
 * the period (and of those that started in the previous one, with compare), each with its change. With a
 * conversion goal: visitors, total conversions, unique conversions and the conversion rate instead.
 *
 * What counts, as in PostHog: a session counts in the period its first event falls in, if it has a pageview or
 * screen (or, with a conversion goal, a goal event) passing the filters inside the periods; views are those
 * pageviews and screens, visitors the distinct persons of the sessions, duration and bounce the session's own.
 */
import type { Periods } from './query.js';
import { periodOf } from './query.js';
import type { WebSession } from './sessions.js';

export type ItemKind = 'unit' | 'duration_s' | 'percentage';

export interface OverviewItem {
  key: string;
  kind: ItemKind;
  isIncreaseBad: boolean | null;
  value: number | null;
  previous: number | null;
  changeFromPreviousPct: number | null;
}

/** Python's `round` (half to even), which PostHog rounds the change with. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** An item as PostHog's `to_data` makes it: percentages ×100, the change in whole percent of the previous value. */
export function overviewItem(key: string, kind: ItemKind, value: number | null, previous: number | null, isIncreaseBad: boolean | null = null): OverviewItem {
  const scale = (v: number | null) => (v === null || Number.isNaN(v) ? null : kind === 'percentage' ? v * 100 : v);
  const v = scale(value);
  const p = scale(previous);
  const change = v !== null && p !== null && p !== 0 ? roundHalfEven((100 * (v - p)) / p) : null;
  return { key, kind, isIncreaseBad, value: v, previous: p, changeFromPreviousPct: change };
}

/** Running sums of one period. */
export class PeriodTotals {
  readonly persons = new Set<number>();
  readonly convertingPersons = new Set<number>();
  views = 0;
  sessions = 0;
  durationSum = 0;
  bounceSum = 0;
  bounceN = 0;
  conversions = 0;

  add(s: WebSession, conversions: number): void {
    if (s.part.person !== 0) this.persons.add(s.part.person);
    this.views += s.part.counted;
    this.sessions++;
    this.durationSum += s.duration;
    if (s.isBounce !== null) {
      this.bounceN++;
      if (s.isBounce) this.bounceSum++;
    }
    this.conversions += conversions;
    if (conversions > 0 && s.part.person !== 0) this.convertingPersons.add(s.part.person);
  }

  /** ClickHouse's avg of nothing is NaN (the item shows null). */
  avgDuration(): number {
    return this.sessions === 0 ? NaN : this.durationSum / this.sessions;
  }

  bounceRate(): number {
    return this.bounceN === 0 ? NaN : this.bounceSum / this.bounceN;
  }
}

/** One period's totals as plain data (sets as arrays), for another accumulator to absorb. */
export type TotalsState = [number[], number[], number, number, number, number, number, number];

export function totalsState(t: PeriodTotals): TotalsState {
  return [[...t.persons], [...t.convertingPersons], t.views, t.sessions, t.durationSum, t.bounceSum, t.bounceN, t.conversions];
}

export function absorbTotals(into: PeriodTotals, [persons, converting, views, sessions, durationSum, bounceSum, bounceN, conversions]: TotalsState): void {
  for (const p of persons) into.persons.add(p);
  for (const p of converting) into.convertingPersons.add(p);
  into.views += views;
  into.sessions += sessions;
  into.durationSum += durationSum;
  into.bounceSum += bounceSum;
  into.bounceN += bounceN;
  into.conversions += conversions;
}

/** Adds a session to the totals of the period it started in (it passed the session filters and has counted events). */
export function addToTotals(totals: [PeriodTotals, PeriodTotals], s: WebSession, periods: Periods, conversionsOf: (s: WebSession) => number): void {
  const p = periodOf(periods, s.start);
  if (p !== -1) totals[p]!.add(s, conversionsOf(s));
}

/** The sessions a query counts, per period (sessions already passed the session filters and have counted events). */
export function totalsByPeriod(sessions: Iterable<WebSession>, periods: Periods, conversionsOf: (s: WebSession) => number): [PeriodTotals, PeriodTotals] {
  const out: [PeriodTotals, PeriodTotals] = [new PeriodTotals(), new PeriodTotals()];
  for (const s of sessions) {
    const p = periodOf(periods, s.start);
    if (p !== -1) out[p]!.add(s, conversionsOf(s));
  }
  return out;
}

export function overviewItems(totals: [PeriodTotals, PeriodTotals], compare: boolean, withGoal: boolean): OverviewItem[] {
  const [cur, prev] = totals;
  const pair = (f: (t: PeriodTotals) => number): [number, number | null] => [f(cur), compare ? f(prev) : null];
  if (withGoal) {
    const rate = (t: PeriodTotals) => (t.persons.size === 0 ? NaN : t.convertingPersons.size / t.persons.size);
    return [
      overviewItem('visitors', 'unit', ...pair((t) => t.persons.size)),
      overviewItem('total conversions', 'unit', ...pair((t) => t.conversions)),
      overviewItem('unique conversions', 'unit', ...pair((t) => t.convertingPersons.size)),
      overviewItem('conversion rate', 'percentage', ...pair(rate)),
    ];
  }
  return [
    overviewItem('visitors', 'unit', ...pair((t) => t.persons.size)),
    overviewItem('views', 'unit', ...pair((t) => t.views)),
    overviewItem('sessions', 'unit', ...pair((t) => t.sessions)),
    overviewItem('session duration', 'duration_s', ...pair((t) => t.avgDuration())),
    overviewItem('bounce rate', 'percentage', ...pair((t) => t.bounceRate()), true),
  ];
}
