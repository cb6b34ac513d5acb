/**
 * Per-person analyses (funnels, paths, correlation) need each person's events in time order, and a person's events
 * can live on several shards (distinct ids joined by merges). The shuffle, in three rounds:
 *
 *  1. `collect`: every worker scans its shards for the events the analysis needs and keeps them as columns (person,
 *     time, bit set of the matchers each event satisfies, breakdown value) under the query's id; it answers the set
 *     of persons it saw (a bitmap).
 *  2. `take`: the coordinator sends the persons seen by more than one worker; each worker reduces every other person
 *     of its own (it holds all of their events), keeps the events of the shared persons it owns (person id modulo
 *     the workers) and ships those of the shared persons other workers own.
 *  3. `finish`: the coordinator hands each worker the events shipped to it; each reduces its shared persons, every
 *     worker's events of a person merged first.
 *
 * So every core reduces, also the persons spread over workers (merged ones: in a dataset where devices are
 * anonymous before sign-up, a third of the events), and only those persons' events travel.
 */
import { bitmapWords, hasMember } from '../../domain/analytics/aggregates.js';
import { propertyText, type FilterNode } from '../../domain/analytics/property-filters.js';
import { rawItem } from '../../domain/analytics/paths.js';
import { COL, EVENT_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView, DictColumn } from '../../stores/scan/column-block.js';
import type { PeerMessage } from '../peers.js';
import type { PeerHandler, WorkerRuntime } from '../runtime.js';
import { rowMask } from './block-filter.js';
import { scanEnvOf, type ScanContext } from './scatter.js';
import { Slicer } from './slices.js';

export const SEQUENCE_COLLECT = 'sequence.collect';
export const SEQUENCE_TAKE = 'sequence.take';
export const SEQUENCE_FINISH = 'sequence.finish';
/** Collected events are dropped if the coordinator never takes them (it failed meanwhile). */
const FORGET_AFTER_MS = 120_000;

export interface Matcher {
  /** Event name; null = any event. */
  event: string | null;
  filter: FilterNode | null;
}

export interface SequenceSpec {
  team: number;
  /** Inclusive bounds of the events collected. */
  from: number;
  to: number;
  /** Filters every collected event must pass. */
  filter: FilterNode | null;
  /** Bit i of an event's mask: it matches matcher i. */
  matchers: Matcher[];
  /** Collect every event in range, also those matching no matcher (strict funnels: "the next event"). */
  allEvents: boolean;
  /**
   * The value each event carries: a column (breakdowns, e.g. `p:$browser`), `path_item` (the URL of a pageview,
   * the name of a screen, else the event name: analytics.md §7.2), or null for none.
   */
  valueColumn: string | null;
  /** Also keep each event's name (correlation, paths). */
  names: boolean;
}

/** Events as columns; `value`/`name` index into `values`/`names` (-1: none). */
export interface Events {
  n: number;
  pid: Uint32Array;
  ts: Float64Array;
  mask: Uint32Array;
  value: Int32Array;
  values: string[];
  name: Int32Array;
  names: string[];
}

function emptyEvents(capacity: number): Events {
  return {
    n: 0, pid: new Uint32Array(capacity), ts: new Float64Array(capacity), mask: new Uint32Array(capacity),
    value: new Int32Array(capacity), values: [], name: new Int32Array(capacity), names: [],
  };
}

function grow(e: Events, need: number): void {
  if (e.pid.length >= need) return;
  const cap = Math.max(need, e.pid.length * 2);
  const copy = <A extends Uint32Array | Float64Array | Int32Array>(a: A, Ctor: { new (n: number): A }): A => {
    const out = new Ctor(cap);
    out.set(a.subarray(0, e.n));
    return out;
  };
  e.pid = copy(e.pid, Uint32Array);
  e.ts = copy(e.ts, Float64Array);
  e.mask = copy(e.mask, Uint32Array);
  e.value = copy(e.value, Int32Array);
  e.name = copy(e.name, Int32Array);
}

/** Per query: the collected events (round 1), then the events of the shared persons this worker owns (round 2). */
const collected = new Map<string, { events: Events; at: number }>();

interface CollectMessage extends PeerMessage {
  id: string;
  spec: SequenceSpec;
  ctx: ScanContext;
}

