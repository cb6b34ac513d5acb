/**
 * An `elements_chain` read in ClickHouse SQL exactly as the local engine parses it (parseElementsChain,
 * src/domain/ingest/elements-chain.ts), so element conditions (element-conditions-sql.ts) see the same elements,
 * tags, classes and attributes on both executors. Pure: SQL text out; every string goes through `param` (the
 * printer's query parameters), the patterns below included.
 *
 * Each step of the parser is one RE2 pattern (ClickHouse's `extractAll`, `extract`, `match`) or a substring cut,
 * written to take the same characters as the parser's loop, quirks included:
 *   - elements: runs of anything but `;` and unquoted space, tab, LF, CR; a `"` opens a quoted stretch in which a
 *     backslash takes the next character whatever it is, and which an unterminated quote extends to the end;
 *   - head and attributes: split at the first `:` followed by `[A-Za-z0-9_-]*=` (a colon before that, as in
 *     `a:hover`, stays in the head); the head is the tag, then `.`-separated classes (empty ones dropped);
 *   - attributes: `key="value"` pairs, the key everything up to the next `="`, the value up to an unescaped `"` (or
 *     the end), `\"` read as `"` in both and every other backslash kept; a later pair with the same key wins.
 * Patterns say `(?s)` where a `.` may meet a line break (ClickHouse's default, written out so as not to depend on it).
 */

/** The printer's way of turning text into a query parameter placeholder. */
export type Param = (text: string) => string;

/** One element: a run of unquoted characters other than the separators, or a quoted stretch (escapes taken whole). */
export const ELEMENT_PATTERN = '(?s)(?:[^; \\t\\n\\r"]|"(?:[^"\\\\]|\\\\.)*(?:"|\\\\?$))+';
/**
 * The head and what ends it: the shortest prefix followed by an attribute-starting colon, with that colon, the key's
 * characters and `=`; or the whole element when it has no such colon. Patterns without capturing groups: RE2 then
 * finds a match with its DFA, measured 5× faster in ClickHouse than the same pattern capturing the parts.
 */
export const HEAD_PATTERN = '(?s)^.*?(?::[A-Za-z0-9_-]*=|$)';
/** The head's match ended at an attribute-starting colon (`$` otherwise: then the element has no such colon at all). */
export const ATTRIBUTE_COLON_PATTERN = ':[A-Za-z0-9_-]*=$';
/** One attribute: its key up to the first `="`, its value up to an unescaped quote (taken) or the end. */
export const ATTRIBUTE_PATTERN = '(?s).*?="(?:\\\\"|\\\\|[^"\\\\])*(?:"|$)';

/**
 * Keys the parser stores in fields of their own, never among the generic attributes (and '' it drops): a selector's
 * `[text]` reads only `attr__text`, as locally.
 */
export const FIELD_KEYS: ReadonlySet<string> = new Set(['href', 'nth-child', 'nth-of-type', 'text', 'attr_id', '']);

/** Lambda parameter names: unusual enough not to shadow a column the surrounding query reads. */
const E = '__qe';
const KV = '__qkv';
const C = '__qc';

/** `\"` as `"` (replaceAll, left to right, as the parser's scan reads escapes). */
const unescape = (sql: string, param: Param): string => `replaceAll(${sql}, ${param('\\"')}, ${param('"')})`;

/**
 * The chain's elements, clicked element first: Array(Tuple(head String, attributes Array(Tuple(key, value)))).
 * `chain` is the SQL of the elements_chain column.
 */
export function chainElementsSql(chain: string, param: Param): string {
  const matched = `extract(${E}, ${param(HEAD_PATTERN)})`;
  // The attribute colon is the last colon of the head's match (the key's characters hold none); 0 when none.
  const colon = `if(match(${matched}, ${param(ATTRIBUTE_COLON_PATTERN)}), length(${matched}) + 1 - position(reverse(${matched}), ${param(':')}), 0)`;
  const head = `if(${colon} = 0, ${E}, substring(${E}, 1, ${colon} - 1))`;
  const rest = `if(${colon} = 0, '', substring(${E}, ${colon} + 1))`;
  const pairs = `extractAll(${rest}, ${param(ATTRIBUTE_PATTERN)})`;
  // A pair is `key="value"` or, last in the element, `key="value` (unterminated). A final `"` preceded by a
  // backslash is an escaped quote of an unterminated value: the value's pattern always takes `\"` as a pair.
  const eq = `position(${KV}, ${param('="')})`;
  const raw = `substring(${KV}, ${eq} + 2)`;
  const closed = `endsWith(${raw}, ${param('"')}) AND NOT endsWith(${raw}, ${param('\\"')})`;
  const key = `substring(${KV}, 1, ${eq} - 1)`;
  const value = `if(${closed}, substring(${raw}, 1, length(${raw}) - 1), ${raw})`;
  const attributes = `arrayMap(${KV} -> tuple(${unescape(key, param)}, ${unescape(value, param)}), ${pairs})`;
  return `arrayMap(${E} -> tuple(${head}, ${attributes}), extractAll(${chain}, ${param(ELEMENT_PATTERN)}))`;
}

/** Accessors of one parsed element (`el`, the SQL of an element of chainElementsSql). */
export const element = {
  /** The tag ('' when the head has none, the parser's null). */
  tag: (el: string, param: Param): string => `splitByChar(${param('.')}, tupleElement(${el}, 1))[1]`,
  /** The classes, in the head's order, empty ones dropped. */
  classes: (el: string, param: Param): string =>
    `arrayFilter(${C} -> notEmpty(${C}), arraySlice(splitByChar(${param('.')}, tupleElement(${el}, 1)), 2))`,
  /** Whether the element has an attribute pair with this key. */
  has: (el: string, key: string, param: Param): string => `arrayExists(${KV} -> tupleElement(${KV}, 1) = ${param(key)}, tupleElement(${el}, 2))`,
  /** The value of the last pair with this key ('' when none: test `has` first). */
  value: (el: string, key: string, param: Param): string =>
    `tupleElement(arrayElement(arrayFilter(${KV} -> tupleElement(${KV}, 1) = ${param(key)}, tupleElement(${el}, 2)), -1), 2)`,
};
