// Element conditions as ClickHouse SQL text (src/domain/analytics/clickhouse/element-conditions-sql.ts and
// elements-chain-sql.ts): user text only as parameters, the selector's placement as one pattern, parseInt's reading
// of nth numbers as a pattern, negations, what the local engine matches nothing with printed as false, and actions
// with autocapture steps printed into a trends series (the chdb comparison is element-conditions-chdb.test.ts).
import t from 'tap';
import { compoundSql, elementConditionGap, elementConditionSql, nthPattern, requiredTexts, selectorPattern } from '../../src/domain/analytics/clickhouse/element-conditions-sql.js';
import { ATTRIBUTE_COLON_PATTERN, ATTRIBUTE_PATTERN, ELEMENT_PATTERN, HEAD_PATTERN } from '../../src/domain/analytics/clickhouse/elements-chain-sql.js';
import { clickHouseTrendsGap, trendsSeriesSql, type TrendsSqlOptions } from '../../src/domain/analytics/clickhouse/trends-sql.js';
import { parseSelector } from '../../src/domain/analytics/element-match.js';
import { FilterParams } from '../../src/domain/analytics/filter-params.js';
import { trendsQueryOf } from '../../src/domain/analytics/legacy-filters.js';
import type { FilterLeaf } from '../../src/domain/analytics/property-filters.js';
import { storedTableReads } from '../../src/domain/hogql/clickhouse-printer.js';

const EVIL = "x' OR 1=1 --";
const leaf = (key: string, operator: string, value: unknown, negation = false): FilterLeaf => ({ type: 'element', key, operator, value, groupTypeIndex: null, negation });

/** Prints a leaf with numbered placeholders, returning the SQL and the parameters. */
function printed(l: FilterLeaf): { sql: string; params: string[] } {
  const params: string[] = [];
  const sql = elementConditionSql(l, 'chain', (text) => `{p${params.push(text) - 1}:String}`);
  return { sql, params };
}

