// Person properties on ClickHouse (QUILL_ANALYTICS=clickhouse) are the person as it was at each event: the export
// writes the snapshot each event was applied with (src/stores/persons/event-snapshots.ts), the one the local
// engine's column blocks keep. Persons change between their events here (a later $set, a merge by $identify, a
// $set after everything) and some events have no person profile; every analysis by a person property (filters and
// breakdowns of trends, stickiness, lifecycle, funnels, retention, and the persons behind a point) must be computed
// on ClickHouse, not fall back, and answer as the same Quill's local engine on the same data (restarted on it).
import t from 'tap';
import { event, sendBatch } from '../helpers/ingest.js';
import { essence, sameWithin } from '../helpers/executor-mirror.js';
import { Client } from '../helpers/quill.js';
import { restartOnLocalEngine, startOnClickHouse, stopOnClickHouse, type OnClickHouse } from '../helpers/two-engines.js';

const at = (day: number, minute: number) => new Date(Date.UTC(2026, 10, day, 10, minute)).toISOString();

/** Batches applied one after the other: the persons change between them in a known order. */
const BATCHES = [
  [
    event('alice', '$pageview', { $set: { plan: 'free', signup: '2026-10-30' } }, { timestamp: at(1, 0) }),
    event('alice', '$pageview', {}, { timestamp: at(1, 1) }),
    // Without a profile: the person its distinct id has (alice's at the time), or none.
    event('alice', '$pageview', { $process_person_profile: false }, { timestamp: at(1, 2) }),
    event('guest', '$pageview', { $process_person_profile: false }, { timestamp: at(1, 3) }),
    event('bob-anon', '$pageview', { $set: { plan: 'trial', signup: 'last week' } }, { timestamp: at(1, 4) }),
    event('bob', '$pageview', { $set: { plan: 'pro', signup: 1761739200 } }, { timestamp: at(1, 5) }),
  ],
  [
    event('alice', '$pageview', { $set: { plan: 'pro' } }, { timestamp: at(2, 0) }),
    event('alice', '$pageview', {}, { timestamp: at(2, 1) }),
    event('alice', 'purchase', {}, { timestamp: at(2, 2) }),
  ],
  [
    // bob-anon's person merges into bob's (bob's properties win): its earlier event keeps 'trial', its next is 'pro'.
    event('bob', '$identify', { $anon_distinct_id: 'bob-anon' }, { timestamp: at(3, 0) }),
    event('bob', 'purchase', {}, { timestamp: at(3, 2) }),
  ],
  // After the merge was applied (bob-anon's events are another shard's, applied in parallel with bob's).
  [event('bob-anon', '$pageview', {}, { timestamp: at(3, 1) })],
  [
    // After every pageview: what the persons are now, which no event was applied with.
    event('alice', '$set', { $set: { plan: 'enterprise' } }, { timestamp: at(4, 0) }),
    event('bob', '$set', { $set: { plan: 'enterprise' } }, { timestamp: at(4, 1) }),
  ],
];

const DATES = { date_from: '2026-10-31', date_to: '2026-11-05' };
const pageviews = { id: '$pageview', type: 'events', name: '$pageview', order: 0 };
const purchases = { id: 'purchase', type: 'events', name: 'purchase', order: 1 };
const plan = (value: string, operator = 'exact') => ({ key: 'plan', value, operator, type: 'person' });
const BY_PLAN = { breakdown: 'plan', breakdown_type: 'person' };

