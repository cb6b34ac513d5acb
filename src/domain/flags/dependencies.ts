/**
 * Flag-dependency graph (`type: "flag"` properties), shared by the evaluator and the definitions payload.
 *
 * A dependency is stored as the flag id in string form (what PostHog's API writes) or as the flag key; ids win
 * when both could match. A flag is *broken* when it references a missing or deleted flag, sits on a cycle
 * (self-references included), depends, directly or not, on a broken flag, or sits atop a chain of dependencies
 * deeper than MAX_DEPENDENCY_DEPTH. Broken flags evaluate to false with reason `missing_dependency` and get an
 * empty `dependency_chain` in definitions (flags.md §3.7).
 *
 * The walks over the whole graph (cycle search, broken flags) are iterative: a chain of thousands of flags, each
 * depending on the next (built over as many API calls), overflowed the stack of the recursive versions, and every
 * flag answer of the project failed with it. `chain` still recurses, but only from a flag that is not broken, so
 * at most MAX_DEPENDENCY_DEPTH deep.
 */

/**
 * Deepest chain of flag dependencies evaluated: evaluation follows a dependency by recursion, so this bounds its
 * depth, and a definitions payload lists a chain per dependency, so it bounds that list too.
 */
export const MAX_DEPENDENCY_DEPTH = 256;
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
  const broken = brokenNodes(deps, missing, onCycle);

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

/**
 * Broken nodes: missing references, cycle members, chains deeper than MAX_DEPENDENCY_DEPTH, and whatever depends
 * on one of those. Post-order over the graph without its cycle members (acyclic, so each node is finished once).
 */
function brokenNodes(deps: readonly (readonly number[])[], missing: readonly boolean[], onCycle: readonly boolean[]): boolean[] {
  const n = deps.length;
  const broken = new Array<boolean>(n).fill(false);
  /** 0 = not seen, 1 = on the walk's stack, 2 = finished. */
  const state = new Uint8Array(n);
  const depth = new Int32Array(n);
  for (let root = 0; root < n; root++) {
    if (state[root] !== 0) continue;
    const stack: [number, number][] = [[root, 0]];
    state[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [v, k] = top;
      if (!onCycle[v] && k < deps[v]!.length) {
        top[1]++;
        const d = deps[v]![k]!;
        if (state[d] === 0) {
          state[d] = 1;
          stack.push([d, 0]);
        }
        continue;
      }
      let bad = missing[v]! || onCycle[v]!;
      let deepest = 0;
      if (!bad) {
        for (const d of deps[v]!) {
          if (broken[d] || state[d] !== 2) bad = true;
          deepest = Math.max(deepest, depth[d]!);
        }
      }
      depth[v] = deepest + 1;
      broken[v] = bad || depth[v]! > MAX_DEPENDENCY_DEPTH;
      state[v] = 2;
      stack.pop();
    }
  }
  return broken;
}

/** Nodes on a cycle (Tarjan's strongly connected components; self-loops count), with an explicit stack. */
function findCycleMembers(deps: readonly (readonly number[])[]): boolean[] {
  const n = deps.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result = new Array<boolean>(n).fill(false);
  let counter = 0;

  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    // Each frame: a node and how many of its dependencies were looked at.
    const frames: [number, number][] = [[root, 0]];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const v = frame[0];
      if (frame[1] < deps[v]!.length) {
        const w = deps[v]![frame[1]++]!;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frames.push([w, 0]);
        } else if (onStack[w]) {
          low[v] = Math.min(low[v]!, index[w]!);
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
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
    }
  }
  return result;
}
