// Funnel correlation answered by ClickHouse (QUILL_ANALYTICS=clickhouse): one Quill exporting into chdb and
// answering from it, one on its own engine, fed the same events. The same correlation requests must answer the same
// on both — which events and person properties go with converting, their counts and odds ratios — in UTC and in New
// York; what ClickHouse does not gather yet falls back and says so.
import t from 'tap';
import { event } from '../helpers/ingest.js';
import type { Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';
import { aligned, insightQuery } from '../helpers/insight-compare.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 26);
const DATES = { date_from: '2026-10-25', date_to: '2026-11-09' };
const OTHERS = ['demo', 'docs', 'menu', 'help', '$pageleave'];

/**
 * 40 visitors over two weeks across the end of DST in New York: a view, then for most a signup and for some a
 * payment (the steps), a cancellation now and then (the exclusion), and other events before, inside and after their
 * attempt — converters watch the demo more, the others read the docs more. Person properties set once as anonymous
 * (tier) and once identified (region), two thirds identified midway (merges). No two events of a person share an
 * instant (ties' order is not defined across engines).
 */
function dataset(): ReturnType<typeof event>[][] {
  const batches: ReturnType<typeof event>[][] = [];
  for (let u = 0; u < 40; u++) {
    const anon = `anon-${u}`;
    const user = `user-${u}`;
    const identified = u % 3 !== 0;
    const batch: ReturnType<typeof event>[] = [];
    const base = START + ((u * 5) % 13) * DAY + ((u * 7) % 24) * 3_600_000 + u * 1000;
    const steps: [string, number][] = [['view', 0]];
    if (u % 5 !== 0) steps.push(['signup', ((u % 4) + 1) * 3_600_000]);
    if (u % 2 === 0 && u % 5 !== 0) steps.push(['pay', ((u % 6) + 2) * 5 * 3_600_000]);
    if (u % 7 === 3) steps.push(['cancel', 2 * 3_600_000 + 60_000]);
    const others: [string, number][] = [];
    for (let k = 0; k < 6; k++) {
      const name = u % 2 === 0 && k % 3 === 0 ? 'demo' : u % 2 === 1 && k % 3 === 1 ? 'docs' : OTHERS[(u + k) % OTHERS.length]!;
      others.push([name, (k - 1) * 7 * 3_600_000 + k * 61_000 + 17_000]);
    }
    const all = [...steps, ...others].sort((a, b) => a[1] - b[1]);
    all.forEach(([name, offset], k) => {
      const id = identified && k >= all.length / 2 ? user : anon;
      const props: Record<string, unknown> = { $browser: ['Chrome', 'Safari', 'Firefox'][(u + k) % 3] };
      if (k === 0) props.$set = { tier: u % 4 === 0 ? 'gold' : u % 4 === 1 ? 'silver' : 'basic' };
      if (id === user && k === Math.ceil(all.length / 2)) props.$set = { region: u % 3 === 1 ? 'eu' : 'us' };
      batch.push(event(id, name, props, { timestamp: new Date(base + offset).toISOString() }));
      if (identified && k === Math.ceil(all.length / 2) - 1) batch.push(event(user, '$identify', { $anon_distinct_id: anon }, { timestamp: new Date(base + offset + 11).toISOString() }));
    });
    batches.push(batch);
  }
  return batches;
}

const engines = twoEngines(t, dataset);

async function correlation(api: Client, params: Record<string, unknown>, status = 200): Promise<any> {
  const res = await api.get(`/api/projects/@current/insights/funnel/correlation/?${insightQuery({ ...DATES, ...params })}`);
  if (res.status !== status) throw new Error(`${JSON.stringify(params)} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const e = (id: string, order: number, properties?: unknown[]) => ({ id, type: 'events', name: id, order, ...(properties ? { properties } : {}) });
const VIEW_PAY = [e('view', 0), e('pay', 1)];
const VIEW_SIGNUP_PAY = [e('view', 0), e('signup', 1), e('pay', 2)];
const CANCEL = [{ id: 'cancel', type: 'events', name: 'cancel', funnel_from_step: 0, funnel_to_step: 1 }];
const PROPERTIES = { funnel_correlation_type: 'properties' };

/** The one case whose events are gathered rather than folded inside ClickHouse. */
const SHARED = 'events, unordered, steps sharing an event name with an event matching two';

const SUPPORTED: [string, Record<string, unknown>][] = [
  ['events, two steps', { events: VIEW_PAY }],
  ['events, three steps', { events: VIEW_SIGNUP_PAY }],
  ['events, strict', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'strict' }],
  ['events, unordered', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'unordered' }],
  ['events, one-day window', { events: VIEW_SIGNUP_PAY, funnel_window_interval: 1, funnel_window_interval_unit: 'day' }],
  ['events, an exclusion', { events: VIEW_SIGNUP_PAY, exclusions: CANCEL }],
  ['events, excluded names', { events: VIEW_PAY, funnel_correlation_exclude_event_names: ['menu', '$pageleave'] }],
  ['events, a step with a property filter', { events: [e('view', 0, [{ key: '$browser', value: 'Firefox', operator: 'is_not', type: 'event' }]), e('signup', 1)] }],
  ['events, a filter on the whole funnel', { events: VIEW_SIGNUP_PAY, properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }] }],
  ['events, the funnel broken down by a person property (correlation reads no breakdown)', { events: VIEW_PAY, breakdown: 'tier', breakdown_type: 'person' }],
  ['person properties', { events: VIEW_SIGNUP_PAY, ...PROPERTIES, funnel_correlation_names: ['tier', 'region'] }],
  ['person properties, unordered', { events: VIEW_SIGNUP_PAY, funnel_order_type: 'unordered', ...PROPERTIES, funnel_correlation_names: ['tier'] }],
  // A view not on Firefox matches both steps: the local engine's matching shares such events out, so this one gathers.
  [SHARED, { events: [e('view', 0), e('view', 1, [{ key: '$browser', value: 'Firefox', operator: 'is_not', type: 'event' }]), e('pay', 2)], funnel_order_type: 'unordered' }],
];

async function compareAll(tt: Tap.Test, zone: string): Promise<void> {
  for (const [name, params] of SUPPORTED) {
    const [fromCh, fromLocal] = await Promise.all([correlation(engines.chApi, params), correlation(engines.localApi, params)]);
    tt.has(fromCh.clickhouse, { fallback: null, folded_in_clickhouse: name !== SHARED }, `${zone}, ${name}: computed on ClickHouse, ${name !== SHARED ? 'folded there' : 'from gathered events'}`);
    if (name !== SHARED) tt.ok(fromCh.clickhouse.bytes_received < 10_000, `${zone}, ${name}: the counts came back, not the events (${fromCh.clickhouse.bytes_received} bytes)`);
    tt.equal(fromCh.clickhouse_export?.caught_up, true, `${zone}, ${name}: after the export caught up`);
    tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, `${zone}, ${name}: the local engine's answer`);
  }
}

t.test('correlation in UTC: ClickHouse answers as the local engine', async (tt) => {
  const events = (await correlation(engines.localApi, { events: VIEW_PAY })).result.events;
  const byName = Object.fromEntries(events.map((x: any) => [x.event.event, x]));
  tt.equal(byName.demo?.correlation_type, 'success', 'the demo goes with converting');
  tt.equal(byName.docs?.correlation_type, 'failure', 'the docs go with dropping');
  const props = (await correlation(engines.localApi, SUPPORTED[10]![1])).result.events.map((x: any) => x.event.event);
  tt.ok(props.some((n: string) => n.startsWith('tier::')) && props.some((n: string) => n.startsWith('region::')), 'properties set as anonymous and once identified');
  await compareAll(tt, 'UTC');
});

t.test('correlation in America/New_York', async (tt) => {
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'America/New_York' })).status, 200);
  await compareAll(tt, 'New York');
  for (const api of [engines.chApi, engines.localApi]) tt.equal((await api.patch('/api/projects/@current/', { timezone: 'UTC' })).status, 200);
});

