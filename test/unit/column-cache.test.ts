/** The analytics column cache (src/stores/scan/column-cache.ts): least recently used beyond its byte budget. */
import t from 'tap';
import { ColumnCache } from '../../src/stores/scan/column-cache.js';

const column = () => new Float64Array(8);

t.test('least recently used go first beyond the budget', async (t) => {
  const cache = new ColumnCache(300);
  cache.set('a', column(), 100);
  cache.set('b', column(), 100);
  cache.set('c', column(), 100);
  t.ok(cache.get('a'), 'a used: now the most recent');
  cache.set('d', column(), 100);
  t.notOk(cache.get('b'), 'b, the least recently used, went');
  t.ok(cache.get('a') && cache.get('c') && cache.get('d'));
  cache.set('huge', column(), 301);
  t.notOk(cache.get('huge'), 'a column larger than the budget is not kept');
  t.equal(cache.heldBytes, 300);
});

t.test('over the memory budget it keeps nothing, and fills again after', async (t) => {
  const cache = new ColumnCache(300);
  cache.set('a', column(), 100);
  cache.set('b', column(), 100);
  cache.setShare(0);
  t.equal(cache.heldBytes, 0, 'emptied at once');
  cache.set('c', column(), 100);
  t.notOk(cache.get('c'), 'nothing kept while over');
  cache.setShare(1);
  cache.set('c', column(), 100);
  t.ok(cache.get('c'), 'kept again once under');
  t.equal(cache.heldBytes, 100);
});
