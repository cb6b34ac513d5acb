/**
 * Funnel correlation (analytics.md §3): the funnel's persons (everyone who entered), split into converted and not,
 * and for each other event name how many of each did it inside their funnel attempt: after its first step and
 * before its last step (or, for those who dropped, before the first step plus the window). Events come per person
 * from every shard (src/worker/analytics/sequences.ts); this reducer counts.
 */
import { personFunnel, type FunnelShape } from '../../domain/analytics/funnel.js';
import { funnelMatchers, funnelShape, type FunnelsQuery } from '../../domain/analytics/funnel-query.js';
import { resolveDateRange } from '../../domain/analytics/date-range.js';
import { andFilters } from '../../domain/analytics/property-filters.js';
import type { PersonRow } from '../../stores/persons/person-store.js';
import type { WorkerRuntime } from '../runtime.js';
import { queryContext, type QueryContext } from './query-context.js';
import { firstEventIfAll } from './scatter.js';
import { reduceEverywhere, registerReducer, type PersonEvents, type SequenceReducer } from './sequences.js';

export interface CorrelationParams {
  shape: FunnelShape;
  /** Event names never counted: the steps' own, and funnel_correlation_exclude_event_names. */
  skip: string[];
  to: number;
  /** For /persons/funnel/correlation/: keep the persons who did this event (null: the whole population). */
  personsOf: string | null;
}

export interface CorrelationPartial {
  success: number;
  failure: number;
  /** Per event name: persons who did it, converted / not. */
  events: Map<string, [number, number]>;
  /** Population persons with whether they converted (and, with personsOf, only those who did that event). */
  persons: [number, boolean][];
  keepPersons: boolean;
}

export function correlationReducer(params: unknown): SequenceReducer<CorrelationPartial> {
  const p = params as CorrelationParams;
  const skip = new Set(p.skip);
  const stepBits = (1 << p.shape.steps) - 1;
  // Scratch reused from person to person: the step rows' times and masks, and per event name of the current
  // names table its counts in the partial (null: never counted) and the last person that did it.
  let ts = new Float64Array(64);
  let mask = new Uint32Array(64);
  let forNames: { names: readonly string[]; partial: CorrelationPartial } | null = null;
  let counts: ([number, number] | null | undefined)[] = [];
  let lastPerson = new Int32Array(0);
  let personStamp = 0;
  return {
    kind: 'correlation',
    empty: () => ({ success: 0, failure: 0, events: new Map(), persons: [], keepPersons: p.personsOf !== null }),
    add(out, person: PersonEvents) {
      // The funnel is computed on step events only (strict funnels: on every event, "the next event" counts them
      // all); other events matter for the window.
      if (ts.length < person.n) {
        ts = new Float64Array(person.n * 2);
        mask = new Uint32Array(person.n * 2);
      }
      let n = 0;
      for (let k = 0; k < person.n; k++) {
        const m = person.mask[k]!;
        if (p.shape.order === 'strict' || (m & stepBits) !== 0 || m >>> p.shape.steps !== 0) {
          ts[n] = person.ts[k]!;
          mask[n++] = m;
        }
      }
      if (n === 0) return;
      const f = personFunnel(ts, mask, n, p.shape, undefined, 'first');
      if (f.reached === 0) return;
      const converted = f.reached === p.shape.steps;
      if (converted) out.success++;
      else out.failure++;
      const chain = f.chains[0]!;
      const first = ts[chain[0]!]!;
      const last = converted ? ts[chain[chain.length - 1]!]! : Math.min(first + p.shape.windowMs, p.to);
      if (forNames === null || forNames.names !== person.names || forNames.partial !== out || counts.length !== person.names.length) {
        forNames = { names: person.names, partial: out };
        counts = new Array(person.names.length);
        lastPerson = new Int32Array(person.names.length);
      }
      const stamp = ++personStamp;
      let didPersonsOf = p.personsOf === '';
      for (let k = 0; k < person.n; k++) {
        const t = person.ts[k]!;
        const name = person.name[k]!;
        // Each name once per person.
        if (t <= first || t >= last || name < 0 || lastPerson[name] === stamp) continue;
        lastPerson[name] = stamp;
        let c = counts[name];
        if (c === undefined) {
          const text = person.names[name]!;
          if (skip.has(text)) c = null;
          else {
            c = out.events.get(text) ?? [0, 0];
            out.events.set(text, c);
          }
          counts[name] = c;
        }
        if (c === null) continue;
        c[converted ? 0 : 1]++;
        if (!didPersonsOf && person.names[name] === p.personsOf) didPersonsOf = true;
      }
      if (out.keepPersons && didPersonsOf) out.persons.push([person.pid, converted]);
    },
    merge(into, other) {
      into.success += other.success;
      into.failure += other.failure;
      for (const [name, c] of other.events) {
        const mine = into.events.get(name) ?? [0, 0];
        mine[0] += c[0];
        mine[1] += c[1];
        into.events.set(name, mine);
      }
      into.persons.push(...other.persons);
    },
  };
}

registerReducer('correlation', correlationReducer);

export interface CorrelationRun {
  ctx: QueryContext;
  partial: CorrelationPartial;
  /** The person behind an id of `partial.persons`, as Quill holds it now (undefined: deleted meanwhile). */
  person: (pid: number) => PersonRow | undefined;
}

/** The reducer's parameters: events of the steps are no candidates (the step's event, or every event an action step names). */
export function correlationParams(q: FunnelsQuery, to: number, exclude: string[], personsOf: string | null): CorrelationParams {
  const stepNames = q.steps.flatMap((s) => (s.action !== null ? s.action.events : s.event !== null ? [s.event] : []));
  return { shape: funnelShape(q), skip: [...stepNames, ...exclude], to, personsOf };
}

export async function runCorrelation(rt: WorkerRuntime, team: number, q: FunnelsQuery, now: number, exclude: string[], personsOf: string | null): Promise<CorrelationRun> {
  const ctx = queryContext(rt, team, now, [q.properties, ...q.steps.map((s) => s.properties), ...q.exclusions.map((e) => e.properties)]);
  const first = await firstEventIfAll(rt, team, q.dates);
  const range = resolveDateRange(q.dates, q.interval, ctx.timeZone, now, first);
  const partial = await reduceEverywhere<CorrelationPartial>(rt, {
    team, from: range.from, to: range.to,
    filter: andFilters(q.properties, q.filterTestAccounts ? ctx.testAccountFilters : null),
    matchers: funnelMatchers(q),
    allEvents: true, valueColumn: null, names: true,
  }, ctx.scan, { kind: 'correlation', params: correlationParams(q, range.to, exclude, personsOf) });
  return { ctx, partial, person: (pid) => rt.persons.person(team, pid) };
}
