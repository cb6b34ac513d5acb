// Element conditions on ClickHouse against the local engine, condition by condition (src/domain/analytics/clickhouse/
// element-conditions-sql.ts vs compileElementFilter over parseElementsChain): every printed condition is run by chdb
// over handwritten chains with the parser's quirks (quotes, escapes, colons, separators inside values, repeated keys,
// nth numbers as parseInt reads them) and over generated ones, and must decide every chain as the local engine does.
import t from 'tap';
import { queryBind } from 'chdb';
import { elementConditionGap, elementConditionSql } from '../../src/domain/analytics/clickhouse/element-conditions-sql.js';
import { compileElementFilter } from '../../src/domain/analytics/element-match.js';
import type { FilterLeaf } from '../../src/domain/analytics/property-filters.js';
import { elementsChainFromRecords, parseElementsChain } from '../../src/domain/ingest/elements-chain.js';
import type { ElementRecord } from '../../src/domain/ingest/types.js';
import { Random } from '../helpers/fuzz.js';

/** The condition decided by chdb for each chain, in order (values as query parameters, as the printer sends them). */
function onClickHouse(leaf: FilterLeaf, chains: readonly string[]): boolean[] {
  const params: Record<string, string> = {};
  const param = (text: string) => {
    const name = `p${Object.keys(params).length}`;
    params[name] = text;
    return `{${name}:String}`;
  };
  const condition = elementConditionSql(leaf, '__chain', param);
  const list = chains.map(param).join(', ');
  const out = queryBind(`SELECT arrayMap(__chain -> toUInt8(${condition}), [${list}]::Array(String)) AS r`, params, 'JSONEachRow');
  return (JSON.parse(out.trim()) as { r: number[] }).r.map((v) => v === 1);
}

const onLocal = (leaf: FilterLeaf, chains: readonly string[]) => {
  const test = compileElementFilter(leaf);
  return chains.map((c) => test(parseElementsChain(c)));
};

const leaf = (key: string, operator: string, value: unknown, negation = false): FilterLeaf => ({ type: 'element', key, operator, value, groupTypeIndex: null, negation });

function compare(tt: Tap.Test, leaves: readonly FilterLeaf[], chains: readonly string[]): void {
  for (const l of leaves) {
    const gap = elementConditionGap(l);
    if (gap !== null) {
      tt.fail(`${JSON.stringify(l)} is a gap: ${gap}`);
      continue;
    }
    const local = onLocal(l, chains);
    const ch = onClickHouse(l, chains);
    const wrong = chains.flatMap((c, k) => (local[k] === ch[k] ? [] : [`${JSON.stringify(c)} (locally ${local[k]})`]));
    tt.same(wrong, [], `${l.key} ${l.operator}${l.negation ? ' (negated)' : ''} ${JSON.stringify(l.value)}: ${local.filter(Boolean).length} of ${chains.length} match`);
  }
}

const CHAINS = [
  '',
  'button.btn.btn-primary:attr__class="btn btn-primary"attr__id="go"href="/go"nth-child="2"nth-of-type="1"text="Go now"',
  'span:nth-child="1"nth-of-type="1"text="Sign up";button.cta:attr__data-x="a:b;c d"nth-child="3"nth-of-type="2";div.wrap.main:nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  'a:href="https://x.test/a?b=1;c=2"text="say \\"hi\\""nth-child="01"nth-of-type=" 7"',
  'a:href="/one"attr__href="/two";a:attr__href="/three"',
  'div:hover.x:attr__id="q"',
  'div.:text="colon: inside"',
  '.only-class:text="no tag"',
  'li:nth-child="-0"nth-of-type="+3";ul:nth-child="3px"nth-of-type="0x1"',
  'p:text="first"text="second"',
  'p:text="tab\there"attr__title="new\nline"',
  'em:text="unterminated;still one element',
  'em:text="ends in backslash\\',
  'i:text="a\\\\"b"c="d"',
  'x:="empty key"attr__="v"',
  'a b;c\td\ne\rf',
  'svg:attr__constructor="c"attr____proto__="p"',
  'input:attr__text="t"attr_id="legacy"',
  'li.item:nth-child="1";li.item:nth-child="2";ul.list:nth-child="1";div:nth-child="1"',
  'span:text="ΑΣ Σ ÉCOLE İ";div:text="café"',
  'button:text="Go"',
  'BUTTON:text="GO"',
];

