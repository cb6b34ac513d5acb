/**
 * The per-person analyses the analytics tests and benchmark compare with DuckDB: funnels over the dataset's
 * `$pageview` → `signed_up` → `purchase` (14-day window) and path edges over pageviews, as DuckDB SQL over the
 * `events` table. `range` is an SQL condition on `ts`.
 */
const STEPS = `('$pageview', 'signed_up', 'purchase')`;

/** Ordered funnel: per person `m` (steps reached) and average seconds of steps 1 and 2 over its best attempts. */
export function orderedFunnelPersons(range: string): string {
  return `e AS (SELECT person, ts, event, browser FROM events WHERE event IN ${STEPS} AND ${range}),
    s0 AS (SELECT person, ts AS t0 FROM e WHERE event = '$pageview'),
    s1 AS (SELECT s0.person, s0.t0, min(e.ts) AS t1 FROM s0 JOIN e ON e.person = s0.person AND e.event = 'signed_up' AND e.ts >= s0.t0 AND e.ts <= s0.t0 + INTERVAL 14 DAY GROUP BY 1, 2),
    s2 AS (SELECT s1.person, s1.t0, min(e.ts) AS t2 FROM s1 JOIN e ON e.person = s1.person AND e.event = 'purchase' AND e.ts >= s1.t1 AND e.ts <= s1.t0 + INTERVAL 14 DAY GROUP BY 1, 2),
    cand AS (SELECT s0.person, s0.t0, s1.t1, s2.t2, CASE WHEN s2.t2 IS NOT NULL THEN 3 WHEN s1.t1 IS NOT NULL THEN 2 ELSE 1 END AS steps
      FROM s0 LEFT JOIN s1 USING (person, t0) LEFT JOIN s2 USING (person, t0)),
    best AS (SELECT *, max(steps) OVER (PARTITION BY person) AS m FROM cand),
    per AS (SELECT person, m, avg(date_diff('millisecond', t0, t1)) / 1000 AS a1, avg(date_diff('millisecond', t1, t2)) / 1000 AS a2 FROM best WHERE steps = m GROUP BY 1, 2)`;
}

/** Step counts (c1..c3) of the ordered funnel. */
export function orderedFunnelSql(range: string): string {
  return `WITH ${orderedFunnelPersons(range)}
    SELECT count(*) AS c1, count(*) FILTER (WHERE m >= 2) AS c2, count(*) FILTER (WHERE m >= 3) AS c3, avg(a1) FILTER (WHERE m >= 2) AS a1, avg(a2) FILTER (WHERE m >= 3) AS a2 FROM per`;
}

/**
 * Two-step ordered funnel over one event name with a filter on one step only (`purchase` with `price > 100`, then
 * any `purchase`, or the other way round): one event fills at most one step, so the second step needs a later
 * purchase. `narrowFirst` puts the filter on the first step. Step counts c1, c2.
 */
export function sameEventFunnelSql(range: string, narrowFirst: boolean): string {
  const first = narrowFirst ? 'price > 100' : 'TRUE';
  const second = narrowFirst ? 'TRUE' : 'price > 100';
  return `WITH e AS (SELECT person, ts, price FROM events WHERE event = 'purchase' AND ${range}),
    s0 AS (SELECT person, ts AS t0 FROM e WHERE ${first}),
    s1 AS (SELECT s0.person, s0.t0, min(e.ts) AS t1 FROM s0 JOIN e ON e.person = s0.person AND ${second} AND e.ts > s0.t0 AND e.ts <= s0.t0 + INTERVAL 14 DAY GROUP BY 1, 2),
    per AS (SELECT s0.person, max(CASE WHEN s1.t1 IS NOT NULL THEN 2 ELSE 1 END) AS m FROM s0 LEFT JOIN s1 USING (person, t0) GROUP BY 1)
    SELECT count(*) AS c1, count(*) FILTER (WHERE m >= 2) AS c2 FROM per`;
}

/** Step counts per first-touch `$browser` (the browser of the person's first funnel event). */
export function browserFunnelSql(range: string): string {
  return `WITH ${orderedFunnelPersons(range)}, ft AS (SELECT person, arg_min(browser, ts) AS b FROM e GROUP BY 1)
    SELECT b, count(*) AS c1, count(*) FILTER (WHERE m >= 2) AS c2, count(*) FILTER (WHERE m >= 3) AS c3 FROM per JOIN ft USING (person) GROUP BY 1`;
}

