/**
 * Paths (analytics.md §7): every event of the range gathered per person over all shards (with its path item:
 * src/worker/analytics/sequences.ts), each person's sessions turned into limited paths and their consecutive
 * pairs counted as edges; `/persons/path/` keeps the persons whose paths hold a given edge or end at a node.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { includesEvent, itemCleaner, PATH_ELLIPSIS, sessionPaths, type CleaningRule, type PathsQuery } from '../../domain/analytics/paths.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { PATH_ITEM, reduceEverywhere, registerReducer, type PersonEvents, type SequenceReducer } from './sequences.js';

export interface PathParams {
  query: Pick<PathsQuery, 'includeTypes' | 'includeCustom' | 'exclude' | 'startPoint' | 'endPoint' | 'stepLimit' | 'groupings'>;
  /** Item names of the included actions: bit i of an event's mask says it matches action i. */
  actionNames: string[];
  rules: CleaningRule[];
  /** /persons/path/: which persons to keep (node keys like "2_/pricing"). */
  persons: { start: string | null; end: string | null; dropoff: string | null } | null;
}

export interface PathPartial {
  /** Path items by id: edges name them by their index here (a worker's ids are its own; `merge` maps them). */
  items: string[];
  ids: Map<string, number>;
  /** Edge key (see `edgeKey`) → occurrences and summed milliseconds between the two events. */
  edges: Map<number, { value: number; time: number }>;
  persons: number[];
}

/**
 * An edge from position `step` (1-based) to `step + 1`, as one number: ids of both items and the step packed so
 * that counting an edge costs a number-keyed map lookup, not the two strings and the JSON of a name. 20 steps at
 * most and 2^24 items fit in a double's 53 bits.
 */
const ITEM_IDS = 2 ** 24;
const edgeKey = (step: number, source: number, target: number) => (step * ITEM_IDS + source) * ITEM_IDS + target;

/** Edges by their names (`JSON [source, target]`, sources and targets as `step_item`), as the ranking reads them. */
export function namedEdges(partial: PathPartial): Map<string, { value: number; time: number }> {
  const out = new Map<string, { value: number; time: number }>();
  for (const [key, e] of partial.edges) {
    const target = key % ITEM_IDS;
    const rest = (key - target) / ITEM_IDS;
    const source = rest % ITEM_IDS;
    const step = (rest - source) / ITEM_IDS;
    out.set(JSON.stringify([`${step}_${partial.items[source]}`, `${step + 1}_${partial.items[target]}`]), e);
  }
  return out;
}

/**
 * Adds `value` occurrences of the edge from node `source` to node `target` (`step_item`, as namedEdges names them),
 * `time` milliseconds between them in all: the edges of a fold done elsewhere (inside ClickHouse) in this form.
 */
export function addNamedEdge(partial: PathPartial, source: string, target: string, value: number, time: number): void {
  const cut = source.indexOf('_');
  const step = Number(source.slice(0, cut));
  const key = edgeKey(step, idOfItem(partial, source.slice(cut + 1)), idOfItem(partial, target.slice(target.indexOf('_') + 1)));
  const had = partial.edges.get(key);
  if (had) {
    had.value += value;
    had.time += time;
  } else partial.edges.set(key, { value, time });
}

function idOfItem(partial: PathPartial, item: string): number {
  let id = partial.ids.get(item);
  if (id === undefined) {
    id = partial.items.push(item) - 1;
    if (id >= ITEM_IDS) throw new Error(`paths: more than ${ITEM_IDS} distinct path items; add path cleaning rules or groupings`);
    partial.ids.set(item, id);
  }
  return id;
}

/** No item: the event is not part of paths (its name is not included, it has no URL, or the item is excluded). */
const NO_ITEM = -1;
const UNKNOWN = -2;

