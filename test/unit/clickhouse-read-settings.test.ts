// What every ClickHouse read carries (src/stores/clickhouse/reader.ts): the query budget, and spilling to disk at
// half of its memory for GROUP BY and ORDER BY (issue 51), so a per-person fold over many persons slows down
// rather than failing at the bound.
import t from 'tap';
import { readSettingsFor } from '../../src/stores/clickhouse/reader.js';

t.test('the budget, and the spill thresholds at half its memory', async (t) => {
  const s = readSettingsFor({ maxExecutionS: 29.2, maxMemoryBytes: 4 * 1024 ** 3 });
  t.match(s, {
    readonly: '2', max_execution_time: 30, max_memory_usage: String(4 * 1024 ** 3),
    max_bytes_before_external_group_by: String(2 * 1024 ** 3), max_bytes_before_external_sort: String(2 * 1024 ** 3),
  });
  t.notOk('max_result_rows' in s, 'no row bound unless asked');
  t.match(readSettingsFor({ maxExecutionS: 1, maxMemoryBytes: 1_000, maxResultRows: 10 }), { max_result_rows: '10', result_overflow_mode: 'throw', max_bytes_before_external_group_by: '500' });
  t.match(readSettingsFor({ maxExecutionS: 0, maxMemoryBytes: 0 }), { max_execution_time: 1, max_memory_usage: '1', max_bytes_before_external_sort: '1' }, 'never 0, which ClickHouse reads as unlimited');
});
