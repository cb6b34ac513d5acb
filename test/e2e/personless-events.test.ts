// Events without a person profile as PostHog counts them (issue 48; src/domain/ingest/personless.ts), through both
// engines: one stream of posthog-js `person_profiles: 'identified_only'` visitors — never identified, identified
// later, identified on a second device (two anonymous ids merged into one user) — beside visitors with a profile
// from their first event, goes into a Quill on its own engine and one answering from ClickHouse (chdb;
// test/helpers/two-engines.ts). Unique users per day, weekly active users, a funnel, retention, stickiness,
// lifecycle and HogQL's count(DISTINCT person_id) must equal, on both, the answers computed here from PostHog's rules:
// an event without a person counts for its distinct id's derived person id (uuidFromDistinctId) until that distinct
// id has a person, then for that person; PostHog's lifecycle takes a person's smallest created_at over its events,
// 1970-01-01 00:00:05 on an event without a person. Then what the persons API, the events API, the persons of a
// point and /flags/ show of such a visitor.
import t from 'tap';
import { personUuid } from '../../src/domain/ingest/index.js';
import { event } from '../helpers/ingest.js';
import { insightQuery } from '../helpers/insight-compare.js';
import { PROJECT_KEY, type Client } from '../helpers/quill.js';
import { twoEngines } from '../helpers/two-engines.js';

const DAY = 86_400_000;
/** A Monday; the data spans days 0-13. */
const START = Date.UTC(2026, 10, 2);
const DAYS = 14;
const DATES = { date_from: '2026-11-02', date_to: '2026-11-15' };
const SENTINEL = 5_000;

interface Planned {
  day: number;
  /** Orders a day's events: 0 without a profile, 1 identify, 2 with a profile (each phase applied before the next). */
  phase: 0 | 1 | 2;
  minute: number;
  distinctId: string;
  name: string;
  properties: Record<string, unknown>;
}

const anonymous = { $process_person_profile: false };
const profiled = { $process_person_profile: true };

/** The visitors' events, as posthog-js sends them. */
function plan(): Planned[] {
  const out: Planned[] = [];
  const at = (day: number, minute: number, distinctId: string, name: string, properties: Record<string, unknown>) => {
    if (day < DAYS) out.push({ day, phase: name === '$identify' ? 1 : properties.$process_person_profile === false ? 0 : 2, minute, distinctId, name, properties });
  };
  // Never identified: three days each; one buys too (a custom event, still without a profile).
  for (let i = 0; i < 6; i++) for (const d of [i, i + 3, i + 7]) at(d, 600 + i, `anon-n${i}`, '$pageview', anonymous);
  at(3, 700, 'anon-n0', 'purchase', anonymous);
  // Identified later: anonymous pageviews, then identify, then pageviews and a purchase with the profile.
  for (let i = 0; i < 4; i++) {
    at(i + 1, 610, `anon-b${i}`, '$pageview', anonymous);
    at(i + 2, 610, `anon-b${i}`, '$pageview', anonymous);
    at(i + 4, 720, `user-b${i}`, '$identify', { ...profiled, $anon_distinct_id: `anon-b${i}`, $set: { email: `b${i}@example.com` } });
    at(i + 4, 780, `user-b${i}`, '$pageview', profiled);
    at(i + 4, 800, `user-b${i}`, 'purchase', profiled);
    at(i + 8, 610, `user-b${i}`, '$pageview', profiled);
  }
  // Identified on a second device: the phone's anonymous id, identify; days later the laptop's, identify again.
  for (let i = 0; i < 2; i++) {
    at(i + 1, 620, `anon-c${i}-phone`, '$pageview', anonymous);
    at(i + 2, 720, `user-c${i}`, '$identify', { ...profiled, $anon_distinct_id: `anon-c${i}-phone`, $set: { email: `c${i}@example.com` } });
    at(i + 2, 790, `user-c${i}`, '$pageview', profiled);
    at(i + 6, 620, `anon-c${i}-laptop`, '$pageview', anonymous);
    at(i + 7, 620, `anon-c${i}-laptop`, '$pageview', anonymous);
    at(i + 8, 720, `user-c${i}`, '$identify', { ...profiled, $anon_distinct_id: `anon-c${i}-laptop` });
    at(i + 8, 810, `user-c${i}`, 'purchase', profiled);
  }
  // A profile from the first event (person_profiles: 'always'); one later sends an event without a profile.
  for (let i = 0; i < 3; i++) for (const d of [i + 2, i + 3, i + 9]) at(d, 630 + i, `full-${i}`, '$pageview', {});
  at(11, 640, 'full-0', '$pageview', anonymous);
  return out.sort((a, b) => a.day - b.day || a.phase - b.phase || a.minute - b.minute);
}

