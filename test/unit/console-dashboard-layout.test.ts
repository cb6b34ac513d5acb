// The console's dashboard grid placement (src/console/app/lib/dashboard-layout.ts) and date ranges in words
// (src/console/app/lib/date-range-text.ts): pure functions of the dashboard page.
import t from 'tap';
import { changedCells, clampCell, moveTile, placementOf, type Cell, type Placement } from '../../src/console/app/lib/dashboard-layout.js';
import { dateRangeText } from '../../src/console/app/lib/date-range-text.js';

const cells = (p: Placement) => Object.fromEntries([...p].map(([id, c]) => [id, c]));
const at = (x: number, y: number, w = 6, h = 5): Cell => ({ x, y, w, h });

t.test('tiles without a stored layout go two by row after the placed ones', async (t) => {
  t.same(cells(placementOf([{ id: 1, layouts: {} }, { id: 2, layouts: {} }, { id: 3, layouts: {} }])), { 1: at(0, 0), 2: at(6, 0), 3: at(0, 5) });
  t.same(cells(placementOf([{ id: 1, layouts: { sm: at(0, 0, 12, 4) } }, { id: 2, layouts: {} }])), { 1: at(0, 0, 12, 4), 2: at(0, 4) });
});

t.test('stored layouts are kept, inside the grid, without overlaps or holes above a tile', async (t) => {
  t.same(cells(placementOf([{ id: 1, layouts: { sm: at(0, 0, 4, 8) } }, { id: 2, layouts: { sm: at(4, 3) } }])), { 1: at(0, 0, 4, 8), 2: at(4, 0) }, 'risen to the top');
  t.same(cells(placementOf([{ id: 1, layouts: { sm: at(0, 0) } }, { id: 2, layouts: { sm: at(2, 1) } }])), { 1: at(0, 0), 2: at(2, 5) }, 'an overlap goes below');
  t.same(clampCell({ x: 10, y: -2, w: 6, h: 1 }), { x: 6, y: 0, w: 6, h: 3 }, 'kept in 12 columns, minimum size');
  t.same(clampCell({ x: 0, y: 0, w: 40, h: 4 }), { x: 0, y: 0, w: 12, h: 4 });
});

t.test('a tile dragged past the middle of another swaps places with it, down or up', async (t) => {
  const grid = placementOf([{ id: 1, layouts: {} }, { id: 2, layouts: {} }, { id: 3, layouts: {} }]);
  t.same(cells(moveTile(grid, 3, at(0, 0))), { 1: at(0, 5), 2: at(6, 0), 3: at(0, 0) }, 'up onto the first');
  t.same(cells(moveTile(grid, 3, at(0, 3))), cells(grid), 'not above its middle yet: no change');
  t.same(cells(moveTile(grid, 1, at(0, 3))), { 1: at(0, 5), 2: at(6, 0), 3: at(0, 0) }, 'down past the middle of the one below');
  t.same(cells(moveTile(grid, 1, at(0, 2))), cells(grid), 'not past it: back in its place');
  t.same(cells(moveTile(grid, 3, at(6, 0))), { 1: at(0, 0), 2: at(6, 5), 3: at(6, 0) }, 'across: it takes the place, the other goes below');
});

t.test('a resize pushes what it now covers below it, and frees room above others', async (t) => {
  const grid = placementOf([{ id: 1, layouts: {} }, { id: 2, layouts: {} }, { id: 3, layouts: {} }]);
  t.same(cells(moveTile(grid, 1, at(0, 0, 12, 5))), { 1: at(0, 0, 12, 5), 2: at(6, 5), 3: at(0, 5) });
  t.same(cells(moveTile(grid, 1, at(0, 0, 6, 3))), { 1: at(0, 0, 6, 3), 2: at(6, 0), 3: at(0, 3) }, 'shorter: the one below rises');
});

t.test('only the tiles whose cell changed are stored', async (t) => {
  const grid = placementOf([{ id: 1, layouts: {} }, { id: 2, layouts: {} }, { id: 3, layouts: {} }]);
  t.same(changedCells(grid, moveTile(grid, 2, at(6, 0, 4, 8))), [[2, at(6, 0, 4, 8)]]);
  t.same(changedCells(grid, moveTile(grid, 3, at(0, 0))).map(([id]) => id).sort(), [1, 3]);
});

t.test('date ranges in words', async (t) => {
  t.equal(dateRangeText('-7d', null), 'Last 7 days');
  t.equal(dateRangeText('-30d', undefined), 'Last 30 days');
  t.equal(dateRangeText('-1d', null), 'Last day');
  t.equal(dateRangeText('-3m', null), 'Last 3 months');
  t.equal(dateRangeText('mStart', null), 'This month');
  t.equal(dateRangeText('yStart', null), 'This year');
  t.equal(dateRangeText('all', null), 'All time');
  t.equal(dateRangeText('2024-03-01', '2024-03-10'), '2024-03-01 – 2024-03-10');
  t.equal(dateRangeText('2024-03-01T00:00:00Z', '2024-03-10T00:00:00Z'), '2024-03-01 – 2024-03-10');
  t.equal(dateRangeText('2024-03-01', null), 'From 2024-03-01');
  t.equal(dateRangeText('-14d', '2024-03-10'), 'Last 14 days until 2024-03-10');
  t.equal(dateRangeText(null, null), 'Last 7 days', "the analyses' default");
  t.equal(dateRangeText(undefined, '2024-03-10'), 'Last 7 days until 2024-03-10');
});
