/**
 * Aggregate functions of Quill's HogQL. Their states are mergeable and plain data (they travel from every shard to
 * the coordinating worker, which merges them): counts and sums add, minimums compare, `uniq` keeps the distinct
 * values (exact, where ClickHouse's `uniq` estimates), person sets become bitmaps over person ids once large
 * (OR merges them, so a person seen on two shards counts once), quantiles keep their values.
 *
 * The `-If` combinator of ClickHouse (`countIf(cond)`, `sumIf(x, cond)`…) is a condition on the rows an aggregate
 * sees; `count(DISTINCT x)` is `uniqExact(x)`.
 */
import { hogqlError, unsupported } from './errors.js';
import { compareValues, keyText, numberOf, type Type, type Value } from './values.js';

export type AggState =
  | { k: 'count'; n: number }
  | { k: 'sum'; sum: number; n: number }
  | { k: 'pick'; v: Value; set: boolean }
  | { k: 'arg'; v: Value; by: Value; set: boolean }
  | { k: 'set'; keys: Set<string> }
  | { k: 'persons'; ids: Set<number> | null; bits: Uint32Array | null; words: number }
  | { k: 'values'; values: number[] }
  | { k: 'list'; values: Value[] }
  | { k: 'uniqList'; values: Map<string, Value> };

export interface AggDef {
  args: [number, number];
  params: [number, number];
  type(args: Type[]): Type;
  /** `words`: the size of a person bitmap (the highest person id / 32 + 1). */
  init(args: Type[], words: number): AggState;
  /** Adds one row's argument values. */
  add(s: AggState, v: Value[], types: Type[]): void;
  final(s: AggState, params: Value[]): Value;
}

/** Person sets stay small sets until this many, then become bitmaps sized by the highest person id. */
const PERSON_SET_LIMIT = 2048;

export function addPerson(s: Extract<AggState, { k: 'persons' }>, id: number): void {
  const words = s.words;
  if (s.bits !== null) {
    if (id >>> 5 < s.bits.length) s.bits[id >>> 5]! |= 1 << (id & 31);
    else s.ids!.add(id);
    return;
  }
  s.ids!.add(id);
  if (s.ids!.size > PERSON_SET_LIMIT && words > 0) {
    s.bits = new Uint32Array(words);
    const rest = new Set<number>();
    for (const p of s.ids!) {
      if (p >>> 5 < words) s.bits[p >>> 5]! |= 1 << (p & 31);
      else rest.add(p);
    }
    s.ids = rest;
  }
}

