/**
 * Property filter trees (src/domain/analytics/property-filters.ts) evaluated over a column block: each leaf is
 * decided once per distinct value of its column (a truth table indexed by dictionary code), then read per event;
 * groups combine the per-event masks.
 */
import { parseElementsChain } from '../../domain/ingest/elements-chain.js';
import { compileElementFilter } from '../../domain/analytics/element-match.js';
import { compileMatcher, isFilterGroup, leavesOf, type FilterLeaf, type FilterNode } from '../../domain/analytics/property-filters.js';
import { COL, EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView, CodeArray } from '../../stores/scan/column-block.js';

/** A cohort as filters see it: a person-property tree (dynamic) or a set of person ids (static). */
export type CohortFilter = { kind: 'tree'; tree: FilterNode | null } | { kind: 'static'; persons: ReadonlySet<number> };

export interface FilterContext {
  cohorts: ReadonlyMap<number, CohortFilter>;
  /** A group's current properties (group filters and breakdowns). */
  groupProperties(typeIndex: number, key: string): Readonly<Record<string, unknown>> | undefined;
  /** The block's persons after merges (static cohorts). */
  resolvedPersons(block: BlockView): Uint32Array;
  /** Turns a date filter's value into an instant (relative dates need the query's now and time zone). */
  dateOfFilter(value: unknown): number;
  /** Turns a property's value into an instant for the date operators (property-date.ts, in the project's zone). */
  dateOfValue(value: unknown): number;
}

/** Rows of `block` passing `node` (1 = pass). */
export function rowMask(node: FilterNode, block: BlockView, ctx: FilterContext): Uint8Array {
  if (!isFilterGroup(node)) return leafMask(node, block, ctx);
  const fused = fusedMask(node, block, ctx);
  if (fused !== null) return fused;
  const n = block.n;
  if (node.children.length === 0) return new Uint8Array(n).fill(node.and ? 1 : 0);
  let out: Uint8Array | null = null;
  for (const child of node.children) {
    const m = rowMask(child, block, ctx);
    if (out === null) {
      out = m;
      continue;
    }
    if (node.and) for (let i = 0; i < n; i++) out[i]! &= m[i]!;
    else for (let i = 0; i < n; i++) out[i]! |= m[i]!;
  }
  return out!;
}

/** A leaf decided for every distinct value of its column: `table[code]` (code 0: absent; no codes: all absent). */
interface LeafTable {
  codes: CodeArray | null;
  table: Uint8Array;
}

function leafMask(leaf: FilterLeaf, block: BlockView, ctx: FilterContext): Uint8Array {
  if (leaf.type === 'cohort') return cohortMask(leaf, block, ctx);
  const { codes, table } = leafTable(leaf, block, ctx);
  const n = block.n;
  if (codes === null) return new Uint8Array(n).fill(table[0]!);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = table[codes[i]!]!;
  return out;
}

/** Every leaf type but cohorts decides by one column's value. */
function leafTable(leaf: FilterLeaf, block: BlockView, ctx: FilterContext): LeafTable {
  switch (leaf.type) {
    case 'event':
      return valueTable(block, EVENT_PROP + leaf.key, compiled(leaf, ctx));
    case 'person':
      return valueTable(block, PERSON_PROP + leaf.key, compiled(leaf, ctx));
    case 'event_name':
      return valueTable(block, COL.event, compiled(leaf, ctx));
    case 'element': {
      const test = elementTest(leaf);
      return valueTable(block, COL.elementsChain, (present, v) => test(present ? parseElementsChain(v as string) : []));
    }
    case 'group': {
      const match = compiled(leaf, ctx);
      const index = leaf.groupTypeIndex!;
      return valueTable(block, `${EVENT_PROP}$group_${index}`, (present, v) => {
        const props = present ? ctx.groupProperties(index, String(v)) : undefined;
        const has = props !== undefined && Object.hasOwn(props, leaf.key);
        return match(has, has ? props![leaf.key] : undefined);
      });
    }
    case 'cohort':
      throw new Error('a cohort leaf has no value table');
  }
}

const matchers = new WeakMap<FilterLeaf, (present: boolean, value: unknown) => boolean>();
const elementTests = new WeakMap<FilterLeaf, ReturnType<typeof compileElementFilter>>();

/** An element leaf's test, compiled once per leaf (its selector parsed once, not once per block). */
function elementTest(leaf: FilterLeaf): ReturnType<typeof compileElementFilter> {
  let test = elementTests.get(leaf);
  if (!test) elementTests.set(leaf, (test = compileElementFilter(leaf)));
  return test;
}

/** The leaf's matcher with its negation folded in (compiled once per leaf, reused for every block). */
function compiled(leaf: FilterLeaf, ctx: FilterContext): (present: boolean, value: unknown) => boolean {
  let m = matchers.get(leaf);
  if (!m) {
    const base = compileMatcher(leaf, (v) => ctx.dateOfFilter(v), (v) => ctx.dateOfValue(v));
    m = leaf.negation ? (present, v) => !base(present, v) : base;
    matchers.set(leaf, m);
  }
  return m;
}