export function pathReducer(params: unknown): SequenceReducer<PathPartial> {
  const p = params as PathParams;
  const clean = itemCleaner(p.rules, p.query.groupings);
  const excluded = new Set(p.query.exclude);
  // Per collected value / name / action: its path item id, worked out once per table. A person's events index
  // the tables of the Events they came from, so the caches restart when the tables change.
  let forTables: { values: readonly string[]; names: readonly string[]; partial: PathPartial } | null = null;
  let itemOfValue = new Int32Array(0);
  let nameIncluded = new Int8Array(0);
  let itemOfAction = new Int32Array(0);
  const itemOf = (partial: PathPartial, raw: string) => {
    const item = clean(raw);
    return excluded.has(item) ? NO_ITEM : idOfItem(partial, item);
  };
  const items: number[] = [];
  const times: number[] = [];
  return {
    kind: 'paths',
    empty: () => ({ items: [], ids: new Map(), edges: new Map(), persons: [] }),
    add(out, person: PersonEvents) {
      if (forTables === null || forTables.values !== person.values || forTables.names !== person.names || forTables.partial !== out
        || itemOfValue.length !== person.values.length || nameIncluded.length !== person.names.length) {
        forTables = { values: person.values, names: person.names, partial: out };
        itemOfValue = new Int32Array(person.values.length).fill(UNKNOWN);
        nameIncluded = new Int8Array(person.names.length);
        itemOfAction = new Int32Array(p.actionNames.length).fill(UNKNOWN);
      }
      items.length = 0;
      times.length = 0;
      for (let k = 0; k < person.n; k++) {
        let item: number;
        const mask = person.mask[k]!;
        if (mask !== 0) {
          const action = 31 - Math.clz32(mask & -mask);
          item = itemOfAction[action]!;
          if (item === UNKNOWN) item = itemOfAction[action] = itemOf(out, p.actionNames[action]!);
        } else {
          const name = person.name[k]!;
          const value = person.value[k]!;
          if (name < 0 || value < 0) {
            if (value < 0 || !includesEvent(p.query as PathsQuery, '')) continue;
          } else {
            let included = nameIncluded[name]!;
            if (included === 0) included = nameIncluded[name] = includesEvent(p.query as PathsQuery, person.names[name]!) ? 1 : 2;
            if (included === 2) continue;
          }
          item = itemOfValue[value]!;
          if (item === UNKNOWN) item = itemOfValue[value] = itemOf(out, person.values[value]!);
        }
        if (item === NO_ITEM) continue;
        items.push(item);
        times.push(person.ts[k]!);
      }
      if (items.length === 0) return;
      const bounds = {
        startPoint: p.query.startPoint === null ? null : idOfItem(out, p.query.startPoint),
        endPoint: p.query.endPoint === null ? null : idOfItem(out, p.query.endPoint),
        stepLimit: p.query.stepLimit,
      };
      const want = p.persons;
      let matched = false;
      for (const s of sessionPaths(items, times, bounds, idOfItem(out, PATH_ELLIPSIS))) {
        for (let i = 1; i < s.items.length; i++) {
          const key = edgeKey(i, s.items[i - 1]!, s.items[i]!);
          const e = out.edges.get(key);
          const dt = s.times[i]! - s.times[i - 1]!;
          if (e) {
            e.value++;
            e.time += dt;
          } else out.edges.set(key, { value: 1, time: dt });
          if (want && !want.dropoff && (want.start === null || want.start === `${i}_${out.items[s.items[i - 1]!]}`)
            && (want.end === null || want.end === `${i + 1}_${out.items[s.items[i]!]}`)) matched = true;
        }
        if (want?.dropoff && `${s.items.length}_${out.items[s.items[s.items.length - 1]!]}` === want.dropoff) matched = true;
      }
      if (matched) out.persons.push(person.pid);
    },
    merge(into, other) {
      // The other partial's item ids are its own: each is mapped to this partial's id for the same item.
      const mapped = other.items.map((item) => idOfItem(into, item));
      for (const [key, e] of other.edges) {
        const target = key % ITEM_IDS;
        const rest = (key - target) / ITEM_IDS;
        const source = rest % ITEM_IDS;
        const mine = edgeKey((rest - source) / ITEM_IDS, mapped[source]!, mapped[target]!);
        const had = into.edges.get(mine);
        if (had) {
          had.value += e.value;
          had.time += e.time;
        } else into.edges.set(mine, e);
      }
      into.persons.push(...other.persons);
    },
  };
}

registerReducer('paths', pathReducer);

export interface PathRun {
  ctx: QueryContext;
  partial: PathPartial;
}

/** The cleaning rules a query applies: the project's (with path_replacements), then the query's own. */
export function pathRules(ctx: QueryContext, q: PathsQuery): CleaningRule[] {
  return [...(q.pathReplacements ? ctx.project.path_cleaning_filters ?? [] : []), ...q.localCleaning];
}

export async function runPaths(rt: WorkerRuntime, team: number, q: PathsQuery, now: number, persons: PathParams['persons'] = null): Promise<PathRun> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.includeActions.map((a) => a.filter)]);
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, 'day', ctx.timeZone, now, first);
  const rules = pathRules(ctx, q);
  const partial = await reduceEverywhere<PathPartial>(rt, {
    team, from: range.from, to: range.to, filter: andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null),
    matchers: q.includeActions.map((a) => ({ event: null, filter: a.filter })), allEvents: true, valueColumn: PATH_ITEM, names: true,
  }, ctx.scan, { kind: 'paths', params: { query: q, actionNames: q.includeActions.map((a) => a.name), rules, persons } satisfies PathParams });
  return { ctx, partial };
}
