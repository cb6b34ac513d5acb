// ClickHouse's refusals reach API users as the reason alone: never the SQL Quill generated (issue 47).
import t from 'tap';
import { clickhouseReason } from '../../src/domain/analytics/clickhouse/error-reason.js';

const cases: [string, string, string][] = [
  [
    'an unknown identifier quotes its scope',
    "Code: 47. DB::Exception: Unknown expression identifier `foo` in scope SELECT foo FROM (SELECT * FROM events WHERE team_id = 1) AS events. Maybe you meant: ['event']. (UNKNOWN_IDENTIFIER) (version 24.8.1.1)",
    'Unknown expression identifier `foo` (UNKNOWN_IDENTIFIER)',
  ],
  [
    'a syntax error quotes the rest of the query',
    'Code: 62. DB::Exception: Syntax error: failed at position 25 (line 1, col 25): FROM (SELECT team_id FROM events WHERE team_id = 1). Expected one of: token. (SYNTAX_ERROR) (version 24.8.1.1)',
    'Syntax error: failed at position 25 (line 1, col 25) (SYNTAX_ERROR)',
  ],
  [
    'a memory limit keeps its figures',
    'Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 4.00 GiB (attempt to allocate chunk of 8 bytes), maximum: 4.00 GiB.: While executing AggregatingTransform. (MEMORY_LIMIT_EXCEEDED)',
    'Memory limit (for query) exceeded: would use 4.00 GiB (attempt to allocate chunk of 8 bytes), maximum: 4.00 GiB (MEMORY_LIMIT_EXCEEDED)',
  ],
  [
    'a long quoted literal is left out',
    `Code: 6. DB::Exception: Cannot parse string '${'x'.repeat(300)}' as UInt64. (CANNOT_PARSE_TEXT)`,
    'Cannot parse string … as UInt64 (CANNOT_PARSE_TEXT)',
  ],
  ['a message that is not ClickHouse\'s stays as it is', 'socket hang up', 'socket hang up'],
];

for (const [name, message, reason] of cases) {
  t.equal(clickhouseReason(message), reason, name);
  t.notMatch(clickhouseReason(message), /SELECT|team_id/, `${name}: no SQL`);
}
t.ok(clickhouseReason(`Code: 1. DB::Exception: ${'word '.repeat(200)}`).length <= 241, 'bounded');