/** Evaluates `test` once per dictionary value of `column` (and once for "absent"). */
function valueTable(block: BlockView, column: string, test: (present: boolean, value: unknown) => boolean): LeafTable {
  const col = block.dict(column);
  const absent = test(false, undefined) ? 1 : 0;
  if (!col) return { codes: null, table: Uint8Array.of(absent) };
  const table = new Uint8Array(col.values.length + 1);
  table[0] = absent;
  for (let c = 0; c < col.values.length; c++) table[c + 1] = test(true, col.values[c]) ? 1 : 0;
  return { codes: col.codes, table };
}

/**
 * Trees of at most FUSED_LEAVES leaves, none a cohort (an action's tree, a few property filters), are evaluated
 * in one pass instead of a pass and an array per leaf and per group: the leaves reading one column share a table
 * of bits per dictionary value (bit j: leaf j holds), a row's bits (the OR of its columns' entries) index the
 * tree's truth table, computed once per tree. A row then costs one read per column it touches.
 */
const FUSED_LEAVES = 12;

interface FusedShape {
  leaves: FilterLeaf[];
  truth: Uint8Array;
}

const shapes = new WeakMap<FilterNode, FusedShape | null>();

function fusedShape(node: FilterNode): FusedShape | null {
  if (shapes.has(node)) return shapes.get(node)!;
  const leaves = [...new Set(leavesOf(node))];
  let shape: FusedShape | null = null;
  if (leaves.length <= FUSED_LEAVES && leaves.every((l) => l.type !== 'cohort')) {
    const bit = new Map(leaves.map((l, j) => [l, j]));
    const holds = (n: FilterNode, bits: number): boolean => {
      if (!isFilterGroup(n)) return ((bits >> bit.get(n)!) & 1) === 1;
      return n.and ? n.children.every((c) => holds(c, bits)) : n.children.some((c) => holds(c, bits));
    };
    const truth = new Uint8Array(1 << leaves.length);
    for (let bits = 0; bits < truth.length; bits++) truth[bits] = holds(node, bits) ? 1 : 0;
    shape = { leaves, truth };
  }
  shapes.set(node, shape);
  return shape;
}

function fusedMask(node: FilterNode, block: BlockView, ctx: FilterContext): Uint8Array | null {
  const shape = fusedShape(node);
  if (shape === null) return null;
  const n = block.n;
  let always = 0;
  const byColumn = new Map<CodeArray, Uint16Array>();
  shape.leaves.forEach((leaf, j) => {
    const { codes, table } = leafTable(leaf, block, ctx);
    if (codes === null) {
      always |= table[0]! << j;
      return;
    }
    let bits = byColumn.get(codes);
    if (!bits) byColumn.set(codes, (bits = new Uint16Array(table.length)));
    for (let c = 0; c < table.length; c++) bits[c]! |= table[c]! << j;
  });
  const truth = shape.truth;
  const columns = [...byColumn];
  const out = new Uint8Array(n);
  // One, two and three columns (the common cases) unrolled; more accumulate per column.
  if (columns.length === 0) out.fill(truth[always]!);
  else if (columns.length === 1) {
    const [[c0, b0]] = columns as [[CodeArray, Uint16Array]];
    for (let i = 0; i < n; i++) out[i] = truth[always | b0[c0[i]!]!]!;
  } else if (columns.length === 2) {
    const [[c0, b0], [c1, b1]] = columns as [[CodeArray, Uint16Array], [CodeArray, Uint16Array]];
    for (let i = 0; i < n; i++) out[i] = truth[always | b0[c0[i]!]! | b1[c1[i]!]!]!;
  } else if (columns.length === 3) {
    const [[c0, b0], [c1, b1], [c2, b2]] = columns as [[CodeArray, Uint16Array], [CodeArray, Uint16Array], [CodeArray, Uint16Array]];
    for (let i = 0; i < n; i++) out[i] = truth[always | b0[c0[i]!]! | b1[c1[i]!]! | b2[c2[i]!]!]!;
  } else {
    const idx = new Uint16Array(n).fill(always);
    for (const [codes, bits] of columns) for (let i = 0; i < n; i++) idx[i]! |= bits[codes[i]!]!;
    for (let i = 0; i < n; i++) out[i] = truth[idx[i]!]!;
  }
  return out;
}

function cohortMask(leaf: FilterLeaf, block: BlockView, ctx: FilterContext): Uint8Array {
  const cohort = ctx.cohorts.get(leaf.value as number);
  const invert = (leaf.operator === 'not_in') !== leaf.negation;
  let mask: Uint8Array;
  if (!cohort) mask = new Uint8Array(block.n);
  else if (cohort.kind === 'static') {
    const persons = ctx.resolvedPersons(block);
    mask = new Uint8Array(block.n);
    for (let i = 0; i < block.n; i++) if (cohort.persons.has(persons[i]!)) mask[i] = 1;
  } else mask = cohort.tree === null ? new Uint8Array(block.n) : rowMask(cohort.tree, block, ctx);
  if (invert) for (let i = 0; i < mask.length; i++) mask[i] = mask[i]! ^ 1;
  return mask;
}
