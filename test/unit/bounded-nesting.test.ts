// Bounded nesting in every recursive reader of a request's text: the HogQL parser (its own recursion and the depth of
// the tree it builds), trends formulas, CSS selectors of element filters, and JSON text that arrives inside a
// parameter or a string. Past a bound each one refuses with an input error (a 400), never a stack overflow.
import t from 'tap';
import { AnalyticsInputError } from '../../src/domain/analytics/errors.js';
import { MAX_SELECTOR_PARTS, matchesSelector, parseSelector } from '../../src/domain/analytics/element-match.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { parseFilters } from '../../src/domain/analytics/property-filters.js';
import { applyFormula, parseFormula } from '../../src/domain/analytics/trends-values.js';
import { jsonPath } from '../../src/domain/hogql/functions.js';
import { MAX_QUERY_LENGTH } from '../../src/domain/hogql/lexer.js';
import { MAX_NESTING, parseExpression, parseQuery } from '../../src/domain/hogql/parser.js';
import { printQuery } from '../../src/domain/hogql/print.js';
import type { ElementRecord } from '../../src/domain/ingest/types.js';

const TOO_DEEP = new RegExp(`nested too deeply \\(more than ${MAX_NESTING} levels\\)`);

function refusal(run: () => unknown): AnalyticsInputError | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof AnalyticsInputError) return error;
    throw error;
  }
}

const repeat = (s: string, n: number) => s.repeat(n);
const chain = (term: string, op: string, n: number) => Array(n).fill(term).join(op);

/** HogQL texts of a shape at `n` levels. */
const SHAPES: Record<string, (n: number) => string> = {
  parentheses: (n) => `SELECT ${repeat('(', n)}1${repeat(')', n)}`,
  'a + chain': (n) => `SELECT ${chain('1', '+', n)}`,
  'a || chain': (n) => `SELECT ${chain("'a'", ' || ', n)}`,
  'a * chain': (n) => `SELECT ${chain('1', '*', n)}`,
  'nested plus()': (n) => `SELECT ${repeat('plus(1, ', n)}1${repeat(')', n)}`,
  'nested arrays': (n) => `SELECT ${repeat('[', n)}1${repeat(']', n)}`,
  'nested tuples': (n) => `SELECT ${repeat('(1, ', n)}1${repeat(')', n)}`,
  'NOT NOT …': (n) => `SELECT ${repeat('NOT ', n)}1`,
  'unary minus': (n) => `SELECT ${repeat('- ', n)}x`,
  'unary plus': (n) => `SELECT ${repeat('+ ', n)}1`,
  'index chain': (n) => `SELECT [1]${repeat('[1]', n)}`,
  'ternary chain': (n) => `SELECT ${repeat('x ? 1 : ', n)}0`,
  'CASE in CASE': (n) => `SELECT ${repeat('CASE WHEN x THEN ', n)}1${repeat(' END', n)}`,
  'scalar subqueries': (n) => `SELECT ${repeat('(SELECT ', n)}1${repeat(')', n)}`,
  'FROM subqueries': (n) => `SELECT 1 FROM ${repeat('(SELECT 1 FROM ', n)}events${repeat(')', n)}`,
  'parenthesised queries': (n) => `${repeat('(', n)}SELECT 1${repeat(')', n)}`,
  'INTERVAL INTERVAL': (n) => `SELECT ${repeat('INTERVAL ', n)}1${repeat(' DAY', n)}`,
};

t.test('every recursive shape of HogQL is refused with an input error past the bound, at 10,000 and 100,000 levels', async (t) => {
  for (const [name, make] of Object.entries(SHAPES)) {
    for (const n of [MAX_NESTING + 1, 10_000, 100_000]) {
      const error = refusal(() => parseQuery(make(n)));
      t.ok(error, `${name} × ${n}: refused`);
      // Past ClickHouse's max_query_size the length refuses it before the nesting is looked at.
      t.match(error?.message, make(n).length > MAX_QUERY_LENGTH ? /max_query_size/ : TOO_DEEP, `${name} × ${n}`);
      t.equal(error?.code, 'query_error');
    }
  }
});

t.test('the same shapes well inside the bound parse', async (t) => {
  for (const [name, make] of Object.entries(SHAPES)) {
    // Subqueries cost two levels each (the query and the expression or FROM it sits in).
    const n = name.includes('quer') ? 100 : 200;
    t.doesNotThrow(() => parseQuery(make(n)), `${name} × ${n}`);
  }
});

