// The console's chart text (src/console/app/lib/format.ts, axis-ticks.ts, fit-text.ts): numbers and units in
// legends and axes, which bucket labels an axis keeps at a width, and path labels cut to their room.
import t from 'tap';
import { bucketTickStep, bucketTicks } from '../../src/console/app/lib/axis-ticks.js';
import { fitText } from '../../src/console/app/lib/fit-text.js';
import { bytesText, clockTime, numberText, shortNumber } from '../../src/console/app/lib/format.js';

t.test('numbers, sizes and clock times', async (t) => {
  t.equal(numberText(12345), '12,345');
  t.equal(numberText(3.14159), '3.14');
  t.equal(shortNumber(950), '950');
  t.equal(shortNumber(1234), '1.2k');
  t.equal(shortNumber(25_000), '25k');
  t.equal(shortNumber(3_400_000), '3.4M');
  t.equal(shortNumber(0.25), '0.25');
  t.equal(bytesText(512), '512 B');
  t.equal(bytesText(1536), '1.5 KB');
  t.equal(bytesText(5 * 1024 ** 2), '5.0 MB');
  t.equal(bytesText(2.5 * 1024 ** 3), '2.5 GB');
  t.match(clockTime(Date.UTC(2026, 0, 1, 14, 5, 9) / 1000), /^\d\d:05:09$/, 'hours in the local zone, minutes and seconds');
});

t.test('bucket labels thin out so the widest fits between two kept ones', async (t) => {
  t.equal(bucketTickStep(10, 80, 1000, 12), 1, '100 px per bucket: every label');
  t.equal(bucketTickStep(10, 80, 400, 12), 3, '40 px per bucket: every third');
  t.equal(bucketTickStep(30, 80, 300, 28), 11);
  t.equal(bucketTickStep(1, 80, 100, 12), 1);
  t.same(bucketTicks(10, 3, -0.5, 9.5), [0, 3, 6, 9]);
  t.same(bucketTicks(10, 1, 2.2, 4.9), [3, 4]);
  t.same(bucketTicks(10, 4, 1, 9), [4, 8], 'the same buckets whatever the visible range');
  for (const [n, width, plot] of [[10, 80, 300], [31, 70, 500], [90, 95, 1200], [24, 40, 180]]) {
    const step = bucketTickStep(n, width, plot, 12);
    const ticks = bucketTicks(n, step, -0.5, n - 0.5);
    const gaps = ticks.slice(1).map((x, i) => (x - ticks[i]!) * (plot / n));
    t.ok(gaps.every((g) => g >= width + 12), `${n} buckets in ${plot} px: centres ${gaps[0]?.toFixed(1) ?? '-'} px apart for ${width} px labels`);
  }
});

t.test('a label cut to its room keeps its count', async (t) => {
  const chars = (s: string) => s.length * 7;
  t.equal(fitText('/home', ' (10)', 200, chars), '/home (10)');
  const cut = fitText('/docs/a-very-long-page-name/with/more', ' (3)', 140, chars);
  t.equal(cut, '/docs/a-very-lo… (3)', '20 characters of room: 15 of the name, the ellipsis and the count');
  t.ok(chars(cut) <= 140);
  t.equal(fitText('/pricing/enterprise', ' (12345)', 91, chars), '/pri… (12345)', 'four characters and the count');
  t.equal(fitText('/pricing/enterprise', ' (12345)', 84, chars), '/pricing/en…', 'less: the name alone, cut');
  t.equal(fitText('/abc', ' (12345)', 60, chars), '/abc', 'a short name whole, without its count');
  t.equal(fitText('/abc', ' (1)', 10, chars), '…');
  t.equal(fitText('/abc', ' (1)', 3, chars), '');
});
