// WebStatsTableQuery's rows from folded sessions (src/domain/web-analytics/tables.ts): PostHog's columns, the
// period of a row's session with compare and every row without, the Page bounce rate of the sessions that entered
// on the page, Language rows with their most frequent region, the order, the fill fraction and paging; goals.
import t from 'tap';
import { goalsTable } from '../../src/domain/web-analytics/goals.js';
import { webQueryOf, type Periods } from '../../src/domain/web-analytics/query.js';
import { countValue, emptyPart, finishSession, RANK_PAGE, type WebSession } from '../../src/domain/web-analytics/sessions.js';
import { statsTable, TableAccumulator } from '../../src/domain/web-analytics/tables.js';
import { GoalsAccumulator } from '../../src/domain/web-analytics/goals.js';

const periods: Periods = { current: { from: 1_000_000, to: 1_999_999 }, previous: { from: 0, to: 999_999 } };
const noCompare: Periods = { current: periods.current, previous: null };

/** A session starting at `start` with `pages` pageviews 5 s apart (entering on the first), one person. */
function session(id: string, person: number, start: number, pages: string[], extra: Partial<ReturnType<typeof emptyPart>> = {}): WebSession {
  const p = emptyPart(id, 1);
  p.start = start;
  p.end = start + (pages.length - 1) * 5_000;
  p.entryRank = RANK_PAGE;
  p.entryTs = start;
  p.entry = { url: `https://x.test${pages[0]}`, referringDomain: '$direct', utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, gadSource: null, hasGclid: false, hasFbclid: false };
  p.bounceEvents = Math.min(2, pages.length);
  p.person = person;
  p.counted = pages.length;
  p.countedForBounce = pages.length;
  for (const page of pages) countValue(p, JSON.stringify(page), 1, false);
  Object.assign(p, extra);
  return finishSession(p);
}

const sessions = [
  session('a', 1, 1_100_000, ['/', '/pricing']),
  session('b', 2, 1_200_000, ['/']),
  session('c', 2, 1_300_000, ['/pricing']),
  session('d', 3, 500_000, ['/docs', '/']),
];
const table = (q: Record<string, unknown>, p = periods) => statsTable(sessions, webQueryOf({ kind: 'WebStatsTableQuery', ...q }), p, (x) => x, () => 0);

t.test('pages with the bounce rate of their entry sessions, compared', async (t) => {
  const res = table({ breakdownBy: 'Page', includeBounceRate: true, compareFilter: { compare: true } });
  t.same(res.columns, ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate', 'context.columns.ui_fill_fraction', 'context.columns.cross_sell']);
  t.same(res.results, [
    ['/', [2, 1], [2, 1], [0.5, null], 2 / 4, ''],
    ['/pricing', [2, 0], [2, 0], [1, null], 2 / 4, ''],
    ['/docs', [0, 1], [0, 1], [null, 0], 0, ''],
  ]);
  t.same([res.hasMore, res.limit, res.offset], [false, 100, 0]);
});

t.test('without compare every session counts, in the current column', async (t) => {
  const res = table({ breakdownBy: 'InitialPage' }, noCompare);
  t.same(res.results.map((r) => r.slice(0, 3)), [['/', [2, null], [3, null]], ['/docs', [1, null], [2, null]], ['/pricing', [1, null], [1, null]]]);
});

t.test('order, paging, languages', async (t) => {
  const asc = table({ breakdownBy: 'Page', orderBy: ['Views', 'ASC'], compareFilter: { compare: true } });
  t.same(asc.results.map((r) => r[0]), ['/docs', '/pricing', '/'], 'views ascending as [current, previous] pairs');
  const paged = table({ breakdownBy: 'Page', limit: 1, offset: 1, compareFilter: { compare: true } });
  t.same([paged.results.map((r) => r[0]), paged.hasMore], [['/pricing'], true]);
  const langs = [
    session('l1', 1, 1_100_000, ['en-US']), session('l2', 2, 1_100_000, ['en-GB']), session('l3', 3, 1_100_000, ['en-US']), session('l4', 4, 1_100_000, ['fr-FR']),
  ];
  const res = statsTable(langs, webQueryOf({ kind: 'WebStatsTableQuery', breakdownBy: 'Language' }), noCompare, (x) => x, () => 0);
  t.same(res.results.map((r) => r.slice(0, 2)), [['en-US', [3, null]], ['fr-FR', [1, null]]], 'grouped by language, with its most frequent region');
});

t.test('goals', async (t) => {
  const withGoals = [
    session('g1', 1, 1_100_000, ['/'], { goals: [2, 0] }),
    session('g2', 2, 1_200_000, ['/'], { goals: [0, 0] }),
    session('g3', 3, 500_000, ['/'], { goals: [0, 1] }),
  ];
  t.same(goalsTable(withGoals, ['Signed up'], periods, null), [['Signed up', [1, 1], [2, 1], [0.5, 1]]]);
  t.same(goalsTable(withGoals, ['Signed up'], noCompare, null), [['Signed up', [1, null], [2, null], [0.5, null]]]);
});

t.test('states of two workers absorbed give the answer of one', async (t) => {
  for (const q of [
    { breakdownBy: 'Page', includeBounceRate: true, compareFilter: { compare: true } },
    { breakdownBy: 'InitialPage', includeBounceRate: true },
    { breakdownBy: 'Page', orderBy: ['Views', 'ASC'], compareFilter: { compare: true } },
  ]) {
    const query = webQueryOf({ kind: 'WebStatsTableQuery', ...q });
    const p = q.compareFilter ? periods : noCompare;
    const [a, b] = [new TableAccumulator(query, p, (x) => x, () => 0), new TableAccumulator(query, p, (x) => x, () => 0)];
    sessions.forEach((s, i) => (i % 2 === 0 ? a : b).add(s));
    // Through JSON, as between threads.
    a.absorb(JSON.parse(JSON.stringify(b.state())));
    t.same(a.finish(), statsTable(sessions, query, p, (x) => x, () => 0), JSON.stringify(q));
  }
  const withGoals = [session('g1', 1, 1_100_000, ['/'], { goals: [2, 0] }), session('g2', 1, 1_200_000, ['/'], { goals: [1, 0] })];
  const [a, b] = [new GoalsAccumulator(1, periods), new GoalsAccumulator(1, periods)];
  a.add(withGoals[0]!);
  b.add(withGoals[1]!);
  a.absorb(JSON.parse(JSON.stringify(b.state())));
  t.same(a.finish(['x'], null), goalsTable(withGoals, ['x'], periods, null), 'goals: one person converting in both counts once');
});
