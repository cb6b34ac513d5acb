// Trends as ClickHouse SQL (src/domain/analytics/clickhouse/trends-sql.ts): every stored table read is guarded by
// the project's team, user text (event names, property keys and values, breakdown values) only as parameters,
// Quill's bucket starts as exact instants, and what is not computed on ClickHouse yet named as a gap.
import t from 'tap';
import { clickHouseTrendsGap, hogqlIdentifier, trendsSeriesSql, type TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../src/domain/analytics/legacy-filters.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
import { storedTableReads } from '../../src/domain/hogql/clickhouse-printer.js';

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'Europe/Paris', now: Date.UTC(2026, 10, 8) };
const trends = (params: Record<string, unknown>) => trendsQueryOf(new FilterParams(params));
const DAY = 86_400_000;
const STARTS = [Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 2), Date.UTC(2026, 10, 3)];
const EVIL = "x' OR 1=1 --";

t.test('guard, parameters and buckets of a series', async (tt) => {
  const q = trends({ events: [{ id: EVIL, type: 'events', math: 'sum', math_property: 'pri`ce' }] });
  const filter = parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]);
  const printed = trendsSeriesSql(q.series[0]!, filter, STARTS, STARTS[0]!, STARTS[2]! + DAY - 1, { kind: 'buckets', breakdown: null }, OPTS);
  const reads = storedTableReads(printed.sql, 'posthog');
  tt.same(reads.map((r) => r.table), ['events'], 'one stored table read');
  tt.ok(reads.every((r) => r.team === 42), 'guarded by the team');
  tt.notMatch(printed.sql, /OR 1=1|pri`ce|\$browser/, 'no user text in the SQL');
  tt.ok(Object.values(printed.params).includes(EVIL), 'the event name and filter value as parameters');
  tt.ok(Object.values(printed.params).includes('pri`ce'), 'the property key as a parameter');
  tt.ok(Object.values(printed.params).includes('Europe/Paris'), 'the project time zone');
  for (const ms of [STARTS[0]!, STARTS[1]!, STARTS[2]!, STARTS[2]! + DAY - 1]) tt.match(printed.sql, `toInt64(${ms})`, `the instant ${new Date(ms).toISOString()} exact to the ms`);
  tt.match(printed.sql, /multiIf\(/, 'the bucket index from the starts');
  tt.match(printed.sql, /sum/, 'the sum');
});

