// Stickiness as ClickHouse SQL (src/domain/analytics/clickhouse/stickiness-sql.ts): every stored table read guarded
// by the project's team (also inside the per-person subquery), user text only as parameters, Quill's bucket starts
// as exact instants, and what is not computed on ClickHouse yet named as a gap.
import t from 'tap';
import { clickHouseStickinessGap, stickinessSql } from '../../src/domain/analytics/clickhouse/stickiness-sql.js';
import type { TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../src/domain/analytics/legacy-filters.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
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
});

t.test('gaps', async (tt) => {
  tt.equal(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), []), null, 'an event series runs on ClickHouse');
  const events = query({ events: [{ id: '$pageview' }] });
  tt.match(clickHouseStickinessGap({ ...events, series: [{ ...events.series[0]!, kind: 'actions' }] }, []) ?? '', /actions/, 'actions fall back');
  tt.match(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }], date_from: 'all' }), []) ?? '', /date_from=all/);
  const person = parseFilters([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]);
  tt.match(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), [person]) ?? '', /person property filters/);
  const cohort = parseFilters([{ key: 'id', value: 3, type: 'cohort' }]);
  tt.match(clickHouseStickinessGap(query({ events: [{ id: '$pageview' }] }), [cohort]) ?? '', /cohort filters/);
});
