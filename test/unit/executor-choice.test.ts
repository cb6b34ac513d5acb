// Which executor answers (src/worker/analytics/executor-choice.ts): the local engine unless QUILL_ANALYTICS is
// clickhouse; ClickHouse when it computes the question; the local engine, saying why, when it does not — decided
// before (a gap) or found while asking (AnsweredLocally, e.g. more rows than a funnel may bring back).
import t from 'tap';
import { AnsweredLocally, runOnChosenExecutor } from '../../src/worker/analytics/executor-choice.js';
import type { WorkerRuntime } from '../../src/worker/runtime.js';

const runtime = (analytics: 'local' | 'clickhouse') => ({ config: { analytics } }) as unknown as WorkerRuntime;
const local = async () => ({ from: 'local' });

t.test('each path says which executor answered', async (tt) => {
  tt.same(await runOnChosenExecutor(runtime('local'), () => null, async () => ({ from: 'clickhouse', caughtUp: true }), local), { run: { from: 'local' }, where: {} });
  tt.same(await runOnChosenExecutor(runtime('clickhouse'), () => null, async () => ({ from: 'clickhouse', caughtUp: false }), local),
    { run: { from: 'clickhouse', caughtUp: false }, where: { clickhouse: { fallback: null }, clickhouse_export: { caught_up: false } } });
  tt.same(await runOnChosenExecutor(runtime('clickhouse'), () => 'actions are not computed on ClickHouse yet', async () => { throw new Error('not asked'); }, local),
    { run: { from: 'local' }, where: { clickhouse: { fallback: 'actions are not computed on ClickHouse yet' } } });
  tt.same(await runOnChosenExecutor(runtime('clickhouse'), () => null, async () => { throw new AnsweredLocally('more than 2,000,000 rows to bring back from ClickHouse'); }, local),
    { run: { from: 'local' }, where: { clickhouse: { fallback: 'more than 2,000,000 rows to bring back from ClickHouse' } } });
  await tt.rejects(runOnChosenExecutor(runtime('clickhouse'), () => null, async () => { throw new Error('ClickHouse down'); }, local), /ClickHouse down/, 'other failures are not hidden');
});
