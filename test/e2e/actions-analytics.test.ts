// Actions inside the analyses, over HTTP, on a small hand-built dataset whose every number is known (the
// autocapture events carry elements_chain strings captured from posthog-js in Chromium): each matching mode of a
// step (url contains / exact / regex with their edge cases and case sensitivity, text and href in three modes,
// selectors, tag names, properties), steps OR'd, no steps; then actions as entities of trends (every math,
// breakdowns, formulas, persons of a point), funnels (steps and exclusions), retention, lifecycle, stickiness,
// paths, correlation and the /query/ API's ActionsNode; the cache following an action's changes; bad references.
import t from 'tap';
import { CHAINS } from '../fixtures/posthog-js-chains.js';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
let P = '';
let token = '';
const enc = encodeURIComponent;
const D = (day: number, m: number) => new Date(Date.UTC(2026, 10, day, 12, m)).toISOString();
let seq = 0;
const ev = (event: string, distinct_id: string, day: number, properties: Record<string, unknown> = {}) =>
  ({ event, distinct_id, timestamp: D(day, seq++), properties });
const url = (path: string) => `https://app.test${path}`;
const click = (chain: string) => ({ $event_type: 'click', $elements_chain: chain });
const DATES = { date_from: '2026-11-10', date_to: '2026-11-12' };

const ids: Record<string, number> = {};

async function api(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<any> {
  const res = await server.api.request(method, `${P}${path}`, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}
const qs = (params: Record<string, unknown>) => Object.entries({ refresh: true, ...params })
  .map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
const trendRes = (params: Record<string, unknown>) => server.api.get(`${P}/insights/trend/?${qs({ ...DATES, ...params })}`);
async function trend(params: Record<string, unknown>): Promise<any[]> {
  const res = await trendRes(params);
  if (res.status !== 200) throw new Error(`trend: ${res.status} ${res.text}`);
  return res.body.result;
}
const action = (name: string, extra: Record<string, unknown> = {}) => ({ id: ids[name], type: 'actions', ...extra });

/** Per-day counts of a throwaway action with these steps. */
let n = 0;
async function daily(steps: object[]): Promise<number[]> {
  const created = await api('POST', '/actions/', { name: `steps ${n++}`, steps });
  return (await trend({ actions: [{ id: created.id }] }))[0].data;
}

t.before(async () => {
  const project = await server.api.post('/api/projects/', { name: 'actions' });
  P = `/api/projects/${project.body.id}`;
  token = project.body.api_token;
  const batch = [
    // 2026-11-10
    ev('$pageview', 'alice', 10, { $current_url: url('/welcome'), $set: { plan: 'pro' } }), // e1
    ev('$pageview', 'alice', 10, { $current_url: url('/pricing') }), // e2
    ev('$pageview', 'bob', 10, { $current_url: url('/Welcome'), $set: { plan: 'free' } }), // e3
    ev('$autocapture', 'bob', 10, click(CHAINS.signUpButton)), // e4
    ev('$pageview', 'carol', 10, { $current_url: url('/welcome?ref=mail'), $set: { plan: 'pro' } }), // e5
    ev('purchase', 'carol', 10, { price: 10 }), // e6
    // 2026-11-11
    ev('$autocapture', 'alice', 11, click(CHAINS.pricingLink)), // e7
    ev('purchase', 'alice', 11, { price: 20 }), // e8
    ev('$pageview', 'bob', 11, { $current_url: url('/sign_up') }), // e9
    ev('purchase', 'bob', 11, { price: 5 }), // e10
    ev('$pageview', 'dave', 11, { $current_url: url('/sign-up'), $set: { plan: 'free' } }), // e11
    ev('$autocapture', 'dave', 11, click(CHAINS.checkoutButton)), // e12
    ev('$autocapture', 'carol', 11, click(CHAINS.promoSpan)), // e13
    // 2026-11-12
    ev('$pageview', 'carol', 12, { $current_url: url('/a.b') }), // e14
    ev('$pageview', 'dave', 12, { $current_url: url('/axb') }), // e15
    ev('video played', 'alice', 12, { $current_url: url('/welcome') }), // e16
    ev('purchase', 'dave', 12, { price: 7 }), // e17
    ev('$autocapture', 'bob', 12, click(CHAINS.docsLink)), // e18
    ev('purchase', 'carol', 12, { price: 3 }), // e19
  ];
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) });
  if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
  const signUp = { event: '$autocapture', text: 'sign up', text_matching: 'contains' };
  for (const [name, steps] of [
    ['Purchased', [{ event: 'purchase' }]],
    ['Sign-up click', [signUp]],
    ['Welcome page', [{ event: '$pageview', url: '/welcome' }]],
    ['Engaged', [{ event: 'purchase' }, signUp]],
    ['Pricing page', [{ event: '$pageview', url: '/pricing' }]],
  ] as const) ids[name] = (await api('POST', '/actions/', { name, steps })).id;
});

