/**
 * Turning merged partial states into a trend series' numbers (analytics.md §1.2), and the point-wise
 * post-processing of §1.2: rolling active users, formulas, smoothing, cumulative displays.
 */
import { popcount, quantile, unionOf, type BucketStates } from './aggregates.js';
import { invalidInput } from './errors.js';
import { QUANTILES, type MathKind } from './query.js';

/**
 * The value of every output bucket. `windows[k]` lists the state buckets that output bucket k reads: itself for
 * most maths, the buckets of the trailing 7/30 days for weekly/monthly active users.
 */
export function seriesValues(states: BucketStates | undefined, math: MathKind, windows: readonly (readonly number[])[], cumulative: boolean): number[] {
  const n = windows.length;
  if (!states) return new Array<number>(n).fill(0);
  switch (states.kind) {
    case 'count': {
      const out = windows.map((w) => w.reduce((sum, b) => sum + states.counts[b]!, 0));
      return cumulative ? runningSum(out) : out;
    }
    case 'persons': {
      if (cumulative) {
        // "Distinct actors so far": each actor counted in the first bucket they appear in, then summed up.
        let seen: Uint32Array | null = null;
        return windows.map((w) => {
          seen = unionOf([seen, ...w.map((b) => states.sets[b]!)]);
          return popcount(seen);
        });
      }
      return windows.map((w) => popcount(w.length === 1 ? states.sets[w[0]!]! : unionOf(w.map((b) => states.sets[b]!))));
    }
    case 'distinct': {
      const out = windows.map((w) => {
        if (w.length === 1) return states.sets[w[0]!]!.size;
        const all = new Set<string>();
        for (const b of w) for (const v of states.sets[b]!) all.add(v);
        return all.size;
      });
      return cumulative ? runningSum(out) : out;
    }
    case 'numeric': {
      const s = states.state;
      const out = windows.map((w) => {
        let sum = 0;
        let count = 0;
        let min = Infinity;
        let max = -Infinity;
        const values: number[] = [];
        for (const b of w) {
          sum += s.sum[b]!;
          count += s.count[b]!;
          min = Math.min(min, s.min[b]!);
          max = Math.max(max, s.max[b]!);
          if (s.values) for (const v of s.values[b]!) values.push(v);
        }
        if (count === 0) return 0;
        switch (math) {
          case 'sum':
            return sum;
          case 'avg':
            return sum / count;
          case 'min':
            return min;
          case 'max':
            return max;
          default:
            return quantile(values, QUANTILES[math] ?? 0.5);
        }
      });
      return cumulative ? runningSum(out) : out;
    }
    case 'actor_counts': {
      const out = windows.map((w) => {
        const perActor = new Map<number, number>();
        for (const b of w) for (const [actor, c] of states.maps[b]!) perActor.set(actor, (perActor.get(actor) ?? 0) + c);
        const counts = [...perActor.values()];
        if (counts.length === 0) return 0;
        if (math === 'avg_count_per_actor') return counts.reduce((a, b) => a + b, 0) / counts.length;
        if (math === 'min_count_per_actor') return Math.min(...counts);
        if (math === 'max_count_per_actor') return Math.max(...counts);
        return quantile(counts, QUANTILES[math] ?? 0.5);
      });
      return cumulative ? runningSum(out) : out;
    }
    case 'person_min':
    case 'persons_and_min':
      // Not a trend measure (retention and lifecycle read it directly).
      return new Array<number>(n).fill(0);
  }
}

export function runningSum(values: readonly number[]): number[] {
  let total = 0;
  return values.map((v) => (total += v));
}

/** `smoothing_intervals=N`: each point the floored average of itself and the N-1 points before it. */
export function smooth(values: readonly number[], intervals: number): number[] {
  if (intervals <= 1) return [...values];
  return values.map((_, i) => {
    const from = Math.max(0, i - intervals + 1);
    let sum = 0;
    for (let j = from; j <= i; j++) sum += values[j]!;
    return Math.floor(sum / (i - from + 1));
  });
}

type Formula = { num: number } | { series: number } | { op: string; args: Formula[] };

/**
 * The deepest nesting a formula may have, in parentheses, `^`, unary minus and levels of its tree (`A+B+C` is two
 * levels over its letters), as HogQL's MAX_NESTING (src/domain/hogql/parser.ts, which says why 256): the parser
 * and applyFormula recurse once per level, and a formula is a string that no JSON depth bound reaches.
 */
const MAX_FORMULA_NESTING = 256;
/** The most tokens a formula may have: real ones name a few of at most 26 series; this bounds the work per request. */
const MAX_FORMULA_TOKENS = 10_000;

