/**
 * What a web analytics kind accumulates from finished sessions, in a form every worker can build from the sessions
 * it holds whole and another can absorb (ClickHouse's -State/-Merge again, one level up): the overview's period
 * totals, a table's rows, the goals' sums. The session filters and which sessions a kind counts are decided here,
 * so a worker and the coordinator count a session the same way wherever it was finished.
 */
import { itemCleaner, type CleaningRule } from '../analytics/paths.js';
import { compileMatcher } from '../analytics/property-filters.js';
import { GoalsAccumulator, type GoalsState } from './goals.js';
import { absorbTotals, addToTotals, PeriodTotals, totalsState, type TotalsState } from './overview.js';
import { webQueryOf, type Periods, type WebQuery } from './query.js';
import { finishSession, sessionProperty, type SessionPart, type WebSession } from './sessions.js';
import { TableAccumulator, type TableState } from './tables.js';

/** What every worker needs to accumulate a kind's answer (plain data: it travels between threads). */
export interface AggregateSpec {
  /** The query as sent (its kind, filters, breakdown…). */
  query: Record<string, unknown>;
  periods: Periods;
  /** Path cleaning rules applied to pathnames (doPathCleaning). */
  rules: CleaningRule[];
  /** How many goals a session's part counts (WebGoalsQuery's actions, or a conversion goal). */
  goals: number;
}

interface AggregatorBase {
  readonly q: WebQuery;
  readonly clean: (path: string) => string;
  /** Folds a finished part in, when the kind counts its session (session filters included). */
  addPart(part: SessionPart): void;
  state(): unknown;
  absorb(state: unknown): void;
}

export type WebAggregator =
  | AggregatorBase & { kind: 'overview'; totals: [PeriodTotals, PeriodTotals] }
  | AggregatorBase & { kind: 'table'; table: TableAccumulator }
  | AggregatorBase & { kind: 'goals'; goals: GoalsAccumulator }
  | AggregatorBase & { kind: 'none' };

/** A conversion goal's events of a session: goal 0, inside either period. */
export const conversionsOf = (s: WebSession): number => (s.part.goals[0] ?? 0) + (s.part.goals[1] ?? 0);

/** Whether a session passes the query's session property filters. */
export function sessionFilter(q: WebQuery): (s: WebSession) => boolean {
  const tests = q.sessionFilters.map((leaf) => {
    const m = compileMatcher(leaf);
    return (s: WebSession) => {
      const v = sessionProperty(s, leaf.key);
      return leaf.negation !== m(v !== null && v !== undefined, v);
    };
  });
  return (s) => tests.every((f) => f(s));
}

export function aggregatorFor(spec: AggregateSpec): WebAggregator {
  const q = webQueryOf(spec.query);
  const clean = spec.rules.length === 0 ? (p: string) => p : itemCleaner(spec.rules, []);
  const passes = sessionFilter(q);
  const finished = (part: SessionPart, counted: boolean): WebSession | null => {
    if (!counted) return null;
    const s = finishSession(part);
    return passes(s) ? s : null;
  };
  switch (q.kind) {
    case 'WebOverviewQuery': {
      const totals: [PeriodTotals, PeriodTotals] = [new PeriodTotals(), new PeriodTotals()];
      return {
        kind: 'overview', q, clean, totals,
        addPart(part) {
          const s = finished(part, part.counted > 0);
          if (s) addToTotals(totals, s, spec.periods, conversionsOf);
        },
        state: () => totals.map(totalsState),
        absorb: (state) => (state as TotalsState[]).forEach((t, i) => absorbTotals(totals[i]!, t)),
      };
    }
    case 'WebStatsTableQuery': {
      const table = new TableAccumulator(q, spec.periods, clean, conversionsOf);
      return {
        kind: 'table', q, clean, table,
        addPart(part) {
          const s = finished(part, part.counted > 0 || part.countedForBounce > 0);
          if (s) table.add(s);
        },
        state: () => table.state(),
        absorb: (state) => table.absorb(state as TableState),
      };
    }
    case 'WebGoalsQuery': {
      const goals = new GoalsAccumulator(spec.goals, spec.periods);
      return {
        kind: 'goals', q, clean, goals,
        addPart(part) {
          const s = finished(part, part.counted > 0);
          if (s) goals.add(s);
        },
        state: () => goals.state(),
        absorb: (state) => goals.absorb(state as GoalsState),
      };
    }
    default:
      // External clicks are counted from events, not sessions.
      return { kind: 'none', q, clean, addPart: () => undefined, state: () => null, absorb: () => undefined };
  }
}
