// Funnels as ClickHouse SQL (src/domain/analytics/clickhouse/funnel-sql.ts): one guarded read of the events of the
// steps and exclusions, each tagged with the local engine's bit set, user text only as parameters; what is not
// gathered on ClickHouse yet named as a gap. And the rows regrouped per person as the local fold reads them.
import t from 'tap';
import { clickHouseFunnelGap, funnelEventsSql } from '../../src/domain/analytics/clickhouse/funnel-sql.js';
import { funnelMatchers } from '../../src/domain/analytics/funnel-query.js';
import type { TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { funnelsQueryOf } from '../../src/domain/analytics/funnel-query.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
import { storedTableReads } from '../../src/domain/hogql/clickhouse-printer.js';
import { breakdownOfRow } from '../../src/worker/analytics/funnels-clickhouse.js';
import { eventsOfRows } from '../../src/worker/analytics/gathered-events.js';
import { forEachPerson, groupByPerson } from '../../src/worker/analytics/sequences.js';

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'Europe/Paris', now: Date.UTC(2026, 10, 8) };
const funnel = (params: Record<string, unknown>) => funnelsQueryOf(new FilterParams(params));
const EVIL = "x' OR 1=1 --";
const FROM = Date.UTC(2026, 10, 1);
const TO = Date.UTC(2026, 10, 8) - 1;

t.test('one guarded read, user text as parameters, a bit per step and exclusion', async (tt) => {
  const q = funnel({
    events: [
      { id: 'signup', type: 'events', order: 0, properties: [{ key: 'plan', value: EVIL, operator: 'exact', type: 'event' }] },
      { id: EVIL, type: 'events', order: 1 },
      { id: 'pay', type: 'events', order: 2 },
    ],
    exclusions: [{ id: 'cancel', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }],
    breakdown: 'pri`ce', breakdown_type: 'event',
  });
  const printed = funnelEventsSql(q, parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]), FROM, TO, OPTS);
  const reads = storedTableReads(printed.sql, 'posthog');
  tt.ok(reads.length >= 1 && reads.every((r) => r.team === 42), 'every stored table read guarded by the team');
  tt.notMatch(printed.sql, /OR 1=1|pri`ce|\$browser|'signup'|'cancel'/, 'no user text in the SQL');
  for (const v of [EVIL, 'signup', 'pay', 'cancel', 'pri`ce']) tt.ok(Object.values(printed.params).includes(v), `${v} as a parameter`);
  for (const bit of [1, 2, 4, 8]) tt.match(printed.sql, new RegExp(`, ${bit}, 0\\)`), `bit ${bit}`);
  tt.notMatch(printed.sql, /ORDER BY/, 'not sorted by ClickHouse (groupByPerson puts each person in time order)');
  tt.same(funnelMatchers(q).map((m) => m.event), ['signup', EVIL, 'pay', 'cancel'], 'steps then exclusions, the local bit order');
});

t.test('strict funnels read every event; ordered ones only the matching events', async (tt) => {
  const steps = [{ id: 'a', type: 'events', order: 0 }, { id: 'b', type: 'events', order: 1 }];
  const ordered = funnelEventsSql(funnel({ events: steps }), null, FROM, TO, OPTS);
  const strict = funnelEventsSql(funnel({ events: steps, funnel_order_type: 'strict' }), null, FROM, TO, OPTS);
  tt.ok(ordered.sql.length > strict.sql.length, 'the strict query has no matcher condition in its WHERE');
  tt.ok(storedTableReads(strict.sql, 'posthog').every((r) => r.team === 42), 'guarded');
});

