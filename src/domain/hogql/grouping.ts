/**
 * GROUP BY over batches: each batch's selected rows get a local group number (found through the key columns'
 * codes where they are coded, so a key is hashed once per distinct value of a block, not once per row), local
 * groups are mapped once to the table's groups, and each aggregate adds the rows to its group's state with a loop
 * specialised for the common shapes (`count()`, `uniq(person_id)`, sums of a property). The same table runs on
 * every shard (partial states) and on the coordinating worker (in-memory relations).
 */
import { hogqlError } from './errors.js';
import { addPerson, mergeState, AGGREGATES, type AggDef, type AggState } from './aggregate-functions.js';
import { type Bound } from './bind.js';
import { mask, vec, type Batch, type Vec, type VecCache } from './vectors.js';
import { compareValues, keyText, numberOf, type Type, type Value, type ValueContext } from './values.js';

export interface BoundAgg {
  name: string;
  def: AggDef;
  args: Bound[];
  params: Value[];
  cond: Bound | null;
}

export interface Group {
  key: Value[];
  states: AggState[];
}

/** Groups by key text (plain data: a shard's table travels to the coordinator as it is). */
export type Groups = Map<string, Group>;

export class GroupTable {
  readonly groups: Groups = new Map();

  constructor(
    private readonly keys: Bound[],
    private readonly aggs: BoundAgg[],
    /** Words of a person bitmap (highest person id / 32 + 1). */
    private readonly words: number,
    private readonly maxGroups: number,
  ) {}

  add(batch: Batch, rows: Int32Array, count: number, ctx: ValueContext, cache: VecCache): void {
    if (count === 0) return;
    const { ids, keys } = localGroups(this.keys.map((k) => vec(k, batch, ctx, cache)), rows, count, batch);
    const groups = keys.map((key) => this.groupOf(key));
    this.aggs.forEach((agg, j) => addRows(agg, j, batch, rows, count, ids, groups, ctx, cache));
  }

  private groupOf(key: Value[]): Group {
    const text = key.length === 1 ? keyText(key[0]!) : key.map(keyText).join('\u0001');
    let g = this.groups.get(text);
    if (!g) {
      if (this.groups.size >= this.maxGroups) hogqlError(`The query makes more than ${this.maxGroups.toLocaleString('en-US')} groups; group by fewer values or add conditions.`);
      g = { key, states: this.aggs.map((a) => a.def.init(a.args.map((b) => b.type), this.words)) };
      this.groups.set(text, g);
    }
    return g;
  }
}

/** Merges a table of partial states into another (the same keys and aggregates). */
export function mergeGroups(into: Groups, from: Groups, defs: readonly AggDef[]): void {
  for (const [text, g] of from) {
    const mine = into.get(text);
    if (!mine) into.set(text, g);
    else g.states.forEach((s, j) => mergeState(mine.states[j]!, s, defs[j]!));
  }
}

/** The local group of every selected row, and each local group's key values. */
function localGroups(keyVecs: Vec[], rows: Int32Array, count: number, batch: Batch): { ids: Int32Array; keys: Value[][] } {
  if (keyVecs.length === 0) return { ids: batch.scratch(count).fill(0), keys: [[]] };
  const parts = keyVecs.map((v) => localIds(v, rows, count, batch));
  if (parts.length === 1) return { ids: parts[0]!.ids, keys: parts[0]!.values.map((v) => [v]) };
  const ids = batch.scratch(count);
  const keys: Value[][] = [];
  let product = 1;
  for (const p of parts) product *= Math.max(1, p.values.length);
  // A row's combination of key numbers, as one number while they fit in one, else as text.
  const combination = product < 2 ** 31
    ? (k: number): number | string => {
      let c = 0;
      for (const p of parts) c = c * p.values.length + p.ids[k]!;
      return c;
    }
    : (k: number): number | string => parts.map((p) => p.ids[k]).join(',');
  const seen = new Map<number | string, number>();
  for (let k = 0; k < count; k++) {
    const c = combination(k);
    let id = seen.get(c);
    if (id === undefined) {
      id = keys.push(parts.map((p) => p.values[p.ids[k]!]!)) - 1;
      seen.set(c, id);
    }
    ids[k] = id;
  }
  return { ids, keys };
}

