// The persons of a point as ClickHouse SQL (trendsActorsSql, stickinessActorsSql, lifecycleActorsSql,
// retentionCohortActorsSql, retentionActorReturnsSql): every stored table read guarded by the project's team (also
// inside subqueries and joins), user text and the point's selectors only as parameters, persons as uuid text, events
// without a person left out; and the funnel's rows keep each person's uuid for the persons of a step.
import t from 'tap';
import { lifecycleActorsSql } from '../../src/domain/analytics/clickhouse/lifecycle-sql.js';
import { retentionActorReturnsSql, retentionCohortActorsSql } from '../../src/domain/analytics/clickhouse/retention-sql.js';
import { stickinessActorsSql } from '../../src/domain/analytics/clickhouse/stickiness-sql.js';
import { trendsActorsSql, type TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../src/domain/analytics/legacy-filters.js';
import { LIFECYCLE_STATUSES } from '../../src/domain/analytics/lifecycle.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
import { retentionQueryOf, retentionWindow } from '../../src/domain/analytics/retention.js';
import { storedTableReads, type PrintedClickHouse } from '../../src/domain/hogql/clickhouse-printer.js';
import { eventsOfRows } from '../../src/worker/analytics/gathered-events.js';

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'Europe/Paris', now: Date.UTC(2026, 10, 8) };
const DAY = 86_400_000;
const STARTS = [Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 2), Date.UTC(2026, 10, 3)];
const EVIL = "x' OR 1=1 --";
const series = trendsQueryOf(new FilterParams({ events: [{ id: EVIL, type: 'events' }] })).series[0]!;
const filter = parseFilters([{ key: '$browser', value: EVIL, operator: 'exact', type: 'event' }]);

/** The checks every actors query passes: guarded, no user text, persons as uuid text, no personless events. */
function checkActors(tt: Tap.Test, name: string, printed: PrintedClickHouse): void {
  const reads = storedTableReads(printed.sql, 'posthog');
  tt.ok(reads.some((r) => r.table === 'events') && reads.every((r) => r.team === 42), `${name}: every stored table read guarded by the team`);
  tt.notMatch(printed.sql, /OR 1=1|\$browser/, `${name}: no user text in the SQL`);
  tt.ok(Object.values(printed.params).includes(EVIL), `${name}: the event name and filter value as parameters`);
  tt.match(printed.sql, /toString\(/, `${name}: the person as its uuid text`);
  tt.match(printed.sql, /person_created_at/, `${name}: events ingested without a person belong to no one`);
}

t.test('trends: each person of the window with its event count', async (tt) => {
  const printed = trendsActorsSql(series, filter, STARTS[0]!, STARTS[1]! - 1, OPTS);
  checkActors(tt, 'trends', printed);
  tt.match(printed.sql, /count\(\)/, 'valued by the event count');
  tt.match(printed.sql, /GROUP BY/, 'one row per person');
  const all = trendsActorsSql({ ...series, event: null }, null, STARTS[0]!, STARTS[1]! - 1, OPTS);
  tt.notOk(Object.values(all.params).includes(EVIL), 'all events: no event name');
});

t.test('stickiness: the persons active in exactly n intervals, n a parameter', async (tt) => {
  const printed = stickinessActorsSql(series, filter, STARTS, STARTS[0]!, STARTS[2]! + DAY - 1, 2, OPTS);
  checkActors(tt, 'stickiness', printed);
  tt.match(printed.sql, /uniq/, 'distinct intervals per person');
  for (const ms of [STARTS[1]!, STARTS[2]!]) tt.match(printed.sql, `toInt64(${ms})`, `the bucket start ${new Date(ms).toISOString()} exact to the ms`);
});

t.test('lifecycle: each status of a period from the subqueries the counts use', async (tt) => {
  const periods = { withBefore: [STARTS[0]! - DAY, ...STARTS], end: STARTS[2]! + DAY - 1 };
  for (const status of LIFECYCLE_STATUSES) {
    const printed = lifecycleActorsSql(series, filter, periods, 1, status, OPTS);
    checkActors(tt, status, printed);
    if (status === 'dormant') tt.notOk(Object.values(printed.params).includes('dormant'), 'dormant: persons of the period before, not in it');
    else {
      tt.ok(Object.values(printed.params).includes(status), `${status}: the status as a parameter`);
      tt.ok(storedTableReads(printed.sql, 'posthog').some((r) => r.table === 'person'), `${status}: created_at from the person table`);
    }
  }
});

t.test('retention: a cohort and its returns, the cohort a parameter', async (tt) => {
  const q = retentionQueryOf(new FilterParams({ target_entity: { id: EVIL, type: 'events' }, returning_entity: { id: 'purchase', type: 'events' }, period: 'Day', total_intervals: 5, date_to: '2026-11-05' }));
  const w = retentionWindow(q, 'Europe/Paris', OPTS.now);
  const returning = parseFilters([{ key: '$os', value: 'returning-value', operator: 'exact', type: 'event' }]);
  checkActors(tt, 'cohort', retentionCohortActorsSql(q, filter, w, 2, OPTS));
  const returns = retentionActorReturnsSql(q, filter, returning, w, 2, OPTS);
  checkActors(tt, 'returns', returns);
  tt.match(returns.sql, /JOIN/, 'cohort joined with its returns');
  tt.notMatch(returns.sql, /\$os|returning-value/, "the returning events' filter as parameters");
  tt.ok(Object.values(returns.params).includes('returning-value'));
  const first = retentionQueryOf(new FilterParams({ target_entity: { id: '$pageview', type: 'events' }, retention_type: 'retention_first_time', date_to: '2026-11-05' }));
  tt.match(retentionCohortActorsSql(first, null, retentionWindow(first, 'UTC', OPTS.now), 0, OPTS).sql, /min(OrNull)?\(/, "first time: the person's first target event");
});

t.test("the funnel's rows keep each person's uuid in the order persons are numbered", async (tt) => {
  const rows = [['p1', 2000, 2], ['p2', 3000, 1], ['p1', 1000, 1], ['00000000-0000-0000-0000-000000000000', 4000, 1], ['p3', 5000, 3]];
  const events = eventsOfRows(rows);
  tt.same(events.uuids, ['p1', 'p2', 'p3'], 'uuids[pid - 1], rows of no person left out');
  tt.same([...events.pid.subarray(0, events.n)], [1, 2, 1, 3]);
});
