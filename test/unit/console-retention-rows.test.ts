// Which retention cohorts a grid shows (src/console/app/lib/retention-rows.ts): a dashboard tile leaves out the
// cohorts of no one and says how many; the insight's page shows every row. Shares print on one line.
import t from 'tap';
import { shareText, visibleCohorts } from '../../src/console/app/lib/retention-rows.js';

const row = (size: number, ...later: number[]) => ({ values: [{ count: size }, ...later.map((count) => ({ count }))] });

t.test('a tile hides empty cohorts, in order, and counts them', async (t) => {
  const rows = [row(0, 0), row(0), row(4, 3), row(0), row(2)];
  t.same(visibleCohorts(rows, true), { rows: [rows[2], rows[4]], hiddenEmpty: 3 });
  t.same(visibleCohorts(rows, false), { rows, hiddenEmpty: 0 }, 'the page shows them all');
  t.same(visibleCohorts([], true), { rows: [], hiddenEmpty: 0 });
});

t.test('a share is whole percents with a no-break space before the sign; no size, a dash', async (t) => {
  t.equal(shareText(3, 4), '75\u00a0%');
  t.equal(shareText(1, 3), '33\u00a0%');
  t.equal(shareText(0, 0), '—');
});