const FORMULA_TOKEN = /\d+(?:\.\d+)?|[A-Za-z]|[-+*/^()]/g;

function formulaTooDeep(): never {
  return invalidInput('formula', `The formula is nested too deeply (more than ${MAX_FORMULA_NESTING} levels).`);
}

/** True when the tree has more than `limit` levels, measured without recursion. */
function formulaDeeperThan(root: Formula, limit: number): boolean {
  const nodes = [root];
  const depths = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if ('args' in node) {
      for (const arg of node.args) {
        nodes.push(arg);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Parses a formula such as `(A + B) / C` (letters name series by position: A = the first). Refuses letters
 * beyond `seriesCount`. Characters that are no token (spaces) are skipped. Tokens are read as the parser needs
 * them, so a refused formula costs no more than its part before the refusal.
 */
export function parseFormula(text: string, seriesCount: number): Formula {
  const pattern = new RegExp(FORMULA_TOKEN);
  let read = 0;
  let ended = false;
  const scan = (): string | undefined => {
    if (ended) return undefined;
    const m = pattern.exec(text);
    if (m === null) {
      ended = true;
      return undefined;
    }
    if (++read > MAX_FORMULA_TOKENS) invalidInput('formula', `The formula is too long (more than ${MAX_FORMULA_TOKENS.toLocaleString('en-US')} tokens).`);
    return m[0];
  };
  let ahead = scan();
  const peek = () => ahead;
  const next = () => {
    const t = ahead;
    ahead = scan();
    return t;
  };
  // Recursive productions entered and not left: refused past the limit before the stack can run out.
  let depth = 0;
  const nested = <T>(parse: () => T): T => {
    if (++depth > MAX_FORMULA_NESTING) formulaTooDeep();
    const out = parse();
    depth--;
    return out;
  };
  // A chain `A+B+…` is read in a loop but is one more tree level per operator: refused as it grows.
  const expr = (): Formula => {
    let left = term();
    for (let chain = 1; peek() === '+' || peek() === '-'; chain++) {
      if (chain >= MAX_FORMULA_NESTING) formulaTooDeep();
      left = { op: next()!, args: [left, term()] };
    }
    return left;
  };
  const term = (): Formula => {
    let left = power();
    for (let chain = 1; peek() === '*' || peek() === '/'; chain++) {
      if (chain >= MAX_FORMULA_NESTING) formulaTooDeep();
      left = { op: next()!, args: [left, power()] };
    }
    return left;
  };
  const power = (): Formula => {
    const base = unary();
    if (peek() === '^') {
      next();
      return { op: '^', args: [base, nested(power)] };
    }
    return base;
  };
  const unary = (): Formula => {
    if (peek() === '-') {
      next();
      return { op: 'neg', args: [nested(unary)] };
    }
    const t = next();
    if (t === undefined) return invalidInput('formula', 'The formula ends too early.');
    if (t === '(') {
      const inner = nested(expr);
      if (next() !== ')') invalidInput('formula', 'The formula has an unclosed parenthesis.');
      return inner;
    }
    if (/^\d/.test(t)) return { num: Number(t) };
    if (/^[A-Za-z]$/.test(t)) {
      const index = t.toUpperCase().charCodeAt(0) - 65;
      if (index >= seriesCount) invalidInput('formula', `The formula names series ${t.toUpperCase()}, but there are only ${seriesCount}.`);
      return { series: index };
    }
    return invalidInput('formula', `Unexpected "${t}" in the formula.`);
  };
  const tree = expr();
  if (ahead !== undefined) invalidInput('formula', `Unexpected "${ahead}" in the formula.`);
  // Chains inside parentheses inside chains add up: the finished tree is measured too.
  if (formulaDeeperThan(tree, MAX_FORMULA_NESTING)) formulaTooDeep();
  return tree;
}

/** Evaluates a formula point by point; a division by zero gives 0 (PostHog's legacy answer). */
export function applyFormula(formula: Formula, series: readonly (readonly number[])[], length: number): number[] {
  const at = (f: Formula, i: number): number => {
    if ('num' in f) return f.num;
    if ('series' in f) return series[f.series]?.[i] ?? 0;
    const [a, b] = f.args;
    const x = at(a!, i);
    switch (f.op) {
      case 'neg':
        return -x;
      case '+':
        return x + at(b!, i);
      case '-':
        return x - at(b!, i);
      case '*':
        return x * at(b!, i);
      case '/': {
        const y = at(b!, i);
        return y === 0 ? 0 : x / y;
      }
      default:
        return x ** at(b!, i);
    }
  };
  return Array.from({ length }, (_, i) => {
    const v = at(formula, i);
    return Number.isFinite(v) ? v : 0;
  });
}