t.test('url: contains (case-sensitive LIKE), exact, regex', async (t) => {
  t.same(await daily([{ url: '/welcome' }]), [2, 0, 1], 'contains by default, on any event with the url');
  t.same(await daily([{ event: '$pageview', url: '/welcome' }]), [2, 0, 0], 'and the event');
  t.same(await daily([{ url: '/Welcome', url_matching: 'contains' }]), [1, 0, 0], 'contains is case-sensitive');
  t.same(await daily([{ url: '?ref=', url_matching: 'contains' }]), [1, 0, 0], 'regex characters in a contains are plain');
  t.same(await daily([{ url: 'test/a.b' }]), [0, 0, 1], 'a dot in a contains is a dot');
  t.same(await daily([{ url: '/sign_up' }]), [0, 2, 0], '_ is LIKE\'s one-character wildcard (PostHog\'s LIKE)');
  t.same(await daily([{ url: '/sign\\_up' }]), [0, 1, 0], '\\_ is a literal underscore');
  t.same(await daily([{ url: 'app.test/%up' }]), [0, 2, 0], '% is LIKE\'s wildcard');
  t.same(await daily([{ url: url('/welcome'), url_matching: 'exact' }]), [1, 0, 1], 'exact: the whole url');
  t.same(await daily([{ url: url('/welcome/'), url_matching: 'exact' }]), [0, 0, 0]);
  t.same(await daily([{ url: 'welcome', url_matching: 'regex' }]), [2, 0, 1], 'regex is unanchored');
  t.same(await daily([{ url: '^https://app\\.test/welcome$', url_matching: 'regex' }]), [1, 0, 1], 'anchors');
  t.same(await daily([{ url: '(?i)/welcome', url_matching: 'regex' }]), [3, 0, 1], '(?i): case-insensitive');
  t.same(await daily([{ url: '/a.b$', url_matching: 'regex' }]), [0, 0, 2], 'an unescaped dot is any character');
  t.same(await daily([{ url: '/a\\.b$', url_matching: 'regex' }]), [0, 0, 1], 'an escaped one a dot');
  t.same(await daily([{ url: '/sign[-_]up', url_matching: 'regex' }]), [0, 2, 0], 'classes');
});

t.test('elements on real posthog-js chains: text, href, selector, tag name; only for $autocapture steps', async (t) => {
  const ac = (extra: object) => [{ event: '$autocapture', ...extra }];
  t.same(await daily(ac({ text: 'Sign up' })), [1, 0, 0], 'text exact by default, case-sensitive');
  t.same(await daily(ac({ text: 'sign up', text_matching: 'exact' })), [0, 1, 0]);
  t.same(await daily(ac({ text: 'SIGN UP', text_matching: 'contains' })), [1, 2, 0], 'contains: case-insensitive, "Sign up now" too');
  t.same(await daily(ac({ text: '^Sign', text_matching: 'regex' })), [1, 1, 0]);
  t.same(await daily(ac({ text: 'up$', text_matching: 'regex' })), [1, 1, 0]);
  t.same(await daily(ac({ text: 'Read the "docs"' })), [0, 0, 1], 'quotes');
  t.same(await daily(ac({ href: '/pricing' })), [0, 1, 0]);
  t.same(await daily(ac({ href: 'DOCS', href_matching: 'contains' })), [0, 0, 1]);
  t.same(await daily(ac({ href: '^https?://', href_matching: 'regex' })), [0, 0, 1]);
  t.same(await daily(ac({ selector: 'div.hero > button' })), [1, 0, 0]);
  t.same(await daily(ac({ selector: 'section button' })), [0, 1, 0]);
  t.same(await daily(ac({ selector: '#checkout > button.buy' })), [0, 1, 0]);
  t.same(await daily(ac({ selector: 'a#docs' })), [0, 0, 1]);
  t.same(await daily(ac({ tag_name: 'a' })), [0, 1, 1]);
  t.same(await daily([{ event: '$pageview', text: 'Sign up' }]), [4, 2, 2], 'ignored on a $pageview step');
  t.same(await daily([{ text: 'Sign up' }]), [6, 7, 6], 'ignored on a step without event');
});

