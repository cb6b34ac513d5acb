// What the experiment page says about a result not significant yet (src/console/app/lib/experiment-text.ts).
import t from 'tap';
import { guardReasonsText, intervalAxisText } from '../../src/console/app/lib/experiment-text.js';

t.test('each reason of the minimum-sample guard in words, with the numbers', async (t) => {
  t.same(guardReasonsText([
    { key: 'control', reason: 'too_few_exposures', have: 40, need: 100 },
    { key: 'test', reason: 'too_few_successes', have: 1, need: 5 },
    { key: 'test', reason: 'too_few_failures', have: 3, need: 5 },
    { key: 'test', reason: 'too_few_samples', have: 1, need: 2 },
  ]), [
    'control: 40 exposures of the 100 needed per variant.',
    'test: 1 conversion of the 5 needed per variant.',
    'test: 3 persons who did not convert of the 5 needed per variant.',
    'test: 1 person with a value of the 2 needed per variant.',
  ]);
  t.same(guardReasonsText([]), []);
});

t.test('the interval axis is explained, not printed as a bare ±', async (t) => {
  t.match(intervalAxisText(2.07), /axis from −207 % to \+207 %, with zero marked/);
});
