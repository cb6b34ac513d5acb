// The schedule shared by event retention and recording cleanup (src/worker/background-pass.ts): passes never
// overlap, requests made while one runs make exactly one more, and close() waits for the running pass.
import t from 'tap';
import { PeriodicPass } from '../../src/worker/background-pass.js';

/** A pass that runs until its test lets it finish, counting how many started and how many ran at once. */
function controlledPass() {
  const state = { started: 0, running: 0, mostAtOnce: 0, finish: [] as (() => void)[] };
  const pass = async () => {
    state.started++;
    state.running++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
    await new Promise<void>((resolve) => state.finish.push(resolve));
    state.running--;
  };
  return { state, pass };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('requests while a pass runs make exactly one more pass, never two at once', async (t) => {
  const { state, pass } = controlledPass();
  const passes = new PeriodicPass(pass, (error) => t.fail(String(error)));
  const first = passes.request();
  await tick();
  t.equal(state.started, 1);
  const second = passes.request();
  passes.request();
  passes.request();
  t.equal(second, first, 'a request during a pass joins the running loop');
  state.finish.shift()!();
  await tick();
  t.equal(state.started, 2, 'three requests during the first pass made one more');
  state.finish.shift()!();
  await first;
  t.equal(state.started, 2);
  t.equal(state.mostAtOnce, 1);
});

t.test('close() waits for the running pass and stops the requested one', async (t) => {
  const { state, pass } = controlledPass();
  const passes = new PeriodicPass(pass, (error) => t.fail(String(error)));
  const loop = passes.request();
  await tick();
  passes.request();
  let closed = false;
  const closing = passes.close().then(() => (closed = true));
  t.ok(passes.closed, 'closed at once for the pass to see between steps');
  await tick();
  t.notOk(closed, 'close() waits while the pass still runs');
  state.finish.shift()!();
  await Promise.all([loop, closing]);
  t.equal(state.started, 1, 'the pass requested during it does not run after close()');
});

t.test('a pass that throws is reported and the next request runs again', async (t) => {
  const errors: unknown[] = [];
  let calls = 0;
  const passes = new PeriodicPass(async () => {
    calls++;
    if (calls === 1) throw new Error('disk went away');
  }, (error) => errors.push(error));
  await passes.request();
  t.equal(errors.length, 1);
  t.match(String(errors[0]), /disk went away/);
  await passes.request();
  t.equal(calls, 2);
  t.equal(errors.length, 1);
  await passes.close();
});