t.test('properties, steps OR\'d, no steps', async (t) => {
  t.same(await daily([{ event: 'purchase', properties: [{ key: 'price', operator: 'gt', value: 6 }] }]), [1, 1, 1]);
  t.same(await daily([{ event: 'purchase', properties: [{ key: 'plan', value: 'pro', type: 'person' }] }]), [1, 1, 1]);
  t.same(await daily([{ event: 'purchase', properties: { type: 'OR', values: [{ key: 'price', value: 5 }, { key: 'price', value: 3 }] } }]), [0, 1, 1]);
  t.same(await daily([{ event: 'purchase' }, { event: '$autocapture', text: 'Sign up' }, { event: 'purchase', properties: [{ key: 'price', operator: 'gt', value: 6 }] }]), [2, 2, 2],
    'an event matching two steps counts once');
  t.same(await daily([]), [6, 7, 6], 'an action without steps matches every event');
  t.same(await daily([{}]), [6, 7, 6], 'so does a step without conditions');
});

t.test('trends: the series of an action', async (t) => {
  const [s] = await trend({ actions: [action('Engaged')] });
  t.same(s.data, [2, 4, 2]);
  t.equal(s.label, 'Engaged', 'labelled with the action\'s name');
  t.match(s.action, { id: ids.Engaged, type: 'actions', name: 'Engaged', math: 'total' });
  t.same(s.filter.actions.map((a: any) => a.id), [ids.Engaged]);
  t.same(s.filter.events, []);
  t.match(s.persons_urls[1].filter, { entity_id: ids.Engaged, entity_type: 'actions', entity_math: 'total' });
  const people = await server.api.get(`/${s.persons_urls[1].url}`);
  t.equal(people.status, 200);
  t.same(people.body.results[0].people.map((p: any) => p.distinct_ids[0]).sort(), ['alice', 'bob', 'carol', 'dave'], 'the persons of a point');
  const day12 = await server.api.get(`/${s.persons_urls[2].url}`);
  t.same(day12.body.results[0].people.map((p: any) => p.distinct_ids[0]).sort(), ['carol', 'dave']);

  const [named] = await trend({ actions: [action('Engaged', { custom_name: 'Active', name: 'ignored' })] });
  t.equal(named.label, 'Active', 'a custom name labels it');
  t.equal(named.action.name, 'Engaged', 'the name is the action\'s');

  const both = await trend({ actions: [action('Engaged')], events: [{ id: 'purchase' }] });
  t.same(both.map((x: any) => [x.label, x.data]), [['Engaged', [2, 4, 2]], ['purchase', [1, 2, 2]]], 'actions first, then events');
  const ordered = await trend({ actions: [action('Engaged', { order: 1 })], events: [{ id: 'purchase', order: 0 }] });
  t.same(ordered.map((x: any) => x.label), ['purchase', 'Engaged'], 'ordered across both lists');
  const formula = await trend({ actions: [action('Engaged', { order: 0 })], events: [{ id: 'purchase', order: 1 }], formula: 'A-B' });
  t.same(formula[0].data, [1, 2, 0], 'A is the action');

  for (const math of ['total', 'dau', 'weekly_active', 'avg_count_per_actor', 'max_count_per_actor']) {
    t.same((await trend({ actions: [action('Purchased', { math })] }))[0].data, (await trend({ events: [{ id: 'purchase', math }] }))[0].data, `${math}: the same as the event`);
  }
  for (const math of ['sum', 'avg', 'min', 'median', 'p90']) {
    t.same((await trend({ actions: [action('Purchased', { math, math_property: 'price' })] }))[0].data, (await trend({ events: [{ id: 'purchase', math, math_property: 'price' }] }))[0].data, `${math} of price: the same as the event`);
  }
  t.same((await trend({ actions: [action('Purchased', { math: 'sum', math_property: 'price' })] }))[0].data, [10, 25, 10]);
  t.same((await trend({ actions: [action('Engaged', { math: 'dau' })] }))[0].data, [2, 4, 2]);
  const byPlan = await trend({ actions: [action('Engaged')], breakdown: 'plan', breakdown_type: 'person' });
  t.same(Object.fromEntries(byPlan.map((x: any) => [x.breakdown_value, x.data])), { pro: [1, 2, 1], free: [1, 2, 1] });
  t.equal(byPlan[0].label, `Engaged - ${byPlan[0].breakdown_value}`);
  const table = await trend({ actions: [action('Engaged', { math: 'dau' })], display: 'ActionsTable' });
  t.equal(table[0].aggregated_value, 4);
  const filtered = await trend({ actions: [action('Engaged', { properties: [{ key: 'plan', value: 'pro', type: 'person' }] })] });
  t.same(filtered[0].data, [1, 2, 1], 'the entity\'s own filters AND the action');
  const global = await trend({ actions: [action('Engaged')], properties: [{ key: 'price', operator: 'gt', value: 6 }] });
  t.same(global[0].data, [1, 1, 1], 'and the global ones');
});