t.test('one bucket needs no comparison; a breakdown keeps only its page of values', async (tt) => {
  const q = trends({ events: [{ id: '$pageview', type: 'events', math: 'dau' }], breakdown: '$browser' });
  const one = trendsSeriesSql(q.series[0]!, null, [STARTS[0]!], STARTS[0]!, STARTS[0]! + DAY - 1, { kind: 'buckets', breakdown: null }, OPTS);
  tt.notMatch(one.sql, /multiIf/, 'a single bucket');
  const page = trendsSeriesSql(q.series[0]!, null, STARTS, STARTS[0]!, STARTS[2]! + DAY, { kind: 'buckets', breakdown: { property: '$browser', of: 'event', only: ['Chrome', EVIL] } }, OPTS);
  tt.ok(Object.values(page.params).includes(EVIL), 'breakdown values as parameters');
  tt.notMatch(page.sql, /OR 1=1/);
  tt.ok(storedTableReads(page.sql, 'posthog').every((r) => r.team === 42), 'guarded');
  const none = trendsSeriesSql(q.series[0]!, null, STARTS, STARTS[0]!, STARTS[2]! + DAY, { kind: 'buckets', breakdown: { property: '$browser', of: 'event', only: [] } }, OPTS);
  tt.match(none.sql, /false/, 'an empty page selects nothing');
  const counts = trendsSeriesSql(q.series[0]!, null, STARTS, STARTS[0]!, STARTS[2]! + DAY, { kind: 'breakdown_counts', property: '$browser', of: 'event' }, OPTS);
  tt.match(counts.sql, /count\(\)/, 'values ranked by event count');
  tt.notOk(counts.sql.includes(`toInt64(${STARTS[1]})`), 'over the whole range (no bucket starts)');
  tt.notMatch(counts.sql, /JSONExtractRaw\([^,]*person_properties/, "an event property's breakdown reads the event's properties");
  tt.match(page.sql, /greater\(`events`\.`person_created_at`/, 'unique users: events without a person count for no one');
  tt.notMatch(counts.sql, /greater\(`events`\.`person_created_at`/, 'but the values are ranked by event count, those events included (as locally)');
});

t.test("a person property breakdown and filter read the person's properties at the event", async (tt) => {
  const q = trends({ events: [{ id: '$pageview', type: 'events' }], breakdown: EVIL, breakdown_type: 'person' });
  const filter = parseFilters([{ key: 'plan', value: EVIL, operator: 'exact', type: 'person' }]);
  for (const shape of [{ kind: 'breakdown_counts', property: EVIL, of: 'person' }, { kind: 'buckets', breakdown: { property: EVIL, of: 'person', only: ['pro'] } }] as const) {
    const printed = trendsSeriesSql(q.series[0]!, filter, STARTS, STARTS[0]!, STARTS[2]! + DAY, shape, OPTS);
    tt.match(printed.sql, /JSONExtractRaw\([^,]*person_properties/, `${shape.kind}: the breakdown value from person_properties`);
    tt.notMatch(printed.sql, /JSONExtractRaw\([^,]*\.`properties`/, `${shape.kind}: not from the event's properties`);
    tt.notMatch(printed.sql, /OR 1=1/, `${shape.kind}: the key and value as parameters`);
    tt.same(storedTableReads(printed.sql, 'posthog').map((r) => r.table), ['events'], `${shape.kind}: the events table alone (no join to the person now)`);
  }
});

t.test('HogQL identifiers for any property key', async (tt) => {
  tt.equal(hogqlIdentifier('a`b\\c'), '`a\\`b\\\\c`');
  tt.equal(hogqlIdentifier('$browser'), '`$browser`');
});

t.test('what is not computed on ClickHouse yet is named', async (tt) => {
  const gap = (params: Record<string, unknown>) => {
    const q = trends({ events: [{ id: '$pageview', type: 'events' }], ...params });
    return clickHouseTrendsGap(q, [q.properties, ...q.series.map((s) => s.properties)]);
  };
  tt.equal(gap({}), null, 'a total count runs on ClickHouse');
  tt.equal(gap({ interval: 'hour', breakdown: '$browser', properties: [{ key: 'x', value: 1, operator: 'gt' }] }), null, 'hour, event breakdown, event filter');
  tt.equal(gap({ compare: true, display: 'ActionsLineGraphCumulative' }), null, 'compare, cumulative counts');
  tt.equal(gap({ events: [{ id: '$pageview', type: 'events', math: 'dau' }], display: 'ActionsLineGraphCumulative' }), null, 'cumulative unique users');
  tt.equal(gap({ formula: 'A*2' }), null, 'a formula');
  for (const math of ['weekly_active', 'monthly_active', 'avg_count_per_actor', 'p90_count_per_actor']) tt.equal(gap({ events: [{ id: '$pageview', type: 'events', math }] }), null, math);
  tt.equal(gap({ events: [{ id: '$pageview', type: 'events', math: 'unique_group', math_group_type_index: 1 }] }), null, 'unique groups');
  // Person properties at the event: the export writes each event's own snapshot (src/stores/persons/event-snapshots.ts).
  tt.equal(gap({ breakdown: 'plan', breakdown_type: 'person' }), null, 'a person property breakdown');
  tt.equal(gap({ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }), null, 'a person property filter');
  // The event's group as it is now: the groups table's latest row (the local engine reads the groups it holds now).
  tt.equal(gap({ breakdown: 'name', breakdown_type: 'group', breakdown_group_type_index: 0 }), null, 'a group property breakdown');
  tt.equal(gap({ properties: [{ key: 'name', value: 'x', type: 'group', group_type_index: 1 }] }), null, 'a group property filter');
  // A dynamic cohort prints as its tree; a static one is found out while printing (NotPrintable), not here.
  tt.equal(gap({ properties: [{ key: 'id', value: 3, type: 'cohort' }] }), null, 'a cohort filter');
  // The date operators: the property read by one grammar on both engines (src/domain/analytics/property-date.ts).
  tt.equal(gap({ properties: [{ key: 'x', value: '2026-01-01', operator: 'is_date_after', type: 'event' }] }), null, 'a date operator');
  tt.match(gap({ properties: [{ key: 'href', value: '2026-01-01', operator: 'is_date_after', type: 'element' }] }), /operator is_date_after/);
  tt.equal(gap({ date_from: 'all' }), null, "date_from=all (from Quill's first event)");
});

t.test('cumulative unique users: each person in their first bucket', async (tt) => {
  const q = trends({ events: [{ id: '$pageview', type: 'events', math: 'dau' }], breakdown: '$browser' });
  const printed = trendsSeriesSql(q.series[0]!, null, STARTS, STARTS[0]!, STARTS[2]! + DAY, { kind: 'buckets', breakdown: { property: '$browser', only: ['Chrome'] }, firstSeen: true }, OPTS);
  tt.match(printed.sql, /min(OrNull)?\(multiIf\(/, 'the first bucket per person');
  tt.ok(storedTableReads(printed.sql, 'posthog').every((r) => r.team === 42), 'guarded');
});

t.test('an action is its steps: event names as parameters, element conditions computed', async (tt) => {
  const step = { event: EVIL, properties: [], selector: null, tag_name: null, text: null, text_matching: null, href: null, href_matching: null, url: '/docs', url_matching: 'contains' as const };
  const actions = new Map([[1, { id: 1, name: 'read docs', steps: [step, { ...step, event: 'other', url: null }] }],
    [2, { id: 2, name: 'clicked', steps: [{ ...step, event: '$autocapture', tag_name: 'button' }] }]]);
  const withActions = (id: number) => trendsQueryOf(new FilterParams({ actions: [{ id, type: 'actions', math: 'weekly_active' }] }, (n) => actions.get(n)));
  const q = withActions(1);
  const filters = [q.properties, ...q.series.map((s) => s.properties)];
  tt.equal(clickHouseTrendsGap(q, filters), null, 'event and url conditions run on ClickHouse');
  const printed = trendsSeriesSql({ ...q.series[0]!, math: 'total' }, q.series[0]!.properties, STARTS, STARTS[0]!, STARTS[2]! + DAY - 1, { kind: 'buckets', breakdown: null }, OPTS);
  tt.notMatch(printed.sql, /OR 1=1/, 'no step event in the SQL');
  tt.ok(Object.values(printed.params).includes(EVIL) && Object.values(printed.params).includes('other'), 'the step events as parameters');
  tt.match(printed.sql, /`event` IN \(/, 'compared with the event name');
  tt.ok(storedTableReads(printed.sql, 'posthog').every((r) => r.team === 42), 'guarded');
  const clicked = withActions(2);
  tt.equal(clickHouseTrendsGap(clicked, [clicked.properties, ...clicked.series.map((s) => s.properties)]), null, 'autocapture conditions too (test/unit/element-conditions-sql.test.ts)');
});

t.test("a static cohort prints as its members' uuids, one parameter; past the bound it is not printed", async (tt) => {
  const q = trends({ events: [{ id: '$pageview', type: 'events' }] });
  const uuids = ['0188a7c2-0000-7000-8000-000000000001', '0188a7c2-0000-7000-8000-000000000002'];
  const series = (id: number, operator: string, staticCohorts: TrendsSqlOptions['staticCohorts']) =>
    trendsSeriesSql(q.series[0]!, parseFilters([{ key: 'id', value: id, type: 'cohort', operator }]), STARTS, STARTS[0]!, STARTS[2]! + DAY, { kind: 'buckets', breakdown: null }, { ...OPTS, staticCohorts });
  const listed = series(3, 'in', new Map([[3, uuids]]));
  tt.ok(Object.values(listed.params).includes(uuids.join(',')), 'the members as one comma-separated parameter');
  tt.notMatch(listed.sql, /0188a7c2/, 'no uuid in the SQL text');
  tt.match(listed.sql, /`person_id` IN \(SELECT toUUID\(arrayJoin\(splitByChar/, "the event's current person among them");
  tt.same(storedTableReads(listed.sql, 'posthog').map((r) => r.table).sort(), ['events', 'person_distinct_id2'], 'the person looked up by the distinct id, guarded');
  tt.ok(storedTableReads(listed.sql, 'posthog').every((r) => r.team === 42), 'guarded by the team');
  tt.match(series(3, 'not_in', new Map([[3, uuids]])).sql, /NOT \(`events`\.`person_id` IN/, 'not in the cohort');
  tt.match(series(3, 'in', new Map([[3, []]])).sql, /false/, 'an empty cohort matches no one');
  tt.throws(() => series(3, 'in', new Map([[3, null]])), { reason: /static cohort 3 has more than 10,000 persons/ }, 'past the bound: answered by the local engine, saying why');
  tt.throws(() => series(4, 'in', new Map()), { reason: /cohort 4 is not known to the query/ }, 'a cohort the context does not hold');
});