const timestampOf = (p: Planned) => START + p.day * DAY + p.minute * 60_000;

/** The batches: one per day and phase, applied on both Quills before the next (src/README.md, "Order"). */
function dataset(): unknown[][] {
  const batches = new Map<string, unknown[]>();
  for (const p of plan()) {
    const key = `${p.day}:${p.phase}`;
    if (!batches.has(key)) batches.set(key, []);
    batches.get(key)!.push(event(p.distinctId, p.name, p.properties, { timestamp: new Date(timestampOf(p)).toISOString() }));
  }
  return [...batches.values()];
}

// ------------------------------------------------------------------------------------------ PostHog's rules

interface Counted {
  name: string;
  ts: number;
  distinctId: string;
  /** 'p<n>' a person, 'a:<distinct id>' the derived person id of an event without a person. */
  actor: string;
  /** person_created_at as PostHog writes it on the event. */
  createdAt: number;
}

/** Replays the events through PostHog's person processing (plugin-server) and says whom each counts for now. */
function model(): { events: Counted[]; actorOf: (e: Counted) => string; persons: number } {
  const personOf = new Map<string, number>();
  const createdAt = new Map<number, number>();
  const mergedInto = new Map<number, number>();
  let next = 1;
  const create = (ids: string[], ts: number) => {
    const p = next++;
    createdAt.set(p, ts);
    for (const d of ids) personOf.set(d, p);
    return p;
  };
  const events: Counted[] = [];
  for (const p of plan()) {
    const ts = timestampOf(p);
    if (p.properties.$process_person_profile === false) {
      const person = personOf.get(p.distinctId);
      events.push({ name: p.name, ts, distinctId: p.distinctId, actor: person ? `p${person}` : `a:${p.distinctId}`, createdAt: person ? createdAt.get(person)! : SENTINEL });
      continue;
    }
    if (p.name === '$identify') {
      const other = p.properties.$anon_distinct_id as string;
      const [po, pt] = [personOf.get(other), personOf.get(p.distinctId)];
      if (!po && !pt) create([p.distinctId, other], ts);
      else if (po && !pt) personOf.set(p.distinctId, po);
      else if (!po && pt) personOf.set(other, pt);
      else if (po !== pt) {
        mergedInto.set(po!, pt!);
        createdAt.set(pt!, Math.min(createdAt.get(pt!)!, createdAt.get(po!)!));
        for (const [d, q] of personOf) if (q === po) personOf.set(d, pt!);
      }
    }
    const person = personOf.get(p.distinctId) ?? create([p.distinctId], ts);
    events.push({ name: p.name, ts, distinctId: p.distinctId, actor: `p${person}`, createdAt: createdAt.get(person)! });
  }
  const resolve = (p: number): number => (mergedInto.has(p) ? resolve(mergedInto.get(p)!) : p);
  const actorOf = (e: Counted) => {
    if (e.actor.startsWith('a:')) {
      const person = personOf.get(e.distinctId);
      return person ? `p${resolve(person)}` : e.actor;
    }
    return `p${resolve(Number(e.actor.slice(1)))}`;
  };
  return { events, actorOf, persons: next - 1 };
}

const dayOf = (ts: number) => Math.floor((ts - START) / DAY);
const days = Array.from({ length: DAYS }, (_, d) => d);

