// Stickiness, retention and lifecycle as ClickHouse SQL (src/domain/analytics/clickhouse/*-sql.ts):
// every stored table read guarded by the project's team (also inside subqueries and joins), user text only as
// parameters, Quill's bucket starts as exact instants, and what is not computed on ClickHouse yet named as a gap.
import t from 'tap';
import { clickHouseLifecycleGap, lifecycleActiveSql, lifecycleDormantSql } from '../../src/domain/analytics/clickhouse/lifecycle-sql.js';
import { clickHouseRetentionGap, retentionCohortsSql, retentionReturnsSql, retentionValueReturnsSql, retentionValueSizesSql } from '../../src/domain/analytics/clickhouse/retention-sql.js';
import { clickHouseStickinessGap, stickinessSql } from '../../src/domain/analytics/clickhouse/stickiness-sql.js';
import { retentionQueryOf, retentionWindow } from '../../src/domain/analytics/retention.js';
import type { TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../src/domain/analytics/legacy-filters.js';
import { parseFilters, type FilterNode } from '../../src/domain/analytics/property-filters.js';
import { storedTableReads } from '../../src/domain/hogql/clickhouse-printer.js';

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'Europe/Paris', now: Date.UTC(2026, 10, 8) };
const query = (params: Record<string, unknown>) => trendsQueryOf(new FilterParams({ insight: 'STICKINESS', ...params }));
const DAY = 86_400_000;
const STARTS = [Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 2), Date.UTC(2026, 10, 3)];
const EVIL = "x' OR 1=1 --";

t.test('guard, parameters and buckets', async (tt) => {
  const q = query({ events: [{ id: EVIL, type: 'events' }] });
  const filter = parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]);
  const printed = stickinessSql(q.series[0]!, filter, STARTS, STARTS[0]!, STARTS[2]! + DAY - 1, OPTS);
  const reads = storedTableReads(printed.sql, 'posthog');
  tt.ok(reads.length >= 1 && reads.every((r) => r.team === 42), 'every stored table read guarded by the team');
  tt.ok(reads.some((r) => r.table === 'events'), 'the events');
  tt.notMatch(printed.sql, /OR 1=1|\$browser/, 'no user text in the SQL');
  tt.ok(Object.values(printed.params).includes(EVIL), 'the event name and filter value as parameters');
  tt.ok(Object.values(printed.params).includes('Europe/Paris'), 'the project time zone');
  for (const ms of [STARTS[1]!, STARTS[2]!]) tt.match(printed.sql, `toInt64(${ms})`, `the bucket start ${new Date(ms).toISOString()} exact to the ms`);
  tt.match(printed.sql, /uniq/, 'distinct intervals per person');
  tt.match(printed.sql, /person_created_at/, 'events ingested without a person left out, as the local engine leaves them');
});

t.test('gaps', async (tt) => {
  tt.equal(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), []), null, 'an event series runs on ClickHouse');
  const events = query({ events: [{ id: '$pageview' }] });
  tt.equal(clickHouseStickinessGap({ ...events, series: [{ ...events.series[0]!, kind: 'actions' }] }, []), null, 'an action (its steps a filter tree) runs on ClickHouse');
  const element = parseFilters([{ key: 'tag_name', value: 'button', operator: 'exact', type: 'element' }]);
  tt.equal(clickHouseStickinessGap(events, [element]), null, 'element conditions run on ClickHouse');
  const huge = parseFilters([{ key: 'selector', value: 'li:nth-child(1000000000000000)', operator: 'exact', type: 'element' }]);
  tt.match(clickHouseStickinessGap(events, [huge]) ?? '', /nth/, 'but for their named sub-cases');
  tt.equal(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }], date_from: 'all' }), []), null, "date_from=all runs on ClickHouse (from Quill's first event)");
  const person = parseFilters([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]);
  tt.equal(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), [person]), null, "a person property filter (the person at the event, as exported) runs on ClickHouse");
  const cohort = parseFilters([{ key: 'id', value: 3, type: 'cohort' }]);
  tt.equal(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), [cohort]), null, 'a cohort filter (a dynamic one prints as its tree; a static one falls back while printing)');
});