t.test('value conditions: tag_name, text, href with every operator the local engine has for them', async (tt) => {
  const leaves: FilterLeaf[] = [];
  for (const key of ['tag_name', 'text', 'href']) {
    for (const value of ['Go', 'go', 'a', '', 'say "hi"', '/go', '/two', 'second', 'unterminated;still one element', 'ends in backslash\\', 'a\\"b', 'ς', 'σ', 'école', 'i̇']) {
      for (const operator of ['exact', 'is_not', 'icontains', 'not_icontains']) leaves.push(leaf(key, operator, value));
    }
    leaves.push(leaf(key, 'exact', ['Go', 'button', '/one']), leaf(key, 'exact', []), leaf(key, 'is_not', ['a', 'p']));
    for (const operator of ['is_set', 'is_not_set']) leaves.push(leaf(key, operator, null), leaf(key, operator, null, true));
    for (const pattern of ['^Go', 'go$', '(?i)^go', '^/t(wo|hree)$', 'a.b', '^$', '[', 'new.line', '^x=', 'ΑΣ']) {
      leaves.push(leaf(key, 'regex', pattern), leaf(key, 'not_regex', pattern), leaf(key, 'regex', pattern, true));
    }
    leaves.push(leaf(key, 'exact', 'Go', true), leaf(key, 'exact', 1), leaf(key, 'exact', ['1', 2]));
  }
  compare(tt, leaves, CHAINS);
});

t.test('selectors: tags, classes, ids, attributes, nth numbers and combinators', async (tt) => {
  const selectors = [
    'button', 'button.cta', '.btn', '.btn.btn-primary', '#go', 'button#go', '[href]', '[href="/go"]', '[href="/two"]', '[href="/three"]', "[href='/one']",
    '[data-x]', '[data-x="a:b;c d"]', '[class]', '[class="btn btn-primary"]', '[class="btn-primary btn"]', '[id="q"]', '#q', '[text]', '[title]',
    '[constructorx]', '[constructor]', 'div > [__proto__="x"]', '[toString]', '[c]', '[attr_id]', '[id="legacy"]', ':nth-child(2)', 'button:nth-child(3)', 'a:nth-child(1)', 'a:nth-of-type(7)', 'li:nth-child(0)',
    'li:nth-of-type(3)', 'ul:nth-child(3)', 'ul:nth-of-type(0)', 'ul:nth-of-type(1)', 'button:nth-child(03)',
    'div span', 'div > span', 'div > button', 'div > button > span', 'body div span', 'body > div > button > span', 'body > span', 'div button span',
    'ul li', 'ul > li', 'ul > li > li', 'ul li li', 'div > ul > li.item', 'div li:nth-child(2)', 'div > ul li:nth-child(1)', 'ul > li:nth-child(1)',
    '*', '* > *', 'div *', 'body > *', 'BUTTON', 'div:hover.x', 'em', 'p', 'x', '[]', 'div:hover', ' button ', '> span', 'div >', 'div >> span',
    'li.item li.item', 'li.item > li.item', 'li.item > li.item > ul',
  ];
  const leaves = selectors.flatMap((s) => [leaf('selector', 'exact', s), leaf('selector', 'is_not', s), leaf('selector', 'exact', s, true)]);
  leaves.push(leaf('selector', 'exact', 42), leaf('selector', 'is_not', null), leaf('selector', 'regex', 'div'));
  compare(tt, leaves, CHAINS);
});

