// The paths reducer counts edges under numeric keys of interned items (src/worker/analytics/paths.ts): each worker
// interns its own items, so partials merged from several workers must name the same edges as one partial that saw
// every person, and the names must be the `step_item` pairs the ranking reads.
import t from 'tap';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { pathsQueryOf, sessionPaths } from '../../src/domain/analytics/paths.js';
import { namedEdges, pathReducer, type PathPartial } from '../../src/worker/analytics/paths.js';
import type { PersonEvents } from '../../src/worker/analytics/sequences.js';

const MIN = 60_000;

/** A person's pageviews of these URLs, a minute apart (a gap of an hour where the list has null). */
function person(pid: number, urls: (string | null)[], values: string[], names: string[]): PersonEvents {
  const rows = urls.map((u, i) => ({ u, t: i * MIN + urls.slice(0, i).filter((x) => x === null).length * 60 * MIN })).filter((r) => r.u !== null);
  const valueOf = (u: string) => (values.includes(u) ? values.indexOf(u) : values.push(u) - 1);
  if (!names.includes('$pageview')) names.push('$pageview');
  return {
    pid, n: rows.length, ts: Float64Array.from(rows, (r) => r.t), mask: new Uint32Array(rows.length), value: Int32Array.from(rows, (r) => valueOf(r.u!)), values,
    name: new Int32Array(rows.length).fill(names.indexOf('$pageview')), names,
  };
}

const journeys: (string | null)[][] = [
  ['/', '/pricing', '/signup'],
  ['/pricing', '/', '/pricing', null, '/docs', '/docs', '/'],
  ['/docs', '/', '/pricing', '/signup', '/app', '/app/settings', '/app'],
  ['/', '/pricing'],
];

t.test('edges merged from two workers name the same counts as one partial of everyone', async (t) => {
  const q = pathsQueryOf(new FilterParams({ step_limit: '4' }));
  const params = { query: q, actionNames: [], rules: [], persons: null };
  const whole = pathReducer(params);
  const all = whole.empty() as PathPartial;
  const sharedValues: string[] = [];
  const sharedNames: string[] = [];
  journeys.forEach((j, i) => whole.add(all, person(i + 1, j, sharedValues, sharedNames)));

  // Two "workers", each with its own value tables, persons in another order.
  const [a, b] = [pathReducer(params), pathReducer(params)];
  const pa = a.empty() as PathPartial;
  const pb = b.empty() as PathPartial;
  const [va, na, vb, nb] = [[], [], [], []] as string[][];
  b.add(pb, person(3, journeys[2]!, vb!, nb!));
  a.add(pa, person(2, journeys[1]!, va!, na!));
  b.add(pb, person(1, journeys[0]!, vb!, nb!));
  a.add(pa, person(4, journeys[3]!, va!, na!));
  const merged = pathReducer(params);
  const result = merged.empty() as PathPartial;
  merged.merge(result, structuredClone(pb));
  merged.merge(result, structuredClone(pa));

  const sorted = (m: Map<string, { value: number; time: number }>) => [...m].sort(([x], [y]) => (x < y ? -1 : 1));
  t.same(sorted(namedEdges(result)), sorted(namedEdges(all)));
  const edges = namedEdges(all);
  t.same(edges.get(JSON.stringify(['1_/', '2_/pricing'])), { value: 2, time: 2 * MIN }, 'two persons went from / to /pricing first');
  t.same(edges.get(JSON.stringify(['1_/docs', '2_/'])), { value: 2, time: 3 * MIN }, 'a session after an hour starts at step 1, repeats collapsed');
  t.equal(edges.get(JSON.stringify(['4_/signup', '5_/app'])), undefined, 'step_limit 4 keeps four items');
});

t.test('session paths take any item type, with the given ellipsis', async (t) => {
  const times = [0, 1, 2, 3, 4, 5, 6].map((m) => m * MIN);
  const bounds = { startPoint: 1, endPoint: 7, stepLimit: 4 };
  t.same(sessionPaths([1, 2, 3, 4, 5, 6, 7], times, bounds, -1), [{ items: [1, 2, -1, 6, 7], times: [0, MIN, 2 * MIN, 5 * MIN, 6 * MIN] }]);
  t.same(sessionPaths(['a', 'b', 'b', 'c'], times.slice(0, 4), { startPoint: 'b', endPoint: null, stepLimit: 5 }, '...'), [{ items: ['b', 'c'], times: [MIN, 3 * MIN] }]);
});