/** Round 1 on one worker: gathers the events; answers the persons seen. */
export const collectHandler: PeerHandler = async (rt, msg) => {
  const { id, spec, ctx } = msg as CollectMessage;
  rt.persons.env.resetReadTxn();
  const env = scanEnvOf(rt, ctx);
  const blocks = [...rt.ingest.shards.values()].flatMap((shard) => shard.events.columns.blocks(spec.team, spec.from, spec.to));
  // Sized once for every row the blocks hold, so that the columns are never copied as they grow. Zeroed memory of
  // this size is mapped lazily: a selective analysis only makes resident the pages of the rows it collects.
  const out = emptyEvents(Math.max(1024, blocks.reduce((total, b) => total + b.n, 0)));
  const valueIds = new Map<string, number>();
  const nameIds = new Map<string, number>();
  const slicer = new Slicer();
  for (const block of blocks) {
    const n = block.n;
    const ts = block.f64(COL.ts)!;
    const persons = env.resolution.resolveAll(block.u32(COL.personId)!);
    const names = block.dict(COL.event);
    const global = spec.filter === null ? null : rowMask(spec.filter, block, env);
    // Per matcher: its event name's code in this block (0: any event, -1: absent) and its filter's rows.
    const codes = spec.matchers.map((m) => (m.event === null ? 0 : names ? names.values.indexOf(m.event) + 1 || -1 : -1));
    const masks = spec.matchers.map((m, i) => (codes[i] === -1 || m.filter === null ? null : rowMask(m.filter, block, env)));
    const nameCodes = names?.codes;
    const pathItems = spec.valueColumn === PATH_ITEM ? pathItemsOf(block, names, (text) => idOf(valueIds, out.values, text)) : null;
    const valueCol = spec.valueColumn === null || pathItems ? null : block.dict(spec.valueColumn);
    const valueOf = valueCol ? valueCol.values.map((v) => (v === null ? -1 : idOf(valueIds, out.values, propertyText(v)))) : null;
    const nameOf = spec.names && names ? names.values.map((v) => idOf(nameIds, out.names, v as string)) : null;
    // The matchers an event's name can satisfy, per dictionary code, so that a row of another event is skipped
    // with one table read (most rows of a block are events no matcher names).
    let anyEvent = 0;
    const byCode = new Uint32Array((names?.values.length ?? 0) + 1);
    let filtered = 0;
    for (let m = 0; m < codes.length; m++) {
      if (codes[m] === -1) continue;
      if (codes[m] === 0) anyEvent |= 1 << m;
      else byCode[codes[m]!]! |= 1 << m;
      if (masks[m]) filtered |= 1 << m;
    }
    grow(out, out.n + n);
    // Locals for what the row loop reads and writes (the arrays stay the same within a block).
    const { from, to, allEvents } = spec;
    const pidOut = out.pid;
    const tsOut = out.ts;
    const maskOut = out.mask;
    const valueOut = out.value;
    const nameOut = out.name;
    const withValue = spec.valueColumn !== null;
    let k = out.n;
    for (let i = 0; i < n; i++) {
      let mask = nameCodes ? anyEvent | byCode[nameCodes[i]!]! : anyEvent;
      if (mask === 0 && !allEvents) continue;
      const t = ts[i]!;
      if (t < from || t > to) continue;
      if (global !== null && global[i] === 0) continue;
      const pid = persons[i]!;
      if (pid === 0) continue;
      // Then each candidate matcher's own filter.
      for (let bits = mask & filtered; bits !== 0; bits &= bits - 1) {
        const m = 31 - Math.clz32(bits & -bits);
        if (masks[m]![i] === 0) mask &= ~(1 << m);
      }
      if (mask === 0 && !allEvents) continue;
      pidOut[k] = pid;
      tsOut[k] = t;
      maskOut[k] = mask;
      // Without a value column or names, those columns stay unwritten: no event carries one, so their tables
      // stay empty and nothing reads them (groupByPerson leaves them out).
      if (pathItems) valueOut[k] = pathItems(i);
      else if (withValue) {
        const vc = valueCol ? valueCol.codes[i]! : 0;
        valueOut[k] = vc === 0 || valueOf === null ? -1 : valueOf[vc - 1]!;
      }
      if (nameOf !== null) nameOut[k] = nameCodes ? nameOf[nameCodes[i]! - 1]! : -1;
      else if (spec.names) nameOut[k] = -1;
      k++;
    }
    out.n = k;
    await slicer.pace();
  }
  forgetStale();
  collected.set(id, { events: out, at: Date.now() });
  const seen = new Uint32Array(bitmapWords(ctx.maxPersonId));
  for (let k = 0; k < out.n; k++) {
    const pid = out.pid[k]!;
    seen[pid >>> 5]! |= 1 << (pid & 31);
  }
  return seen;
};