t.test('funnels: action steps and exclusions', async (t) => {
  const funnel = async (params: Record<string, unknown>) => {
    const res = await server.api.get(`${P}/insights/funnel/?${qs({ ...DATES, ...params })}`);
    if (res.status !== 200) throw new Error(`funnel: ${res.status} ${res.text}`);
    return res.body.result;
  };
  const three = await funnel({ actions: [action('Welcome page', { order: 0 }), action('Sign-up click', { order: 1 }), action('Purchased', { order: 2 })] });
  t.same(three.map((s: any) => s.count), [2, 1, 1], 'carol does all three, alice only the first');
  t.match(three[0], { action_id: ids['Welcome page'], type: 'actions', name: 'Welcome page', order: 0 });
  const mixed = await funnel({ actions: [action('Welcome page', { order: 0 })], events: [{ id: '$autocapture', order: 1 }] });
  t.same(mixed.map((s: any) => [s.type, s.action_id, s.count]), [['actions', ids['Welcome page'], 2], ['events', '$autocapture', 2]], 'an action step and an event step');
  const steps = { actions: [action('Welcome page', { order: 0 }), action('Sign-up click', { order: 1 })] };
  t.same((await funnel(steps)).map((s: any) => s.count), [2, 1]);
  // Exclusions: alice saw the pricing page between her welcome page and her purchase; carol did not.
  const toPurchase = { actions: [action('Welcome page', { order: 0 }), action('Purchased', { order: 1 })] };
  t.same((await funnel(toPurchase)).map((s: any) => s.count), [2, 2]);
  const excluded = await funnel({ ...toPurchase, exclusions: [action('Pricing page', { funnel_from_step: 0, funnel_to_step: 1 })] });
  t.same(excluded.map((s: any) => s.count), [1, 1], 'an action exclusion drops alice');
  const asEvent = await funnel({ ...toPurchase, exclusions: [{ id: '$pageview', type: 'events', properties: [{ key: '$current_url', value: '/pricing', operator: 'icontains' }], funnel_from_step: 0, funnel_to_step: 1 }] });
  t.same(asEvent.map((s: any) => s.count), [1, 1], 'as the equivalent event exclusion does');
  // Both purchased within the window after their welcome page: an attempt that did not reach step 2 is excluded
  // too when the exclusion falls within the window.
  t.same((await funnel({ ...steps, exclusions: [action('Purchased', { funnel_from_step: 0, funnel_to_step: 1 })] })).map((s: any) => s.count), [0, 0]);
  t.same((await funnel({ ...steps, exclusions: [{ id: 'purchase', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }] })).map((s: any) => s.count), [0, 0]);
  const same = await server.api.get(`${P}/insights/funnel/?${qs({ ...DATES, ...steps, exclusions: [action('Welcome page', { funnel_from_step: 0, funnel_to_step: 1 })] })}`);
  t.equal(same.status, 400, 'an exclusion may not be one of its steps');
  t.equal(same.body.attr, 'exclusions');
  const twice = await funnel({ actions: [action('Purchased', { order: 0 }), action('Purchased', { order: 1 })] });
  t.same(twice.map((s: any) => s.count), [4, 1], 'the same action twice needs two events');
  const persons = await server.api.get(`${P}/persons/funnel/?${qs({ ...DATES, ...steps, funnel_step: 2 })}`);
  t.same(persons.body.results[0].people.map((p: any) => p.distinct_ids[0]), ['carol']);
  const correlation = await server.api.get(`${P}/insights/funnel/correlation/?${qs({ ...DATES, actions: [action('Welcome page', { order: 0 }), action('Engaged', { order: 1 })] })}`);
  t.equal(correlation.status, 200);
  const names = correlation.body.result.events.map((e: any) => e.event.event);
  t.notOk(names.includes('$pageview') || names.includes('purchase') || names.includes('$autocapture'), `the actions' events are no candidates (${names})`);
});

