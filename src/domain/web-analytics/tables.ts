/**
 * `WebStatsTableQuery`: one row per breakdown value with its visitors and views (and bounce rate, scroll depth, or
 * with a conversion goal its conversions), each as `[current, previous]`, PostHog's columns and order.
 *
 * PostHog's rules, kept here: rows are (session, value) groups of counted events (pageviews and screens passing
 * the filters inside the periods); with compare, a group belongs to the period its session started in, without
 * compare every group counts (also of sessions that started before the range). Visitors are distinct persons,
 * views the counted events, bounce rate the mean of the groups' session bounce. For the Page breakdown the bounce
 * rate is that of the sessions that entered on the page (filters on `$pathname` left out), and scroll depth the
 * mean of `$prev_pageview_max_scroll_percentage` (and share of `$prev_pageview_max_content_percentage` over 0.8) of
 * the events leaving the page. Rows are ordered by the chosen column, then visitors, views (descending unless
 * asked otherwise) and the value; `ui_fill_fraction` is the row's share of the first ordering column.
 */
import { EVENT_BREAKDOWNS, KEEPS_NULL, sessionBreakdownValue } from './breakdowns.js';
import type { Breakdown, Periods, WebQuery } from './query.js';
import { periodOf } from './query.js';
import type { WebSession } from './sessions.js';

export const DEFAULT_LIMIT = 100;

interface Row {
  value: unknown;
  persons: [Set<number>, Set<number>];
  views: [number, number];
  bounceSum: [number, number];
  bounceN: [number, number];
  conversions: [number, number];
  converting: [Set<number>, Set<number>];
  /** Language: the region parts seen (topK(1) picks the most frequent). */
  regions: Map<string, number>;
}

const newRow = (value: unknown): Row => ({
  value, persons: [new Set(), new Set()], views: [0, 0], bounceSum: [0, 0], bounceN: [0, 0], conversions: [0, 0],
  converting: [new Set(), new Set()], regions: new Map(),
});

interface MeanPair {
  sum: [number, number];
  n: [number, number];
}
const newMean = (): MeanPair => ({ sum: [0, 0], n: [0, 0] });
const meanOf = (m: MeanPair | undefined, p: 0 | 1): number | null => (m === undefined || m.n[p] === 0 ? null : m.sum[p] / m.n[p]);

export interface TableAnswer {
  columns: string[];
  results: unknown[][];
  hasMore: boolean;
  limit: number;
  offset: number;
}

