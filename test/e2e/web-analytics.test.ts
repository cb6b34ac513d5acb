// The web analytics kinds of /query/ against references computed here from generated sessions: a project in New
// York time over a week holding the end of daylight-saving time, compared with the week before. Sessions start
// before, inside and after the periods and across their bounds, some switch distinct id at sign-up ($identify:
// their events live on two shards), some enter through a custom event before their first pageview, and durations
// sit on both sides of the 10-second bounce limit.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
let P = '';

/** Mulberry32: the same sessions every run. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const FROM = Date.parse('2026-10-28T04:00:00Z'); // 28 October, 00:00 in New York (EDT)
const TO = Date.parse('2026-11-04T05:00:00Z') - 1; // 3 November, 23:59:59.999 (EST: the clocks went back on the 1st)
const LENGTH = TO + 1 - FROM;
const PREV = { from: FROM - LENGTH, to: FROM - 1 };
const PATHS = ['/', '/pricing', '/docs', '/blog/a', '/signup'];
/** Referrers of first pageviews, with the UTM parameters and the channel PostHog gives them. */
const SOURCES: [Record<string, unknown>, string][] = [
  [{ $referring_domain: '$direct' }, 'Direct'],
  [{ $referring_domain: 'www.google.com' }, 'Organic Search'],
  [{ $referring_domain: 'news.ycombinator.com' }, 'Organic Social'],
  [{ $referring_domain: 'blog.example.org' }, 'Referral'],
  [{ $referring_domain: 'www.google.com', utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'fall' }, 'Paid Search'],
  [{ $referring_domain: '$direct', gclid: 'abc' }, 'Paid Unknown'],
];

interface RefSession {
  id: string;
  person: string;
  events: { ts: number; event: string; path: string | null; autocapture: boolean }[];
  channel: string;
  browser: string;
}

const sessions: RefSession[] = [];
const batch: object[] = [];

function generate(): void {
  const r = rng(49);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  const start0 = PREV.from - 2 * 86_400_000;
  const span = TO + 2 * 86_400_000 - start0;
  for (let k = 0; k < 160; k++) {
    const user = `user-${Math.floor(r() * 45)}`;
    const browser = Number(user.slice(5)) % 3 === 0 ? 'Safari' : 'Chrome';
    const id = `0190${k.toString(16).padStart(4, '0')}-0000-7000-8000-${Math.floor(r() * 1e12).toString(16).padStart(12, '0')}`;
    // Some sessions start just before a period boundary and go on after it.
    let ts = k % 16 === 0 ? pick([FROM, PREV.from, TO + 1]) - 5_000 : start0 + Math.floor(r() * span);
    const [sourceProps, channel] = pick(SOURCES);
    const anonymous = k % 5 === 0 ? `anon-${k}` : null;
    const s: RefSession = { id, person: user, events: [], channel, browser };
    const n = 1 + Math.floor(r() * 4);
    let identified = false;
    const send = (event: string, props: Record<string, unknown>, path: string | null, autocapture = false) => {
      if (anonymous !== null && !identified && s.events.length === 2) {
        // Sign-up in the middle of the session: the anonymous id joins the user's person.
        identified = true;
        batch.push({ event: '$identify', distinct_id: user, timestamp: new Date(ts - 100).toISOString(), properties: { $session_id: id, $anon_distinct_id: anonymous } });
        s.events.push({ ts: ts - 100, event: '$identify', path: null, autocapture: false });
      }
      const distinct = anonymous !== null && !identified ? anonymous : user;
      batch.push({ event, distinct_id: distinct, timestamp: new Date(ts).toISOString(), properties: { $session_id: id, $browser: browser, ...props } });
      s.events.push({ ts, event, path, autocapture });
    };
    if (k % 7 === 3) {
      send('opened_app', { $current_url: 'https://x.test/app-shell' }, null);
      ts += 500;
    }
    for (let i = 0; i < n; i++) {
      const path = pick(PATHS);
      send('$pageview', { $current_url: `https://x.test${path}?ref=${k}`, $pathname: path, ...(i === 0 ? sourceProps : {}) }, path);
      if (r() < 0.25) {
        ts += 1_000;
        send('$autocapture', { $event_type: 'click', $external_click_url: `https://partner.test/${pick(['a', 'b'])}?q=${k}`, $current_url: `https://x.test${path}` }, null, true);
      }
      ts += Math.floor(r() * 9_000) + 500;
    }
    if (anonymous !== null && !identified) s.person = anonymous;
    sessions.push(s);
  }
  // Events without a session are not part of any session.
  batch.push({ event: '$pageview', distinct_id: 'user-1', timestamp: new Date(FROM + 3_600_000).toISOString(), properties: { $current_url: 'https://x.test/orphan', $pathname: '/orphan' } });
}