t.test('retention, lifecycle, stickiness, paths', async (t) => {
  const get = async (path: string, params: Record<string, unknown>) => {
    const res = await server.api.get(`${P}/${path}?${qs(params)}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body.result;
  };
  const counts = (r: any[]) => r.map((row) => row.values.map((v: any) => v.count));
  const retention = { date_to: '2026-11-12', total_intervals: 3, period: 'Day' };
  const byAction = await get('insights/retention/', { ...retention, target_entity: action('Engaged'), returning_entity: action('Purchased') });
  t.same(counts(byAction), [[2, 1, 1], [4, 2], [2]], 'target and returning actions');
  t.same(counts(await get('insights/retention/', { ...retention, target_entity: action('Purchased') })),
    counts(await get('insights/retention/', { ...retention, target_entity: { id: 'purchase', type: 'events' } })), 'an action as the event');
  t.same(counts(await get('insights/retention/', { ...retention, actions: [action('Purchased')] })),
    counts(await get('insights/retention/', { ...retention, target_entity: action('Purchased') })), 'the legacy `actions` list');

  const lifecycle = (entity: Record<string, unknown>) => get('insights/trend/', { ...DATES, insight: 'LIFECYCLE', ...entity });
  const byStatus = (r: any[]) => Object.fromEntries(r.map((s: any) => [s.status, s.data]));
  const lc = await lifecycle({ actions: [action('Purchased')] });
  t.same(byStatus(lc), byStatus(await lifecycle({ events: [{ id: 'purchase' }] })), 'lifecycle of an action');
  t.equal(lc[0].label, `Purchased - ${lc[0].status}`);
  t.same(byStatus(lc), { new: [1, 0, 0], returning: [0, 0, 0], resurrecting: [0, 2, 2], dormant: [0, -1, -2] }, 'carol new on the 10th; alice, bob, then dave and carol come back');

  const sticky = await get('insights/trend/', { ...DATES, insight: 'STICKINESS', actions: [action('Engaged')] });
  t.same(sticky[0].data, [1, 2, 1], 'carol 3 days, bob and dave 2, alice 1');
  t.match(sticky[0].persons_urls[1].filter, { entity_id: ids.Engaged, entity_type: 'actions', stickiness_days: 2 });
  const two = await server.api.get(sticky[0].persons_urls[1].url);
  t.same(two.body.results[0].people.map((p: any) => p.distinct_ids[0]).sort(), ['bob', 'dave']);

  const paths = await get('insights/path/', { ...DATES, include_event_types: ['$pageview'], include_custom_events: [action('Sign-up click')] });
  t.same(paths.map((e: any) => [e.source, e.target, e.value]).sort(), [
    [`1_${url('/Welcome')}`, '2_Sign-up click', 1],
    [`1_${url('/sign-up')}`, '2_Sign-up click', 1],
    [`1_${url('/welcome')}`, `2_${url('/pricing')}`, 1],
  ], 'events of the action become items named after it');
  const bad = await server.api.get(`${P}/insights/path/?${qs({ ...DATES, include_custom_events: [{ id: 'x' }] })}`);
  t.equal(bad.status, 400);
});

t.test('/query/: ActionsNode in trends, funnels, retention, lifecycle, stickiness', async (t) => {
  const query = async (q: Record<string, unknown>) => {
    const res = await server.api.post(`${P}/query/`, { query: { dateRange: DATES, ...q }, refresh: 'force_blocking' });
    if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`);
    return res.body.results;
  };
  const node = (name: string, extra: object = {}) => ({ kind: 'ActionsNode', id: ids[name], ...extra });
  const trends = await query({ kind: 'TrendsQuery', series: [node('Engaged'), { kind: 'EventsNode', event: 'purchase' }] });
  t.same(trends.map((s: any) => [s.label, s.action.type, s.data]), [['Engaged', 'actions', [2, 4, 2]], ['purchase', 'events', [1, 2, 2]]]);
  const funnel = await query({
    kind: 'FunnelsQuery', series: [node('Welcome page'), node('Sign-up click')],
    funnelsFilter: { exclusions: [node('Pricing page', { funnelFromStep: 0, funnelToStep: 1 })] },
  });
  t.same(funnel.map((s: any) => s.count), [1, 1], 'alice saw the pricing page after her first step: out');
  const excluded = await query({ kind: 'FunnelsQuery', series: [node('Welcome page'), node('Purchased')], funnelsFilter: { exclusions: [node('Pricing page', { funnelFromStep: 0, funnelToStep: 1 })] } });
  t.same(excluded.map((s: any) => s.count), [1, 1]);
  const retention = await query({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: ids.Engaged, type: 'actions' }, returningEntity: { id: ids.Purchased, type: 'actions' }, totalIntervals: 3, period: 'Day' }, dateRange: { date_to: '2026-11-12' } });
  t.same(retention.map((r: any) => r.values.map((v: any) => v.count)), [[2, 1, 1], [4, 2], [2]]);
  const lifecycle = await query({ kind: 'LifecycleQuery', series: [node('Purchased')] });
  t.same(lifecycle.find((s: any) => s.status === 'resurrecting').data, [0, 2, 2]);
  const sticky = await query({ kind: 'StickinessQuery', series: [node('Engaged')] });
  t.same(sticky[0].data, [1, 2, 1]);
  const missing = await server.api.post(`${P}/query/`, { query: { kind: 'TrendsQuery', series: [{ kind: 'ActionsNode', id: 999999 }] } });
  t.equal(missing.status, 400);
  t.equal(missing.body.code, 'does_not_exist');
});

