/**
 * Element filters on autocapture events (analytics.md §0.3 `type: element`): `tag_name`, `text`, `href` and
 * `selector`, tested against the event's `elements_chain` (clicked element first, then its ancestors).
 *
 * A value filter matches when any element of the chain matches (a negated operator when none does). A CSS
 * selector matches when some element matches its last compound part and the element's ancestors match the parts
 * before it, in order (`>` = the next element up, a space = any element further up), as PostHog's chain regexes do.
 * Supported selector parts: tag, `.class`, `#id`, `[attr]`, `[attr="value"]`, `:nth-child(n)`, `:nth-of-type(n)`.
 */
import type { ElementRecord } from '../ingest/types.js';
import { compileMatcher, type FilterLeaf, type ValueMatcher } from './property-filters.js';

const NEGATED: Readonly<Record<string, string>> = { is_not: 'exact', not_icontains: 'icontains', not_regex: 'regex', is_not_set: 'is_set' };

export interface Compound {
  tag: string | null;
  id: string | null;
  classes: string[];
  attributes: { name: string; value: string | null }[];
  nthChild: number | null;
  nthOfType: number | null;
}

export interface SelectorPart {
  compound: Compound;
  /** How this part relates to the part after it (towards the clicked element): child or descendant. */
  combinator: '>' | ' ';
}

/**
 * The most compound parts a selector may have (`div > .a span` has three). Matching costs parts × elements per
 * event; real selectors have a handful of parts, and 256 is the nesting bound used elsewhere (MAX_NESTING in
 * src/domain/hogql/parser.ts).
 */
export const MAX_SELECTOR_PARTS = 256;

/**
 * Parses a selector; null when it uses something unsupported or has more than MAX_SELECTOR_PARTS parts (then it
 * matches nothing; an action step refuses it).
 */
export function parseSelector(selector: string): SelectorPart[] | null {
  const parts: SelectorPart[] = [];
  // split('>') rather than /\s*>\s*/: that pattern retries every start of a long run of spaces (quadratic).
  const tokens = selector.trim().split('>').join(' > ').split(/\s+/).filter((t) => t !== '');
  let combinator: '>' | ' ' = ' ';
  for (const token of tokens) {
    if (token === '>') {
      combinator = '>';
      continue;
    }
    if (parts.length === MAX_SELECTOR_PARTS) return null;
    const compound = parseCompound(token);
    if (!compound) return null;
    parts.push({ compound, combinator });
    combinator = ' ';
  }
  return parts.length > 0 ? parts : null;
}

const COMPOUND_PIECE = /([.#]?[A-Za-z0-9_-]+)|(\[[^\]]+\])|(:nth-(?:child|of-type)\(\d+\))|(\*)/y;

function parseCompound(token: string): Compound | null {
  const c: Compound = { tag: null, id: null, classes: [], attributes: [], nthChild: null, nthOfType: null };
  COMPOUND_PIECE.lastIndex = 0;
  let at = 0;
  while (at < token.length) {
    COMPOUND_PIECE.lastIndex = at;
    const m = COMPOUND_PIECE.exec(token);
    if (!m) return null;
    const piece = m[0];
    at += piece.length;
    if (piece === '*') continue;
    if (piece.startsWith('.')) c.classes.push(piece.slice(1));
    else if (piece.startsWith('#')) c.id = piece.slice(1);
    else if (piece.startsWith('[')) {
      const inner = /^\[\s*([^=\s]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\]]*)))?\s*\]$/.exec(piece);
      if (!inner) return null;
      c.attributes.push({ name: inner[1]!, value: inner[2] ?? inner[3] ?? inner[4] ?? null });
    } else if (piece.startsWith(':nth-child')) c.nthChild = Number(/\d+/.exec(piece)![0]);
    else if (piece.startsWith(':nth-of-type')) c.nthOfType = Number(/\d+/.exec(piece)![0]);
    else c.tag = piece;
  }
  return c;
}

