/**
 * Flag-dependency graph (`type: "flag"` properties), shared by the evaluator and the definitions payload.
 *
 * A dependency is stored as the flag id in string form (what PostHog's API writes) or as the flag key; ids win
 * when both could match. A flag is *broken* when it references a missing or deleted flag, sits on a cycle
 * (self-references included), or depends, directly or not, on a broken flag. Broken flags evaluate to false with
 * reason `missing_dependency` and get an empty `dependency_chain` in definitions (flags.md §3.7).
 */
import { conditionsOf } from './filters.js';
import { intOf, isRecord } from './values.js';

export interface DependencyNode {
  readonly id: number;
  readonly key: string;
  /** Effective filters (legacy form already normalised). */
  readonly filters: Record<string, unknown>;
}

export interface DependencyGraph {
  /** Index of the flag a stored reference points to, or -1. */
  resolve(ref: unknown): number;
  /** Direct dependencies per node (resolved, unique, in order of appearance). */
  readonly deps: readonly (readonly number[])[];
  readonly broken: readonly boolean[];
  /** Topologically ordered keys to evaluate for a dependency on `index` (ending with it); [] when broken. */
  chain(index: number): string[];
}

/** Every `type: "flag"` property of the release conditions, in order. */
export function flagProperties(filters: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const condition of conditionsOf(filters)) {
    if (!isRecord(condition) || !Array.isArray(condition.properties)) continue;
    for (const prop of condition.properties) if (isRecord(prop) && prop.type === 'flag') out.push(prop);
  }
  return out;
}

export function buildDependencyGraph(nodes: readonly DependencyNode[]): DependencyGraph {
  const byId = new Map<number, number>();
  const byKey = new Map<string, number>();
  nodes.forEach((n, i) => {
    byId.set(n.id, i);
    byKey.set(n.key, i);
  });

  const resolve = (ref: unknown): number => {
    const asId = intOf(ref);
    if (asId !== null && byId.has(asId)) return byId.get(asId)!;
    if (typeof ref === 'string' && byKey.has(ref)) return byKey.get(ref)!;
    return -1;
  };

  const deps: number[][] = [];
  const missing: boolean[] = [];
  for (const node of nodes) {
    const list: number[] = [];
    let hasMissing = false;
    for (const prop of flagProperties(node.filters)) {
      const target = resolve(prop.key);
      if (target === -1) hasMissing = true;
      else if (!list.includes(target)) list.push(target);
    }
    deps.push(list);
    missing.push(hasMissing);
  }

  const onCycle = findCycleMembers(deps);
  // 0 = unknown, 1 = ok, 2 = broken. Recursion only walks through nodes that are not on a cycle, so it ends.
  const state = new Uint8Array(nodes.length);
  const isBroken = (i: number): boolean => {
    if (state[i] !== 0) return state[i] === 2;
    let bad = missing[i]! || onCycle[i]!;
    if (!bad) for (const d of deps[i]!) if (isBroken(d)) bad = true;
    state[i] = bad ? 2 : 1;
    return bad;
  };
  const broken = nodes.map((_, i) => isBroken(i));

  const chain = (index: number): string[] => {
    if (index < 0 || broken[index]) return [];
    const out: string[] = [];
    const seen = new Set<number>();
    const visit = (i: number): void => {
      if (seen.has(i)) return;
      seen.add(i);
      for (const d of deps[i]!) visit(d);
      out.push(nodes[i]!.key);
    };
    visit(index);
    return out;
  };

  return { resolve, deps, broken, chain };
}

/** Nodes on a cycle (Tarjan's strongly connected components; self-loops count). */
function findCycleMembers(deps: readonly (readonly number[])[]): boolean[] {
  const n = deps.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result = new Array<boolean>(n).fill(false);
  let counter = 0;

  const strongConnect = (v: number): void => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    for (const w of deps[v]!) {
      if (index[w] === -1) {
        strongConnect(w);
        low[v] = Math.min(low[v]!, low[w]!);
      } else if (onStack[w]) {
        low[v] = Math.min(low[v]!, index[w]!);
      }
    }
    if (low[v] === index[v]) {
      const component: number[] = [];
      let w: number;
      do {
        w = stack.pop()!;
        onStack[w] = 0;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || deps[v]!.includes(v)) for (const c of component) result[c] = true;
    }
  };

  for (let v = 0; v < n; v++) if (index[v] === -1) strongConnect(v);
  return result;
}