t.test('a change to an action changes the cached answers; deleted actions still answer', async (t) => {
  const created = await api('POST', '/actions/', { name: 'Changing', steps: [{ event: 'purchase' }] });
  const get = () => server.api.get(`${P}/insights/trend/?${qs({ ...DATES, actions: [{ id: created.id }], refresh: false })}`);
  t.same((await get()).body.result[0].data, [1, 2, 2]);
  // Each worker thread keeps its own cache: ask often enough that both hold the answer.
  let cached = 0;
  for (let i = 0; i < 12; i++) if ((await get()).body.is_cached === true) cached++;
  t.ok(cached > 0, 'a repeated question is answered from the cache');
  await api('PATCH', `/actions/${created.id}/`, { steps: [{ event: '$autocapture' }] });
  const changed = await get();
  t.equal(changed.body.is_cached, false, 'the cached answer is stale once the action changed');
  t.same(changed.body.result[0].data, [1, 3, 1]);
  for (let i = 0; i < 6; i++) t.same((await get()).body.result[0].data, [1, 3, 1], 'no worker answers the old definition');
  await api('PATCH', `/actions/${created.id}/`, { deleted: true, name: 'Changed' });
  const deleted = await trendRes({ actions: [{ id: created.id }] });
  t.equal(deleted.status, 200, 'an insight over a deleted action still answers');
  t.equal(deleted.body.result[0].label, 'Changed');
});

t.test('bad action references answer 400', async (t) => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ actions: [{ id: 999999 }] }, 'actions', 'does_not_exist'],
    [{ actions: [{ id: 'abc' }] }, 'actions', 'invalid_input'],
    [{ actions: [{ id: null }] }, 'actions', 'invalid_input'],
    [{ actions: [{ id: ids.Engaged, type: 'events' }] }, 'actions', 'invalid_input'],
    [{ actions: ['x'] }, 'actions', 'invalid_input'],
    [{ actions: '{"id": 1}' }, 'actions', 'invalid_input'],
  ];
  for (const [params, attr, code] of cases) {
    const res = await trendRes(params);
    t.equal(res.status, 400, JSON.stringify(params));
    t.match(res.body, { type: 'validation_error', attr, code });
  }
  const other = await server.api.post('/api/projects/', { name: 'elsewhere' });
  const theirs = await server.api.post(`/api/projects/${other.body.id}/actions/`, { name: 'Theirs' });
  const res = await trendRes({ actions: [{ id: theirs.body.id }] });
  t.equal(res.status, 400, 'another project\'s action does not exist here');
  t.equal(res.body.code, 'does_not_exist');
});