function expected() {
  const { events, actorOf } = model();
  const pageviews = events.filter((e) => e.name === '$pageview');
  const activeOn = (d: number) => new Set(pageviews.filter((e) => dayOf(e.ts) === d).map(actorOf));
  const active = days.map(activeOn);
  const actors = new Set(pageviews.map(actorOf));
  const dau = active.map((s) => s.size);
  const wau = days.map((d) => new Set(pageviews.filter((e) => dayOf(e.ts) <= d && dayOf(e.ts) > d - 7).map(actorOf)).size);
  // Funnel $pageview → purchase within 14 days, ordered.
  const converted = [...actors].filter((a) => {
    const first = Math.min(...pageviews.filter((e) => actorOf(e) === a).map((e) => e.ts));
    return events.some((e) => e.name === 'purchase' && actorOf(e) === a && e.ts > first && e.ts - first <= 14 * DAY);
  });
  // Recurring retention, 7 daily cohorts from day 0.
  const retention = days.slice(0, 7).map((c) => days.slice(0, 7 - c).map((k) => [...active[c]!].filter((a) => active[c + k]!.has(a)).length));
  // Stickiness: actors by how many days they were active.
  const stickiness = days.map((n) => [...actors].filter((a) => active.filter((s) => s.has(a)).length === n + 1).length);
  // Lifecycle by day; the period before the range (day -1) has no events. "new": the period of the smallest
  // created_at the actor's events in the window carried.
  const born = new Map<string, number>();
  for (const e of pageviews) born.set(actorOf(e), Math.min(born.get(actorOf(e)) ?? Infinity, e.createdAt));
  const bornDay = (a: string) => (born.get(a)! >= START ? dayOf(born.get(a)!) : -1);
  const lifecycle = { new: [] as number[], returning: [] as number[], resurrecting: [] as number[], dormant: [] as number[] };
  for (const d of days) {
    const now = active[d]!;
    const before = d > 0 ? active[d - 1]! : new Set<string>();
    const isNew = (a: string) => bornDay(a) === d;
    lifecycle.new.push([...now].filter(isNew).length);
    lifecycle.returning.push([...now].filter((a) => before.has(a) && !isNew(a)).length);
    lifecycle.resurrecting.push([...now].filter((a) => !before.has(a) && !isNew(a)).length);
    lifecycle.dormant.push(-[...before].filter((a) => !now.has(a)).length);
  }
  return { dau, wau, total: actors.size, funnel: [actors.size, converted.length], retention, stickiness, lifecycle, active, actors };
}

// --------------------------------------------------------------------------------------------------- the suite

const engines = twoEngines(t, dataset, { appliedBetweenBatches: true });
const both = () => [['local', engines.localApi], ['ClickHouse', engines.chApi]] as const;
const want = expected();

async function get(api: Client, path: string, params: Record<string, unknown>, dates: Record<string, string> = DATES): Promise<any> {
  const res = await api.get(`/api/projects/@current/${path}?${insightQuery({ ...dates, ...params })}`);
  if (res.status !== 200) throw new Error(`${path} ${JSON.stringify(params)}: ${res.status} ${res.text.slice(0, 500)}`);
  return res.body;
}