/** A session as PostHog folds it (written out here independently of Quill's code). */
function fold(s: RefSession) {
  const ts = s.events.map((e) => e.ts);
  const start = Math.min(...ts);
  const end = Math.max(...ts);
  const pages = s.events.filter((e) => e.event === '$pageview');
  const duration = Math.floor(end / 1000) - Math.floor(start / 1000);
  const bounceEvents = pages.length + s.events.filter((e) => e.autocapture).length;
  const bounce = bounceEvents === 0 ? null : !(bounceEvents > 1 || duration >= 10);
  const inPeriods = (t: number) => t >= PREV.from && t <= TO;
  return {
    start, duration, bounce, entry: pages[0]?.path ?? null, exit: pages[pages.length - 1]?.path ?? null,
    views: pages.filter((e) => inPeriods(e.ts)).length, pageviews: pages.filter((e) => inPeriods(e.ts)),
  };
}

const periodOf = (ms: number) => (ms >= FROM && ms <= TO ? 0 : ms >= PREV.from && ms <= PREV.to ? 1 : -1);
const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

t.before(async () => {
  generate();
  const created = await server.api.post('/api/projects/', { name: 'web analytics' });
  P = `/api/projects/${created.body.id}`;
  const zone = await server.api.patch(`${P}/`, { timezone: 'America/New_York' });
  if (zone.status !== 200) throw new Error(`time zone: ${zone.status} ${zone.text}`);
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
});

