import t from 'tap';
import { toCsv } from '../../src/domain/csv.js';

t.test('CSV (§5.7)', async (t) => {
  const cases: [string, object[], string][] = [
    ['no rows → empty', [], ''],
    [
      'flatten objects with "." and lists by index; header is the sorted union',
      [
        { id: 1, distinct_ids: ['a', 'b'], properties: { email: 'a@x.test', nested: { deep: 1 } } },
        { id: 2, distinct_ids: ['c'], properties: { name: 'Bo' } },
      ],
      'distinct_ids.0,distinct_ids.1,id,properties.email,properties.name,properties.nested.deep\r\n' +
        'a,b,1,a@x.test,,1\r\n' +
        'c,,2,,Bo,\r\n',
    ],
    ['null and undefined → empty cell', [{ a: null, b: undefined, c: 0 }], 'a,b,c\r\n,,0\r\n'],
    ['booleans as Python prints them', [{ t: true, f: false }], 'f,t\r\nFalse,True\r\n'],
    [
      'quoting of commas, quotes and newlines',
      [{ a: 'x,y', b: 'say "hi"', c: 'line1\nline2', d: 'cr\r', e: 'plain text' }],
      'a,b,c,d,e\r\n"x,y","say ""hi""","line1\nline2","cr\r",plain text\r\n',
    ],
    ['header keys are quoted too', [{ 'a,b': 1 }], '"a,b"\r\n1\r\n'],
    ['empty containers add no column', [{ a: {}, b: [], c: 1 }], 'c\r\n1\r\n'],
    ['list of objects', [{ l: [{ x: 1 }, { y: 2 }] }], 'l.0.x,l.1.y\r\n1,2\r\n'],
  ];
  for (const [name, rows, expected] of cases) t.equal(toCsv(rows), expected, name);
});
