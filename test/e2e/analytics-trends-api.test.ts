// /insights/trend/ and /persons/trends/ over HTTP on a small hand-built dataset whose every number is known:
// each math, each filter type, each breakdown type, intervals, compare, formula, smoothing, cumulative and
// aggregated displays, actors with pagination and search, the cache, project settings, and bad parameters.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
let P = '';
let token = '';
const enc = encodeURIComponent;
const D = (day: number, h = 12, m = 0) => new Date(Date.UTC(2026, 10, day, h, m)).toISOString();
let seq = 0;
const ev = (event: string, distinct_id: string, day: number, properties: Record<string, unknown> = {}, h = 12) =>
  ({ event, distinct_id, timestamp: D(day, h, seq++ % 60), properties });

async function ingest(batch: object[]): Promise<void> {
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
}

async function trendRes(params: Record<string, unknown>) {
  const qs = Object.entries({ date_from: '2026-11-10', date_to: '2026-11-12', refresh: true, ...params })
    .map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  return server.api.get(`${P}/insights/trend/?${qs}`);
}
async function trend(params: Record<string, unknown>): Promise<any[]> {
  const res = await trendRes(params);
  if (res.status !== 200) throw new Error(`trend: ${res.status} ${res.text}`);
  return res.body.result;
}
const data = async (params: Record<string, unknown>) => (await trend(params)).map((s: any) => s.data);
const byValue = async (params: Record<string, unknown>) => Object.fromEntries((await trend(params)).map((s: any) => [String(s.breakdown_value), s.data]));

t.before(async () => {
  const project = await server.api.post('/api/projects/', { name: 'trends' });
  P = `/api/projects/${project.body.id}`;
  token = project.body.api_token;
  const chain = 'button.buy:nth-child="1"nth-of-type="1"text="Buy";form#checkout:attr_id="checkout"nth-child="1"nth-of-type="1"';
  await ingest([
    { event: '$groupidentify', distinct_id: 'alice', timestamp: D(9), properties: { $group_type: 'company', $group_key: 'acme', $group_set: { industry: 'tech' } } },
    { event: '$groupidentify', distinct_id: 'bob', timestamp: D(9), properties: { $group_type: 'company', $group_key: 'initech', $group_set: { industry: 'finance' } } },
    ev('$pageview', 'alice', 10, { $browser: 'Chrome', $current_url: '/a', $session_id: 's1', $set: { plan: 'pro', email: 'alice@example.com' }, $groups: { company: 'acme' } }),
    ev('$pageview', 'alice', 10, { $browser: 'Chrome', $current_url: '/a', $session_id: 's1', $groups: { company: 'acme' } }),
    ev('$pageview', 'bob', 10, { $browser: 'Safari', $current_url: '/b', $session_id: 's2', $set: { plan: 'free', email: 'bob@internal.test' }, $groups: { company: 'initech' } }),
    ev('purchase', 'carol', 10, { price: 10, $set: { plan: 'pro', email: 'carol@example.com' } }),
    ev('purchase', 'carol', 10, { price: 20 }),
    ev('$pageview', 'alice', 11, { $browser: 'Chrome', $current_url: '/a/x', $session_id: 's3' }),
    ev('$pageview', 'carol', 11, { $browser: 'Firefox', $current_url: '/c', $session_id: 's4' }),
    ev('$pageview', 'carol', 11, { $browser: 'Firefox', $current_url: '/c', $session_id: 's4' }),
    ev('$pageview', 'carol', 11, { $browser: 'Firefox', $current_url: '/c', $session_id: 's4' }),
    ev('purchase', 'bob', 11, { price: 'five' }),
    ev('purchase', 'bob', 11, { price: 5 }),
    ev('$autocapture', 'bob', 11, { $event_type: 'click', $elements_chain: chain }),
    ev('$pageview', 'bob', 12, { $browser: 'Safari', $current_url: '/b', $session_id: 's5' }, 3),
  ]);
});

