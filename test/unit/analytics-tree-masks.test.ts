// Filter trees over a column block (src/worker/analytics/block-filter.ts): the one-pass evaluation of trees of up
// to 12 leaves (one truth table per tree, one bit table per column) and the per-leaf evaluation of larger trees
// must both agree, row by row, with each leaf decided on the row's own values — on random trees of event, person,
// event-name and element leaves, negated or not, nested AND/OR groups and empty groups, over blocks that lack
// some of the columns. Also the regex compilation PostHog's re2 patterns need, and LIKE as a regex.
import t from 'tap';
import { likeRegex } from '../../src/domain/analytics/action-filter.js';
import { compileElementFilter } from '../../src/domain/analytics/element-match.js';
import { compileMatcher, isFilterGroup, type FilterLeaf, type FilterNode } from '../../src/domain/analytics/property-filters.js';
import { parseElementsChain } from '../../src/domain/ingest/elements-chain.js';
import { BlockBuilder, COL, EVENT_PROP, PERSON_PROP } from '../../src/stores/scan/block-builder.js';
import type { BlockView } from '../../src/stores/scan/column-block.js';
import { rowMask, type FilterContext } from '../../src/worker/analytics/block-filter.js';

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), a | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const CHAINS = ['', 'button.cta:nth-child="1"nth-of-type="1"text="Sign up";div.hero:nth-child="1"nth-of-type="1"', 'a:href="/pricing"nth-child="2"nth-of-type="1"text="Pricing"'];

function block(rand: () => number, n: number, withUrl: boolean): BlockView {
  const b = new BlockBuilder();
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  for (let i = 0; i < n; i++) {
    const properties: Record<string, unknown> = { n: Math.floor(rand() * 10) };
    if (withUrl && rand() < 0.7) properties.$current_url = pick(['https://x.test/a', 'https://x.test/A_b', 'https://x.test/a%b', 'https://x.test/docs/1']);
    if (rand() < 0.5) properties.s = pick(['v0', 'v1', 'V1']);
    b.add({
      uuid: `e${i}`, ts: i, event: pick(['$pageview', '$autocapture', 'signup']), distinctId: `d${i}`, personId: 1, personUuid: '', personCreatedAt: NaN,
      elementsChain: pick(CHAINS), properties, personProperties: rand() < 0.8 ? { plan: pick(['pro', 'free']) } : {},
    });
  }
  return b.snapshot();
}

const LEAVES: FilterLeaf[] = [
  { type: 'event_name', key: 'event', operator: 'exact', value: '$pageview' },
  { type: 'event_name', key: 'event', operator: 'exact', value: 'signup' },
  { type: 'event', key: '$current_url', operator: 'regex', value: likeRegex('%/a_b%') },
  { type: 'event', key: '$current_url', operator: 'regex', value: '(?i)/a$' },
  { type: 'event', key: '$current_url', operator: 'exact', value: 'https://x.test/a' },
  { type: 'event', key: '$current_url', operator: 'is_set', value: null },
  { type: 'event', key: 's', operator: 'exact', value: 'v1' },
  { type: 'event', key: 's', operator: 'icontains', value: 'V' },
  { type: 'event', key: 'n', operator: 'gt', value: 4 },
  { type: 'event', key: 'missing', operator: 'is_not_set', value: null },
  { type: 'person', key: 'plan', operator: 'exact', value: 'pro' },
  { type: 'element', key: 'text', operator: 'exact', value: 'Sign up' },
  { type: 'element', key: 'selector', operator: 'exact', value: 'div.hero > button' },
  { type: 'element', key: 'href', operator: 'icontains', value: 'PRICING' },
].map((l) => ({ groupTypeIndex: null, negation: false, ...l }) as FilterLeaf);

function randomTree(rand: () => number, leaves: number): FilterNode {
  const pool: FilterNode[] = Array.from({ length: leaves }, () => ({ ...LEAVES[Math.floor(rand() * LEAVES.length)]!, negation: rand() < 0.2 }));
  if (rand() < 0.3) pool.push({ and: rand() < 0.5, children: [] });
  while (pool.length > 1) {
    const size = Math.min(pool.length, 2 + Math.floor(rand() * 3));
    const at = Math.floor(rand() * (pool.length - size + 1));
    pool.splice(at, size, { and: rand() < 0.5, children: pool.slice(at, at + size) });
  }
  return pool[0]!;
}

/** The reference: each leaf decided on the row's own value, the groups combined as boolean logic. */
function holds(node: FilterNode, b: BlockView, row: number): boolean {
  if (isFilterGroup(node)) return node.and ? node.children.every((c) => holds(c, b, row)) : node.children.some((c) => holds(c, b, row));
  const column = node.type === 'event_name' ? COL.event : node.type === 'element' ? COL.elementsChain : (node.type === 'person' ? PERSON_PROP : EVENT_PROP) + node.key;
  const col = b.dict(column);
  const code = col ? col.codes[row]! : 0;
  const value = code === 0 ? undefined : col!.values[code - 1];
  if (node.type === 'element') return compileElementFilter(node)(code === 0 ? [] : parseElementsChain(value as string));
  return compileMatcher(node)(code !== 0, value) !== node.negation;
}

const ctx: FilterContext = { cohorts: new Map(), groupProperties: () => undefined, resolvedPersons: () => new Uint32Array(0), dateOfFilter: () => NaN, dateOfValue: () => NaN };
const leafCount = (n: FilterNode): number => (isFilterGroup(n) ? n.children.reduce((a, c) => a + leafCount(c), 0) : 1);

t.test('one-pass and per-leaf masks agree with each leaf decided per row', async (t) => {
  const rand = prng(20);
  let fused = 0;
  let perLeaf = 0;
  for (let round = 0; round < 300; round++) {
    const b = block(rand, 200, round % 5 !== 0);
    const tree = randomTree(rand, 1 + Math.floor(rand() * 18));
    const mask = rowMask(tree, b, ctx);
    const wrong: number[] = [];
    for (let i = 0; i < b.n; i++) if ((mask[i] === 1) !== holds(tree, b, i)) wrong.push(i);
    if (wrong.length > 0) {
      t.fail(`round ${round}: rows ${wrong.slice(0, 5)} differ for ${JSON.stringify(tree)}`);
      return;
    }
    if (leafCount(tree) <= 12) fused++;
    else perLeaf++;
  }
  t.ok(fused > 100 && perLeaf > 50, `both paths exercised (${fused} one-pass, ${perLeaf} per leaf)`);
});

