// Paths folded inside ClickHouse (src/domain/analytics/clickhouse/path-fold-sql.ts) against the local engine's
// pathReducer (src/worker/analytics/paths.ts, ranked by rankEdges as the answer is): generated persons' events
// (pageviews with and without a trailing slash or a URL, screens, custom events, actions, sessions split by gaps),
// every option of a path (event types, start and end points, step limits, exclusions, cleaning rules, groupings,
// weights, edge limits), run by chdb over the same rows, must give the same edges and the same persons.
import t from 'tap';
import { pathEdgesFoldSql, pathPersonsFoldSql, type PathFold } from '../../src/domain/analytics/clickhouse/path-fold-sql.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { includesEvent, pathsQueryOf, rankEdges, rawItem, type CleaningRule, type PathsQuery } from '../../src/domain/analytics/paths.js';
import { eventsOfRows, type RowColumns } from '../../src/worker/analytics/gathered-events.js';
import { addNamedEdge, namedEdges, pathReducer, type PathParams, type PathPartial } from '../../src/worker/analytics/paths.js';
import { forEachPerson, groupByPerson } from '../../src/worker/analytics/sequences.js';
import { chdbRows, personUuid } from '../helpers/fold-rows.js';
import { Random } from '../helpers/fuzz.js';

/** A gathered path row: person, ms, action bits, event, item property (null: missing). */
type PathRow = [person: string, ms: number, mask: number, event: string, item: string | null];

/** How the gathered rows read as the local engine's events: the name, and the raw path item. */
const PATH_ROW: RowColumns = {
  name: (row) => String(row[3]),
  value: (row) => rawItem(String(row[3]), String(row[4] ?? ''), String(row[4] ?? '')),
};

const M = 60_000;
const URLS = ['https://x.test/', 'https://x.test/pricing', 'https://x.test/pricing/', 'https://x.test/docs/a', 'https://x.test/docs/b/', "https://x.test/it's", null];
const SCREENS = ['Home', 'Cart', null];
const EVENTS = ['$pageview', '$pageview', '$pageview', '$screen', 'clicked', 'signed up', '$autocapture'];
const ACTIONS = ['Saw docs', 'Bought'];

/** Persons with 1-16 events, 1-9 minutes apart or (one in six) 30-60 minutes apart, never two at one instant. */
function pathRows(r: Random, persons: number): PathRow[] {
  const rows: PathRow[] = [];
  for (let p = 0; p < persons; p++) {
    let ms = Date.UTC(2026, 10, 2) + r.int(0, 600) * M;
    for (let k = r.int(1, 16); k > 0; k--) {
      const event = r.pick(EVENTS);
      const item = event === '$pageview' ? r.pick(URLS) : event === '$screen' ? r.pick(SCREENS) : null;
      const mask = r.chance(0.15) ? r.int(1, 3) : 0;
      rows.push([personUuid(p + 1), ms, mask, event, item]);
      ms += r.chance(1 / 6) ? r.int(30, 60) * M : r.int(1, 9) * M + r.int(0, 59) * 1000;
    }
  }
  return rows;
}

