/**
 * Element conditions (filter leaves of `type: element`: an action step's selector, tag_name, href and text, or an
 * insight's element filters) as ClickHouse SQL over `elements_chain`, with the local engine's semantics
 * (compileElementFilter, src/domain/analytics/element-match.ts) on the chain as the local engine parses it
 * (elements-chain-sql.ts). Pure: SQL text out, every value a query parameter.
 *
 *   - tag_name, text, href: true when some element's value passes the operator (a missing tag or attribute never
 *     does); `exact` is case-sensitive equality, `icontains` a case-insensitive substring, `regex` RE2's unanchored
 *     match (the pattern compiled locally in the same dialect first: one RE2 refuses matches nothing, as locally);
 *     the negated operators are "no element passes".
 *   - selector: the local engine's placement of the selector's parts on the chain (last part on some element, each
 *     earlier part further up, on the very next element after a `>`), decided by one RE2 match: every element
 *     becomes `|,i,j,` listing the parts whose compound it satisfies, and the selector becomes a pattern over those
 *     blocks. RE2 runs it in time linear in the chain, as the local engine's dynamic programming does.
 *
 * Each condition is preceded by substrings the raw chain must then contain (requiredTexts): parsing a chain costs
 * 6-9 µs on chdb 3.4 (a chain of five elements, measured on 1M of them), a substring search ~0.1 µs.
 *
 * What is not printed names itself in elementConditionGap, and those conditions are answered by the local engine.
 */
import { compileRegex } from '../../patterns/regex.js';
import { parseSelector, type Compound, type SelectorPart } from '../element-match.js';
import { propertyText, type FilterLeaf } from '../property-filters.js';
import { chainElementsSql, element, FIELD_KEYS, type Param } from './elements-chain-sql.js';

/** The negated operators and what they negate: "no element passes the positive one" (as compileElementFilter). */
const NEGATED: Readonly<Record<string, string>> = { is_not: 'exact', not_icontains: 'icontains', not_regex: 'regex', is_not_set: 'is_set' };
const VALUE_OPERATORS: ReadonlySet<string> = new Set(['exact', 'icontains', 'regex', 'is_set']);

/**
 * `:nth-child(n)` / `:nth-of-type(n)` compare the chain's text as JavaScript's parseInt reads it. Below 10^15 that
 * is a comparison of digits (printed as a pattern); above, parseInt rounds to a double and different digit strings
 * can meet, which a pattern does not reproduce.
 */
const MAX_NTH = 1e15;

/** The characters parseInt skips before a number (JavaScript's WhiteSpace and LineTerminator; `\s` of RE2 is ASCII). */
const JS_SPACE = '[\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}]';

/** The lambda parameter of one element (elements-chain-sql.ts uses other names inside). */
const EL = '__qel';

/** Why an element condition is not printed for ClickHouse (null: it is, with the local engine's answers). */
export function elementConditionGap(leaf: FilterLeaf): string | null {
  if (leaf.key === 'selector') {
    // A selector the local engine does not parse matches nothing: printed as such.
    const parts = typeof leaf.value === 'string' ? parseSelector(leaf.value) : null;
    for (const part of parts ?? []) {
      const gap = compoundGap(part.compound);
      if (gap !== null) return gap;
    }
    return null;
  }
  const operator = NEGATED[leaf.operator] ?? leaf.operator;
  if (!VALUE_OPERATORS.has(operator)) return `the element filter operator ${leaf.operator} is not computed on ClickHouse yet`;
  return null;
}

function compoundGap(c: Compound): string | null {
  for (const n of [c.nthChild, c.nthOfType]) {
    if (n !== null && n >= MAX_NTH) return `:nth-child/:nth-of-type numbers from ${MAX_NTH} up are not computed on ClickHouse`;
  }
  return null;
}

/**
 * The condition as a ClickHouse boolean (never NULL) over `chain`, the SQL of the events' elements_chain column.
 * Call only when elementConditionGap is null.
 */
