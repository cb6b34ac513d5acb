/**
 * Web analytics cases of the analytics benchmark: PostHog's web analytics kinds through `/query/`, each beside
 * DuckDB SQL that folds the same sessions by PostHog's rules (bench/analytics.bench.ts times both and compares the
 * answers). The dataset (bench/lib/analytics-dataset.ts) has `$session_id` on every event, `$current_url` on
 * pageviews and autocapture clicks; the project's time zone is UTC.
 */

/** Sessions of the events between the range's days, widened by a day each way (as Quill's scan). */
function sessionsSql(from: string, to: string): string {
  const inRange = `ts >= TIMESTAMP '${from}' AND ts < TIMESTAMP '${to}' + INTERVAL 1 DAY`;
  const counted = `event IN ('$pageview', '$screen') AND ${inRange}`;
  return `
    WITH s AS (
      SELECT session, min(ts) AS start, max(ts) AS stop,
        least(2, count(*) FILTER (WHERE event IN ('$pageview', '$screen', '$autocapture'))) AS bounce_events,
        count(*) FILTER (WHERE ${counted}) AS views,
        arg_min(person, ts) FILTER (WHERE ${counted}) AS person,
        arg_min(url, ts) FILTER (WHERE event IN ('$pageview', '$screen')) AS entry_url
      FROM events
      WHERE ts >= TIMESTAMP '${from}' - INTERVAL 1 DAY AND ts < TIMESTAMP '${to}' + INTERVAL 2 DAY
      GROUP BY session
    ), c AS (
      SELECT *, floor(epoch_ms(stop) / 1000) - floor(epoch_ms(start) / 1000) AS duration,
        CASE WHEN bounce_events = 0 THEN NULL WHEN bounce_events > 1 OR floor(epoch_ms(stop) / 1000) - floor(epoch_ms(start) / 1000) >= 10 THEN 0 ELSE 1 END AS bounce
      FROM s WHERE views > 0
    )`;
}

export interface WebCase {
  name: string;
  query: Record<string, unknown>;
  sql: string;
  quill(body: any): Map<string, number>;
  duck(rows: Record<string, unknown>[]): Map<string, number>;
}

export function webCases(from: string, to: string): WebCase[] {
  const dateRange = { date_from: from, date_to: to };
  const inStart = `start >= TIMESTAMP '${from}' AND start < TIMESTAMP '${to}' + INTERVAL 1 DAY`;
  return [
    {
      name: 'WebOverviewQuery: visitors, views, sessions, duration, bounce rate',
      query: { kind: 'WebOverviewQuery', dateRange, properties: [] },
      sql: `${sessionsSql(from, to)} SELECT count(DISTINCT person) AS visitors, sum(views) AS views, count(*) AS sessions,
        avg(duration) AS duration, avg(bounce) * 100 AS bounce FROM c WHERE ${inStart}`,
      quill: (body) => new Map(body.results.map((i: any) => [i.key, i.value])),
      duck: (rows) => {
        const r = rows[0]!;
        return new Map([['visitors', Number(r.visitors)], ['views', Number(r.views)], ['sessions', Number(r.sessions)], ['session duration', Number(r.duration)], ['bounce rate', Number(r.bounce)]]);
      },
    },
    {
      // Without compare every session with pageviews in the range counts, also one that started the day before.
      name: 'WebStatsTableQuery: entry pages (visitors, views)',
      query: { kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', dateRange, properties: [], limit: 1000 },
      sql: `${sessionsSql(from, to)} SELECT regexp_extract(entry_url, '^[a-z]+://[^/?#]*([^?#]*)', 1) AS path, count(DISTINCT person) AS visitors,
        sum(views) AS views FROM c WHERE entry_url IS NOT NULL GROUP BY 1`,
      quill: (body) => new Map(body.results.flatMap((r: any[]) => [[`${r[0]} visitors`, r[1][0]], [`${r[0]} views`, r[2][0]]])),
      duck: (rows) => new Map(rows.flatMap((r) => [[`${r.path} visitors`, Number(r.visitors)], [`${r.path} views`, Number(r.views)]])),
    },
    {
      // An event breakdown: each pageview counts under its own browser, its session's person as the visitor.
      name: 'WebStatsTableQuery: browsers (visitors, views)',
      query: { kind: 'WebStatsTableQuery', breakdownBy: 'Browser', dateRange, properties: [], limit: 1000 },
      sql: `${sessionsSql(from, to)}, v AS (
          SELECT e.browser, c.person FROM events e JOIN c ON e.session = c.session
          WHERE e.event = '$pageview' AND e.ts >= TIMESTAMP '${from}' AND e.ts < TIMESTAMP '${to}' + INTERVAL 1 DAY
        )
        SELECT browser, count(DISTINCT person) AS visitors, count(*) AS views FROM v WHERE browser IS NOT NULL GROUP BY 1`,
      quill: (body) => new Map(body.results.flatMap((r: any[]) => [[`${r[0]} visitors`, r[1][0]], [`${r[0]} views`, r[2][0]]])),
      duck: (rows) => new Map(rows.flatMap((r) => [[`${r.browser} visitors`, Number(r.visitors)], [`${r.browser} views`, Number(r.views)]])),
    },
  ];
}

/**
 * Every query the console's Web analytics page sends when it opens (src/console/app/pages/web-analytics.tsx): the
 * overview with the previous period, the visitors/views chart, the first tab of each table group, goals, outbound
 * clicks and web vitals. The bench fires them at once, as the page does, and times the whole page.
 */
export function webPageQueries(from: string, to: string): Record<string, unknown>[] {
  const base = { dateRange: { date_from: from, date_to: to }, properties: [], compareFilter: { compare: true } };
  const dateRange = { date_from: from, date_to: to };
  return [
    { kind: 'WebOverviewQuery', ...base },
    {
      kind: 'TrendsQuery', dateRange, interval: 'day', properties: [],
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau', custom_name: 'Visitors' }, { kind: 'EventsNode', event: '$pageview', math: 'total', custom_name: 'Views' }],
    },
    { kind: 'WebStatsTableQuery', breakdownBy: 'Page', limit: 10, includeBounceRate: true, ...base },
    { kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', limit: 10, ...base },
    { kind: 'WebStatsTableQuery', breakdownBy: 'Browser', limit: 10, ...base },
    { kind: 'WebGoalsQuery', ...base },
    { kind: 'WebExternalClicksTableQuery', stripQueryParams: true, limit: 10, ...base },
    {
      kind: 'WebVitalsQuery', properties: [], dateRange,
      source: {
        kind: 'TrendsQuery', dateRange, interval: 'day', properties: [],
        series: ['INP', 'LCP', 'CLS', 'FCP'].map((m) => ({ kind: 'EventsNode', event: '$web_vitals', custom_name: m, math: 'p75', math_property: `$web_vitals_${m}_value` })),
      },
    },
  ];
}