t.test('what is left to the local engine names itself', async (tt) => {
  tt.match(elementConditionGap(leaf('text', 'gt', '3')), /operator gt/);
  tt.match(elementConditionGap(leaf('href', 'is_date_after', '2026-01-01')), /operator is_date_after/);
  // Attributes named like JavaScript object members are the chain's own (compared in the selectors above).
  tt.equal(elementConditionGap(leaf('selector', 'exact', 'svg[constructor]')), null);
  tt.match(elementConditionGap(leaf('selector', 'exact', 'li:nth-child(1000000000000000)')), /nth/);
  tt.equal(elementConditionGap(leaf('selector', 'exact', 'li:nth-child(999999999999999)')), null);
  tt.equal(elementConditionGap(leaf('selector', 'exact', 'not a [selector')), null, 'an unparsed selector is printed as matching nothing');
});

/** A random element record whose values hold the characters the chain's syntax gives meaning to. */
function randomRecord(r: Random, order: number): ElementRecord {
  const text = () => Array.from({ length: r.int(0, 6) }, () => r.pick(['a', 'b', 'A', '"', '\\', ':', ';', ' ', '=', '.', '-', 'é', '1', '\n'])).join('');
  const attributes: Record<string, string> = {};
  for (let k = r.int(0, 3); k > 0; k--) attributes[r.pick(['attr__id', 'attr__href', 'attr__data-x', 'attr__title', 'data-x', 'attr__text'])] = text();
  return {
    text: r.chance(0.5) ? text() : null,
    tag_name: r.chance(0.9) ? r.pick(['a', 'div', 'span', 'button']) : null,
    attr_class: r.chance(0.5) ? [r.pick(['a', 'b', 'c'])].concat(r.chance(0.5) ? ['b'] : []) : null,
    href: r.chance(0.4) ? r.pick(['/a', '/b', text()]) : null,
    attr_id: r.chance(0.2) ? r.pick(['a', 'b']) : null,
    nth_child: r.chance(0.8) ? r.int(0, 3) : null,
    nth_of_type: r.chance(0.8) ? r.int(0, 3) : null,
    attributes,
    order,
  };
}

t.test('generated chains and selectors', async (tt) => {
  const r = new Random(20261128);
  const chains: string[] = [];
  for (let n = 0; n < 150; n++) chains.push(elementsChainFromRecords(Array.from({ length: r.int(1, 6) }, (_, k) => randomRecord(r, k))));
  // Text the writer never makes: the parser's corner cases at random.
  for (let n = 0; n < 100; n++) chains.push(Array.from({ length: r.int(1, 30) }, () => r.pick(['a', 'div', '.', ':', '=', '"', '\\', ';', ' ', 'text', 'href', 'nth-child', '1', 'é', '\t'])).join(''));
  const compound = () => {
    let c = r.chance(0.6) ? r.pick(['a', 'div', 'span', 'button']) : '';
    if (r.chance(0.4)) c += `.${r.pick(['a', 'b', 'c'])}`;
    if (r.chance(0.2)) c += `#${r.pick(['a', 'b'])}`;
    if (r.chance(0.2)) c += r.pick(['[href]', '[href="/a"]', '[data-x]', '[id="a"]', '[title]', '[class="a b"]']);
    if (r.chance(0.3)) c += `:nth-child(${r.int(0, 3)})`;
    if (r.chance(0.2)) c += `:nth-of-type(${r.int(0, 3)})`;
    return c === '' ? '*' : c;
  };
  const leaves: FilterLeaf[] = [];
  for (let n = 0; n < 60; n++) {
    const parts = Array.from({ length: r.int(1, 4) }, compound);
    leaves.push(leaf('selector', 'exact', parts.map((p, k) => (k === 0 ? p : `${r.chance(0.5) ? ' > ' : ' '}${p}`)).join('')));
  }
  for (const key of ['text', 'href', 'tag_name']) {
    for (const value of ['a', '/a', '"', '\\', ':', ';a', 'a b', 'div']) leaves.push(leaf(key, 'exact', value), leaf(key, 'icontains', value));
    leaves.push(leaf(key, 'regex', '^[ab]+$'), leaf(key, 'regex', '"'), leaf(key, 'is_set', null));
  }
  compare(tt, leaves, chains);
});