t.test('the bound is exact for a chain: the tree of SELECT 1+…+1 may have MAX_NESTING levels, not one more', async (t) => {
  // SELECT (1 level) over n-1 plus() calls over the leaves: n + 1 levels.
  const ok = parseQuery(`SELECT ${chain('1', '+', MAX_NESTING - 1)}`);
  t.equal(printQuery(ok).length > 0, true);
  t.match(refusal(() => parseQuery(`SELECT ${chain('1', '+', MAX_NESTING)}`))?.message, TOO_DEEP);
  // Nesting spread over parentheses and chains adds up: 200 nested calls holding a 100-term chain is 300 levels.
  const mixed = `SELECT ${repeat('plus(1, ', 200)}${chain('1', '+', 100)}${repeat(')', 200)}`;
  t.match(refusal(() => parseQuery(mixed))?.message, TOO_DEEP);
  // parseExpression (EventsQuery select and where items) is bounded the same way.
  t.match(refusal(() => parseExpression(chain('x', '+', 100_000)))?.message, TOO_DEEP);
  t.match(refusal(() => parseExpression(`${repeat('(', 100_000)}x${repeat(')', 100_000)}`))?.message, TOO_DEEP);
});

t.test('a 100,000-term query is refused quickly, a huge one by its length before it is read', async (t) => {
  const started = performance.now();
  t.match(refusal(() => parseQuery(`SELECT ${chain('1', '+', 100_000)}`))?.message, TOO_DEEP);
  const ms = performance.now() - started;
  // Refused at the 257th level: milliseconds here; the bound only fails an unbounded parse (seconds of recursion or an
  // overflowed stack), never a slow machine.
  t.ok(ms < 10_000, `refused in ${ms.toFixed(0)} ms (bound: 10 s)`);
  const huge = `SELECT ${chain('1', ', ', 1_000_000)}`;
  t.match(refusal(() => parseQuery(huge))?.message, /longer than 262,144 characters/);
});

t.test('a long flat list is no nesting: an IN list of 60,000 values parses (and is not spread onto the stack)', async (t) => {
  const list = Array.from({ length: 60_000 }, () => '1').join(',');
  const q = parseQuery(`SELECT 1 WHERE x IN (${list}) OR y = [${list}]`);
  t.equal(q.k, 'select');
  const where = q.k === 'select' ? q.where : null;
  t.equal(where?.k === 'call' && where.args[0]?.k === 'call' ? where.args[0].args[1]?.k === 'call' && where.args[0].args[1].args.length : 0, 60_000);
});

t.test('formulas: bounded recursion and tree depth, same values below the bound', async (t) => {
  const series = [[1, 2, 3], [4, 5, 6]];
  t.same(applyFormula(parseFormula('(A + B) / 2', 2), series, 3), [2.5, 3.5, 4.5]);
  t.same(applyFormula(parseFormula(`${repeat('(', 200)}A${repeat(')', 200)}`, 1), series, 3), [1, 2, 3]);
  t.same(applyFormula(parseFormula(chain('A', '+', 200), 1), series, 3), [200, 400, 600]);
  t.same(applyFormula(parseFormula(`${repeat('- ', 100)}B`, 2), series, 3), [4, 5, 6]);
  for (const text of [
    `${repeat('(', 10_000)}A${repeat(')', 10_000)}`,
    `${repeat('(', 100_000)}A${repeat(')', 100_000)}`,
    chain('A', '+', 100_000),
    chain('A', '*', 10_000),
    chain('A', '^', 10_000),
    `${repeat('-', 10_000)}A`,
    `${repeat('(A + ', 200)}${chain('A', '-', 100)}${repeat(')', 200)}`,
  ]) {
    const error = refusal(() => parseFormula(text, 1));
    t.equal(error?.attr, 'formula', text.slice(0, 20));
    t.match(error?.message, /The formula is nested too deeply \(more than 256 levels\)/);
  }
  t.match(refusal(() => parseFormula(`${chain('(A)', '+', 200)} ${repeat('+ (A) ', 10_000)}`, 1))?.message, /nested too deeply|too long/);
  // Wide but shallow: a balanced tree of 4,096 letters, 12 levels deep, is more than 10,000 tokens.
  const balanced = (d: number): string => (d === 0 ? 'A' : `(${balanced(d - 1)}+${balanced(d - 1)})`);
  t.same(applyFormula(parseFormula(balanced(10), 1), series, 3), [1024, 2048, 3072]);
  t.match(refusal(() => parseFormula(balanced(12), 1))?.message, /The formula is too long \(more than 10,000 tokens\)/);
  // Errors found before the limits stay as they were.
  t.match(refusal(() => parseFormula('A; drop', 1))?.message, /Unexpected/);
  t.match(refusal(() => parseFormula('A + B', 1))?.message, /only 1/);
  t.match(refusal(() => parseFormula('(A', 1))?.message, /unclosed/);
});

