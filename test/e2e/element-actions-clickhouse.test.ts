// Actions with autocapture conditions answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting
// into chdb and answering from it, one on its own engine, fed the same autocapture events, whose chains carry what
// the chain's syntax makes tricky (quotes and backslashes in values, colons and semicolons inside them, repeated
// keys, nth numbers with spaces and zeros, several elements, attributes, unterminated quotes). Each action (selector,
// tag, href exact and regex, text exact and contains) and an insight's own element filters must be computed on
// ClickHouse, not fall back, and answer as the local engine does; what is left to the local engine says why.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import { insightQuery } from '../helpers/insight-compare.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 2);
const DATES = { date_from: '2026-11-01', date_to: '2026-11-09' };

/** Chains as posthog-js would send them and as only a hand would write them (sent as `$elements_chain`). */
const CHAINS = [
  'button.btn.cta:attr__class="btn cta"attr__id="signup"nth-child="2"nth-of-type="1"text="Sign up";form.checkout:attr__class="checkout"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'span:nth-child="1"nth-of-type="1"text="Buy \\"now\\"";button:attr__data-track="a:b;c d"nth-child="03"nth-of-type=" 3";form.checkout:nth-child="1"nth-of-type="1"',
  'a:attr__href="/pricing?plan=pro;yearly"href="/pricing?plan=pro;yearly"nth-child="1"nth-of-type="1"text="See: pricing";nav.top:nth-child="1"nth-of-type="1"',
  'a:href="/pricing"nth-child="2"nth-of-type="2"text="pricing";li.item:nth-child="4"nth-of-type="4";ul.menu:nth-child="1"nth-of-type="1";nav.top:nth-child="1"nth-of-type="1"',
  'a:href="/docs/intro"href="/blog/post-1"text="first"text="Read more"',
  'div:hover.card:attr__id="c1"text="colon: inside"',
  'em:text="unterminated;still the clicked element',
  'i:text="back\\\\"slash"x="y"',
  'svg:attr__constructor="c";button.cta:nth-child="2"text="BUY"',
  'BUTTON.CTA:text="Sign up"',
  '',
];

function dataset(): ReturnType<typeof event>[][] {
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 12; u++) {
    const batch: ReturnType<typeof event>[] = [];
    for (let k = 0; k < 8; k++) {
      const at = new Date(START + ((u * 5 + k * 3) % 7) * DAY + ((u * 7 + k) % 24) * 3_600_000).toISOString();
      const chain = CHAINS[(u * 3 + k) % CHAINS.length]!;
      batch.push(event(`user-${u}`, '$autocapture', { $elements_chain: chain, $browser: ['Chrome', 'Safari'][k % 2] }, { timestamp: at }));
    }
    // posthog-js's `$elements` too: the chain Quill writes from them.
    batch.push(event(`user-${u}`, '$autocapture', {
      $elements: [{ tag_name: 'button', $el_text: `Buy ${u % 3}`, attr__class: 'cta big', nth_child: 1, nth_of_type: 1, attr__href: `/buy/${u % 2}` },
        { tag_name: 'form', attr__class: ['checkout'], nth_child: 2, nth_of_type: 1 }],
    }, { timestamp: new Date(START + (u % 7) * DAY + 3_600_000).toISOString() }));
    // The same chain on another event: an autocapture step never matches it.
    batch.push(event(`user-${u}`, 'clicked', { $elements_chain: CHAINS[0] }, { timestamp: new Date(START + (u % 7) * DAY + 7_200_000).toISOString() }));
    batches.push(batch);
  }
  return batches;
}

const engines = twoEngines(t, dataset);

const step = (conditions: Record<string, unknown>) => ({ event: '$autocapture', ...conditions });
/** Actions whose every condition ClickHouse computes. */
const ACTIONS: [string, Record<string, unknown>[]][] = [
  ['selector: child combinator', [step({ selector: 'form.checkout > button' })]],
  ['selector: descendant, classes, id', [step({ selector: 'body button.btn.cta#signup' })]],
  ['selector: attributes', [step({ selector: '[data-track="a:b;c"]' }), step({ selector: 'a[href="/pricing"]' }), step({ selector: '[id="c1"]' })]],
  ['selector: nth numbers', [step({ selector: 'button:nth-child(3):nth-of-type(3)' }), step({ selector: 'ul > li:nth-child(4) a:nth-of-type(2)' })]],
  ['selector: tag and head with a colon', [step({ selector: 'div.card' }), step({ selector: 'nav a' })]],
  ['tag name', [step({ tag_name: 'a' })]],
  ['tag name is case-sensitive', [step({ tag_name: 'BUTTON' })]],
  ['href exact', [step({ href: '/pricing?plan=pro;yearly' })]],
  ['href exact, the last of repeated keys', [step({ href: '/blog/post-1' })]],
  ['href regex', [step({ href: '^/(pricing|buy/1)$', href_matching: 'regex' })]],
  ['text exact with quotes', [step({ text: 'Buy "now"' })]],
  ['text exact with a backslash', [step({ text: 'back\\"slash' })]],
  ['text exact: the unterminated quote', [step({ text: 'unterminated;still the clicked element' })]],
  ['text contains, case-insensitive', [step({ text: 'buy', text_matching: 'contains' })]],
  ['text regex', [step({ text: '^(Sign|See):? ', text_matching: 'regex' })]],
  ['several conditions and a property', [step({ selector: 'button', text: 'sign', text_matching: 'contains', properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] })]],
];

