/**
 * Paths (analytics.md §7): every event of the range gathered per person over all shards (with its path item:
 * src/worker/analytics/sequences.ts), each person's sessions turned into limited paths and their consecutive
 * pairs counted as edges; `/persons/path/` keeps the persons whose paths hold a given edge or end at a node.
 */
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { includesEvent, itemCleaner, sessionPaths, type CleaningRule, type PathsQuery } from '../../domain/analytics/paths.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEvent } from './scatter.js';
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
  /** JSON [source, target] → occurrences and summed milliseconds between the two events. */
  edges: Map<string, { value: number; time: number }>;
  persons: number[];
}

function pathReducer(params: unknown): SequenceReducer<PathPartial> {
  const p = params as PathParams;
  const clean = itemCleaner(p.rules, p.query.groupings);
  const excluded = new Set(p.query.exclude);
  return {
    kind: 'paths',
    empty: () => ({ edges: new Map(), persons: [] }),
    add(out, person: PersonEvents) {
      const items: string[] = [];
      const times: number[] = [];
      for (let k = 0; k < person.n; k++) {
        let raw: string;
        const mask = person.mask[k]!;
        if (mask !== 0) raw = p.actionNames[31 - Math.clz32(mask & -mask)]!;
        else {
          const name = person.name[k]! < 0 ? '' : person.names[person.name[k]!]!;
          if (!includesEvent(p.query as PathsQuery, name) || person.value[k]! < 0) continue;
          raw = person.values[person.value[k]!]!;
        }
        const item = clean(raw);
        if (excluded.has(item)) continue;
        items.push(item);
        times.push(person.ts[k]!);
      }
      if (items.length === 0) return;
      let matched = false;
      for (const s of sessionPaths(items, times, p.query)) {
        for (let i = 1; i < s.items.length; i++) {
          const source = `${i}_${s.items[i - 1]}`;
          const target = `${i + 1}_${s.items[i]}`;
          const key = JSON.stringify([source, target]);
          const e = out.edges.get(key);
          const dt = s.times[i]! - s.times[i - 1]!;
          if (e) {
            e.value++;
            e.time += dt;
          } else out.edges.set(key, { value: 1, time: dt });
          const want = p.persons;
          if (want && !want.dropoff && (want.start === null || want.start === source) && (want.end === null || want.end === target)) matched = true;
        }
        if (p.persons?.dropoff && `${s.items.length}_${s.items[s.items.length - 1]}` === p.persons.dropoff) matched = true;
      }
      if (matched) out.persons.push(person.pid);
    },
    merge(into, other) {
      for (const [key, e] of other.edges) {
        const mine = into.edges.get(key);
        if (mine) {
          mine.value += e.value;
          mine.time += e.time;
        } else into.edges.set(key, e);
      }
      into.persons.push(...other.persons);
    },
  };
}

registerReducer('paths', pathReducer);

export async function runPaths(rt: WorkerRuntime, team: number, q: PathsQuery, now: number, persons: PathParams['persons'] = null): Promise<{ ctx: QueryContext; partial: PathPartial }> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.includeActions.map((a) => a.filter)]);
  const first = q.dates.dateFrom === 'all' ? await firstEvent(rt, team) : null;
  const range = resolveDateRange(q.dates, 'day', ctx.timeZone, now, first);
  const rules = [...(q.pathReplacements ? ctx.project.path_cleaning_filters ?? [] : []), ...q.localCleaning];
  const partial = await reduceEverywhere<PathPartial>(rt, {
    team, from: range.from, to: range.to, filter: andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null),
    matchers: q.includeActions.map((a) => ({ event: null, filter: a.filter })), allEvents: true, valueColumn: PATH_ITEM, names: true,
  }, ctx.scan, { kind: 'paths', params: { query: q, actionNames: q.includeActions.map((a) => a.name), rules, persons } satisfies PathParams });
  return { ctx, partial };
}
