// Paths and funnel correlation as ClickHouse SQL (src/domain/analytics/clickhouse/path-sql.ts, funnel-sql.ts's
// gathering of every event): guarded reads, user text only as parameters, the events each analysis needs; what is not
// gathered on ClickHouse yet named as a gap. (The paths' fold inside ClickHouse: test/chdb/path-fold.test.ts.)
import t from 'tap';
import { clickHousePathsGap, pathEventsSql } from '../../src/domain/analytics/clickhouse/path-sql.js';
import { funnelEventsSql } from '../../src/domain/analytics/clickhouse/funnel-sql.js';
import type { TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { actionFilter } from '../../src/domain/analytics/action-filter.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { funnelsQueryOf } from '../../src/domain/analytics/funnel-query.js';
import { pathsQueryOf } from '../../src/domain/analytics/paths.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
import { storedTableReads } from '../../src/domain/hogql/clickhouse-printer.js';

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'Europe/Paris', now: Date.UTC(2026, 10, 8) };
const paths = (params: Record<string, unknown>) => pathsQueryOf(new FilterParams(params));
const funnel = (params: Record<string, unknown>) => funnelsQueryOf(new FilterParams(params));
const EVIL = "x' OR 1=1 --";
const FROM = Date.UTC(2026, 10, 1);
const TO = Date.UTC(2026, 10, 8) - 1;
const guarded = (sql: string) => {
  const reads = storedTableReads(sql, 'posthog');
  return reads.length >= 1 && reads.every((r) => r.team === 42);
};

t.test('paths: one guarded read of the events that may be path items, user text as parameters', async (tt) => {
  const q = paths({ include_event_types: ['$pageview', '$screen'], include_custom_events: [EVIL], exclude_events: [EVIL], start_point: EVIL });
  const printed = pathEventsSql(q, parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]), FROM, TO, OPTS);
  tt.ok(guarded(printed.sql), 'every stored table read guarded by the team');
  tt.notMatch(printed.sql, /OR 1=1|\$current_url|\$screen_name|\$browser/, 'no user text or property name in the SQL');
  for (const v of [EVIL, '$current_url', '$screen_name', '$browser']) tt.ok(Object.values(printed.params).some((p) => p.includes(v)), `${v} as a parameter`);
  tt.notMatch(printed.sql, /ORDER BY/, 'not sorted by ClickHouse (groupByPerson puts each person in time order)');
  tt.notMatch(printed.sql, /not\(startsWith\(`events`\.`event`/, 'named events only, without custom_event');
  const custom = pathEventsSql(paths({ include_event_types: ['custom_event'] }), null, FROM, TO, OPTS);
  tt.match(custom.sql, /not\(startsWith\(`events`\.`event`/, 'custom_event: every event not named $…');
  tt.ok(guarded(custom.sql));
});

t.test('paths: actions as items, each its bit of the mask, their text as parameters', async (tt) => {
  const action = (id: number, steps: Parameters<typeof actionFilter>[0]['steps']) => ({ id, name: `action ${id}`, filter: actionFilter({ steps }) });
  const q = { ...paths({ include_event_types: ['$screen'] }), includeActions: [action(1, [{ event: EVIL }]), action(2, [{ event: '$pageview', url: EVIL, url_matching: 'contains' }])] };
  tt.equal(clickHousePathsGap(q, []), null, 'actions of events and URLs run on ClickHouse');
  const printed = pathEventsSql(q, null, FROM, TO, OPTS);
  tt.ok(guarded(printed.sql));
  tt.notMatch(printed.sql, /OR 1=1/, 'no user text in the SQL');
  tt.match(printed.sql, /multiIf\(.*, 1, 0\)/, "the first action's bit");
  tt.match(printed.sql, /multiIf\(.*, 2, 0\)/, "the second action's bit");
});

t.test('paths: gaps, what falls back to the local engine, named', async (tt) => {
  tt.equal(clickHousePathsGap(paths({}), []), null, 'pageview paths run on ClickHouse');
  tt.equal(clickHousePathsGap(paths({ include_event_types: ['$screen', 'custom_event'], start_point: 'a', end_point: 'b', step_limit: 3 }), []), null);
  tt.equal(clickHousePathsGap(paths({ date_from: 'all' }), []), null, "date_from=all runs on ClickHouse (from Quill's first event)");
  tt.equal(clickHousePathsGap(paths({}), [parseFilters([{ key: 'email', value: 'x', operator: 'exact', type: 'person' }])]), null, 'a person property filter (the person at the event) runs on ClickHouse');
  tt.match(clickHousePathsGap(paths({}), [parseFilters([{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }])]), /operator is_date_after/);
});

t.test('correlation gathers every event of the persons who may enter, with its name', async (tt) => {
  const steps = [{ id: 'a', type: 'events', order: 0 }, { id: 'b', type: 'events', order: 1 }];
  const gather = { everyEvent: true, names: true };
  for (const order of ['ordered', 'strict', 'unordered']) {
    const q = funnel({ events: steps, funnel_order_type: order, exclusions: [{ id: EVIL, type: 'events', funnel_from_step: 0, funnel_to_step: 1 }] });
    const printed = funnelEventsSql(q, null, FROM, TO, OPTS, gather);
    const plain = funnelEventsSql(q, null, FROM, TO, OPTS);
    tt.ok(guarded(printed.sql), `${order}: guarded`);
    tt.notMatch(printed.sql, /OR 1=1/, `${order}: the exclusion's name as a parameter`);
    tt.match(printed.sql, /person_id` IN \(SELECT/, `${order}: only persons with an entering event`);
    tt.match(printed.sql, /AS `c3` FROM/, `${order}: the event's name, a column beside the funnel's own`);
    tt.notMatch(plain.sql, /AS `c3` FROM/, `${order}: which a funnel does not read`);
  }
});