t.test('user text is only ever a parameter', async (tt) => {
  for (const l of [leaf('text', 'exact', EVIL), leaf('href', 'icontains', EVIL), leaf('tag_name', 'regex', `${EVIL}|a`), leaf('selector', 'exact', `div[title="${EVIL.replace(/ /g, '')}"]`)]) {
    const { sql, params } = printed(l);
    tt.notMatch(sql, /OR|1=1|--|'x/, `${l.key} ${l.operator}: no user text in the SQL`);
    tt.notOk(sql.replaceAll("''", '').includes("'"), `${l.key} ${l.operator}: no string literal but ''`);
    tt.ok(params.some((p) => p.includes("x'")), `${l.key} ${l.operator}: the value as a parameter`);
  }
});

t.test('the chain is parsed by patterns that take what the local parser takes', async (tt) => {
  const { sql, params } = printed(leaf('text', 'exact', 'Go'));
  for (const p of [ELEMENT_PATTERN, HEAD_PATTERN, ATTRIBUTE_COLON_PATTERN, ATTRIBUTE_PATTERN]) tt.ok(params.includes(p), `pattern ${p}`);
  tt.match(sql, /arrayExists\(__qel -> /, 'some element passes');
  tt.match(sql, /extractAll\(chain, /, 'the elements of the chain');
  tt.match(sql, /extractAll\(if\(/, 'the attribute pairs of an element');
  tt.ok(params.includes('\\"') && params.includes('"'), '\\" read as " in keys and values');
  tt.ok(params.includes('text') && params.includes('Go'), 'the key and the value');
});

t.test('operators: positives, negations, and what matches nothing locally', async (tt) => {
  tt.notMatch(printed(leaf('text', 'exact', 'a')).sql, /^NOT/, 'exact');
  tt.match(printed(leaf('text', 'is_not', 'a')).sql, /^NOT \(position\(.* AND arrayExists/, 'is_not: no element has it');
  tt.match(printed(leaf('text', 'exact', 'a', true)).sql, /^NOT \(/, 'a negated filter');
  tt.notMatch(printed(leaf('text', 'is_not', 'a', true)).sql, /^NOT/, 'a negated negative is positive');
  tt.ok(printed(leaf('href', 'icontains', 'ÉCOLE')).params.includes('école'), 'the needle lowered as the local engine lowers it');
  tt.match(printed(leaf('href', 'icontains', 'x')).sql, /position\(lowerUTF8\(/);
  tt.match(printed(leaf('href', 'regex', '^/a')).sql, /match\(/);
  tt.equal(printed(leaf('href', 'regex', '(unclosed')).sql, 'false', 'a pattern RE2 refuses matches nothing');
  tt.equal(printed(leaf('href', 'not_regex', '(unclosed')).sql, 'NOT false', '… and its negation everything');
  tt.equal(printed(leaf('text', 'exact', [])).sql, 'false', 'no values');
  tt.equal(printed(leaf('selector', 'exact', 'div:hover')).sql, 'false', 'a selector the local engine does not parse');
  tt.equal(printed(leaf('selector', 'exact', 7)).sql, 'false', 'a selector that is not text');
  tt.ok(printed(leaf('tag_name', 'exact', ['a', 1])).params.includes('1'), 'a number compared by its text');
  tt.match(printed(leaf('tag_name', 'is_set', null)).sql, /notEmpty\(splitByChar/, 'a tag is set when the head has one');
  tt.throws(() => printed(leaf('text', 'gt', 3)), /internal/, 'the gaps are not printed');
});

t.test('the substrings a chain must contain first (cheap, and only what is certain)', async (tt) => {
  tt.same(requiredTexts('text', 'exact', 'Say "hi"'), ['text="', 'Say \\"hi\\"'], 'the key, and the value as the chain writes it');
  tt.same(requiredTexts('href', 'exact', ['/a', '/b']), ['href="'], 'one of several values: the key only');
  tt.same(requiredTexts('text', 'icontains', 'GO'), ['text="'], 'a case-insensitive value is not a substring');
  tt.same(requiredTexts('text', 'regex', 'go'), ['text="']);
  tt.same(requiredTexts('tag_name', 'exact', 'button'), ['button'], 'a tag stands in the chain as it is');
  tt.same(requiredTexts('tag_name', 'is_set', null), []);
  tt.same(requiredTexts('selector', 'exact', 'form.checkout > button#go[data-x=a"b][title][class="c"]:nth-child(2)'), ['form', 'checkout', 'button', 'go', 'a\\"b'],
    'tags, classes, and attribute values as written; not a class list nor names');
  tt.same(requiredTexts('selector', 'exact', 'div:hover'), [], 'a selector the local engine does not parse');
});

t.test('a selector is one pattern over the elements’ lists of satisfied parts', async (tt) => {
  const any = '(?:\\|[^|]*)*';
  const at = (p: number) => `\\|[^|]*,${p},[^|]*`;
  tt.equal(selectorPattern(parseSelector('button')!), `^${any}${at(0)}`);
  tt.equal(selectorPattern(parseSelector('form > button')!), `^${any}${at(1)}${at(0)}`, 'a child: the very next element up');
  tt.equal(selectorPattern(parseSelector('body div > .a span')!), `^${any}${at(3)}${any}${at(2)}${at(1)}${any}${at(0)}`, 'descendants: any elements between');
  const { sql, params } = printed(leaf('selector', 'exact', 'form.checkout > button#go'));
  tt.match(sql, /AND match\(arrayStringConcat\(arrayMap\(__qel -> concat\(/, 'one match over the blocks, after the substrings it needs');
  tt.ok(params.includes('0,') && params.includes('1,') && params.includes('|,'), 'each element lists the parts it satisfies');
  tt.ok(params.includes('checkout') && params.includes('go') && params.includes('form') && params.includes('button'));
});

t.test('compounds read attributes as the local engine does', async (tt) => {
  const one = (selector: string) => {
    const params: string[] = [];
    const sql = compoundSql('el', parseSelector(selector)![0]!.compound, (text) => `{p${params.push(text) - 1}:String}`);
    return { sql, params };
  };
  tt.equal(one('*').sql, 'true', 'the universal selector');
  tt.same(one('[href]').params, ['href', 'attr__href'], 'href, then attr__href');
  tt.same(one('#a').params.filter((p) => p !== 'a'), ['attr_id', 'attr_id', 'attr__id', 'attr__id'], 'attr_id, then attr__id');
  tt.same(one('[title]').params, ['attr__title', 'title'], 'attr__title, then title');
  tt.same(one('[text]').params, ['attr__text'], 'text is a field of its own, never a generic attribute');
  tt.match(one('[class="a"]').sql, /arrayStringConcat\(arrayFilter/, 'class: the head\'s classes joined');
  tt.same(one('li:nth-child(2):nth-of-type(0)').params, ['.', 'li', 'nth-child', 'nth-child', nthPattern(2), 'nth-of-type', 'nth-of-type', nthPattern(0)]);
});

t.test("nth numbers as parseInt reads the chain's text", async (tt) => {
  const re = (n: number) => new RegExp(nthPattern(n).replace(/\\x\{([0-9A-F]+)\}/g, '\\u{$1}'), 'u');
  for (const [text, n] of [['2', 2], ['02', 2], ['+2', 2], [' \t2px', 2], ['\u00a02', 2], ['0', 0], ['-0', 0], ['0x1', 0], ['-00', 0], ['12', 12]] as const) {
    tt.ok(re(n).test(text), `${JSON.stringify(text)} is ${n}`);
    tt.equal(parseInt(text, 10), n, `(parseInt agrees on ${JSON.stringify(text)})`);
  }
  for (const [text, n] of [['-2', 2], ['22', 2], ['2', 12], ['x2', 2], ['', 0], ['- 0', 0], ['1', 0]] as const) {
    tt.notOk(re(n).test(text), `${JSON.stringify(text)} is not ${n}`);
    tt.not(parseInt(text, 10), n, `(parseInt agrees on ${JSON.stringify(text)})`);
  }
});

const OPTS: TrendsSqlOptions = { team: 42, database: 'posthog', timeZone: 'UTC', now: Date.UTC(2026, 10, 8) };

t.test('an action with autocapture steps is a trends series on ClickHouse; the named sub-cases are gaps', async (tt) => {
  const step = { event: '$autocapture', properties: [], selector: 'form > button', tag_name: 'button', text: EVIL, text_matching: 'contains' as const, href: '^/a', href_matching: 'regex' as const, url: null, url_matching: null };
  const actions = new Map([[1, { id: 1, name: 'clicked', steps: [step] }], [2, { id: 2, name: 'odd', steps: [{ ...step, selector: 'svg:nth-child(1000000000000000)' }] }]]);
  const q = (id: number) => trendsQueryOf(new FilterParams({ actions: [{ id, type: 'actions' }] }, (n) => actions.get(n)));
  const clicked = q(1);
  tt.equal(clickHouseTrendsGap(clicked, [clicked.properties, ...clicked.series.map((s) => s.properties)]), null, 'selector, tag, text and href run on ClickHouse');
  const sql = trendsSeriesSql(clicked.series[0]!, clicked.series[0]!.properties, [Date.UTC(2026, 10, 1)], Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 2), { kind: 'buckets', breakdown: null }, OPTS);
  tt.match(sql.sql, /`elements_chain`/, 'the chain column of the events');
  tt.notMatch(sql.sql, /OR 1=1/, 'no step text in the SQL');
  tt.ok(Object.values(sql.params).includes(EVIL.toLowerCase()), 'the step text as a parameter');
  tt.ok(storedTableReads(sql.sql, 'posthog').every((r) => r.team === 42), 'guarded');
  const odd = q(2);
  tt.match(clickHouseTrendsGap(odd, [odd.properties, ...odd.series.map((s) => s.properties)]), /nth/, 'named');
  tt.match(elementConditionGap(leaf('text', 'lt', 3)), /element filter operator lt/);
  tt.match(elementConditionGap(leaf('selector', 'exact', 'p:nth-of-type(1000000000000000)')), /nth/);
});