export const PATH_ITEM = 'path_item';

/** Per row, the id of its path item text (through per-value tables: one text per distinct value). */
function pathItemsOf(block: BlockView, names: DictColumn | null, id: (text: string) => number): (row: number) => number {
  const urls = block.dict(`${EVENT_PROP}$current_url`);
  const screens = block.dict(`${EVENT_PROP}$screen_name`);
  const pageview = names ? names.values.indexOf('$pageview') + 1 : 0;
  const screen = names ? names.values.indexOf('$screen') + 1 : 0;
  const byName = names ? names.values.map((v) => id(String(v))) : [];
  const byUrl = new Map<number, number>();
  const byScreen = new Map<number, number>();
  return (row) => {
    const code = names ? names.codes[row]! : 0;
    if (code !== 0 && code === pageview) {
      const c = urls ? urls.codes[row]! : 0;
      let out = byUrl.get(c);
      if (out === undefined) byUrl.set(c, (out = id(rawItem('$pageview', c === 0 ? null : propertyText(urls!.values[c - 1]), null))));
      return out;
    }
    if (code !== 0 && code === screen) {
      const c = screens ? screens.codes[row]! : 0;
      let out = byScreen.get(c);
      if (out === undefined) byScreen.set(c, (out = id(rawItem('$screen', null, c === 0 ? null : propertyText(screens!.values[c - 1])))));
      return out;
    }
    return code === 0 ? -1 : byName[code - 1]!;
  };
}

function idOf(ids: Map<string, number>, list: string[], text: string): number {
  let id = ids.get(text);
  if (id === undefined) {
    id = list.push(text) - 1;
    ids.set(text, id);
  }
  return id;
}

function forgetStale(): void {
  const now = Date.now();
  for (const [id, c] of collected) if (now - c.at > FORGET_AFTER_MS) collected.delete(id);
}

/**
 * A person's events in time order, as the reducers read them: the first `n` entries of each array. The arrays are
 * scratch space reused for the next person, so a reducer copies what it keeps.
 */
export interface PersonEvents {
  pid: number;
  n: number;
  ts: Float64Array;
  mask: Uint32Array;
  /** Index into `values` per event (-1 = none). */
  value: Int32Array;
  values: readonly string[];
  name: Int32Array;
  names: readonly string[];
}

/** Persons handed to `each` between two looks at the clock. */
const PERSONS_PER_CLOCK_LOOK = 64;

/**
 * Collected events regrouped by person: person p's events are rows `starts[p]` to `starts[p + 1] - 1`, in time
 * order. `value`/`name` are null when no event carries one (funnels without a breakdown read neither).
 */
export interface PersonGroups {
  maxPid: number;
  starts: Uint32Array;
  ts: Float64Array;
  mask: Uint32Array;
  value: Int32Array | null;
  values: string[];
  name: Int32Array | null;
  names: string[];
  /** The most events one person has (the size of the reducers' scratch arrays). */
  most: number;
}

/**
 * Groups collected events by person with a counting sort on person ids (dense integers) that moves the events
 * themselves rather than an index to them: each person's rows end up side by side, so sorting them by time and
 * handing them to a reducer reads memory in order. (Following an index instead costs a cache miss per event and
 * per column: most of a funnel's time on millions of events.) A person's rows keep the order they were collected
 * in, which is mostly time order already (blocks are scanned oldest first), so the insertion sort is one pass.
 */