t.test('event_with_properties is refused by both', async (tt) => {
  const params = { events: VIEW_PAY, funnel_correlation_type: 'event_with_properties', funnel_correlation_event_names: ['demo'] };
  const [fromCh, fromLocal] = await Promise.all([correlation(engines.chApi, params, 400), correlation(engines.localApi, params, 400)]);
  tt.same(fromCh, fromLocal, 'the same error');
  tt.equal(fromCh.attr, 'funnel_correlation_type');
});

t.test('what ClickHouse does not gather yet falls back to the local engine and says why', async (tt) => {
  const create = async (name: string, steps: object[]) => {
    const made = await Promise.all([engines.chApi, engines.localApi].map((api) => api.post('/api/projects/@current/actions/', { name, steps })));
    tt.same(made.map((a) => a.status), [201, 201]);
    tt.equal(made[0]!.body.id, made[1]!.body.id, `${name}: the same action id on both`);
    return made[0]!.body.id as number;
  };
  // An action is computed (its steps a filter tree), autocapture element conditions included, but for a selector
  // attribute the local engine finds on every JavaScript object.
  for (const [name, steps] of [['Paid', [{ event: 'pay' }]], ['Clicked pay', [{ event: '$autocapture', text: 'Pay' }]]] as const) {
    const paid = { events: [e('view', 0)], actions: [{ id: await create(name, steps), type: 'actions', order: 1 }] };
    const [paidCh, paidLocal] = await Promise.all([correlation(engines.chApi, paid), correlation(engines.localApi, paid)]);
    tt.has(paidCh.clickhouse, { fallback: null }, `${name}: computed on ClickHouse`);
    tt.same(aligned(paidCh.result, paidLocal.result), paidLocal.result, `${name}: the local engine's answer`);
  }
  // date_from=all: from Quill's own first event, as the local engine's range starts.
  const allTime = { events: VIEW_PAY, date_from: 'all' };
  const [allCh, allLocal] = await Promise.all([correlation(engines.chApi, allTime), correlation(engines.localApi, allTime)]);
  tt.has(allCh.clickhouse, { fallback: null }, 'date_from=all: computed on ClickHouse');
  tt.same(aligned(allCh.result, allLocal.result), allLocal.result, "date_from=all: the local engine's answer");
  const clicked = await create('Clicked an odd selector', [{ event: '$autocapture', selector: 'button:nth-child(1000000000000000)' }]);
  const fallbacks: [string, Record<string, unknown>, RegExp][] = [
    ['an action step with an nth number past 10^15', { events: [e('view', 0)], actions: [{ id: clicked, type: 'actions', order: 1 }] }, /nth/],
  ];
  for (const [name, params, reason] of fallbacks) {
    const [fromCh, fromLocal] = await Promise.all([correlation(engines.chApi, params), correlation(engines.localApi, params)]);
    tt.match(fromCh.clickhouse?.fallback, reason, `${name}: falls back, saying ${fromCh.clickhouse?.fallback}`);
    tt.same(aligned(fromCh.result, fromLocal.result), fromLocal.result, `${name}: the local engine's answer`);
  }
  tt.equal((await correlation(engines.localApi, { events: VIEW_PAY })).clickhouse, undefined, 'the local engine says nothing of ClickHouse');
  // The person's properties at the event: computed. Which person's tier an event had after a merge across shards
  // depends on which shard applied first, which may differ between two Quills (exact answers on one Quill:
  // test/e2e/person-properties-clickhouse.test.ts).
  const byTier = { events: VIEW_PAY, properties: [{ key: 'tier', value: 'gold', operator: 'is_not', type: 'person' }] };
  const [tierCh, tierLocal] = await Promise.all([correlation(engines.chApi, byTier), correlation(engines.localApi, byTier)]);
  tt.has(tierCh.clickhouse, { fallback: null }, 'a person property filter: computed on ClickHouse');
  tt.ok(tierCh.result.events.length > 0 && tierLocal.result.events.length > 0, 'a person property filter: both answer');
});