t.test('every math', async (t) => {
  t.same(await data({ events: [{ id: '$pageview' }] }), [[3, 4, 1]], 'total');
  t.same(await data({ events: [{ id: null }] }), [[5, 7, 1]], 'all events');
  t.same(await data({ events: [{ id: '$pageview', math: 'dau' }] }), [[2, 2, 1]], 'dau');
  t.same(await data({ events: [{ id: '$pageview', math: 'weekly_active' }] }), [[2, 3, 3]], 'weekly active: the trailing 7 days');
  t.same(await data({ events: [{ id: '$pageview', math: 'monthly_active' }] }), [[2, 3, 3]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'unique_session' }] }), [[2, 2, 1]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'unique_group', math_group_type_index: 0 }] }), [[2, 0, 0]]);
  t.same(await data({ events: [{ id: 'purchase', math: 'sum', math_property: 'price' }] }), [[30, 5, 0]], 'non-numbers are ignored');
  t.same(await data({ events: [{ id: 'purchase', math: 'avg', math_property: 'price' }] }), [[15, 5, 0]]);
  t.same(await data({ events: [{ id: 'purchase', math: 'min', math_property: 'price' }] }), [[10, 5, 0]]);
  t.same(await data({ events: [{ id: 'purchase', math: 'max', math_property: 'price' }] }), [[20, 5, 0]]);
  t.same(await data({ events: [{ id: 'purchase', math: 'median', math_property: 'price' }] }), [[15, 5, 0]]);
  t.same(await data({ events: [{ id: 'purchase', math: 'p90', math_property: 'price' }] }), [[19, 5, 0]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'avg_count_per_actor' }] }), [[1.5, 2, 1]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'max_count_per_actor' }] }), [[2, 3, 1]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'min_count_per_actor' }] }), [[1, 1, 1]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'median_count_per_actor' }] }), [[1.5, 2, 1]]);
});