t.test('retention: both filter trees, each over its own events, guarded and as parameters', async (tt) => {
  const q = retentionQueryOf(new FilterParams({ target_entity: { id: EVIL, type: 'events' }, returning_entity: { id: 'purchase', type: 'events' }, period: 'Day', total_intervals: 5, date_to: '2026-11-05', retention_type: 'retention_first_time' }));
  const w = retentionWindow(q, 'Europe/Paris', OPTS.now);
  const target = parseFilters([{ key: '$browser', value: 'target-value', operator: 'exact', type: 'event' }]);
  const returning = parseFilters([{ key: '$os', value: EVIL, operator: 'exact', type: 'event' }]);
  for (const printed of [retentionCohortsSql(q, target, w, OPTS), retentionReturnsSql(q, target, returning, w, OPTS)]) {
    const reads = storedTableReads(printed.sql, 'posthog');
    tt.ok(reads.length >= 1 && reads.every((r) => r.team === 42), 'every stored table read guarded by the team');
    tt.notMatch(printed.sql, /OR 1=1|\$browser|\$os|target-value/, 'no user text in the SQL');
    tt.ok(Object.values(printed.params).includes('target-value'), "the target's filter value as a parameter");
    tt.match(printed.sql, /min(OrNull|IfOrNull)?\(/, 'first time: the first target event');
  }
  const returns = retentionReturnsSql(q, target, returning, w, OPTS);
  tt.ok(Object.values(returns.params).includes(EVIL), "the returning events' filter value as a parameter");
  tt.match(returns.sql, /groupUniqArrayIf/, "one row per person: its first target event's period and its returns");
});

t.test('retention by an event property: the key as an identifier, values as parameters, persons counted once', async (tt) => {
  const q = retentionQueryOf(new FilterParams({ target_entity: { id: '$pageview', type: 'events' }, period: 'Day', total_intervals: 5, date_to: '2026-11-05', breakdowns: [{ property: EVIL, type: 'event' }] }));
  const w = retentionWindow(q, 'Europe/Paris', OPTS.now);
  const filter = parseFilters([{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }]);
  for (const printed of [retentionValueSizesSql(q, filter, w, OPTS), retentionValueReturnsSql(q, filter, filter, w, OPTS)]) {
    const reads = storedTableReads(printed.sql, 'posthog');
    tt.ok(reads.length >= 1 && reads.every((r) => r.team === 42), 'every stored table read guarded by the team');
    tt.notMatch(printed.sql, /OR 1=1|\$browser|Chrome/, 'no user text in the SQL');
    tt.ok(Object.values(printed.params).includes('$pageview'), 'the event name as a parameter');
    tt.match(printed.sql, /uniqExact/, 'each person once per value, however many cohorts it sits in');
  }
});

t.test('retention gaps', async (tt) => {
  const q = retentionQueryOf(new FilterParams({ target_entity: { id: '$pageview', type: 'events' } }));
  tt.equal(clickHouseRetentionGap(q, []), null, 'events run on ClickHouse');
  tt.equal(clickHouseRetentionGap({ ...q, breakdown: { type: 'event', property: '$browser' } }, []), null, 'an event property breakdown runs on ClickHouse');
  tt.equal(clickHouseRetentionGap({ ...q, breakdown: { type: 'person', property: 'plan' } }, []), null, 'a person property breakdown runs on ClickHouse');
  // An action's tree names its events (src/domain/analytics/action-filter.ts): computed, autocapture element
  // conditions of its steps included.
  const leaf = { key: 'event', operator: 'exact', groupTypeIndex: null, negation: false };
  const action: FilterNode = { and: true, children: [{ ...leaf, type: 'event_name', value: 'signed_up' }] };
  tt.equal(clickHouseRetentionGap({ ...q, target: { ...q.target, event: null, properties: action } }, [action]), null, 'an action runs on ClickHouse');
  const clicked: FilterNode = { and: true, children: [{ ...leaf, type: 'event_name', value: '$autocapture' }, { ...leaf, type: 'element', key: 'tag_name', value: 'button' }] };
  tt.equal(clickHouseRetentionGap({ ...q, target: { ...q.target, event: null, properties: clicked } }, [clicked]), null, 'an action with an element condition runs on ClickHouse');
  tt.equal(clickHouseRetentionGap(q, [parseFilters([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }])]), null, 'a person property filter runs on ClickHouse');
});

t.test('lifecycle: active and dormant queries guarded, the filter on every events read, values as parameters', async (tt) => {
  const q = query({ insight: 'LIFECYCLE', events: [{ id: EVIL, type: 'events' }] });
  const filter = parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]);
  const periods = { withBefore: [STARTS[0]! - DAY, ...STARTS], end: STARTS[2]! + DAY - 1 };
  for (const printed of [lifecycleActiveSql(q.series[0]!, filter, periods, OPTS), lifecycleDormantSql(q.series[0]!, filter, periods, OPTS)]) {
    const reads = storedTableReads(printed.sql, 'posthog');
    tt.ok(reads.length >= 2 && reads.every((r) => r.team === 42), 'every stored table read guarded by the team');
    tt.notMatch(printed.sql, /OR 1=1|\$browser/, 'no user text in the SQL');
    tt.ok(Object.values(printed.params).includes(EVIL), 'the event name and filter value as parameters');
  }
  tt.ok(storedTableReads(lifecycleActiveSql(q.series[0]!, filter, periods, OPTS).sql, 'posthog').some((r) => r.table === 'person'), "persons' created_at read from the person table");
  tt.match(lifecycleActiveSql(q.series[0]!, filter, periods, OPTS).sql, /person_created_at/, "and from the events' snapshot for a person deleted since");
  tt.equal(clickHouseLifecycleGap(query({ insight: 'LIFECYCLE', events: [{ id: '$pageview' }], date_from: 'all' }), []), null, "date_from=all runs on ClickHouse (from Quill's first event)");
  tt.equal(clickHouseLifecycleGap(query({ insight: 'LIFECYCLE', events: [{ id: '$pageview' }] }), []), null);
});