const el = (tag: string, classes: string[] | null = null): ElementRecord =>
  ({ tag_name: tag, attr_class: classes, attributes: {}, nth_child: null, nth_of_type: null, href: null, text: null, attr_id: null }) as unknown as ElementRecord;

t.test('selectors: matched without recursion or backtracking', async (t) => {
  const chainOf = (...tags: string[]) => tags.map((tag) => el(tag));
  const matches = (selector: string, elements: ElementRecord[]) => matchesSelector(elements, parseSelector(selector)!);
  // The clicked element first, then its ancestors.
  t.equal(matches('div > a', chainOf('a', 'div', 'body')), true);
  t.equal(matches('body a', chainOf('a', 'div', 'body')), true);
  t.equal(matches('body > a', chainOf('a', 'div', 'body')), false);
  t.equal(matches('div span', chainOf('a', 'div', 'body')), false);
  t.equal(matches('a', chainOf('span', 'a', 'body')), true);
  t.equal(matches('body div a', chainOf('a', 'div', 'body')), true);
  t.equal(matches('div div a', chainOf('a', 'div', 'body')), false);
  t.equal(matches('div > div a', chainOf('a', 'p', 'div', 'div')), true);
  t.equal(matches('div > div > a', chainOf('a', 'p', 'div', 'div')), false);
  // A selector that used to take exponential time: 14 parts that cannot all match, over 40 elements.
  const backtracking = `p ${chain('div', ' ', 12)} span`;
  let started = performance.now();
  t.equal(matches(backtracking, [el('span'), ...Array.from({ length: 40 }, () => el('div'))]), false);
  // Linear: a millisecond here; a backtracking matcher takes 2^12 paths per element (minutes). The bound only fails that.
  t.ok(performance.now() - started < 10_000, 'no backtracking (bound: 10 s)');
  // MAX_SELECTOR_PARTS parts over as many elements: no stack frame per part.
  const deep = chain('div', ' > ', MAX_SELECTOR_PARTS);
  started = performance.now();
  t.equal(matches(deep, Array.from({ length: 10_000 }, () => el('div'))), true);
  t.ok(performance.now() - started < 10_000, 'linear in the parts (bound: 10 s)');
  t.equal(parseSelector(chain('div', ' > ', MAX_SELECTOR_PARTS + 1)), null, 'more parts: unsupported (an action step refuses it)');
  t.equal(parseSelector(chain('div', ' ', 100_000)), null);
});

t.test('JSON text inside a parameter or a string is bounded like a request body', async (t) => {
  const deep = (n: number) => `${repeat('[', n)}1${repeat(']', n)}`;
  const params = new FilterParams({ properties: `[{"key":"a","value":${deep(100_000)}}]`, events: deep(200), ok: deep(100) });
  t.match(refusal(() => params.json('properties')), { attr: 'properties', message: /nests deeper than 128 levels/ });
  t.match(refusal(() => params.json('events')), { attr: 'events' });
  t.ok(Array.isArray(params.json('ok')));
  t.match(refusal(() => parseFilters(`[{"key":"a","value":${deep(100_000)}}]`)), { attr: 'properties', message: /Properties nest deeper than 128 levels/ });
  t.match(refusal(() => parseFilters([{ key: 'a', value: JSON.parse(deep(5000)) }], 'x')), { attr: 'x' });
  t.equal(refusal(() => parseFilters(`[{"key":"a","value":${deep(100)}}]`)), null);
  // JSONExtract… of a text nested past the bound reads as no JSON (ClickHouse: the default value), not a crash.
  t.equal(jsonPath(deep(100_000), []), null);
  t.same(jsonPath(deep(10), [1]), JSON.parse(deep(9)));
});