/** Numbers the distinct values of one key over the selected rows. */
function localIds(v: Vec, rows: Int32Array, count: number, batch: Batch): { ids: Int32Array; values: Value[] } {
  const ids = batch.scratch(count);
  const values: Value[] = [];
  const byText = new Map<string, number>();
  const intern = (x: Value): number => {
    const t = keyText(x);
    let id = byText.get(t);
    if (id === undefined) {
      id = values.push(x) - 1;
      byText.set(t, id);
    }
    return id;
  };
  if (v.constant) {
    ids.fill(intern(v.at(0)));
    return { ids, values };
  }
  if (v.codes) {
    const map = new Int32Array(v.values!.length).fill(-1);
    const codes = v.codes;
    for (let k = 0; k < count; k++) {
      const c = codes[rows[k]!]!;
      let id = map[c]!;
      if (id < 0) id = map[c] = intern(v.values![c]!);
      ids[k] = id;
    }
    return { ids, values };
  }
  const numeric = v.u32 ?? v.f64;
  if (numeric) {
    const byNumber = new Map<number, number>();
    const nullOf = v.u32 ? 0 : NaN;
    for (let k = 0; k < count; k++) {
      const x = numeric[rows[k]!]!;
      let id = byNumber.get(x);
      if (id === undefined) {
        id = intern(x === nullOf || x !== x ? null : x);
        byNumber.set(x, id);
      }
      ids[k] = id;
    }
    return { ids, values };
  }
  for (let k = 0; k < count; k++) ids[k] = intern(v.at(rows[k]!));
  return { ids, values };
}

/** Adds the selected rows to aggregate `j` of their groups. */
function addRows(agg: BoundAgg, j: number, batch: Batch, rows: Int32Array, count: number, ids: Int32Array, groups: Group[], ctx: ValueContext, cache: VecCache): void {
  const cond = agg.cond ? mask(agg.cond, batch, ctx, cache) : null;
  const args = agg.args.map((a) => vec(a, batch, ctx, cache));
  const types: Type[] = agg.args.map((a) => a.type);
  const states = groups.map((g) => g.states[j]!);
  if (agg.def === AGGREGATES.count && args.length === 0) {
    const counts = new Float64Array(groups.length);
    for (let k = 0; k < count; k++) if (cond === null || cond[rows[k]!] === 1) counts[ids[k]!]!++;
    counts.forEach((c, g) => ((states[g] as { n: number }).n += c));
    return;
  }
  if (agg.def === AGGREGATES.uniq && args.length === 1 && args[0]!.u32) {
    const persons = args[0]!.u32;
    const sets = states as Extract<AggState, { k: 'persons' }>[];
    // Groups already large hold a bitmap: set the bit in place; the others go through addPerson (which may
    // turn their set into a bitmap).
    const bits = sets.map((s) => s.bits);
    for (let k = 0; k < count; k++) {
      const row = rows[k]!;
      const pid = persons[row]!;
      if (pid === 0 || (cond !== null && cond[row] === 0)) continue;
      const g = ids[k]!;
      const words = bits[g];
      if (words && pid >>> 5 < words.length) words[pid >>> 5]! |= 1 << (pid & 31);
      else {
        addPerson(sets[g]!, pid);
        bits[g] = sets[g]!.bits;
      }
    }
    return;
  }
  if (agg.def === AGGREGATES.uniq && args.length === 1 && args[0]!.codes) {
    const codes = args[0]!.codes;
    const texts = args[0]!.values!.map((x) => (x === null ? null : keyText(x)));
    for (let k = 0; k < count; k++) {
      const row = rows[k]!;
      const t = texts[codes[row]!]!;
      if (t !== null && (cond === null || cond[row] === 1)) (states[ids[k]!] as { keys: Set<string> }).keys.add(t);
    }
    return;
  }
  if ((agg.def === AGGREGATES.sum || agg.def === AGGREGATES.avg) && args.length === 1 && (args[0]!.codes || args[0]!.f64)) {
    const a = args[0]!;
    const numbers = a.codes ? Float64Array.from(a.values!, (x) => numberOf(x, types[0]!) ?? NaN) : null;
    for (let k = 0; k < count; k++) {
      const row = rows[k]!;
      if (cond !== null && cond[row] === 0) continue;
      const x = numbers ? numbers[a.codes![row]!]! : a.f64![row]!;
      if (x !== x) continue;
      const s = states[ids[k]!] as { sum: number; n: number };
      s.sum += x;
      s.n++;
    }
    return;
  }
  const values = new Array<Value>(args.length);
  for (let k = 0; k < count; k++) {
    const row = rows[k]!;
    if (cond !== null && cond[row] === 0) continue;
    for (let i = 0; i < args.length; i++) values[i] = args[i]!.at(row);
    agg.def.add(states[ids[k]!]!, values, types);
  }
}

