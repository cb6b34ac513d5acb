/**
 * Funnel correlation statistics (analytics.md §3.3): which events (or properties) go with converting or dropping.
 * Pure: candidates with their success and failure counts in, the ranked answer out.
 */
export interface CorrelationCounts {
  success: number;
  failure: number;
}

export interface CorrelationEntry {
  name: string;
  success_count: number;
  failure_count: number;
  odds_ratio: number;
  correlation_type: 'success' | 'failure';
}

/**
 * Odds ratio with a prior of 1 in every cell; candidates seen by fewer than min(25, 2 % of the population) persons
 * are insignificant; the 10 strongest of each direction are kept. `skewed` when one side outnumbers the other 10×.
 */
export function correlate(candidates: ReadonlyMap<string, CorrelationCounts>, totalSuccess: number, totalFailure: number): { entries: CorrelationEntry[]; skewed: boolean } {
  if (totalSuccess === 0 || totalFailure === 0) return { entries: [], skewed: true };
  const skewed = totalSuccess / totalFailure > 10 || totalFailure / totalSuccess > 10;
  const threshold = Math.min(25, 0.02 * (totalSuccess + totalFailure));
  const all: CorrelationEntry[] = [];
  for (const [name, c] of candidates) {
    if (c.success + c.failure < threshold) continue;
    const odds = ((c.success + 1) * (totalFailure - c.failure + 1)) / ((totalSuccess - c.success + 1) * (c.failure + 1));
    all.push({ name, success_count: c.success, failure_count: c.failure, odds_ratio: odds, correlation_type: odds > 1 ? 'success' : 'failure' });
  }
  const success = all.filter((e) => e.correlation_type === 'success').sort((a, b) => b.odds_ratio - a.odds_ratio || (a.name < b.name ? -1 : 1)).slice(0, 10);
  const failure = all.filter((e) => e.correlation_type === 'failure').sort((a, b) => a.odds_ratio - b.odds_ratio || (a.name < b.name ? -1 : 1)).slice(0, 10);
  return { entries: [...success, ...failure], skewed };
}
