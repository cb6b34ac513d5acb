/**
 * `WebExternalClicksTableQuery`: links to other sites that were clicked (autocaptured clicks carrying
 * `$external_click_url`, optionally without query string and fragment) in the current period, with the distinct
 * persons who clicked each and the clicks, most visitors first, then by URL.
 */
import { compareText, DEFAULT_LIMIT, type TableAnswer } from './tables.js';

/** Per URL: the persons who clicked it and the clicks (a shard's part; parts merge by union and sum). */
export type ClickCounts = Map<string, { persons: Set<number>; clicks: number }>;

export function mergeClicks(into: ClickCounts, other: Iterable<[string, number[], number]>): void {
  for (const [url, persons, clicks] of other) {
    let c = into.get(url);
    if (!c) into.set(url, (c = { persons: new Set(), clicks: 0 }));
    for (const p of persons) c.persons.add(p);
    c.clicks += clicks;
  }
}

export function clicksTable(counts: ClickCounts, limit: number | null, offset: number): TableAnswer {
  return clicksTableOf([...counts].map(([url, c]) => [url, c.persons.size, c.clicks]), limit, offset);
}

/** The table from [url, visitors, clicks] rows (the local counts, or ClickHouse's). */
export function clicksTableOf(rows: [string, number, number][], limit: number | null, offset: number): TableAnswer {
  const sorted = [...rows].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]));
  const n = limit ?? DEFAULT_LIMIT;
  return {
    columns: ['context.columns.url', 'context.columns.visitors', 'context.columns.clicks'],
    results: sorted.slice(offset, offset + n),
    hasMore: sorted.length > offset + n,
    limit: n,
    offset,
  };
}
