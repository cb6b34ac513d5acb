// The memory budget's decision (src/domain/memory-budget.ts) and the front's sampler (src/front/memory-guard.ts)
// fed a sequence of readings: over at the budget, under again only below 90 % of it, the shared flag the workers
// read follows, and each crossing is logged once.
import t from 'tap';
import { overBudget, RESUME_FRACTION, residentMemory } from '../../src/domain/memory-budget.js';
import { MemoryGuard } from '../../src/front/memory-guard.js';
import { createSharedState, SharedState } from '../../src/protocol/shared-state.js';

const MB = 1048576;

t.test('over past the budget, back under only below 90 % of it', async (t) => {
  t.equal(overBudget(false, 100 * MB, 100 * MB), false, 'at the budget: not over');
  t.equal(overBudget(false, 100 * MB + 1, 100 * MB), true, 'past it: over');
  t.equal(overBudget(true, 95 * MB, 100 * MB), true, 'over, then at 95 %: still over');
  t.equal(overBudget(true, 100 * MB * RESUME_FRACTION - 1, 100 * MB), false, 'below 90 %: under');
  t.equal(overBudget(false, 10_000 * MB, 0), false, 'no budget: never over');
  t.equal(overBudget(true, 95 * MB, 100 * MB, false), false, 'over, nothing left to apply, within the budget: under');
  t.equal(overBudget(true, 101 * MB, 100 * MB, false), true, 'over the budget itself with nothing to apply: still over');
});

t.test('resident and anonymous memory from /proc/self/status', async (t) => {
  const status = 'Name:\tnode\nVmRSS:\t  204800 kB\nRssAnon:\t  153600 kB\nRssFile:\t   51200 kB\n';
  t.same(residentMemory(status), { resident: 204800 * 1024, anonymous: 153600 * 1024 });
  t.same(residentMemory('Name:\tnode\n'), { resident: null, anonymous: null }, 'absent fields are null');
});

t.test('the sampler sets the flag the workers read, with hysteresis, and logs each crossing', async (t) => {
  const shared = new SharedState(createSharedState());
  const logged: string[] = [];
  const log = { warn: (o: { event: string }) => logged.push(o.event), info: (o: { event: string }) => logged.push(o.event) };
  const readings = [50, 120, 95, 89, 99, 101];
  let next = 0;
  const guard = new MemoryGuard(100 * MB, shared, log as never, () => readings[next++]! * MB, () => 1000);
  t.teardown(() => guard.close());
  const flags = [shared.memoryOver];
  for (let i = 1; i < readings.length; i++) {
    guard.sample();
    flags.push(shared.memoryOver);
  }
  t.same(flags, [false, true, true, false, false, true], '50 under, 120 over, 95 still over, 89 under, 99 under, 101 over');
  t.same(logged, ['memory_over_budget', 'memory_under_budget', 'memory_over_budget']);
});

t.test('with nothing left to apply, being within the budget is enough; over it at rest is said once', async (t) => {
  const shared = new SharedState(createSharedState());
  const logged: string[] = [];
  const log = { warn: (o: { event: string }) => logged.push(o.event), info: (o: { event: string }) => logged.push(o.event) };
  const readings: [number, number][] = [[120, 5000], [95, 5000], [95, 0], [130, 0], [130, 0]];
  let next = 0;
  let waiting = 0;
  const guard = new MemoryGuard(100 * MB, shared, log as never, () => {
    const [mb, w] = readings[next++]!;
    waiting = w;
    return mb * MB;
  }, () => waiting);
  t.teardown(() => guard.close());
  const flags = [shared.memoryOver];
  for (let i = 1; i < readings.length; i++) {
    guard.sample();
    flags.push(shared.memoryOver);
  }
  t.same(flags, [true, true, false, true, true], '95 MB with events waiting: over; 95 MB at rest: under; 130 at rest: over');
  t.same(logged, ['memory_over_budget', 'memory_under_budget', 'memory_over_budget', 'memory_over_budget_at_rest']);
});

t.test('without a readable memory figure the budget is not enforced, and says so', async (t) => {
  const shared = new SharedState(createSharedState());
  const logged: string[] = [];
  const log = { warn: (o: { event: string }) => logged.push(o.event), info: () => {} };
  const guard = new MemoryGuard(100 * MB, shared, log as never, () => null);
  guard.close();
  t.same(logged, ['memory_budget_unavailable']);
  t.equal(shared.memoryOver, false);
});