const range = { date_from: '2026-10-28', date_to: '2026-11-03' };
async function query(q: object) {
  const res = await server.api.post(`${P}/query/`, { query: q, refresh: 'force_blocking' });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

t.test('WebOverviewQuery: visitors, views, sessions, duration, bounce rate and their change', async (t) => {
  const totals = [0, 1].map((p) => {
    const mine = sessions.map((s) => ({ s, f: fold(s) })).filter(({ f }) => f.views > 0 && periodOf(f.start) === p);
    return {
      visitors: new Set(mine.map(({ s }) => s.person)).size,
      views: mine.reduce((a, { f }) => a + f.views, 0),
      sessions: mine.length,
      duration: mean(mine.map(({ f }) => f.duration)),
      bounce: mean(mine.filter(({ f }) => f.bounce !== null).map(({ f }) => (f.bounce ? 1 : 0))),
    };
  });
  const body = await query({ kind: 'WebOverviewQuery', dateRange: range, properties: [], compareFilter: { compare: true } });
  const byKey = Object.fromEntries(body.results.map((i: any) => [i.key, i]));
  const [cur, prev] = totals as [typeof totals[0], typeof totals[0]];
  t.ok(cur.sessions > 20 && prev.sessions > 20, `enough sessions in both periods (${cur.sessions}, ${prev.sessions})`);
  t.match(byKey.visitors, { kind: 'unit', value: cur.visitors, previous: prev.visitors });
  t.match(byKey.views, { kind: 'unit', value: cur.views, previous: prev.views });
  t.match(byKey.sessions, { kind: 'unit', value: cur.sessions, previous: prev.sessions });
  t.match(byKey['session duration'], { kind: 'duration_s', value: cur.duration, previous: prev.duration });
  t.match(byKey['bounce rate'], { kind: 'percentage', isIncreaseBad: true, value: cur.bounce! * 100, previous: prev.bounce! * 100 });
  const change = Math.round((100 * (cur.views - prev.views)) / prev.views);
  t.ok(Math.abs(byKey.views.changeFromPreviousPct - change) <= 1, 'the change in percent of the previous value');
  t.equal(body.dateFrom, '2026-10-28T00:00:00-04:00');
  t.equal(body.dateTo, '2026-11-03T23:59:59-05:00');
  const alone = await query({ kind: 'WebOverviewQuery', dateRange: range, properties: [] });
  t.same(alone.results.map((i: any) => [i.value, i.previous]), body.results.map((i: any) => [i.value, null]), 'without compare: the same values, no previous');
});

t.test('WebStatsTableQuery: entry pages with bounce rate, pages, channels, browsers', async (t) => {
  const folded = sessions.map((s) => ({ s, f: fold(s) }));
  // Entry pages (with compare: each session in the period it started in).
  const entry = new Map<string, { v: [Set<string>, Set<string>]; views: [number, number]; b: [number[], number[]] }>();
  for (const { s, f } of folded) {
    const p = periodOf(f.start);
    if (p === -1 || f.views === 0 || f.entry === null) continue;
    const row = entry.get(f.entry) ?? { v: [new Set(), new Set()], views: [0, 0], b: [[], []] };
    entry.set(f.entry, row);
    row.v[p]!.add(s.person);
    row.views[p] += f.views;
    if (f.bounce !== null) row.b[p]!.push(f.bounce ? 1 : 0);
  }
  const body = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', includeBounceRate: true, dateRange: range, properties: [], compareFilter: { compare: true } });
  t.same(body.columns, ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate', 'context.columns.ui_fill_fraction', 'context.columns.cross_sell']);
  const want = [...entry].map(([path, r]) => [path, [r.v[0].size, r.v[1].size], [r.views[0], r.views[1]], [mean(r.b[0]), mean(r.b[1])]]);
  const got = body.results.map((row: any[]) => row.slice(0, 4));
  t.same(new Set(got.map((r: any) => JSON.stringify(r))), new Set(want.map((r) => JSON.stringify(r))), 'every entry page row');
  const visitors = got.map((r: any) => r[1]);
  t.same(visitors, [...visitors].sort((a: number[], b: number[]) => b[0]! - a[0]! || b[1]! - a[1]!), 'most visitors first');
  const total = visitors.reduce((a: number, v: number[]) => a + v[0]!, 0);
  t.equal(body.results[0][4], visitors[0][0] / total, 'fill fraction: share of the visitors');

  // Pages, without compare: (session, page) groups of pageviews inside the range, whenever their session started.
  const pages = new Map<string, { v: Set<string>; views: number }>();
  for (const { s, f } of folded) {
    for (const e of f.pageviews) {
      if (e.ts < FROM || e.ts > TO) continue;
      const row = pages.get(e.path!) ?? { v: new Set(), views: 0 };
      pages.set(e.path!, row);
      row.v.add(s.person);
      row.views++;
    }
  }
  const pageBody = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: range, properties: [] });
  t.same(new Set(pageBody.results.map((r: any[]) => JSON.stringify(r.slice(0, 3)))), new Set([...pages].map(([p, r]) => JSON.stringify([p, [r.v.size, null], [r.views, null]]))));

  const channels = new Map<string, Set<string>>();
  for (const { s, f } of folded) {
    if (f.views === 0 || !f.pageviews.some((e) => e.ts >= FROM && e.ts <= TO)) continue;
    channels.set(s.channel, (channels.get(s.channel) ?? new Set()).add(s.person));
  }
  const channelBody = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialChannelType', dateRange: range, properties: [] });
  t.same(Object.fromEntries(channelBody.results.map((r: any[]) => [r[0], r[1][0]])), Object.fromEntries([...channels].map(([c, v]) => [c, v.size])), 'visitors per channel type');

  const chrome = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'Browser', dateRange: range, properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] });
  t.same(chrome.results.map((r: any[]) => r[0]), ['Chrome'], 'a property filter');
  const exits = await query({ kind: 'WebStatsTableQuery', breakdownBy: 'ExitPage', dateRange: range, properties: [], limit: 2 });
  t.equal(exits.results.length, 2);
  t.match(exits, { hasMore: true, limit: 2, offset: 0 });
});