t.test('gaps: what falls back to the local engine, named', async (tt) => {
  const steps = [{ id: 'a', type: 'events', order: 0 }, { id: 'b', type: 'events', order: 1 }];
  tt.equal(clickHouseFunnelGap(funnel({ events: steps }), []), null, 'a plain funnel runs on ClickHouse');
  tt.equal(clickHouseFunnelGap(funnel({ events: steps, funnel_viz_type: 'trends' }), []), null, 'funnel trends too (the same fold)');
  tt.equal(clickHouseFunnelGap(funnel({ events: steps, breakdown: 'plan', breakdown_type: 'event', breakdown_attribution_type: 'step', breakdown_attribution_value: 1 }), []), null);
  const byPlan = funnel({ events: steps, breakdown: 'plan', breakdown_type: 'person' });
  tt.equal(clickHouseFunnelGap(byPlan, []), null, 'a person property breakdown (the person at the event) runs on ClickHouse');
  tt.match(funnelEventsSql(byPlan, null, FROM, TO, OPTS).sql, /JSONExtractRaw\([^,]*person_properties/, "its value read from the event's person_properties");
  tt.equal(clickHouseFunnelGap(funnel({ events: steps, date_from: 'all' }), []), null, "date_from=all runs on ClickHouse (from Quill's first event)");
  tt.equal(clickHouseFunnelGap(funnel({ events: steps }), [parseFilters([{ key: 'email', value: 'x', operator: 'exact', type: 'person' }])]), null, 'a person property filter runs on ClickHouse');
  tt.match(clickHouseFunnelGap(funnel({ events: steps }), [parseFilters([{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }])]), /operator is_date_after/);
});

t.test('rows regrouped per person in time order (whatever order they come in), breakdown values interned, no-person rows dropped', async (tt) => {
  const rows = [
    ['p1', '2000', '2', ''], ['p2', 3000, 1, 'free'], ['p1', '1000', '1', 'pro'], ['00000000-0000-0000-0000-000000000000', 4000, 1, 'x'], ['p3', 5000, 3, 'pro'],
  ];
  const persons: unknown[] = [];
  await forEachPerson(groupByPerson(eventsOfRows(rows, { value: breakdownOfRow })), () => true, (p) => persons.push({
    pid: p.pid, ts: [...p.ts.subarray(0, p.n)], mask: [...p.mask.subarray(0, p.n)], values: [...p.value.subarray(0, p.n)].map((v) => (v < 0 ? null : p.values[v])),
  }));
  tt.same(persons, [
    { pid: 1, ts: [1000, 2000], mask: [1, 2], values: ['pro', null] },
    { pid: 2, ts: [3000], mask: [1], values: ['free'] },
    { pid: 3, ts: [5000], mask: [3], values: ['pro'] },
  ]);
});

t.test('persons numbered by uuid whatever the rows\' order; a long run out of order sorted by time, ties as they came', async (tt) => {
  const rows = [['p2', 1, 1, ''], ['p1', 1, 1, '']];
  tt.same(eventsOfRows(rows).uuids, ['p1', 'p2'], 'uuid order, not the order of the first rows');
  tt.same(eventsOfRows([...rows].reverse()).uuids, ['p1', 'p2']);
  // 100 rows of one person in descending time, each time twice (masks 1 then 2): the ties keep their arrival order.
  const long = Array.from({ length: 100 }, (_, i) => ['p', 1000 - Math.floor(i / 2), 1 + (i % 2), '']);
  const seen: { ts: number[]; mask: number[] }[] = [];
  await forEachPerson(groupByPerson(eventsOfRows(long)), () => true, (p) => seen.push({ ts: [...p.ts.subarray(0, p.n)], mask: [...p.mask.subarray(0, p.n)] }));
  tt.same(seen[0]!.ts, Array.from({ length: 100 }, (_, i) => 951 + Math.floor(i / 2)), 'in time order');
  tt.same(seen[0]!.mask, Array.from({ length: 100 }, (_, i) => 1 + (i % 2)), 'equal times in the order the rows came');
});

t.test('ordered and strict funnels read only the events of persons with a step-0 event', async (tt) => {
  const steps = [{ id: 'a', type: 'events', order: 0 }, { id: 'b', type: 'events', order: 1 }];
  for (const order of ['ordered', 'strict']) {
    const printed = funnelEventsSql(funnel({ events: steps, funnel_order_type: order }), null, FROM, TO, OPTS);
    tt.match(printed.sql, /person_id` IN \(SELECT/, `${order}: persons who may enter`);
    const reads = storedTableReads(printed.sql, 'posthog');
    tt.ok(reads.filter((r) => r.table === 'events').length >= 2 && reads.every((r) => r.team === 42), `${order}: both reads of events guarded`);
  }
  tt.notMatch(funnelEventsSql(funnel({ events: steps, funnel_order_type: 'unordered' }), null, FROM, TO, OPTS).sql, /person_id` IN \(SELECT/, 'unordered: any step may start');
});