function personCount(s: Extract<AggState, { k: 'persons' }>): number {
  let n = s.ids?.size ?? 0;
  if (s.bits) {
    for (let i = 0; i < s.bits.length; i++) {
      let v = s.bits[i]!;
      v -= (v >>> 1) & 0x55555555;
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
  }
  return n;
}

/** Linear-interpolation quantile (ClickHouse's `quantile` and DuckDB's `quantile_cont`), null for no values. */
export function quantileOf(values: readonly number[], level: number): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const pos = level * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

const num = (v: Value, t: Type) => numberOf(v, t);

const count: AggDef = {
  args: [0, 1], params: [0, 0], type: () => 'Int', init: () => ({ k: 'count', n: 0 }),
  add: (s, v) => {
    if (v.length === 0 || v[0] !== null) (s as { n: number }).n++;
  },
  final: (s) => (s as { n: number }).n,
};

const uniq: AggDef = {
  args: [1, 64], params: [0, 0], type: () => 'Int',
  init: (args, words) => (args.length === 1 && args[0] === 'Person' ? { k: 'persons', ids: new Set(), bits: null, words } : { k: 'set', keys: new Set() }),
  add: (s, v) => {
    if (s.k === 'persons') {
      if (v[0] !== null) addPerson(s, v[0] as number);
      return;
    }
    if (v.some((x) => x === null)) return;
    (s as { keys: Set<string> }).keys.add(v.length === 1 ? keyText(v[0]!) : v.map(keyText).join('\u0000'));
  },
  final: (s) => (s.k === 'persons' ? personCount(s) : (s as { keys: Set<string> }).keys.size),
};

const sum: AggDef = {
  args: [1, 1], params: [0, 0], type: (t) => (t[0] === 'Int' ? 'Int' : 'Float'), init: () => ({ k: 'sum', sum: 0, n: 0 }),
  add: (s, v, t) => {
    const x = num(v[0]!, t[0]!);
    if (x === null) return;
    const st = s as { sum: number; n: number };
    st.sum += x;
    st.n++;
  },
  final: (s) => ((s as { n: number }).n === 0 ? null : (s as { sum: number }).sum),
};

const avg: AggDef = { ...sum, type: () => 'Float', final: (s) => { const st = s as { sum: number; n: number }; return st.n === 0 ? null : st.sum / st.n; } };

const extreme = (sign: number): AggDef => ({
  args: [1, 1], params: [0, 0], type: (t) => t[0]!, init: () => ({ k: 'pick', v: null, set: false }),
  add: (s, v) => {
    const x = v[0]!;
    if (x === null) return;
    const st = s as { v: Value; set: boolean };
    if (!st.set || sign * compareValues(x, st.v!) > 0) {
      st.v = x;
      st.set = true;
    }
  },
  final: (s) => (s as { v: Value }).v,
});

const any: AggDef = {
  args: [1, 1], params: [0, 0], type: (t) => t[0]!, init: () => ({ k: 'pick', v: null, set: false }),
  add: (s, v) => {
    const st = s as { v: Value; set: boolean };
    if (!st.set && v[0] !== null) {
      st.v = v[0]!;
      st.set = true;
    }
  },
  final: (s) => (s as { v: Value }).v,
};

const argExtreme = (sign: number): AggDef => ({
  args: [2, 2], params: [0, 0], type: (t) => t[0]!, init: () => ({ k: 'arg', v: null, by: null, set: false }),
  add: (s, v) => {
    const by = v[1]!;
    if (by === null) return;
    const st = s as { v: Value; by: Value; set: boolean };
    if (!st.set || sign * compareValues(by, st.by!) > 0) {
      st.v = v[0]!;
      st.by = by;
      st.set = true;
    }
  },
  final: (s) => (s as { v: Value }).v,
});

const quantile: AggDef = {
  args: [1, 1], params: [0, 1], type: () => 'Float', init: () => ({ k: 'values', values: [] }),
  add: (s, v, t) => {
    const x = num(v[0]!, t[0]!);
    if (x !== null && !Number.isNaN(x)) (s as { values: number[] }).values.push(x);
  },
  final: (s, params) => {
    const level = params.length === 0 ? 0.5 : Number(params[0]);
    if (!(level >= 0 && level <= 1)) hogqlError(`A quantile level must be between 0 and 1 (got ${String(params[0])}).`);
    return quantileOf((s as { values: number[] }).values, level);
  },
};

const groupArray: AggDef = {
  args: [1, 1], params: [0, 0], type: () => 'Array', init: () => ({ k: 'list', values: [] }),
  add: (s, v) => {
    if (v[0] !== null) (s as { values: Value[] }).values.push(v[0]!);
  },
  final: (s) => (s as { values: Value[] }).values,
};

const groupUniqArray: AggDef = {
  args: [1, 1], params: [0, 0], type: () => 'Array', init: () => ({ k: 'uniqList', values: new Map() }),
  add: (s, v) => {
    if (v[0] !== null) (s as { values: Map<string, Value> }).values.set(keyText(v[0]!), v[0]!);
  },
  final: (s) => [...(s as { values: Map<string, Value> }).values.values()],
};

export const AGGREGATES: Record<string, AggDef> = {
  count,
  uniq,
  uniqExact: uniq,
  sum,
  avg,
  min: extreme(-1),
  max: extreme(1),
  any,
  argMin: argExtreme(-1),
  argMax: argExtreme(1),
  quantile,
  median: quantile,
  groupArray,
  groupUniqArray,
};

/** Merges `b` into `a` (states of the same aggregate). */
export function mergeState(a: AggState, b: AggState, def: AggDef): void {
  switch (a.k) {
    case 'count':
      a.n += (b as typeof a).n;
      return;
    case 'sum':
      a.sum += (b as typeof a).sum;
      a.n += (b as typeof a).n;
      return;
    case 'pick':
    case 'arg': {
      const other = b as { v: Value; by?: Value; set: boolean };
      if (!other.set) return;
      if (!a.set) {
        Object.assign(a, other);
        return;
      }
      // Replay b's pick through the definition: it keeps whichever wins.
      def.add(a, a.k === 'arg' ? [other.v, other.by!] : [other.v], []);
      return;
    }
    case 'set':
      for (const key of (b as typeof a).keys) a.keys.add(key);
      return;
    case 'persons': {
      const other = b as typeof a;
      if (other.bits) {
        if (!a.bits) {
          a.bits = other.bits.slice();
          a.words = Math.max(a.words, a.bits.length);
          const ids = a.ids ?? new Set<number>();
          a.ids = new Set();
          for (const id of ids) addPerson(a, id);
        } else {
          const n = Math.min(a.bits.length, other.bits.length);
          for (let i = 0; i < n; i++) a.bits[i]! |= other.bits[i]!;
        }
      }
      for (const id of other.ids ?? []) addPerson(a, id);
      return;
    }
    case 'values':
      for (const v of (b as typeof a).values) a.values.push(v);
      return;
    case 'list':
      for (const v of (b as typeof a).values) a.values.push(v);
      return;
    case 'uniqList':
      for (const [k, v] of (b as typeof a).values) a.values.set(k, v);
  }
}

/** An aggregate call as written: its definition, whether it has an `-If` condition as last argument. */
export interface AggregateName {
  name: string;
  def: AggDef;
  conditional: boolean;
}

const LOWER = new Map<string, string>(Object.keys(AGGREGATES).map((k) => [k.toLowerCase(), k]));

/** The aggregate a function name denotes (`countIf` is count with a condition), or undefined for a scalar. */
export function aggregateOf(name: string, distinct: boolean): AggregateName | undefined {
  const lower = name.toLowerCase();
  let base = LOWER.get(lower);
  let conditional = false;
  if (!base && lower.endsWith('if')) {
    base = LOWER.get(lower.slice(0, -2));
    conditional = base !== undefined;
  }
  if (!base) {
    if (/^(quantiles|quantileexact|quantiletdigest|quantiletiming|topk|stddev|var|corr|covar|summap|histogram|windowfunnel|retention|sequencematch|sequencecount|anyheavy|uniqcombined|uniqhll12|uniqtheta|grouparrayinsertat|argmaxif|argminif)/.test(lower)) {
      unsupported(`The aggregate function ${name}()`);
    }
    return undefined;
  }
  if (distinct) {
    if (base !== 'count') unsupported(`${name}(DISTINCT …)`, 'Only count(DISTINCT …) is supported.');
    return { name: 'uniqExact', def: uniq, conditional };
  }
  return { name: base, def: AGGREGATES[base]!, conditional };
}