t.test('session property filters, external clicks, goals', async (t) => {
  const direct = await query({ kind: 'WebOverviewQuery', dateRange: range, properties: [{ key: '$channel_type', value: 'Direct', operator: 'exact', type: 'session' }] });
  const want = sessions.filter((s) => s.channel === 'Direct').map((s) => fold(s)).filter((f) => f.views > 0 && periodOf(f.start) === 0).length;
  t.equal(direct.results.find((i: any) => i.key === 'sessions').value, want, 'sessions entering directly');

  const clicks = new Map<string, { persons: Set<string>; n: number }>();
  for (const s of sessions) for (const e of s.events) {
    if (!e.autocapture || e.ts < FROM || e.ts > TO) continue;
    const i = sessions.indexOf(s);
    const url = batch.find((b: any) => b.properties.$session_id === s.id && b.event === '$autocapture' && Date.parse(b.timestamp) === e.ts) as any;
    const link = (url.properties.$external_click_url as string).split('?')[0]!;
    const row = clicks.get(link) ?? { persons: new Set(), n: 0 };
    clicks.set(link, row);
    row.persons.add(s.person);
    row.n++;
    void i;
  }
  const body = await query({ kind: 'WebExternalClicksTableQuery', dateRange: range, properties: [], stripQueryParams: true });
  t.same(body.columns, ['context.columns.url', 'context.columns.visitors', 'context.columns.clicks']);
  t.same(new Set(body.results.map((r: any[]) => JSON.stringify(r))), new Set([...clicks].map(([u, c]) => JSON.stringify([u, c.persons.size, c.n]))));

  t.same((await query({ kind: 'WebGoalsQuery', dateRange: range, properties: [] })).results, [], 'no actions: no goals');
  const action = await server.api.post(`${P}/actions/`, { name: 'Saw pricing', steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }] });
  t.equal(action.status, 201);
  const goals = await query({ kind: 'WebGoalsQuery', dateRange: range, properties: [], compareFilter: { compare: true } });
  const converted: [Set<string>, Set<string>] = [new Set(), new Set()];
  const visitors: [Set<string>, Set<string>] = [new Set(), new Set()];
  const totals = [0, 0];
  for (const s of sessions) {
    const f = fold(s);
    const p = periodOf(f.start);
    if (p === -1 || f.views === 0) continue;
    visitors[p]!.add(s.person);
    for (const e of f.pageviews) {
      const q = periodOf(e.ts);
      if (e.path !== '/pricing' || q === -1) continue;
      totals[q]!++;
      converted[q]!.add(s.person);
    }
  }
  t.same(goals.results, [['Saw pricing', [converted[0].size, converted[1].size], totals, [converted[0].size / visitors[0].size, converted[1].size / visitors[1].size]]]);
  const goal = await query({ kind: 'WebOverviewQuery', dateRange: range, properties: [], conversionGoal: { actionId: action.body.id } });
  t.same(goal.results.map((i: any) => i.key), ['visitors', 'total conversions', 'unique conversions', 'conversion rate']);
});

t.test('errors', async (t) => {
  const bad = await server.api.post(`${P}/query/`, { query: { kind: 'WebStatsTableQuery', breakdownBy: 'Nope' } });
  t.match([bad.status, bad.body], [400, { type: 'validation_error', attr: 'breakdownBy' }]);
  const goal = await server.api.post(`${P}/query/`, { query: { kind: 'WebOverviewQuery', conversionGoal: { actionId: 999999 } } });
  t.match([goal.status, goal.body], [400, { attr: 'conversionGoal' }]);
});