t.test("another project's events in the same ClickHouse database never reach this project's correlation", async (tt) => {
  const before = await correlation(engines.chApi, { events: VIEW_PAY });
  const created = await engines.chApi.post('/api/projects/', { name: 'other team' });
  tt.equal(created.status, 201);
  const at = (h: number) => new Date(START + 3 * DAY + h * 3_600_000).toISOString();
  // The same distinct ids and funnel events as project A, and a name of its own between them.
  const batch = ['anon-1', 'anon-2', 'anon-4'].flatMap((id, i) => [
    event(id, 'view', {}, { timestamp: at(i * 10) }),
    event(id, 'b-secret', {}, { timestamp: at(i * 10 + 1) }),
    ...(i < 2 ? [event(id, 'pay', {}, { timestamp: at(i * 10 + 2) })] : []),
  ]);
  const sent = await fetch(`${engines.onClickHouse.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  tt.equal(sent.status, 200);
  // Project B sees its own events through the same path (so an unchanged A means guarded, not missing).
  const own = await engines.chApi.get(`/api/projects/${created.body.id}/insights/funnel/correlation/?${insightQuery({ ...DATES, events: VIEW_PAY })}`);
  tt.equal(own.status, 200);
  tt.has(own.body.clickhouse, { fallback: null, folded_in_clickhouse: true }, 'computed on ClickHouse, folded there');
  const secret = own.body.result.events.find((x: any) => x.event.event === 'b-secret');
  tt.match(secret, { success_count: 2, failure_count: 1 }, "project B's three persons");
  const after = await correlation(engines.chApi, { events: VIEW_PAY });
  tt.has(after.clickhouse, { fallback: null });
  tt.same(after.result, before.result, 'project A: the same answer as before project B had events');
});