export function groupByPerson(e: Events): PersonGroups {
  let maxPid = 0;
  for (let i = 0; i < e.n; i++) if (e.pid[i]! > maxPid) maxPid = e.pid[i]!;
  const starts = new Uint32Array(maxPid + 2);
  for (let i = 0; i < e.n; i++) starts[e.pid[i]! + 1]!++;
  let most = 0;
  for (let p = 1; p < starts.length; p++) {
    if (starts[p]! > most) most = starts[p]!;
    starts[p]! += starts[p - 1]!;
  }
  const withValues = e.values.length > 0;
  const withNames = e.names.length > 0;
  const ts = new Float64Array(e.n);
  const mask = new Uint32Array(e.n);
  const value = withValues ? new Int32Array(e.n) : null;
  const name = withNames ? new Int32Array(e.n) : null;
  const fill = starts.slice(0, maxPid + 1);
  for (let i = 0; i < e.n; i++) {
    const k = fill[e.pid[i]!]!++;
    ts[k] = e.ts[i]!;
    mask[k] = e.mask[i]!;
    if (value !== null) value[k] = e.value[i]!;
    if (name !== null) name[k] = e.name[i]!;
  }
  for (let pid = 1; pid <= maxPid; pid++) sortRowsByTime(ts, mask, value, name, starts[pid]!, starts[pid + 1]!);
  return { maxPid, starts, ts, mask, value, values: e.values, name, names: e.names, most };
}

/**
 * Rows an insertion sort may move per row of the range before the range is sorted through its indexes instead:
 * the local engine's rows come nearly in time order (a person's rows from two shards interleave a little), where
 * insertion is one pass and a few moves; ClickHouse's funnel rows come in its storage order (not by time within a
 * day), where insertion would be quadratic in a person's events.
 */
const MOVES_PER_ROW = 4;

/**
 * Sorts rows [from, to) by time, moving every column; stable (ties keep the order the rows came in), one pass when
 * already in order. By insertion while that stays cheap; past MOVES_PER_ROW moves per row, the rest through the
 * indexes (a stable sort of the partly sorted range: ties still keep their order).
 */
function sortRowsByTime(ts: Float64Array, mask: Uint32Array, value: Int32Array | null, name: Int32Array | null, from: number, to: number): void {
  let movesLeft = MOVES_PER_ROW * (to - from) + 64;
  for (let k = from + 1; k < to; k++) {
    const t = ts[k]!;
    if (ts[k - 1]! <= t) continue;
    const m = mask[k]!;
    const v = value === null ? 0 : value[k]!;
    const nm = name === null ? 0 : name[k]!;
    let j = k - 1;
    while (j >= from && ts[j]! > t) {
      ts[j + 1] = ts[j]!;
      mask[j + 1] = mask[j]!;
      if (value !== null) value[j + 1] = value[j]!;
      if (name !== null) name[j + 1] = name[j]!;
      j--;
      movesLeft--;
    }
    ts[j + 1] = t;
    mask[j + 1] = m;
    if (value !== null) value[j + 1] = v;
    if (name !== null) name[j + 1] = nm;
    if (movesLeft < 0) {
      sortRowsThroughIndexes(ts, mask, value, name, from, to);
      return;
    }
  }
}

/** Array.prototype.sort is stable: equal times keep their rows' order, as the insertion sort keeps it. */
function sortRowsThroughIndexes(ts: Float64Array, mask: Uint32Array, value: Int32Array | null, name: Int32Array | null, from: number, to: number): void {
  const order = Array.from({ length: to - from }, (_, i) => from + i).sort((a, b) => ts[a]! - ts[b]!);
  const permute = <A extends Float64Array | Uint32Array | Int32Array>(column: A) => {
    const copy = column.slice(from, to);
    for (let i = 0; i < order.length; i++) column[from + i] = copy[order[i]! - from]!;
  };
  permute(ts);
  permute(mask);
  if (value !== null) permute(value);
  if (name !== null) permute(name);
}

/**
 * Calls `each` with every person's events (time order) whose person `want` accepts; yields while it runs. A
 * person's rows are copied into scratch arrays sized for the person with the most events (no allocation per person).
 */
