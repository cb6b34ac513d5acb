/**
 * `WebGoalsQuery`: the project's actions as goals (the first five), each with its converting users, total
 * conversions and conversion rate, `[current, previous]`. PostHog's rules: sessions count in the period they
 * started in (pageviews, screens or goal events passing the filters inside the periods); a goal's conversions are
 * its events inside each period by their own time; converting users the sessions' persons with one; the rate
 * their share of the period's visitors (0 without visitors).
 */
import type { Periods } from './query.js';
import { periodOf } from './query.js';
import type { WebSession } from './sessions.js';

/** PostHog takes at most five actions as goals. */
export const MAX_GOALS = 5;

export const GOAL_COLUMNS = [
  'context.columns.action_name', 'context.columns.converting_users', 'context.columns.total_conversions', 'context.columns.conversion_rate',
];

/** Goals' running sums: visitors, and per goal its conversions and converting persons, per period. */
export class GoalsAccumulator {
  readonly visitors: [Set<number>, Set<number>] = [new Set(), new Set()];
  readonly totals: [number, number][];
  readonly converting: [Set<number>, Set<number>][];

  constructor(private readonly goals: number, private readonly periods: Periods) {
    this.totals = Array.from({ length: goals }, () => [0, 0]);
    this.converting = Array.from({ length: goals }, () => [new Set<number>(), new Set<number>()]);
  }

  add(s: WebSession): void {
    const p = periodOf(this.periods, s.start);
    if (p === -1) return;
    const person = s.part.person;
    if (person !== 0) this.visitors[p].add(person);
    for (let i = 0; i < this.goals; i++) {
      for (const k of [0, 1] as const) {
        const n = s.part.goals[2 * i + k] ?? 0;
        this.totals[i]![k] += n;
        if (n > 0 && person !== 0) this.converting[i]![k].add(person);
      }
    }
  }

  state(): GoalsState {
    return { visitors: [[...this.visitors[0]], [...this.visitors[1]]], totals: this.totals, converting: this.converting.map((c) => [[...c[0]], [...c[1]]]) };
  }

  absorb(state: GoalsState): void {
    for (const k of [0, 1] as const) for (const p of state.visitors[k]) this.visitors[k].add(p);
    state.totals.forEach((t, i) => {
      this.totals[i]![0] += t[0];
      this.totals[i]![1] += t[1];
      for (const k of [0, 1] as const) for (const p of state.converting[i]![k]) this.converting[i]![k].add(p);
    });
  }

  finish(names: readonly string[], orderBy: [string, 'ASC' | 'DESC'] | null): unknown[][] {
    const compare = this.periods.previous !== null;
    const { visitors, totals, converting } = this;
    const rate = (converted: number, seen: number) => (seen > 0 ? converted / seen : 0);
    const rows = names.map((name, i) => [
      name,
      [converting[i]![0].size, compare ? converting[i]![1].size : null],
      [totals[i]![0], compare ? totals[i]![1] : null],
      [rate(converting[i]![0].size, visitors[0].size), compare ? rate(converting[i]![1].size, visitors[1].size) : null],
    ]);
    const index = orderBy === null ? null : ({ ConvertingUsers: 1, TotalConversions: 2, ConversionRate: 3 } as Record<string, number>)[orderBy[0]];
    if (index !== undefined && index !== null) {
      const sign = orderBy![1] === 'DESC' ? -1 : 1;
      // Python sorts tuples (current, previous); None compares as nothing: treat it as the smallest.
      rows.sort((a, b) => {
        const x = a[index] as (number | null)[];
        const y = b[index] as (number | null)[];
        for (let k = 0; k < 2; k++) if (x[k] !== y[k]) return sign * ((x[k] ?? -Infinity) - (y[k] ?? -Infinity));
        return 0;
      });
    }
    return rows;
  }
}

export interface GoalsState {
  visitors: [number[], number[]];
  totals: [number, number][];
  converting: [number[], number[]][];
}

export function goalsTable(sessions: readonly WebSession[], names: readonly string[], periods: Periods, orderBy: [string, 'ASC' | 'DESC'] | null): unknown[][] {
  const acc = new GoalsAccumulator(names.length, periods);
  for (const s of sessions) acc.add(s);
  return acc.finish(names, orderBy);
}