function attributeOf(el: ElementRecord, name: string): string | null {
  if (name === 'href') return el.href ?? el.attributes.attr__href ?? null;
  if (name === 'id') return el.attr_id ?? el.attributes.attr__id ?? null;
  if (name === 'class') return el.attr_class ? el.attr_class.join(' ') : null;
  // Own keys only: the chain's attributes are a plain object, where `constructor` or `__proto__` would otherwise find
  // Object.prototype's members and `[constructor]` would match every element.
  return ownAttribute(el.attributes, `attr__${name}`) ?? ownAttribute(el.attributes, name);
}

function ownAttribute(attributes: Readonly<Record<string, string>>, key: string): string | null {
  return Object.hasOwn(attributes, key) ? attributes[key]! : null;
}

function matchesCompound(el: ElementRecord, c: Compound): boolean {
  if (c.tag !== null && el.tag_name !== c.tag) return false;
  if (c.id !== null && attributeOf(el, 'id') !== c.id) return false;
  for (const cls of c.classes) if (!el.attr_class || !el.attr_class.includes(cls)) return false;
  for (const a of c.attributes) {
    const v = attributeOf(el, a.name);
    if (v === null || (a.value !== null && v !== a.value)) return false;
  }
  if (c.nthChild !== null && el.nth_child !== c.nthChild) return false;
  if (c.nthOfType !== null && el.nth_of_type !== c.nthOfType) return false;
  return true;
}

/**
 * Whether a chain (clicked element first) matches a parsed selector: the last part matches some element and each
 * earlier part an element further up, the very next one after a `>`. Decided part by part over the whole chain
 * (`fits[i]`: the parts so far can be placed with the latest one at element i or above it, or exactly at i after a
 * `>`), so it takes parts × elements steps and no recursion. Trying placements one by one instead took exponential
 * time (`p div div … div span` against a chain of divs: 2 s for 14 parts over 29 elements, doubling per element)
 * and one stack frame per part (a selector of 10,000 parts overflowed).
 */
export function matchesSelector(elements: readonly ElementRecord[], parts: readonly SelectorPart[]): boolean {
  const n = elements.length;
  const last = parts.length - 1;
  // Each part takes an element of its own, further up than the one after it.
  if (parts.length > n) return false;
  // placed[i]: parts[0..p] fit in elements[i..] (parts[p] at element i or, after a descendant combinator, above it);
  // for no part yet, everything fits.
  let placed = new Uint8Array(n + 1).fill(1);
  let next = new Uint8Array(n + 1);
  for (let p = 0; p < last; p++) {
    const compound = parts[p]!.compound;
    const childOnly = parts[p + 1]!.combinator === '>';
    next[n] = 0;
    for (let i = n - 1; i >= 0; i--) {
      const here = placed[i + 1] === 1 && matchesCompound(elements[i]!, compound);
      next[i] = here || (!childOnly && next[i + 1] === 1) ? 1 : 0;
    }
    [placed, next] = [next, placed];
  }
  const target = parts[last]!.compound;
  for (let i = 0; i < n; i++) {
    if (placed[i + 1] === 1 && matchesCompound(elements[i]!, target)) return true;
  }
  return false;
}

/** An element filter leaf compiled: chain (parsed) → matches, negation included. */
export function compileElementFilter(leaf: FilterLeaf): (elements: readonly ElementRecord[]) => boolean {
  const positiveOp = NEGATED[leaf.operator];
  const invert = (positiveOp !== undefined) !== leaf.negation;
  if (leaf.key === 'selector') {
    const parts = typeof leaf.value === 'string' ? parseSelector(leaf.value) : null;
    return (elements) => (parts !== null && elements.length > 0 && matchesSelector(elements, parts)) !== invert;
  }
  const matcher: ValueMatcher = compileMatcher({ ...leaf, operator: positiveOp ?? leaf.operator, negation: false });
  const field = leaf.key as 'tag_name' | 'text' | 'href';
  return (elements) => {
    let any = false;
    for (const el of elements) {
      const v = el[field];
      if (matcher(v !== null, v)) {
        any = true;
        break;
      }
    }
    return any !== invert;
  };
}