const literal = (s: string | null) => (s === null ? 'NULL' : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
const gatheredOf = (rows: readonly PathRow[]) => ({
  sql: `SELECT * FROM values('c0 UUID, c1 Int64, c2 UInt32, c3 String, c4 Nullable(String)', ${rows.map((e) => `(${literal(e[0])}, ${e[1]}, ${e[2]}, ${literal(e[3])}, ${literal(e[4])})`).join(', ')})`,
  params: {},
});

interface Case {
  name: string;
  params: Record<string, unknown>;
  rules?: CleaningRule[];
  actions?: boolean;
}

const CASES: Case[] = [
  { name: 'pageviews, the defaults', params: {} },
  { name: 'pageviews, screens and custom events', params: { include_event_types: ['$pageview', '$screen', 'custom_event'] } },
  { name: 'named custom events, actions', params: { include_event_types: ['$screen'], include_custom_events: ['signed up'] }, actions: true },
  { name: 'a start point, step limit 3', params: { start_point: 'https://x.test/pricing', step_limit: 3 } },
  { name: 'an end point, step limit 3', params: { end_point: 'https://x.test/docs/a', step_limit: 3 } },
  { name: 'start and end points, step limit 4', params: { start_point: 'https://x.test', end_point: 'https://x.test/pricing', step_limit: 4 } },
  { name: 'start and end points, step limit 5', params: { include_event_types: ['$pageview', 'custom_event'], start_point: 'https://x.test', end_point: 'clicked', step_limit: 5 } },
  { name: 'excluded items', params: { include_event_types: ['$pageview', 'custom_event'], exclude_events: ['https://x.test/pricing', 'clicked'] } },
  { name: 'cleaning rules and groupings', params: { path_groupings: ['https://x.test/docs/*'] }, rules: [{ regex: 'https://x\\.test/(\\w+)', alias: '/\\1' }, { regex: "'", alias: '' }] },
  { name: 'weights and an edge limit of 4 (ties cut by name)', params: { include_event_types: ['$pageview', '$screen'], min_edge_weight: 2, max_edge_weight: 40, edge_limit: 4 } },
  { name: 'edge limit 1', params: { edge_limit: 1 } },
];

function queryOf(c: Case): { q: PathsQuery; fold: PathFold } {
  const q = pathsQueryOf(new FilterParams(c.params));
  return { q, fold: { query: q, actionNames: c.actions ? ACTIONS : [], rules: c.rules ?? [] } };
}

/** The rows the gathered query selects for `q`: included by name, or matching an action (no action bits without actions). */
const selected = (rows: PathRow[], q: PathsQuery, actions: boolean) =>
  rows.map((r): PathRow => (actions ? r : [r[0], r[1], 0, r[3], r[4]])).filter((r) => r[2] !== 0 || includesEvent(q, r[3]));

async function onLocal(rows: PathRow[], fold: PathFold, persons: PathParams['persons']): Promise<{ partial: PathPartial; uuids: string[] }> {
  const reducer = pathReducer({ query: fold.query, actionNames: [...fold.actionNames], rules: [...fold.rules], persons } satisfies PathParams);
  const partial = reducer.empty();
  const events = eventsOfRows(rows, PATH_ROW);
  await forEachPerson(groupByPerson(events), () => true, (p) => reducer.add(partial, p));
  return { partial, uuids: events.uuids };
}

const ranked = (partial: PathPartial, q: PathsQuery) => rankEdges(namedEdges(partial), q).map((e) => [e.source, e.target, e.value, e.average_conversion_time]);

t.test('paths: the same edges as the local engine, over generated persons', async (t) => {
  for (const [k, c] of CASES.entries()) {
    const { q, fold } = queryOf(c);
    for (const seed of [41 + k, 3000 + k]) {
      const rows = selected(pathRows(new Random(seed), 150), q, c.actions === true);
      const local = ranked((await onLocal(rows, fold, null)).partial, q);
      t.ok(local.length > 0, `${c.name}, seed ${seed}: edges (${local.length})`);
      const folded: PathPartial = { items: [], ids: new Map(), edges: new Map(), persons: [] };
      for (const [source, target, value, time] of chdbRows(pathEdgesFoldSql(gatheredOf(rows), fold, q.edgeLimit, q.minEdgeWeight, q.maxEdgeWeight))) {
        addNamedEdge(folded, String(source), String(target), Number(value), Number(time));
      }
      t.same(ranked(folded, q), local, `${c.name}, seed ${seed}: ClickHouse's fold is the local engine's`);
    }
  }
});

t.test('paths: the persons of an edge, of the edges from or to a node, and of a drop-off', async (t) => {
  for (const [k, c] of CASES.entries()) {
    const { q, fold } = queryOf(c);
    const rows = selected(pathRows(new Random(700 + k), 150), q, c.actions === true);
    const edges = ranked((await onLocal(rows, fold, null)).partial, q);
    const [source, target] = edges[0] as [string, string];
    for (const want of [{ start: source, end: target, dropoff: null }, { start: source, end: null, dropoff: null }, { start: null, end: target, dropoff: null }, { start: null, end: null, dropoff: target }]) {
      const { partial, uuids } = await onLocal(rows, fold, want);
      const local = partial.persons.map((pid) => uuids[pid - 1]).sort();
      const got = chdbRows(pathPersonsFoldSql(gatheredOf(rows), fold, want)).map(([u]) => String(u)).sort();
      t.ok(local.length > 0 || want.dropoff !== null, `${c.name}, ${JSON.stringify(want)}: persons (${local.length})`);
      t.same(got, local, `${c.name}, ${JSON.stringify(want)}: the local engine's persons`);
    }
  }
});

t.test("hand-made rows: raw items, sessions, repeats, a pageview without URL", async (t) => {
  const p = personUuid;
  const rows: PathRow[] = [
    [p(1), 0, 0, '$pageview', 'https://x.test/'],
    [p(1), 2 * M, 0, '$pageview', 'https://x.test/pricing/'],
    [p(1), 3 * M, 0, '$pageview', 'https://x.test/pricing'],
    [p(1), 4 * M, 0, '$screen', 'Home'],
    // A new session (30 minutes later).
    [p(1), 34 * M, 0, '$pageview', null],
    [p(1), 35 * M, 0, 'clicked', null],
    [p(2), 1 * M, 0, '$pageview', 'https://x.test/'],
    [p(2), 5 * M, 0, '$pageview', 'https://x.test/pricing'],
  ];
  const { q, fold } = queryOf({ name: '', params: { include_event_types: ['$pageview', '$screen', 'custom_event'] } });
  const expected = [
    ['1_https://x.test', '2_https://x.test/pricing', 2, 3 * M],
    ['1_', '2_clicked', 1, M],
    ['2_https://x.test/pricing', '3_Home', 1, 2 * M],
  ];
  t.same(ranked((await onLocal(rows, fold, null)).partial, q), expected, "local: one trailing slash dropped, a repeat collapsed, a pageview without URL the item ''");
  const folded: PathPartial = { items: [], ids: new Map(), edges: new Map(), persons: [] };
  for (const [s, tg, v, ms] of chdbRows(pathEdgesFoldSql(gatheredOf(rows), fold, q.edgeLimit, null, null))) addNamedEdge(folded, String(s), String(tg), Number(v), Number(ms));
  t.same(ranked(folded, q), expected, 'ClickHouse: the same');
});