export function elementConditionSql(leaf: FilterLeaf, chain: string, param: Param): string {
  const positiveOperator = NEGATED[leaf.operator];
  const invert = (positiveOperator !== undefined) !== leaf.negation;
  const operator = positiveOperator ?? leaf.operator;
  let positive = leaf.key === 'selector' ? selectorSql(leaf.value, chain, param) : valueSql(leaf.key, operator, leaf.value, chain, param);
  if (positive !== 'false') {
    // Parsing a chain costs 6-9 µs in ClickHouse (five elements), a substring search ~0.1 µs.
    // ClickHouse evaluates the right side of an AND only for the rows its left side kept, so the parse runs on the
    // few chains that can match.
    const required = requiredTexts(leaf.key, operator, leaf.value).map((text) => `position(${chain}, ${param(text)}) > 0`);
    if (required.length > 0) positive = `(${[...required, positive].join(' AND ')})`;
  }
  return invert ? `NOT ${positive}` : positive;
}

/** A value as it stands in the chain's text: the parser reads `\"` as `"` and nothing else, so this is its only spelling. */
const written = (value: string) => value.replaceAll('"', '\\"');

/**
 * Texts the raw chain contains whenever the positive condition holds (a tag, class or key stands in the chain as it
 * is; an attribute value as written). Only what is certain: they cut rows, never change an answer.
 */
export function requiredTexts(key: string, operator: string, value: unknown): string[] {
  const out = new Set<string>();
  if (key === 'selector') {
    for (const part of (typeof value === 'string' ? parseSelector(value) : null) ?? []) {
      const c = part.compound;
      if (c.tag !== null) out.add(c.tag);
      for (const cls of c.classes) out.add(cls);
      if (c.id !== null) out.add(written(c.id));
      // `[class="a b"]` compares the classes joined by spaces, which the chain writes with dots.
      for (const a of c.attributes) if (a.value !== null && a.name !== 'class') out.add(written(a.value));
    }
  } else {
    if (key !== 'tag_name') out.add(`${key}="`);
    const values = Array.isArray(value) ? value : [value];
    if (operator === 'exact' && values.length === 1) out.add(key === 'tag_name' ? propertyText(values[0]) : written(propertyText(values[0])));
  }
  out.delete('');
  return [...out];
}

/** Some element's tag_name, text or href passes a positive operator. */
function valueSql(key: string, operator: string, value: unknown, chain: string, param: Param): string {
  const [present, text] = key === 'tag_name'
    ? [`notEmpty(${element.tag(EL, param)})`, element.tag(EL, param)]
    : [element.has(EL, key, param), element.value(EL, key, param)];
  let test: string;
  switch (operator) {
    case 'is_set':
      test = present;
      break;
    case 'exact': {
      const texts = (Array.isArray(value) ? value : [value]).map((v) => param(propertyText(v)));
      if (texts.length === 0) return 'false';
      test = `${present} AND ${text} IN (${texts.join(', ')})`;
      break;
    }
    case 'icontains':
      // The needle lowered as the local engine lowers it; the element's text by ClickHouse's lowerUTF8, as event
      // property filters are printed (equal to JavaScript's toLowerCase on the cases tested with chdb 3.4, a
      // word-final Σ and İ included; a ClickHouse mapping code point by code point would differ there).
      test = `${present} AND position(lowerUTF8(${text}), ${param(propertyText(value).toLowerCase())}) > 0`;
      break;
    case 'regex':
      if (compileRegex(String(value), 'clickhouse') === null) return 'false';
      test = `${present} AND match(${text}, ${param(String(value))})`;
      break;
    default:
      throw new Error(`internal: the element filter operator ${operator} on ClickHouse`);
  }
  return `arrayExists(${EL} -> ${test}, ${chainElementsSql(chain, param)})`;
}

