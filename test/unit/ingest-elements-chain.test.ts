import t from 'tap';
import {
  elementsChainFromElements,
  elementsChainFromRecords,
  parseElementsChain,
  type ElementRecord,
} from '../../src/domain/ingest/index.js';

const SPEC_EXAMPLE = 'a.btn.primary:attr__href="/x"href="/x"nth-child="2"nth-of-type="1"text="Buy"';

function rec(over: Partial<ElementRecord>): ElementRecord {
  return { text: null, tag_name: null, attr_class: null, href: null, attr_id: null, nth_child: null, nth_of_type: null, attributes: {}, order: 0, ...over };
}

t.test('§5.6 example parses and rebuilds byte for byte', async (t) => {
  const parsed = parseElementsChain(SPEC_EXAMPLE);
  t.same(parsed, [
    rec({ tag_name: 'a', attr_class: ['btn', 'primary'], href: '/x', text: 'Buy', nth_child: 2, nth_of_type: 1, attributes: { attr__href: '/x' } }),
  ]);
  t.equal(elementsChainFromRecords(parsed), SPEC_EXAMPLE);
});

t.test('build from posthog-js $elements', async (t) => {
  const cases: [string, unknown, string][] = [
    [
      'clicked element then ancestors; classes sorted; attributes sorted by key',
      [
        { tag_name: 'button', $el_text: 'Sign up', attr__class: 'primary btn', attr__id: 'signup', attr__type: 'submit', nth_child: 1, nth_of_type: 1 },
        { tag_name: 'form', attr__action: '/join', nth_child: 3, nth_of_type: 2 },
        { tag_name: 'body', nth_child: 2, nth_of_type: 1 },
      ],
      'button.btn.primary:attr__class="primary btn"attr__id="signup"attr__type="submit"attr_id="signup"nth-child="1"nth-of-type="1"text="Sign up";' +
        'form:attr__action="/join"nth-child="3"nth-of-type="2";' +
        'body:nth-child="2"nth-of-type="1"',
    ],
    ['nth-child / nth-of-type default to 0', [{ tag_name: 'div' }], 'div:nth-child="0"nth-of-type="0"'],
    ['quotes escaped in values, removed from classes', [{ tag_name: 'a', $el_text: 'say "hi"', attr__class: 'x"y', nth_child: 1, nth_of_type: 1 }],
      'a.xy:attr__class="x\\"y"nth-child="1"nth-of-type="1"text="say \\"hi\\""'],
    ['attr__class as a list', [{ tag_name: 'i', attr__class: ['b', 'a'] }], 'i.a.b:attr__class="b a"nth-child="0"nth-of-type="0"'],
    ['text over 400 chars is cut', [{ tag_name: 'p', $el_text: 'x'.repeat(500) }], `p:nth-child="0"nth-of-type="0"text="${'x'.repeat(400)}"`],
    ['non-object items skipped', [null, 'x', { tag_name: 'span' }], 'span:nth-child="0"nth-of-type="0"'],
    ['not an array', { tag_name: 'a' }, ''],
    ['empty', [], ''],
  ];
  for (const [name, elements, chain] of cases) t.equal(elementsChainFromElements(elements), chain, name);
});

t.test('$elements → chain → records round trip', async (t) => {
  const elements = [
    { tag_name: 'a', $el_text: 'Buy "now"; today', attr__class: 'btn primary', attr__href: 'https://x.test/a?b=c;d', attr__id: 'buy', attr__data_x: '', nth_child: 2, nth_of_type: 1 },
    { tag_name: 'div', attr__class: 'hover:bg-red md:flex', nth_child: 1, nth_of_type: 1 },
  ];
  const chain = elementsChainFromElements(elements);
  const parsed = parseElementsChain(chain);
  t.same(parsed, [
    rec({
      tag_name: 'a', attr_class: ['btn', 'primary'], text: 'Buy "now"; today', href: 'https://x.test/a?b=c;d', attr_id: 'buy',
      nth_child: 2, nth_of_type: 1, order: 0,
      attributes: { attr__class: 'btn primary', attr__data_x: '', attr__href: 'https://x.test/a?b=c;d', attr__id: 'buy' },
    }),
    rec({ tag_name: 'div', attr_class: ['hover:bg-red', 'md:flex'], nth_child: 1, nth_of_type: 1, order: 1, attributes: { attr__class: 'hover:bg-red md:flex' } }),
  ]);
  t.equal(elementsChainFromRecords(parsed), chain, 'rebuilding the parsed records gives the same chain');
});

t.test('parse edge cases', async (t) => {
  t.same(parseElementsChain(''), []);
  t.same(parseElementsChain('div'), [rec({ tag_name: 'div' })], 'no attributes');
  t.same(parseElementsChain('.only-class:nth-child="x"'), [rec({ attr_class: ['only-class'] })], 'no tag; unparsable number → null');
  t.same(
    parseElementsChain('a:text="x";b:text="y"').map((e) => [e.tag_name, e.text, e.order]),
    [['a', 'x', 0], ['b', 'y', 1]],
    'order follows the chain',
  );
});