export async function forEachPerson(g: PersonGroups, want: (pid: number) => boolean, each: (p: PersonEvents) => void): Promise<void> {
  const person: PersonEvents = {
    pid: 0, n: 0, ts: new Float64Array(g.most), mask: new Uint32Array(g.most), value: new Int32Array(g.most).fill(-1), values: g.values,
    name: new Int32Array(g.most).fill(-1), names: g.names,
  };
  const slicer = new Slicer();
  let handed = 0;
  for (let pid = 1; pid <= g.maxPid; pid++) {
    const from = g.starts[pid]!;
    const n = g.starts[pid + 1]! - from;
    if (n === 0 || !want(pid)) continue;
    for (let k = 0; k < n; k++) {
      person.ts[k] = g.ts[from + k]!;
      person.mask[k] = g.mask[from + k]!;
    }
    if (g.value !== null) for (let k = 0; k < n; k++) person.value[k] = g.value[from + k]!;
    if (g.name !== null) for (let k = 0; k < n; k++) person.name[k] = g.name[from + k]!;
    person.pid = pid;
    person.n = n;
    each(person);
    if (++handed % PERSONS_PER_CLOCK_LOOK === 0 && slicer.due()) await slicer.pace();
  }
}

/** Calls `each` with every member of a person bitmap up to `maxPid`, in order. */
function eachMember(set: Uint32Array, maxPid: number, each: (pid: number) => void): void {
  const words = Math.min(set.length, (maxPid >>> 5) + 1);
  for (let w = 0; w < words; w++) {
    for (let bits = set[w]!; bits !== 0; bits &= bits - 1) {
      const pid = w * 32 + (31 - Math.clz32(bits & -bits));
      if (pid > maxPid) return;
      each(pid);
    }
  }
}

/**
 * A table's ids re-indexed into another table (`list`, `ids`), each looked up once: -1 stays -1.
 */
function reindexer(from: readonly string[], ids: Map<string, number>, list: string[]): (id: number) => number {
  const mapped = new Int32Array(from.length).fill(-2);
  return (id) => {
    if (id < 0) return -1;
    let out = mapped[id]!;
    if (out === -2) out = mapped[id] = idOf(ids, list, from[id]!);
    return out;
  };
}

/** The events of the persons of `shared` that `keep` accepts, as a self-contained Events (texts re-indexed). */
function eventsOfPersons(g: PersonGroups, shared: Uint32Array, keep: (pid: number) => boolean): Events {
  let rows = 0;
  eachMember(shared, g.maxPid, (pid) => {
    if (keep(pid)) rows += g.starts[pid + 1]! - g.starts[pid]!;
  });
  const out = emptyEvents(Math.max(rows, 1));
  const valueOf = reindexer(g.values, new Map(), out.values);
  const nameOf = reindexer(g.names, new Map(), out.names);
  eachMember(shared, g.maxPid, (pid) => {
    if (!keep(pid)) return;
    for (let i = g.starts[pid]!, to = g.starts[pid + 1]!; i < to; i++) {
      const k = out.n++;
      out.pid[k] = pid;
      out.ts[k] = g.ts[i]!;
      out.mask[k] = g.mask[i]!;
      out.value[k] = g.value === null ? -1 : valueOf(g.value[i]!);
      out.name[k] = g.name === null ? -1 : nameOf(g.name[i]!);
    }
  });
  return out;
}

/** Several workers' events of the shared persons as one Events. */
export function concatEvents(parts: readonly Events[]): Events {
  const out = emptyEvents(parts.reduce((a, p) => a + p.n, 0) || 1);
  const valueIds = new Map<string, number>();
  const nameIds = new Map<string, number>();
  for (const p of parts) {
    const valueOf = reindexer(p.values, valueIds, out.values);
    const nameOf = reindexer(p.names, nameIds, out.names);
    for (let i = 0; i < p.n; i++) {
      const k = out.n++;
      out.pid[k] = p.pid[i]!;
      out.ts[k] = p.ts[i]!;
      out.mask[k] = p.mask[i]!;
      out.value[k] = valueOf(p.value[i]!);
      out.name[k] = nameOf(p.name[i]!);
    }
  }
  return out;
}

/** A reducer: folds persons' events into a partial result, merges partials. */
export interface SequenceReducer<R> {
  kind: string;
  empty(): R;
  add(into: R, person: PersonEvents): void;
  merge(into: R, other: R): void;
}

