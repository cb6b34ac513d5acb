/**
 * Actions over the analytics dataset (bench/lib/analytics-dataset.ts), each with the DuckDB condition that selects
 * the same events from the `events` table (bench/lib/duckdb-reference.ts): the differential test and the benchmark
 * create the actions through the API and compare Quill's answers with DuckDB's. The conditions are written from
 * PostHog's definitions (LIKE for url contains, re2 for regexes, the chain's `text="…"` / `href="…"` attributes),
 * not from Quill's matcher.
 */
export interface ActionCase {
  name: string;
  steps: object[];
  /** SQL condition on a row of `events`. */
  sql: string;
}

/** The benchmark's action: three steps, a URL regex, an autocapture text match and a plain event. */
export const BENCH_ACTION: ActionCase = {
  name: 'Docs, sign-up click or signed up',
  steps: [
    { event: '$pageview', url: '^https://example\\.com/docs/page-[1-3]$', url_matching: 'regex' },
    { event: '$autocapture', text: 'Sign up' },
    { event: 'signed_up' },
  ],
  sql: `((event = '$pageview' AND regexp_matches(url, '^https://example\\.com/docs/page-[1-3]$'))
    OR (event = '$autocapture' AND regexp_matches(chain, 'text="Sign up"(;|$)')) OR event = 'signed_up')`,
};

export const PURCHASED: ActionCase = { name: 'Purchased', steps: [{ event: 'purchase' }], sql: `event = 'purchase'` };

export const ACTION_CASES: ActionCase[] = [
  BENCH_ACTION,
  PURCHASED,
  { name: 'Blog posts 1x (url contains)', steps: [{ event: '$pageview', url: '/blog/post-1' }], sql: `event = '$pageview' AND url LIKE '%/blog/post-1%'` },
  { name: 'Home (url exact, any event)', steps: [{ url: 'https://example.com/', url_matching: 'exact' }], sql: `url = 'https://example.com/'` },
  { name: 'Buy clicks (text contains)', steps: [{ event: '$autocapture', text: 'BUY', text_matching: 'contains' }], sql: `event = '$autocapture' AND regexp_matches(chain, '(?i)text="[^"]*buy[^"]*"')` },
  { name: 'Pricing link (href exact)', steps: [{ event: '$autocapture', href: '/pricing' }], sql: `event = '$autocapture' AND chain LIKE '%href="/pricing"%'` },
  { name: 'Checkout buttons (selector)', steps: [{ event: '$autocapture', selector: 'form.checkout > button' }], sql: `event = '$autocapture' AND regexp_matches(chain, '^button[.:][^;]*;form\\.checkout[.:]')` },
  { name: 'Links (tag name)', steps: [{ event: '$autocapture', tag_name: 'a' }], sql: `event = '$autocapture' AND regexp_matches(chain, '(^|;)a[.:]')` },
  { name: 'Big purchases (step properties)', steps: [{ event: 'purchase', properties: [{ key: 'price', operator: 'gt', value: 100 }] }], sql: `event = 'purchase' AND price > 100` },
  { name: 'Pro pageviews (person property)', steps: [{ event: '$pageview', properties: [{ key: 'plan', value: 'pro', type: 'person' }] }], sql: `event = '$pageview' AND plan = 'pro'` },
  { name: 'Anything (no steps)', steps: [], sql: 'TRUE' },
];

/**
 * Persons entering an ordered two-step funnel (14-day window from the first step) and persons converting, as
 * (c1, c2). Two different actions: one event may match both steps.
 */
export function actionFunnelSql(first: string, second: string, range: string): string {
  return `WITH e AS (SELECT person, ts, (${first}) AS a, (${second}) AS b FROM events WHERE ${range} AND ((${first}) OR (${second}))),
    s0 AS (SELECT person, ts AS t0 FROM e WHERE a),
    conv AS (SELECT DISTINCT s0.person FROM s0 JOIN e ON e.person = s0.person AND e.b AND e.ts >= s0.t0 AND e.ts <= s0.t0 + INTERVAL 14 DAY)
    SELECT (SELECT count(DISTINCT person) FROM s0) AS c1, (SELECT count(*) FROM conv) AS c2`;
}