/** Strict funnel: each step the very next event of the person (any event), within the window. */
export function strictFunnelSql(range: string): string {
  return `WITH e AS (SELECT person, ts, event, lead(event, 1) OVER w AS e1, lead(ts, 1) OVER w AS t1, lead(event, 2) OVER w AS e2, lead(ts, 2) OVER w AS t2
      FROM events WHERE ${range} WINDOW w AS (PARTITION BY person ORDER BY ts)),
    per AS (SELECT person, max(CASE WHEN e1 = 'signed_up' AND t1 <= ts + INTERVAL 14 DAY THEN CASE WHEN e2 = 'purchase' AND t2 <= ts + INTERVAL 14 DAY THEN 3 ELSE 2 END ELSE 1 END) AS m
      FROM e WHERE event = '$pageview' GROUP BY 1)
    SELECT count(*) AS c1, count(*) FILTER (WHERE m >= 2) AS c2, count(*) FILTER (WHERE m >= 3) AS c3 FROM per`;
}

/** Unordered funnel: any step first; the others count when one of their events follows within the window. */
export function unorderedFunnelSql(range: string): string {
  return `WITH e AS (SELECT person, ts, event FROM events WHERE event IN ${STEPS} AND ${range}),
    cand AS (SELECT a.person, a.ts, a.event, 1 + count(DISTINCT b.event) AS steps FROM e a LEFT JOIN e b ON b.person = a.person AND b.event <> a.event
      AND b.ts > a.ts AND b.ts <= a.ts + INTERVAL 14 DAY GROUP BY 1, 2, 3),
    per AS (SELECT person, max(steps) AS m FROM cand GROUP BY 1)
    SELECT count(*) AS c1, count(*) FILTER (WHERE m >= 2) AS c2, count(*) FILTER (WHERE m >= 3) AS c3 FROM per`;
}

/** Every path edge over pageviews (sessions at 30 minutes, repeats collapsed, 5 steps) and its count. */
export function pathEdgesSql(range: string): string {
  return `WITH e AS (SELECT person, ts, CASE WHEN length(url) > 1 AND suffix(url, '/') THEN url[1:-2] ELSE url END AS item FROM events WHERE event = '$pageview' AND ${range}),
    g AS (SELECT *, CASE WHEN lag(ts) OVER w IS NULL OR ts - lag(ts) OVER w >= INTERVAL 30 MINUTE THEN 1 ELSE 0 END AS starts FROM e WINDOW w AS (PARTITION BY person ORDER BY ts)),
    s AS (SELECT *, sum(starts) OVER (PARTITION BY person ORDER BY ts ROWS UNBOUNDED PRECEDING) AS session FROM g),
    c AS (SELECT *, lag(item) OVER (PARTITION BY person, session ORDER BY ts) AS prev FROM s),
    d AS (SELECT * FROM c WHERE prev IS NULL OR prev <> item),
    n AS (SELECT *, row_number() OVER (PARTITION BY person, session ORDER BY ts) AS pos FROM d),
    l AS (SELECT *, lag(item) OVER (PARTITION BY person, session ORDER BY pos) AS before FROM n WHERE pos <= 5)
  SELECT (pos - 1) || '_' || before AS source, pos || '_' || item AS target, count(*) AS v FROM l WHERE before IS NOT NULL GROUP BY 1, 2`;
}

export const FUNNEL_STEPS = [{ id: '$pageview', order: 0 }, { id: 'signed_up', order: 1 }, { id: 'purchase', order: 2 }];

/**
 * Correlation of other events with converting in the ordered funnel: per event name, persons who did it inside
 * their first best attempt (after its first step, before its last — or first step + 14 days, at most `end`),
 * converted (s) or not (f); and the totals as the row with event NULL.
 */
export function correlationSql(range: string, end: string): string {
  return `WITH ${orderedFunnelPersons(range)},
    att AS (SELECT person, m, min(t0) AS first, arg_min(t2, t0) AS last_step FROM best WHERE steps = m GROUP BY 1, 2),
    win AS (SELECT person, m = 3 AS ok, first, CASE WHEN m = 3 THEN last_step ELSE least(first + INTERVAL 14 DAY, ${end}) END AS last FROM att),
    ev AS (SELECT DISTINCT w.person, w.ok, x.event FROM win w JOIN events x ON x.person = w.person AND x.ts > w.first AND x.ts < w.last
      AND x.event NOT IN ('$pageview', 'signed_up', 'purchase') AND ${range.replaceAll('ts', 'x.ts')})
    SELECT event, count(*) FILTER (WHERE ok) AS s, count(*) FILTER (WHERE NOT ok) AS f FROM ev GROUP BY 1
    UNION ALL SELECT NULL, count(*) FILTER (WHERE ok), count(*) FILTER (WHERE NOT ok) FROM win`;
}