const ids = new Map<string, Map<Client, number>>();

async function trend(api: Client, params: Record<string, unknown>): Promise<any> {
  const res = await api.get(`/api/projects/@current/insights/trend/?${insightQuery({ refresh: true, ...DATES, ...params })}`);
  if (res.status !== 200) throw new Error(`${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const essence = (body: any) => (body.result as any[]).map((r) => ({ label: r.label, breakdown_value: r.breakdown_value ?? null, days: r.days, data: r.data, count: r.count }));

t.before(async () => {
  for (const [name, steps] of [...ACTIONS, ['an nth number past 10^15', [step({ selector: 'svg:nth-child(1000000000000000)' })]] as const]) {
    const byQuill = new Map<Client, number>();
    for (const api of [engines.chApi, engines.localApi]) {
      const res = await api.post('/api/projects/@current/actions/', { name, steps });
      if (res.status !== 201) throw new Error(`action ${name}: ${res.status} ${res.text}`);
      byQuill.set(api, res.body.id);
    }
    ids.set(name, byQuill);
  }
  // Until the export has every event (a trend ClickHouse computes says so).
  for (let tries = 0; ; tries++) {
    const body = await trend(engines.chApi, { events: [{ id: null, type: 'events' }] });
    if (body.clickhouse_export?.caught_up === true) break;
    if (tries >= 40) throw new Error('the ClickHouse export did not catch up');
    await new Promise((r) => setTimeout(r, 250));
  }
});

const action = (name: string, api: Client, extra: object = {}) => ({ id: ids.get(name)!.get(api), type: 'actions', ...extra });

t.test('actions with autocapture conditions: computed on ClickHouse, as the local engine answers', async (tt) => {
  let matching = 0;
  for (const [name] of ACTIONS) {
    for (const [what, extra, params] of [['events', {}, {}], ['unique users by browser', { math: 'dau' }, { breakdown: '$browser', breakdown_type: 'event' }]] as const) {
      const ask = (api: Client) => trend(api, { actions: [action(name, api, extra)], ...params });
      const [fromCh, fromLocal] = await Promise.all([ask(engines.chApi), ask(engines.localApi)]);
      tt.has(fromCh.clickhouse, { fallback: null }, `${name}, ${what}: computed on ClickHouse`);
      tt.same(essence(fromCh), essence(fromLocal), `${name}, ${what}: the local engine's answer`);
      if (what === 'events') matching += fromLocal.result[0]?.count > 0 ? 1 : 0;
    }
  }
  tt.equal(matching, ACTIONS.length, "every action matches events (not zeros on both sides)");
});

t.test("an insight's element filters and a funnel of element actions", async (tt) => {
  const filters = [
    [{ key: 'selector', value: 'form > button', operator: 'exact', type: 'element' }],
    [{ key: 'text', value: 'pricing', operator: 'not_icontains', type: 'element' }, { key: 'tag_name', value: ['a', 'em'], operator: 'exact', type: 'element' }],
    [{ key: 'href', operator: 'is_set', type: 'element' }],
  ];
  for (const properties of filters) {
    const params = { events: [{ id: '$autocapture', type: 'events' }], properties };
    const [fromCh, fromLocal] = await Promise.all([trend(engines.chApi, params), trend(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null }, `${JSON.stringify(properties)}: computed on ClickHouse`);
    tt.same(essence(fromCh), essence(fromLocal), `${JSON.stringify(properties)}: the local engine's answer`);
  }
  const funnel = async (api: Client) => {
    const q = insightQuery({ refresh: true, ...DATES, actions: [action('tag name', api, { order: 0 }), action('text contains, case-insensitive', api, { order: 1 })] });
    const res = await api.get(`/api/projects/@current/insights/funnel/?${q}`);
    if (res.status !== 200) throw new Error(`funnel: ${res.status} ${res.text}`);
    return res.body;
  };
  const [fromCh, fromLocal] = await Promise.all([funnel(engines.chApi), funnel(engines.localApi)]);
  tt.has(fromCh.clickhouse, { fallback: null }, 'the funnel: computed on ClickHouse');
  tt.same(fromCh.result.map((s: any) => s.count), fromLocal.result.map((s: any) => s.count), "the funnel: the local engine's answer");
});

t.test('an nth number past 10^15 falls back, and says so', async (tt) => {
  const name = 'an nth number past 10^15';
  const [fromCh, fromLocal] = await Promise.all([engines.chApi, engines.localApi].map((api) => trend(api, { actions: [action(name, api)] })));
  tt.match(fromCh.clickhouse?.fallback, /nth/, `falls back: ${fromCh.clickhouse?.fallback}`);
  tt.same(essence(fromCh), essence(fromLocal), "the local engine's answer");
});