async function hogql(api: Client, query: string): Promise<any> {
  const res = await api.post('/api/projects/@current/query/', { query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking' });
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text.slice(0, 500)}`);
  return res.body;
}

/** On the ClickHouse Quill, the answer must say ClickHouse computed it. */
function computedOn(tt: Tap.Test, name: string, engine: string, body: any): void {
  if (engine === 'ClickHouse') tt.has(body.clickhouse, { fallback: null }, `${name}: computed on ClickHouse`);
}

t.test('the dataset has each kind of visitor', async (tt) => {
  const { actors, dau } = want;
  tt.equal([...actors].filter((a) => a.startsWith('a:')).length, 6, 'six never-identified visitors, each its own actor');
  tt.equal(actors.size, 6 + 4 + 2 + 3, 'and nine persons, each once, whatever their distinct ids');
  tt.ok(dau.filter((n) => n > 0).length >= 12, 'someone on most days');
});

t.test('unique users per day and weekly active users', async (tt) => {
  for (const [engine, api] of both()) {
    const dau = await get(api, 'insights/trend/', { events: [{ id: '$pageview', math: 'dau' }] });
    computedOn(tt, 'dau', engine, dau);
    tt.same(dau.result[0].data, want.dau, `${engine}: unique users per day`);
    const wau = await get(api, 'insights/trend/', { events: [{ id: '$pageview', math: 'weekly_active' }] });
    computedOn(tt, 'wau', engine, wau);
    tt.same(wau.result[0].data, want.wau, `${engine}: weekly active users`);
    const total = await get(api, 'insights/trend/', { events: [{ id: '$pageview', math: 'dau' }], display: 'BoldNumber' });
    tt.equal(total.result[0].aggregated_value, want.total, `${engine}: unique users over the range`);
  }
});

t.test('a funnel, retention, stickiness and lifecycle', async (tt) => {
  for (const [engine, api] of both()) {
    const funnel = await get(api, 'insights/funnel/', { events: [{ id: '$pageview', type: 'events', order: 0 }, { id: 'purchase', type: 'events', order: 1 }], funnel_window_days: 14 });
    computedOn(tt, 'funnel', engine, funnel);
    tt.same(funnel.result.map((s: any) => s.count), want.funnel, `${engine}: funnel $pageview → purchase`);
    const retention = await get(api, 'insights/retention/', {
      target_entity: { id: '$pageview', type: 'events' }, returning_entity: { id: '$pageview', type: 'events' }, period: 'Day', total_intervals: 7,
    }, { date_to: '2026-11-08' });
    computedOn(tt, 'retention', engine, retention);
    tt.same(retention.result.map((r: any) => r.values.map((v: any) => v.count)), want.retention, `${engine}: daily recurring retention`);
    const stickiness = await get(api, 'insights/trend/', { insight: 'STICKINESS', shown_as: 'Stickiness', events: [{ id: '$pageview', type: 'events' }] });
    computedOn(tt, 'stickiness', engine, stickiness);
    tt.same(stickiness.result[0].data, want.stickiness, `${engine}: stickiness`);
    const lifecycle = await get(api, 'insights/trend/', { insight: 'LIFECYCLE', shown_as: 'Lifecycle', events: [{ id: '$pageview', type: 'events' }] });
    computedOn(tt, 'lifecycle', engine, lifecycle);
    tt.same(Object.fromEntries(lifecycle.result.map((r: any) => [r.status, r.data])), want.lifecycle, `${engine}: lifecycle`);
  }
});

t.test("HogQL's person_id: count(DISTINCT person_id), per day, and the uuid an anonymous visitor is named by", async (tt) => {
  const team = (await engines.localApi.get('/api/projects/@current/')).body.id as number;
  for (const [engine, api] of both()) {
    const total = await hogql(api, "SELECT count(DISTINCT person_id) FROM events WHERE event = '$pageview'");
    tt.same(total.results, [[want.total]], `${engine}: count(DISTINCT person_id)`);
    const perDay = await hogql(api, "SELECT toDate(timestamp) AS day, count(DISTINCT person_id) FROM events WHERE event = '$pageview' GROUP BY day ORDER BY day");
    const byDay = Object.fromEntries(want.dau.map((n, d) => [new Date(START + d * DAY).toISOString().slice(0, 10), n]).filter(([, n]) => n !== 0));
    tt.same(Object.fromEntries(perDay.results), byDay, `${engine}: per day`);
    const named = await hogql(api, "SELECT distinct_id, any(person_id) FROM events WHERE distinct_id IN ('anon-n0', 'anon-b0', 'anon-c0-laptop') GROUP BY distinct_id ORDER BY distinct_id");
    const person = (await api.get('/api/projects/@current/persons/?distinct_id=user-c0')).body.results[0];
    tt.same(named.results, [
      ['anon-b0', personUuid(team, 'anon-b0')],
      ['anon-c0-laptop', person.uuid],
      ['anon-n0', personUuid(team, 'anon-n0')],
    ], `${engine}: never identified: its derived uuid; identified: the person's (which took its uuid); second device: the person's`);
    const filtered = await hogql(api, `SELECT count() FROM events WHERE person_id = '${personUuid(team, 'anon-n1')}'`);
    tt.same(filtered.results, [[3]], `${engine}: events found by the derived uuid`);
    const listed = await api.post('/api/projects/@current/query/', { query: { kind: 'EventsQuery', select: ['event'], personId: personUuid(team, 'anon-n1'), after: 'all' } });
    tt.same([listed.status, listed.body.results], [200, [['$pageview'], ['$pageview'], ['$pageview']]], `${engine}: EventsQuery's personId`);
  }
  // The export in PostHog's tables, read as PostHog's own queries read them: events.person_id, overridden through
  // person_distinct_id_overrides (not person_distinct_id2).
  const overridden = await engines.ch.query<{ actors: string }>(`SELECT count(DISTINCT if(o.distinct_id != '', o.person_id, e.person_id)) AS actors
    FROM posthog.events AS e LEFT JOIN (SELECT distinct_id, argMax(person_id, version) AS person_id FROM posthog.person_distinct_id_overrides
      WHERE team_id = ${team} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0) AS o ON e.distinct_id = o.distinct_id
    WHERE e.team_id = ${team} AND e.event = '$pageview'`);
  tt.equal(Number(overridden[0]!.actors), want.total, "PostHog's override table: the same unique users");
  const rows = await engines.ch.query<{ distinct_id: string; created: string }>(`SELECT distinct_id, toString(min(person_created_at)) AS created FROM posthog.events
    WHERE team_id = ${team} AND distinct_id IN ('anon-n0', 'full-0') GROUP BY distinct_id ORDER BY distinct_id`);
  tt.same(rows.map((r) => [r.distinct_id, r.created]), [['anon-n0', '1970-01-01 00:00:05.000'], ['full-0', '2026-11-04 10:30:00.000']],
    "person_created_at as PostHog writes it: 00:00:05 without a person");
});

