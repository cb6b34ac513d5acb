/**
 * Property filter trees (src/domain/analytics/property-filters.ts) evaluated over a column block: each leaf is
 * decided once per distinct value of its column (a truth table indexed by dictionary code), then read per event;
 * groups combine the per-event masks.
 */
import { parseElementsChain } from '../../domain/ingest/elements-chain.js';
import { compileElementFilter } from '../../domain/analytics/element-match.js';
import { compileMatcher, isFilterGroup, type FilterLeaf, type FilterNode } from '../../domain/analytics/property-filters.js';
import { COL, EVENT_PROP, PERSON_PROP } from '../../stores/scan/block-builder.js';
import type { BlockView } from '../../stores/scan/column-block.js';

/** A cohort as filters see it: a person-property tree (dynamic) or a set of person ids (static). */
export type CohortFilter = { kind: 'tree'; tree: FilterNode | null } | { kind: 'static'; persons: ReadonlySet<number> };

export interface FilterContext {
  cohorts: ReadonlyMap<number, CohortFilter>;
  /** A group's current properties (group filters and breakdowns). */
  groupProperties(typeIndex: number, key: string): Readonly<Record<string, unknown>> | undefined;
  /** The block's persons after merges (static cohorts). */
  resolvedPersons(block: BlockView): Uint32Array;
  /** Turns a date filter value into an instant (relative dates need the query's now and time zone). */
  dateOf(value: unknown): number;
}

/** Rows of `block` passing `node` (1 = pass). */
export function rowMask(node: FilterNode, block: BlockView, ctx: FilterContext): Uint8Array {
  if (!isFilterGroup(node)) return leafMask(node, block, ctx);
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

function leafMask(leaf: FilterLeaf, block: BlockView, ctx: FilterContext): Uint8Array {
  switch (leaf.type) {
    case 'event':
      return valueMask(block, EVENT_PROP + leaf.key, (present, v) => compiled(leaf, ctx)(present, v));
    case 'person':
      return valueMask(block, PERSON_PROP + leaf.key, (present, v) => compiled(leaf, ctx)(present, v));
    case 'element': {
      const test = elementTest(leaf);
      return valueMask(block, COL.elementsChain, (present, v) => test(present ? parseElementsChain(v as string) : []));
    }
    case 'group': {
      const match = compiled(leaf, ctx);
      const index = leaf.groupTypeIndex!;
      return valueMask(block, `${EVENT_PROP}$group_${index}`, (present, v) => {
        const props = present ? ctx.groupProperties(index, String(v)) : undefined;
        const has = props !== undefined && Object.hasOwn(props, leaf.key);
        return match(has, has ? props![leaf.key] : undefined);
      });
    }
    case 'cohort':
      return cohortMask(leaf, block, ctx);
    case 'event_name':
      return valueMask(block, COL.event, compiled(leaf, ctx));
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
    const base = compileMatcher(leaf, (v) => ctx.dateOf(v));
    m = leaf.negation ? (present, v) => !base(present, v) : base;
    matchers.set(leaf, m);
  }
  return m;
}

/** Evaluates `test` once per dictionary value of `column` (and once for "absent"), then maps every row. */
function valueMask(block: BlockView, column: string, test: (present: boolean, value: unknown) => boolean): Uint8Array {
  const n = block.n;
  const col = block.dict(column);
  const absent = test(false, undefined) ? 1 : 0;
  if (!col) return new Uint8Array(n).fill(absent);
  const table = new Uint8Array(col.values.length + 1);
  table[0] = absent;
  for (let c = 0; c < col.values.length; c++) table[c + 1] = test(true, col.values[c]) ? 1 : 0;
  const out = new Uint8Array(n);
  const codes = col.codes;
  for (let i = 0; i < n; i++) out[i] = table[codes[i]!]!;
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