/** The chain matches the selector (false when the local engine does not parse it). */
function selectorSql(value: unknown, chain: string, param: Param): string {
  const parts = typeof value === 'string' ? parseSelector(value) : null;
  if (parts === null) return 'false';
  const marks = parts.map((part, i) => `if(${compoundSql(EL, part.compound, param)}, ${param(`${i},`)}, '')`);
  const blocks = `arrayStringConcat(arrayMap(${EL} -> concat(${param('|,')}, ${marks.join(', ')}), ${chainElementsSql(chain, param)}))`;
  return `match(${blocks}, ${param(selectorPattern(parts))})`;
}

/**
 * The RE2 pattern over the elements' blocks (`|,i,j,`, clicked element first) that matches when the parts can be
 * placed as the local engine places them: the last part on some block, then each earlier part on the next block
 * (after `>`) or on any block further on (after a space).
 */
export function selectorPattern(parts: readonly SelectorPart[]): string {
  const anyBlocks = '(?:\\|[^|]*)*';
  const blockWith = (p: number) => `\\|[^|]*,${p},[^|]*`;
  const last = parts.length - 1;
  let pattern = `^${anyBlocks}${blockWith(last)}`;
  for (let p = last - 1; p >= 0; p--) pattern += (parts[p + 1]!.combinator === '>' ? '' : anyBlocks) + blockWith(p);
  return pattern;
}

/** One element satisfies a compound (matchesCompound of the local engine). */
export function compoundSql(el: string, c: Compound, param: Param): string {
  const tests: string[] = [];
  if (c.tag !== null) tests.push(`${element.tag(el, param)} = ${param(c.tag)}`);
  if (c.id !== null) tests.push(attributeSql(el, 'id', c.id, param));
  for (const cls of c.classes) tests.push(`has(${element.classes(el, param)}, ${param(cls)})`);
  for (const a of c.attributes) tests.push(attributeSql(el, a.name, a.value, param));
  if (c.nthChild !== null) tests.push(nthSql(el, 'nth-child', c.nthChild, param));
  if (c.nthOfType !== null) tests.push(nthSql(el, 'nth-of-type', c.nthOfType, param));
  return tests.length === 0 ? 'true' : tests.map((t) => `(${t})`).join(' AND ');
}

/**
 * `[name]` / `[name="value"]` as the local engine's attributeOf reads the attribute: the first of its sources the
 * element has decides (href: `href`, then `attr__href`; id: `attr_id`, then `attr__id`; class: the head's classes
 * joined by spaces; any other: `attr__name`, then `name` unless the parser keeps that key in a field of its own).
 */
function attributeSql(el: string, name: string, value: string | null, param: Param): string {
  if (name === 'class') {
    const classes = element.classes(el, param);
    return value === null ? `notEmpty(${classes})` : `notEmpty(${classes}) AND arrayStringConcat(${classes}, ${param(' ')}) = ${param(value)}`;
  }
  const keys = name === 'href' ? ['href', 'attr__href'] : name === 'id' ? ['attr_id', 'attr__id'] : [`attr__${name}`, ...(FIELD_KEYS.has(name) ? [] : [name])];
  const arms = keys.flatMap((k) => [element.has(el, k, param), value === null ? 'true' : `${element.value(el, k, param)} = ${param(value)}`]);
  return `multiIf(${arms.join(', ')}, false)`;
}

/** The element's nth-child / nth-of-type equals `n` as parseInt reads it (the last pair of the key, as the parser keeps). */
function nthSql(el: string, key: string, n: number, param: Param): string {
  return `${element.has(el, key, param)} AND match(${element.value(el, key, param)}, ${param(nthPattern(n))})`;
}

/**
 * Text that parseInt(text, 10) reads as `n` (0 <= n < MAX_NTH): spaces, a sign, zeros, the digits, then no further
 * digit. Only -0 is a negative that equals a non-negative n (-0 === 0).
 */
export function nthPattern(n: number): string {
  return n === 0 ? `^${JS_SPACE}*[+-]?0+(?:[^0-9]|$)` : `^${JS_SPACE}*\\+?0*${n}(?:[^0-9]|$)`;
}