t.test('every filter type', async (t) => {
  const pv = (properties: unknown) => data({ events: [{ id: '$pageview' }], properties });
  t.same(await pv([{ key: '$browser', value: 'Chrome' }]), [[2, 1, 0]], 'event property');
  t.same(await pv([{ key: '$browser', value: 'Chrome', operator: 'is_not' }]), [[1, 3, 1]], 'negated operator');
  t.same(await pv([{ key: '$current_url', value: '^/a', operator: 'regex' }]), [[2, 1, 0]]);
  t.same(await pv([{ key: 'plan', value: 'pro', type: 'person' }]), [[2, 4, 0]], 'person property');
  t.same(await pv({ type: 'OR', values: [{ type: 'AND', values: [{ key: '$browser', value: 'Safari' }] }, { type: 'AND', values: [{ key: '$browser', value: 'Firefox' }] }] }), [[1, 3, 1]], 'property groups');
  t.same(await pv([{ key: 'industry', value: 'tech', type: 'group', group_type_index: 0 }]), [[2, 0, 0]], 'group property');
  t.same(await data({ events: [{ id: null }], properties: [{ key: 'text', value: 'Buy', type: 'element' }] }), [[0, 1, 0]], 'element text');
  t.same(await data({ events: [{ id: null }], properties: [{ key: 'selector', value: '#checkout > button.buy', type: 'element' }] }), [[0, 1, 0]], 'element selector');
  t.same(await data({ events: [{ id: '$pageview', properties: [{ key: '$browser', value: 'Firefox' }] }] }), [[0, 3, 0]], 'entity properties');
  const cohort = await server.api.post(`${P}/cohorts/`, { name: 'Pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] }] } } });
  t.equal(cohort.status, 201);
  t.same(await pv([{ key: 'id', value: cohort.body.id, type: 'cohort' }]), [[2, 4, 0]], 'dynamic cohort');
  t.same(await pv([{ key: 'id', value: cohort.body.id, type: 'cohort', operator: 'not_in' }]), [[1, 0, 1]], 'not in a cohort');
  const bob = (await server.api.get(`${P}/persons/?distinct_id=bob`)).body.results[0];
  const stat = await server.api.post(`${P}/cohorts/`, { name: 'Bob only', is_static: true });
  t.equal((await server.api.patch(`${P}/cohorts/${stat.body.id}/add_persons_to_static_cohort/`, { person_ids: [bob.uuid] })).status, 200);
  t.same(await pv([{ key: 'id', value: stat.body.id, type: 'static-cohort' }]), [[1, 0, 1]], 'static cohort');
  await server.api.patch(`${P}/`, { test_account_filters: [{ key: 'email', value: '@internal.test', operator: 'not_icontains', type: 'person' }] });
  t.same(await data({ events: [{ id: '$pageview' }], filter_test_accounts: true }), [[2, 4, 0]], 'test accounts left out');
  t.same(await data({ events: [{ id: '$pageview' }] }), [[3, 4, 1]], 'only when asked');
  for (const type of ['recording', 'behavioral', 'session']) {
    const res = await trendRes({ events: [{ id: '$pageview' }], properties: [{ key: 'x', value: 1, type }] });
    t.equal(res.status, 400, `${type} filters are refused`);
    t.equal(res.body.attr, 'properties');
  }
});

t.test('every breakdown type', async (t) => {
  t.same(await byValue({ events: [{ id: '$pageview' }], breakdown: '$browser' }), { Chrome: [2, 1, 0], Safari: [1, 0, 1], Firefox: [0, 3, 0] });
  t.same(await byValue({ events: [{ id: '$pageview', math: 'dau' }], breakdown: 'plan', breakdown_type: 'person' }), { pro: [1, 2, 0], free: [1, 0, 1] });
  t.same(await byValue({ events: [{ id: '$pageview' }], breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 }), { tech: [2, 0, 0], finance: [1, 0, 0], '': [0, 4, 1] }, 'missing values are ""');
  const cohort = (await server.api.get(`${P}/cohorts/`)).body.results.find((c: any) => c.name === 'Pro');
  const result = await trend({ events: [{ id: '$pageview' }], breakdown: [cohort.id, 0], breakdown_type: 'cohort' });
  t.same(result.map((s: any) => [s.breakdown_value, s.label, s.data]), [[cohort.id, '$pageview - Pro', [2, 4, 0]], ['all', '$pageview - All Users', [3, 4, 1]]]);
  const limited = await trendRes({ events: [{ id: '$pageview' }], breakdown: '$browser', breakdown_limit: 2 });
  t.same(limited.body.result.map((s: any) => s.breakdown_value), ['Chrome', 'Firefox'], 'the top values by count (ties by value)');
  t.match(limited.body.next, /offset=2/, 'next pages further');
  const second = await server.api.get(limited.body.next.replace(/^https?:\/\/[^/]+/, ''));
  t.same(second.body.result.map((s: any) => s.breakdown_value), ['Safari']);
});

t.test('intervals, displays, compare, formula, smoothing', async (t) => {
  const hourly = (await trend({ events: [{ id: '$pageview' }], interval: 'hour', date_from: '2026-11-12T00:00:00', date_to: '2026-11-12T05:00:00' }))[0];
  t.same(hourly.data, [0, 0, 0, 1, 0, 0]);
  t.same(hourly.days.slice(0, 2), ['2026-11-12 00:00:00', '2026-11-12 01:00:00']);
  t.equal(hourly.labels[3], '12-Nov-2026 03:00');
  const weekly = (await trend({ events: [{ id: '$pageview' }], interval: 'week' }))[0];
  t.same([weekly.days, weekly.data], [['2026-11-08'], [8]], 'one Sunday-started week');
  const monthly = (await trend({ events: [{ id: '$pageview' }], interval: 'month', date_from: '2026-10-15' }))[0];
  t.same([monthly.days, monthly.data], [['2026-10-01', '2026-11-01'], [0, 8]]);
  const [bold] = await trend({ events: [{ id: '$pageview', math: 'dau' }], display: 'BoldNumber' });
  t.equal(bold.aggregated_value, 3, 'distinct persons over the range');
  t.match(bold.persons, { url: /persons\/trends/ });
  t.same(await data({ events: [{ id: '$pageview' }], display: 'ActionsLineGraphCumulative' }), [[3, 7, 8]]);
  t.same(await data({ events: [{ id: '$pageview', math: 'dau' }], display: 'ActionsLineGraphCumulative' }), [[2, 3, 3]], 'cumulative distinct persons');
  t.same(await data({ events: [{ id: '$pageview' }], smoothing_intervals: 2 }), [[3, 3, 2]]);
  const formula = await trend({ events: [{ id: '$pageview' }, { id: 'purchase' }], formula: '(A + B) / 2' });
  t.same(formula.map((s: any) => [s.label, s.data]), [['(A + B) / 2', [2.5, 3, 0.5]]]);
  const compared = await trend({ events: [{ id: '$pageview' }], compare: true, date_from: '2026-11-11', date_to: '2026-11-12' });
  t.same(compared.map((s: any) => [s.compare_label, s.days, s.data]), [['current', ['2026-11-11', '2026-11-12'], [4, 1]], ['previous', ['2026-11-09', '2026-11-10'], [0, 3]]]);
  const all = (await trend({ events: [{ id: '$pageview' }], date_from: 'all', date_to: '2026-11-12' }))[0];
  t.equal(all.days[0], '2026-11-09', 'all starts at the first event');
  const [series] = await trend({ events: [{ id: '$pageview', custom_name: 'Views' }] });
  t.match(series, { label: 'Views', count: 8, labels: ['10-Nov-2026', '11-Nov-2026', '12-Nov-2026'], action: { id: '$pageview', type: 'events', math: 'total' } });
  t.equal(series.persons_urls.length, 3);
});

t.test('the persons of a data point, paged and searched', async (t) => {
  const [series] = await trend({ events: [{ id: '$pageview' }] });
  const url = series.persons_urls[1].url;
  const page = await server.api.get(`/${url}`);
  t.equal(page.status, 200);
  t.same(page.body.results[0].people.map((p: any) => [p.distinct_ids[0], p.value_at_data_point]), [['carol', 3], ['alice', 1]], 'by value, highest first');
  t.match(page.body.results[0].people[0], { type: 'person', uuid: String, name: 'carol@example.com', properties: { plan: 'pro' }, matched_recordings: [] });
  t.equal(page.body.next, null);
  const first = await server.api.get(`/${url}&limit=1`);
  t.equal(first.body.results[0].count, 1);
  t.match(first.body.next, /offset=1/);
  const second = await server.api.get(first.body.next.replace(/^https?:\/\/[^/]+/, ''));
  t.same(second.body.results[0].people.map((p: any) => p.distinct_ids[0]), ['alice']);
  const searched = await server.api.get(`/${url}&search=ALICE`);
  t.same(searched.body.results[0].people.map((p: any) => p.distinct_ids[0]), ['alice']);
  const bd = await trend({ events: [{ id: '$pageview' }], breakdown: '$browser' });
  const safari = bd.find((s: any) => s.breakdown_value === 'Safari');
  const safariPeople = await server.api.get(`/${safari.persons_urls[0].url}`);
  t.same(safariPeople.body.results[0].people.map((p: any) => p.distinct_ids[0]), ['bob'], 'a breakdown value narrows the persons');
});

t.test('answers are cached until new events arrive', async (t) => {
  const params = `events=${enc('[{"id":"late"}]')}&date_from=2026-11-10&date_to=2026-11-12`;
  let cached = false;
  for (let i = 0; i < 8 && !cached; i++) cached = (await server.api.get(`${P}/insights/trend/?${params}`)).body.is_cached === true;
  t.ok(cached, 'a repeated question is answered from the cache');
  await ingest([ev('late', 'dave', 11)]);
  const fresh = await server.api.get(`${P}/insights/trend/?${params}`);
  t.equal(fresh.body.is_cached, false, 'new events of the project make it stale');
  t.same(fresh.body.result[0].data, [0, 1, 0]);
  t.match(fresh.body, { timezone: 'UTC', last_refresh: String });
  const refreshed = await server.api.get(`${P}/insights/trend/?${params}&refresh=true`);
  t.equal(refreshed.body.is_cached, false, 'refresh=true recomputes');
});

t.test('project settings', async (t) => {
  const bad = await server.api.patch(`${P}/`, { timezone: 'Mars/Olympus' });
  t.same([bad.status, bad.body.attr], [400, 'timezone']);
  const badFilters = await server.api.patch(`${P}/`, { test_account_filters: [{ key: 'x', type: 'recording' }] });
  t.equal(badFilters.status, 400);
  const ok = await server.api.patch(`${P}/`, { timezone: 'Pacific/Kiritimati' });
  t.same([ok.status, ok.body.timezone], [200, 'Pacific/Kiritimati']);
  const kiritimati = (await trend({ events: [{ id: '$pageview' }] }))[0];
  t.same(kiritimati.data, [0, 3, 5], 'days are local days (UTC+14: noon UTC is 02:00 the next day)');
  t.equal((await trendRes({ events: [{ id: '$pageview' }] })).body.timezone, 'Pacific/Kiritimati');
  await server.api.patch(`${P}/`, { timezone: 'UTC' });
});

t.test('bad parameters answer 400 with the error body', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ events: 'nope' }, 'events'],
    [{ events: [{ id: '$pageview', math: 'nope' }] }, 'events'],
    [{ events: [{ id: '$pageview', math: 'sum' }] }, 'events'],
    [{ events: [{ id: '$pageview', math: 'unique_group' }] }, 'events'],
    [{ events: [{ id: '$pageview', math: 'hogql' }] }, 'events'],
    [{ actions: [{ id: 1 }] }, 'actions'],
    [{ events: [{ id: '$pageview' }], interval: 'fortnight' }, 'interval'],
    [{ events: [{ id: '$pageview' }], date_from: 'yesterday' }, 'date_from'],
    [{ events: [{ id: '$pageview' }], display: 'Pie' }, 'display'],
    [{ events: [{ id: '$pageview' }], formula: 'A; drop' }, 'formula'],
    [{ events: [{ id: '$pageview' }], formula: 'A + B' }, 'formula'],
    [{ events: [{ id: '$pageview' }], breakdown: '$browser', breakdown_type: 'hogql' }, 'breakdown_type'],
    [{ events: [{ id: '$pageview' }], breakdown: 'x', breakdown_type: 'group' }, 'breakdown_group_type_index'],
    [{ events: [{ id: '$pageview' }], smoothing_intervals: 0 }, 'smoothing_intervals'],
    [{ events: [{ id: '$pageview' }], compare: 'maybe' }, 'compare'],
    [{ events: [{ id: '$pageview' }], properties: [{ key: 'id', value: 999999, type: 'cohort' }] }, 'properties'],
    [{ events: [{ id: '$pageview' }, { id: 'purchase' }], insight: 'LIFECYCLE' }, 'events'],
  ];
  for (const [params, attr] of cases) {
    const res = await trendRes(params);
    t.equal(res.status, 400, JSON.stringify(params));
    t.match(res.body, { type: 'validation_error', code: String, detail: String, attr }, JSON.stringify(params));
  }
  const post = await server.api.post(`${P}/insights/trend/`, { events: [{ id: '$pageview' }], date_from: '2026-11-10', date_to: '2026-11-12' });
  t.same([post.status, post.body.result[0].data], [200, [3, 4, 1]], 'POST takes the same keys as a body');
});