/** [name, path, parameters]: every analysis asked, first of ClickHouse, then of the local engine. */
const ANALYSES: [string, string, Record<string, unknown>][] = [
  ['trends, a person property filter', 'insights/trend', { ...DATES, events: [pageviews], properties: [plan('free')] }],
  ['trends, a person property filter on a series, unique users', 'insights/trend', { ...DATES, events: [{ ...pageviews, math: 'dau', properties: [plan('pro')] }] }],
  ['trends, is not set (events without a person)', 'insights/trend', { ...DATES, events: [pageviews], properties: [plan('', 'is_not_set')] }],
  // A date as a text, as Unix seconds, and no date (src/domain/analytics/property-date.ts).
  ['trends, date operators on a person property', 'insights/trend', { ...DATES, events: [pageviews, { ...pageviews, order: 1, properties: [{ key: 'signup', value: '2026-10-29T12:00', operator: 'is_date_before', type: 'person' }] }],
    properties: [{ key: 'signup', value: '-60d', operator: 'is_date_after', type: 'person' }] }],
  // Dynamic cohorts are their person property trees, matched at the event as the local engine matches them
  // (COHORTS below: 1 is plan = pro, 2 is "not in 1 and plan is set").
  ['trends, a dynamic cohort filter', 'insights/trend', { ...DATES, events: [pageviews], properties: [{ key: 'id', value: 1, type: 'cohort' }] }],
  ['trends, not in a cohort, and a cohort naming another', 'insights/trend', { ...DATES, events: [pageviews, { ...pageviews, order: 1, properties: [{ key: 'id', value: 2, type: 'cohort' }] }],
    properties: [{ key: 'id', value: 1, type: 'cohort', operator: 'not_in' }] }],
  ['funnel, a dynamic cohort filter', 'insights/funnel', { ...DATES, events: [pageviews, purchases], properties: [{ key: 'id', value: 1, type: 'cohort' }] }],
  // Static cohorts are their members' uuids, read when the query is made (3 lists alice, then bob by bob-anon's
  // distinct id; 4 is "in 3 and plan is pro" at the event).
  ['trends, a static cohort filter', 'insights/trend', { ...DATES, events: [pageviews], properties: [{ key: 'id', value: 3, type: 'cohort' }] }],
  ['trends, not in a static cohort, and a dynamic cohort naming a static one', 'insights/trend', { ...DATES, events: [pageviews, { ...pageviews, order: 1, properties: [{ key: 'id', value: 4, type: 'cohort' }] }],
    properties: [{ key: 'id', value: 3, type: 'cohort', operator: 'not_in' }] }],
  ['funnel, a static cohort filter', 'insights/funnel', { ...DATES, events: [pageviews, purchases], properties: [{ key: 'id', value: 3, type: 'cohort' }] }],
  // A cohort breakdown: a series per cohort (0 is all users), dynamic and static alike.
  ['trends, a cohort breakdown, unique users and weekly active users', 'insights/trend', { ...DATES, events: [{ ...pageviews, math: 'dau' }, { ...pageviews, math: 'weekly_active', order: 1 }],
    breakdown: [1, 3, 0], breakdown_type: 'cohort' }],
  ['the persons behind a cohort breakdown value', 'persons/trends', { ...DATES, events: [pageviews], entity_id: '$pageview', entity_type: 'events', entity_math: 'total',
    breakdown: [1, 3, 0], breakdown_type: 'cohort', breakdown_value: 3 }],
  ['the persons behind a point, a static cohort filter', 'persons/trends', { ...DATES, events: [pageviews], entity_id: '$pageview', entity_type: 'events', entity_math: 'total',
    properties: [{ key: 'id', value: 3, type: 'cohort' }], date_from: '2026-11-01', date_to: '2026-11-01' }],
  ['trends, a person property breakdown', 'insights/trend', { ...DATES, events: [pageviews], ...BY_PLAN }],
  ['trends, unique users by a person property, weekly active users', 'insights/trend', { ...DATES, events: [{ ...pageviews, math: 'dau' }, { ...pageviews, math: 'weekly_active', order: 1 }], ...BY_PLAN }],
  ['stickiness, a person property filter', 'insights/trend', { ...DATES, insight: 'STICKINESS', shown_as: 'Stickiness', events: [pageviews], properties: [plan('pro')] }],
  ['lifecycle, a person property filter', 'insights/trend', { ...DATES, insight: 'LIFECYCLE', shown_as: 'Lifecycle', events: [pageviews], properties: [plan('pro')] }],
  ['funnel, a person property breakdown', 'insights/funnel', { ...DATES, events: [pageviews, purchases], ...BY_PLAN }],
  ['funnel, a person property filter', 'insights/funnel', { ...DATES, events: [pageviews, purchases], properties: [plan('pro')] }],
  // (Filtered to events with a plan: the local engine lists a breakdown value that only events without a person
  // have, with no one in it, and ClickHouse does not list it, whatever the property's kind.)
  ['retention, a person property breakdown', 'insights/retention', { date_to: '2026-11-05', period: 'Day', total_intervals: 5, target_entity: pageviews, returning_entity: pageviews,
    breakdowns: [{ property: 'plan', type: 'person' }], properties: [plan('', 'is_set')] }],
  ['the persons behind a breakdown value', 'persons/trends', { ...DATES, events: [pageviews], entity_id: '$pageview', entity_type: 'events', entity_math: 'total', ...BY_PLAN, breakdown_value: 'pro' }],
];

/** Created in this order on the fresh Quill, so with these ids; 3 is static (a list of persons). */
const COHORTS = [
  { name: 'Pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [plan('pro')] }] } } },
  { name: 'Not pro, with a plan', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', value: 1, type: 'cohort', negation: true }, plan('', 'is_set')] }] } } },
  { name: 'Listed', is_static: true, distinct_ids: ['alice'] },
  { name: 'Listed and pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', value: 3, type: 'cohort' }, plan('pro')] }] } } },
];

