import t from 'tap';
import { isIllegalDistinctId } from '../../src/domain/ingest/index.js';

t.test('illegal distinct ids (§2.4)', async (t) => {
  const caseInsensitive = ['anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false'];
  const caseSensitive = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined'];

  for (const id of caseInsensitive) {
    for (const form of [id, id.toUpperCase(), id[0]!.toUpperCase() + id.slice(1), `"${id}"`, `'${id}'`, `"${id.toUpperCase()}"`]) {
      t.ok(isIllegalDistinctId(form), `case-insensitive list: ${form}`);
    }
  }
  for (const id of caseSensitive) {
    for (const form of [id, `"${id}"`, `'${id}'`]) t.ok(isIllegalDistinctId(form), `case-sensitive list: ${form}`);
  }
  const empty = ['', ' ', '\t\n'];
  for (const id of empty) t.ok(isIllegalDistinctId(id), `empty after trim: ${JSON.stringify(id)}`);

  const legal = ['NULL', 'NONE', 'nan', '[object object]', 'user-1', '00', ' guest', 'guest ', '"guest', 'anonymous_user', '0190163d-8694-739b-aadc-0ea0a8c2e3f3', 'x'.repeat(300)];
  for (const id of legal) t.notOk(isIllegalDistinctId(id), `legal: ${JSON.stringify(id)}`);
});