export interface SortKey {
  desc: boolean;
  nullsFirst: boolean;
}

/** Order of two rows' sort keys: nulls last unless asked first, in both directions (ClickHouse's default). */
export function compareKeys(a: readonly Value[], b: readonly Value[], order: readonly SortKey[]): number {
  for (let i = 0; i < order.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === null || y === null) {
      if (x === y) continue;
      const nullLast = x === null ? 1 : -1;
      return order[i]!.nullsFirst ? -nullLast : nullLast;
    }
    const c = compareValues(x, y);
    if (c !== 0) return order[i]!.desc ? -c : c;
  }
  return 0;
}

/**
 * The first `limit` rows in sort order of everything offered, keeping memory bounded: candidates are kept with
 * their sort keys and a reference to where they came from (their columns are computed only for the winners), and
 * cut back to `limit` whenever twice as many have gathered. Without a limit it keeps everything, up to `maxRows`.
 */
export class TopRows<Ref> {
  private rows: { keys: Value[]; ref: Ref }[] = [];
  /** Once `limit` rows are known: the worst of them, which a new row must beat. */
  private threshold: Value[] | null = null;

  constructor(
    private readonly order: readonly SortKey[],
    readonly limit: number | null,
    private readonly maxRows: number,
  ) {}

  get full(): boolean {
    return this.limit !== null && this.order.length === 0 && this.rows.length >= this.limit;
  }

  /** The current worst kept keys once there are `limit` of them. */
  get bar(): readonly Value[] | null {
    return this.threshold;
  }

  offer(keys: Value[], ref: Ref): void {
    if (this.threshold !== null && compareKeys(keys, this.threshold, this.order) >= 0) return;
    if (this.full) return;
    this.rows.push({ keys, ref });
    if (this.limit === null) {
      if (this.rows.length > this.maxRows) hogqlError(`The query reads more than ${this.maxRows.toLocaleString('en-US')} rows; add a LIMIT or conditions.`);
      return;
    }
    if (this.order.length > 0 && this.rows.length >= 2 * this.limit + 1024) this.cut();
  }

  private cut(): void {
    this.rows.sort((a, b) => compareKeys(a.keys, b.keys, this.order));
    this.rows.length = Math.min(this.rows.length, this.limit!);
    if (this.rows.length === this.limit) this.threshold = this.rows[this.rows.length - 1]!.keys;
  }

  /** The kept rows in order. */
  result(): { keys: Value[]; ref: Ref }[] {
    if (this.order.length > 0) {
      this.rows.sort((a, b) => compareKeys(a.keys, b.keys, this.order));
      if (this.limit !== null) this.rows.length = Math.min(this.rows.length, this.limit);
    }
    return this.rows;
  }
}