const enc = (params: Record<string, unknown>) => Object.entries({ refresh: true, ...params })
  .map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');

async function ask(api: Client, path: string, params: Record<string, unknown>): Promise<any> {
  const res = await api.get(`/api/projects/@current/${path}/?${enc(params)}`);
  if (res.status !== 200) throw new Error(`${path} ${JSON.stringify(params)} answered ${res.status}: ${res.text}`);
  return res.body;
}

/** Pageviews per plan at the event, as a trends breakdown answers them. */
const perPlan = (body: any) => Object.fromEntries((body.result as any[]).map((r) => [r.breakdown_value, r.count]));

let engines: Partial<OnClickHouse> = {};
const fromClickHouse = new Map<string, any>();

t.before(async () => {
  engines = await startOnClickHouse();
  const base = engines.onClickHouse!.base;
  for (const batch of BATCHES) {
    const res = await sendBatch(base, batch);
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
    // The events list answers once every acknowledged event is applied (its read-your-writes barrier).
    await new Client(base).get('/api/projects/@current/events/?limit=1');
  }
  for (const [i, cohort] of COHORTS.entries()) {
    const res = await engines.chApi!.post('/api/projects/@current/cohorts/', cohort);
    if (res.status !== 201 || res.body.id !== i + 1) throw new Error(`cohort ${cohort.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
});
t.teardown(async () => stopOnClickHouse(engines, t.passing()));

t.test('every analysis by a person property is computed on ClickHouse', async (tt) => {
  // A static cohort's members are read when the query is made: a member added since counts at once.
  const [, , staticTrends] = ANALYSES.find(([name]) => name === 'trends, a static cohort filter')!;
  const before = await ask(engines.chApi!, 'insights/trend', staticTrends);
  tt.has(before.clickhouse, { fallback: null }, 'a static cohort is computed on ClickHouse');
  tt.equal(before.result[0].count, 5, "alice's pageviews, the one without a profile included");
  const added = await engines.chApi!.patch('/api/projects/@current/cohorts/3/add_persons_to_static_cohort/', { distinct_ids: ['bob-anon'] });
  if (added.status !== 200) throw new Error(`add to cohort 3: ${added.status} ${JSON.stringify(added.body)}`);
  for (const [name, path, params] of ANALYSES) {
    const body = await ask(engines.chApi!, path, params);
    tt.has(body.clickhouse, { fallback: null }, `${name}: computed on ClickHouse`);
    fromClickHouse.set(name, body);
  }
  tt.same(perPlan(fromClickHouse.get('trends, a person property breakdown')), { free: 3, trial: 1, pro: 4, '': 1 },
    'each pageview under the plan its person had at the event (none now has it: all are enterprise)');
  tt.equal(fromClickHouse.get('trends, a dynamic cohort filter').result[0].count, 4, 'the cohort of pro: the pageviews whose person was pro at the event');
  const byCohort = fromClickHouse.get('trends, a cohort breakdown, unique users and weekly active users').result as any[];
  tt.same(byCohort.map((r) => [r.breakdown_value, r.label]), [[1, '$pageview - Pro'], [3, '$pageview - Listed'], ['all', '$pageview - All Users'], [1, '$pageview - Pro'], [3, '$pageview - Listed'], ['all', '$pageview - All Users']],
    'a series per cohort, all users last, for each math');
  // Daily unique users from Oct 31: on Nov 1 alice (free then), bob (pro) and guest; Nov 2 alice (pro); Nov 3 bob.
  tt.same(byCohort.slice(0, 3).map((r) => r.data), [[0, 1, 1, 1, 0, 0], [0, 2, 1, 1, 0, 0], [0, 3, 1, 1, 0, 0]], 'daily unique users: pro at the event, listed now, everyone');
  tt.equal(fromClickHouse.get('trends, a static cohort filter').result[0].count, 5 + 3, "then alice's and bob's (bob-anon's merged person): the member added counts at once");
});

t.test("the same Quill's local engine answers the same on the same data", async (tt) => {
  const before = engines.onClickHouse!.base;
  const local = await restartOnLocalEngine(engines as OnClickHouse);
  for (const [name, path, params] of ANALYSES) {
    const body = await ask(local, path, params);
    tt.equal(body.clickhouse, undefined, `${name}: the local engine answered`);
    const [a, b] = [essence(fromClickHouse.get(name), before), essence(body, local.base)];
    if (sameWithin(a, b)) tt.pass(`${name}: the same answer`);
    else tt.same(a, b, `${name}: the same answer`);
  }
  tt.same(perPlan(await ask(local, 'insights/trend', ANALYSES.find(([name]) => name === 'trends, a person property breakdown')![2])), { free: 3, trial: 1, pro: 4, '': 1 }, 'the plans at the events');
});