t.test('persons, events, the persons of a point and flags on the local engine', async (tt) => {
  const api = engines.localApi;
  const team = (await api.get('/api/projects/@current/')).body.id as number;
  const personOf = async (d: string) => (await api.get(`/api/projects/@current/persons/?distinct_id=${d}`)).body.results[0] ?? null;
  tt.equal(await personOf('anon-n0'), null, 'a never-identified visitor has no person profile');
  const b0 = await personOf('user-b0');
  tt.equal(b0.uuid, personUuid(team, 'anon-b0'), "identify after anonymous events: PostHog's person (the anonymous id's uuid)");
  tt.same([...b0.distinct_ids].sort(), ['anon-b0', 'user-b0']);
  const c0 = await personOf('user-c0');
  tt.same([...c0.distinct_ids].sort(), ['anon-c0-laptop', 'anon-c0-phone', 'user-c0']);
  const persons = (await api.get('/api/projects/@current/persons/?limit=100')).body.results;
  tt.equal(persons.length, 4 + 2 + 3, 'the persons list: only persons');

  const eventsOf = async (d: string) => (await api.get(`/api/projects/@current/events/?distinct_id=${d}&limit=100`)).body.results;
  tt.same((await eventsOf('anon-n0')).map((e: any) => e.person), [null, null, null, null], 'an event without a person shows none');
  // The events list shows a person by its first distinct id (PostHog's summary), the anonymous one here.
  const summary = (e: any) => e.person && { is_identified: e.person.is_identified, first: e.person.distinct_ids[0] };
  tt.same((await eventsOf('anon-c0-laptop')).map(summary), [{ is_identified: true, first: 'anon-c0-phone' }, { is_identified: true, first: 'anon-c0-phone' }],
    "a second device's anonymous events: the person it joined");
  tt.same((await eventsOf('anon-b0')).map(summary), [{ is_identified: true, first: 'anon-b0' }, { is_identified: true, first: 'anon-b0' }], 'identified later: the person');

  // Day 3: who viewed a page. The persons of a point list persons only, as PostHog's (an inner join with persons):
  // the never-identified visitors are counted in the point and reported as missing, on both engines.
  const active = [...want.active[3]!];
  const anonymousThatDay = active.filter((a) => a.startsWith('a:')).length;
  tt.ok(anonymousThatDay > 0 && anonymousThatDay < active.length, 'the day has both');
  for (const [engine, on] of both()) {
    const point = await get(on, 'persons/trends/', { events: [{ id: '$pageview', math: 'dau' }], entity_id: '$pageview', entity_type: 'events', entity_math: 'dau' },
      { date_from: '2026-11-05', date_to: '2026-11-05' });
    computedOn(tt, 'the persons of a point', engine, point);
    tt.equal(point.results[0].people.length, active.length - anonymousThatDay, `${engine}: the persons of the point`);
    tt.equal(point.missing_persons, anonymousThatDay, `${engine}: and the anonymous actors counted as missing`);
  }

  // Flags: evaluation without a profile has no person properties (unchanged).
  const flag = await api.post('/api/projects/@current/feature_flags/', { key: 'has-email', filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'is_set', value: 'is_set' }], rollout_percentage: 100 }] } });
  tt.equal(flag.status, 201);
  const flagsOf = async (d: string) => (await fetch(`${engines.local.base}/flags/?v=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: PROJECT_KEY, distinct_id: d }) })).json() as Promise<any>;
  tt.equal((await flagsOf('anon-n0')).flags['has-email'].enabled, false, 'a never-identified visitor: no person properties');
  tt.equal((await flagsOf('anon-b0')).flags['has-email'].enabled, true, "its anonymous id once identified: the person's");

  // Deleting the person with its events deletes its anonymous events too.
  tt.equal((await api.delete(`/api/projects/@current/persons/${c0.uuid}/?delete_events=true`)).status, 204);
  const after = await hogql(api, "SELECT count(DISTINCT person_id) FROM events WHERE event = '$pageview'");
  tt.same(after.results, [[want.total - 1]], 'one actor fewer');
});