/** Code-point order (ClickHouse compares strings bytewise, which for UTF-8 is code-point order). */
export function compareText(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A table's rows as plain data (sets as arrays): what a worker sends, to be absorbed by another accumulator. */
export interface TableState {
  rows: [string, unknown, [number[], number[]], [number, number], [number, number], [number, number], [number, number], [number[], number[]], [string, number][]][];
  entryBounce: [string, MeanPair][];
  scrollAvg: [string, MeanPair][];
  scrollGt80: [string, MeanPair][];
}

/**
 * The rows of a table, built a session at a time (`add`), mergeable with another's (`state` / `absorb`: workers
 * each add the sessions they hold whole, one absorbs the others), then ordered and paged (`finish`).
 */
export class TableAccumulator {
  private readonly rows = new Map<string, Row>();
  // Page bounce rate and scroll depth: separate groupings, joined onto the rows by value.
  private readonly entryBounce = new Map<string, MeanPair>();
  private readonly scrollAvg = new Map<string, MeanPair>();
  private readonly scrollGt80 = new Map<string, MeanPair>();
  private readonly b: Breakdown;
  private readonly compare: boolean;
  private readonly withGoal: boolean;
  private readonly pageBounce: boolean;
  private readonly pageScroll: boolean;

  constructor(private readonly q: WebQuery, private readonly periods: Periods, private readonly clean: (path: string) => string, private readonly conversionsOf: (s: WebSession) => number) {
    this.b = q.breakdownBy!;
    this.compare = periods.previous !== null;
    this.withGoal = q.conversionGoal !== null;
    this.pageBounce = this.b === 'Page' && q.includeBounceRate && !this.withGoal;
    this.pageScroll = this.b === 'Page' && q.includeScrollDepth && !this.withGoal;
  }

  private rowOf(key: string, value: unknown): Row {
    let r = this.rows.get(key);
    if (!r) this.rows.set(key, (r = newRow(value)));
    return r;
  }

  add(s: WebSession): void {
    const { b } = this;
    const p = this.compare ? periodOf(this.periods, s.start) : 0;
    if (p === -1) return;
    const add = (r: Row, count: number, conversions: number) => {
      if (s.part.person !== 0) r.persons[p].add(s.part.person);
      r.views[p] += count;
      if (s.isBounce !== null) {
        r.bounceN[p]++;
        if (s.isBounce) r.bounceSum[p]++;
      }
      r.conversions[p] += conversions;
      if (conversions > 0 && s.part.person !== 0) r.converting[p].add(s.part.person);
    };
    if (EVENT_BREAKDOWNS.has(b)) {
      for (const [key, count] of Object.entries(s.part.values)) {
        if (b === 'Language') {
          const full = String(JSON.parse(key));
          const [lang, region = ''] = full.split('-', 2) as [string, string?];
          const r = this.rowOf(JSON.stringify(lang), lang);
          r.regions.set(region, (r.regions.get(region) ?? 0) + 1);
          add(r, count, s.part.valueConversions[key] ?? 0);
        } else add(this.rowOf(key, JSON.parse(key)), count, s.part.valueConversions[key] ?? 0);
      }
    } else if (s.part.counted > 0) {
      const value = sessionBreakdownValue(b, s, this.clean);
      if (value !== null || KEEPS_NULL.has(b)) add(this.rowOf(JSON.stringify(value), value), s.part.counted, this.conversionsOf(s));
    }
    if (this.pageBounce && s.entryPathname !== null && s.isBounce !== null && (this.pageScroll ? s.part.counted : s.part.countedForBounce) > 0) {
      const m = meanIn(this.entryBounce, JSON.stringify(this.clean(s.entryPathname)));
      m.n[p]++;
      if (s.isBounce) m.sum[p]++;
    }
    if (this.pageScroll) {
      for (const [path, sums] of Object.entries(s.part.scroll)) {
        const key = JSON.stringify(path);
        const a = meanIn(this.scrollAvg, key);
        const g = meanIn(this.scrollGt80, key);
        a.sum[p] += sums.scrollSum;
        a.n[p] += sums.scrollN;
        g.sum[p] += sums.gt80Sum;
        g.n[p] += sums.gt80N;
      }
    }
  }

  state(): TableState {
    return {
      rows: [...this.rows].map(([key, r]) => [key, r.value, [[...r.persons[0]], [...r.persons[1]]], r.views, r.bounceSum, r.bounceN, r.conversions,
        [[...r.converting[0]], [...r.converting[1]]], [...r.regions]]),
      entryBounce: [...this.entryBounce], scrollAvg: [...this.scrollAvg], scrollGt80: [...this.scrollGt80],
    };
  }

  absorb(state: TableState): void {
    for (const [key, value, persons, views, bounceSum, bounceN, conversions, converting, regions] of state.rows) {
      const r = this.rowOf(key, value);
      for (const k of [0, 1] as const) {
        for (const pid of persons[k]) r.persons[k].add(pid);
        for (const pid of converting[k]) r.converting[k].add(pid);
        r.views[k] += views[k];
        r.bounceSum[k] += bounceSum[k];
        r.bounceN[k] += bounceN[k];
        r.conversions[k] += conversions[k];
      }
      for (const [region, n] of regions) r.regions.set(region, (r.regions.get(region) ?? 0) + n);
    }
    for (const [target, entries] of [[this.entryBounce, state.entryBounce], [this.scrollAvg, state.scrollAvg], [this.scrollGt80, state.scrollGt80]] as const) {
      for (const [key, m] of entries) {
        const into = meanIn(target, key);
        for (const k of [0, 1] as const) {
          into.sum[k] += m.sum[k];
          into.n[k] += m.n[k];
        }
      }
    }
  }

  finish(): TableAnswer {
    const { b, q, compare, withGoal, pageBounce, pageScroll, entryBounce, scrollAvg, scrollGt80 } = this;
    const pair = <T>(cur: T, prev: T): [T, T | null] => [cur, compare ? prev : null];
    const columns = ['context.columns.breakdown_value', 'context.columns.visitors'];
    type Built = { key: string; cells: Record<string, unknown>; value: unknown };
    const built: Built[] = [...this.rows].map(([key, r]) => {
      const cells: Record<string, unknown> = { 'context.columns.visitors': pair(r.persons[0].size, r.persons[1].size) };
      if (withGoal) {
        cells['context.columns.total_conversions'] = pair(r.conversions[0], r.conversions[1]);
        cells['context.columns.unique_conversions'] = pair(r.converting[0].size, r.converting[1].size);
        const rate = (i: 0 | 1) => (r.persons[i].size === 0 ? null : r.converting[i].size / r.persons[i].size);
        cells['context.columns.conversion_rate'] = pair(rate(0), rate(1));
      } else {
        cells['context.columns.views'] = pair(r.views[0], r.views[1]);
        if (q.includeBounceRate && b !== 'Language') {
          cells['context.columns.bounce_rate'] = pageBounce
            ? pair(meanOf(entryBounce.get(key), 0), meanOf(entryBounce.get(key), 1))
            : pair(r.bounceN[0] === 0 ? null : r.bounceSum[0] / r.bounceN[0], r.bounceN[1] === 0 ? null : r.bounceSum[1] / r.bounceN[1]);
        }
        if (pageScroll) {
          cells['context.columns.average_scroll_percentage'] = pair(meanOf(scrollAvg.get(key), 0), meanOf(scrollAvg.get(key), 1));
          cells['context.columns.scroll_gt80_percentage'] = pair(meanOf(scrollGt80.get(key), 0), meanOf(scrollGt80.get(key), 1));
        }
      }
      let value = r.value;
      if (b === 'Language') {
        // The most frequent region of the language (ties: the first seen), as PostHog's topK(1).
        let best = '';
        let most = -1;
        for (const [region, n] of r.regions) if (n > most) [best, most] = [region, n];
        value = `${String(r.value)}-${best}`;
      }
      return { key, cells, value };
    });
    if (withGoal) columns.push('context.columns.total_conversions', 'context.columns.unique_conversions', 'context.columns.conversion_rate');
    else {
      columns.push('context.columns.views');
      if (q.includeBounceRate && b !== 'Language') columns.push('context.columns.bounce_rate');
      if (pageScroll) columns.push('context.columns.average_scroll_percentage', 'context.columns.scroll_gt80_percentage');
    }

    const order = orderColumns(q, columns);
    const direction = q.orderBy?.[1] === 'ASC' ? 1 : -1;
    const num = (v: unknown): number | null => (typeof v === 'number' && !Number.isNaN(v) ? v : null);
    const cmpCell = (x: unknown, y: unknown): number => {
      const [a0, a1] = x as [unknown, unknown];
      const [b0, b1] = y as [unknown, unknown];
      for (const [a, c] of [[num(a0), num(b0)], [num(a1), num(b1)]] as [number | null, number | null][]) {
        if (a === c) continue;
        if (a === null) return 1; // nulls last either way
        if (c === null) return -1;
        return direction * (a - c);
      }
      return 0;
    };
    built.sort((x, y) => {
      for (const col of order) {
        const d = cmpCell(x.cells[col], y.cells[col]);
        if (d !== 0) return d;
      }
      if (x.value === null || y.value === null) return x.value === y.value ? 0 : x.value === null ? 1 : -1;
      return compareText(typeof x.value === 'string' ? x.value : JSON.stringify(x.value), typeof y.value === 'string' ? y.value : JSON.stringify(y.value));
    });

    // The fill fraction: the row's share of the first ordering column, or that column itself when it is a rate.
    const first = order[0] ?? 'context.columns.visitors';
    const isRate = /bounce_rate|scroll|conversion_rate/.test(first);
    const total = built.reduce((a, r) => a + (num((r.cells[first] as unknown[])[0]) ?? 0), 0);
    columns.push('context.columns.ui_fill_fraction', 'context.columns.cross_sell');
    const all = built.map((r) => {
      const head = num((r.cells[first] as unknown[])[0]);
      const fill = isRate ? head : head === null || total === 0 ? null : head / total;
      return [r.value, ...columns.slice(1, -2).map((c) => r.cells[c]), fill, ''];
    });
    const limit = q.limit ?? DEFAULT_LIMIT;
    const page = all.slice(q.offset, q.offset + limit);
    return { columns, results: page, hasMore: all.length > q.offset + limit, limit, offset: q.offset };
  }
}

function meanIn(map: Map<string, MeanPair>, key: string): MeanPair {
  let m = map.get(key);
  if (!m) map.set(key, (m = newMean()));
  return m;
}

export function statsTable(sessions: readonly WebSession[], q: WebQuery, periods: Periods, clean: (path: string) => string, conversionsOf: (s: WebSession) => number): TableAnswer {
  const acc = new TableAccumulator(q, periods, clean, conversionsOf);
  for (const s of sessions) acc.add(s);
  return acc.finish();
}

const ORDER_COLUMN: Record<string, string> = {
  Visitors: 'context.columns.visitors', Views: 'context.columns.views', BounceRate: 'context.columns.bounce_rate',
  AverageScrollPercentage: 'context.columns.average_scroll_percentage', ScrollGt80Percentage: 'context.columns.scroll_gt80_percentage',
  TotalConversions: 'context.columns.total_conversions', UniqueConversions: 'context.columns.unique_conversions',
  ConversionRate: 'context.columns.conversion_rate',
};

/** The columns rows are ordered by before the value: the asked one, then conversions, visitors, views. */
function orderColumns(q: WebQuery, columns: readonly string[]): string[] {
  const chosen = q.orderBy ? ORDER_COLUMN[q.orderBy[0]] : undefined;
  const out = chosen !== undefined && columns.includes(chosen) ? [chosen] : [];
  for (const c of ['context.columns.unique_conversions', 'context.columns.total_conversions', 'context.columns.visitors', 'context.columns.views']) {
    if (c !== chosen && columns.includes(c)) out.push(c);
  }
  return out;
}

/** Whether a breakdown reads the events' properties (the scan groups counted events by value). */
export function isEventBreakdown(b: Breakdown): boolean {
  return EVENT_BREAKDOWNS.has(b);
}