/** Reducers by kind, registered by the analyses (funnels, paths, correlation) with their parameters. */
export type ReducerFactory = (params: unknown) => SequenceReducer<unknown>;
const reducers = new Map<string, ReducerFactory>();

export function registerReducer(kind: string, factory: ReducerFactory): void {
  reducers.set(kind, factory);
}

function reducerOf(kind: string, params: unknown): SequenceReducer<unknown> {
  const factory = reducers.get(kind);
  if (!factory) throw new Error(`unknown sequence reducer ${kind}`);
  return factory(params);
}

interface TakeMessage extends PeerMessage {
  id: string;
  shared: Uint32Array;
  reducer: { kind: string; params: unknown };
}

/** Which worker reduces a person spread over several. */
const ownerOf = (pid: number, workers: number) => pid % workers;

/**
 * Round 2 on one worker: reduces the persons only it has, keeps the events of the shared persons it owns and
 * answers, per worker, the events of the shared persons that worker owns (null for itself).
 */
export const takeHandler: PeerHandler = async (rt, msg) => {
  const { id, shared, reducer } = msg as TakeMessage;
  const entry = collected.get(id);
  if (!entry) throw new Error(`no collected events for query ${id}`);
  const r = reducerOf(reducer.kind, reducer.params);
  const partial = r.empty();
  const groups = groupByPerson(entry.events);
  await forEachPerson(groups, (pid) => !hasMember(shared, pid), (p) => r.add(partial, p));
  const workers = rt.peers.count;
  const shipped = Array.from({ length: workers }, (_, w) => (w === rt.index ? null : eventsOfPersons(groups, shared, (pid) => ownerOf(pid, workers) === w)));
  collected.set(id, { events: eventsOfPersons(groups, shared, (pid) => ownerOf(pid, workers) === rt.index), at: Date.now() });
  return { partial, shipped };
};

interface FinishMessage extends PeerMessage {
  id: string;
  received: Events[];
  reducer: { kind: string; params: unknown };
}

/** Round 3 on one worker: reduces the shared persons it owns, from its own events of them and those shipped to it. */
export const finishHandler: PeerHandler = async (_rt, msg) => {
  const { id, received, reducer } = msg as FinishMessage;
  const entry = collected.get(id);
  collected.delete(id);
  if (!entry) throw new Error(`no kept events for query ${id}`);
  const r = reducerOf(reducer.kind, reducer.params);
  const partial = r.empty();
  const events = received.length === 0 ? entry.events : concatEvents([entry.events, ...received]);
  await forEachPerson(groupByPerson(events), () => true, (p) => r.add(partial, p));
  return partial;
};

let nextQuery = 0;

/** Runs a per-person analysis over every shard: the three rounds above, the partials merged here. */
export async function reduceEverywhere<R>(rt: WorkerRuntime, spec: SequenceSpec, ctx: ScanContext, reducer: { kind: string; params: unknown }): Promise<R> {
  const id = `${rt.index}.${process.pid}.${nextQuery++}.${Date.now()}`;
  const seen = await rt.peers.all<Uint32Array>({ kind: SEQUENCE_COLLECT, id, spec, ctx } satisfies CollectMessage);
  // Persons seen by two workers or more.
  const words = bitmapWords(ctx.maxPersonId);
  const once = new Uint32Array(words);
  const shared = new Uint32Array(words);
  for (const s of seen) {
    for (let w = 0; w < words && w < s.length; w++) {
      shared[w]! |= once[w]! & s[w]!;
      once[w]! |= s[w]!;
    }
  }
  const parts = await rt.peers.all<{ partial: R; shipped: (Events | null)[] }>({ kind: SEQUENCE_TAKE, id, shared, reducer } satisfies TakeMessage);
  const finals = await Promise.all(parts.map((_, w) => {
    const received = parts.flatMap((p) => (p.shipped[w] && p.shipped[w]!.n > 0 ? [p.shipped[w]!] : []));
    return rt.peers.call<R>(w, { kind: SEQUENCE_FINISH, id, received, reducer } satisfies FinishMessage);
  }));
  const r = reducerOf(reducer.kind, reducer.params) as SequenceReducer<R>;
  const result = r.empty();
  for (const p of parts) r.merge(result, p.partial);
  for (const f of finals) r.merge(result, f);
  return result;
}
