// The pure parts of a flag's life cycle: OFREP's context and reasons (src/domain/flags/ofrep.ts), PostHog's status
// rule (status.ts), scheduled-change payloads and recurrence (scheduled-change.ts), and the in-memory usage
// counters (src/worker/flag-usage.ts).
import t from 'tap';
import { compileFlagSet, evaluateFlag, evaluateFlags, flagStatus, ofrepEvaluationOf, ofrepRequestOf, type FlagRecord } from '../../src/domain/flags/index.js';
import { nextOccurrence, patchFor, payloadError } from '../../src/domain/flags/scheduled-change.js';
import { FlagUsage } from '../../src/worker/flag-usage.js';

const DAY = 86_400_000;
const flag = (id: number, key: string, filters: Record<string, unknown>, extra: Partial<FlagRecord> = {}): FlagRecord =>
  ({ id, key, name: '', active: true, deleted: false, filters, ensure_experience_continuity: false, version: 1, ...extra });
const ctx = (distinctId: string, personProperties: Record<string, unknown> = {}) =>
  ({ distinctId, personProperties, groups: {}, groupProperties: {}, hashKeyOverrides: {}, staticCohortIds: new Set<number>(), now: new Date() });

t.test('OFREP contexts', async (t) => {
  t.match(ofrepRequestOf({ context: { targetingKey: 'u1', email: 'a@b.c', groups: { company: 'acme' }, groupProperties: { company: { plan: 'x' } } } }), {
    ok: true, request: { distinctId: 'u1', personProperties: { email: 'a@b.c' }, groups: { company: 'acme' }, groupProperties: { company: { plan: 'x' } } },
  });
  t.match(ofrepRequestOf({ context: { targetingKey: 'u1', plan: 'a', personProperties: { plan: 'b' } } }), { ok: true, request: { personProperties: { plan: 'b' } } }, 'explicit person properties win');
  t.match(ofrepRequestOf({}), { ok: false, errorCode: 'TARGETING_KEY_MISSING' });
  t.match(ofrepRequestOf({ context: { targetingKey: '' } }), { ok: false, errorCode: 'TARGETING_KEY_MISSING' });
  t.match(ofrepRequestOf({ context: { targetingKey: 5 } }), { ok: false, errorCode: 'INVALID_CONTEXT' });
  t.match(ofrepRequestOf({ context: 'x' }), { ok: false, errorCode: 'INVALID_CONTEXT' });
  t.match(ofrepRequestOf([1]), { ok: false, errorCode: 'PARSE_ERROR' });
  t.equal((ofrepRequestOf({ context: { targetingKey: 'x'.repeat(300) } }) as { request: { distinctId: string } }).request.distinctId.length, 200);
});

t.test('OFREP values and reasons', async (t) => {
  const set = compileFlagSet([
    flag(1, 'static', { groups: [{ properties: [], rollout_percentage: 100 }] }),
    flag(2, 'targeted', { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }], rollout_percentage: 100 }] }),
    flag(3, 'none', { groups: [{ properties: [], rollout_percentage: 0 }] }),
    flag(4, 'multi', { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { a: '{"x":1}' } }),
    flag(5, 'off', { groups: [{ properties: [], rollout_percentage: 100 }] }, { active: false }),
    flag(6, 'config', { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '[1,2]' } }, { is_remote_configuration: true }),
    flag(7, 'multi-off', { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }] }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } }),
  ], [], {});
  const one = (key: string, props: Record<string, unknown> = {}) => ofrepEvaluationOf(evaluateFlag(set, key, ctx('u', props))!);
  t.match(one('static'), { key: 'static', value: true, reason: 'STATIC', metadata: { id: 1, version: 1 } });
  t.match(one('targeted', { plan: 'pro' }), { value: true, reason: 'TARGETING_MATCH' });
  t.match(one('targeted'), { value: false, reason: 'DEFAULT' });
  t.match(one('none'), { value: false, reason: 'SPLIT' });
  t.match(one('multi'), { value: 'a', variant: 'a', reason: 'SPLIT', metadata: { payload: '{"x":1}' } });
  t.match(one('off'), { value: false, reason: 'DISABLED' });
  t.same(one('config').value, [1, 2]);
  const off = one('multi-off');
  t.notOk('value' in off, 'a multivariate flag that is off leaves the default to the caller');
  t.equal((off as { reason: string }).reason, 'DEFAULT');
  t.equal(evaluateFlags(set, ctx('u')).length, 6, 'the inactive flag is left to the bulk answer');
});

t.test("PostHog's status rule", async (t) => {
  const now = Date.parse('2026-06-01T00:00:00Z');
  const old = new Date(now - 40 * DAY).toISOString();
  const young = new Date(now - 5 * DAY).toISOString();
  const full = { groups: [{ properties: [], rollout_percentage: 100 }] };
  const base = { deleted: false, active: true, filters: full, created_at: old };
  t.equal(flagStatus({ ...base, deleted: true }, null, now).status, 'deleted');
  t.equal(flagStatus(base, null, now).status, 'inactive', 'never evaluated, 40 days old');
  t.equal(flagStatus({ ...base, created_at: young }, null, now).status, 'active', 'never evaluated but young');
  t.equal(flagStatus(base, now - 31 * DAY, now).status, 'inactive');
  t.equal(flagStatus(base, now - DAY, now).status, 'stale', 'fully rolled out and old');
  t.equal(flagStatus({ ...base, filters: { groups: [{ properties: [], rollout_percentage: null }] } }, now - DAY, now).status, 'stale', 'a missing rollout is 100 %');
  t.equal(flagStatus({ ...base, filters: { groups: [{ properties: [{ key: 'a' }], rollout_percentage: 100 }] } }, now - DAY, now).status, 'active');
  t.equal(flagStatus({ ...base, active: false }, now - DAY, now).status, 'active', 'a disabled flag is not fully rolled out');
  t.match(flagStatus({ ...base, filters: { ...full, multivariate: { variants: [{ key: 'w', rollout_percentage: 100 }] } } }, now - DAY, now), { status: 'stale', reason: /"w"/ });
  t.equal(flagStatus({ ...base, filters: { ...full, multivariate: { variants: [{ key: 'w', rollout_percentage: 50 }, { key: 'v', rollout_percentage: 50 }] } } }, now - DAY, now).status, 'active');
});

t.test('scheduled-change payloads and recurrence', async (t) => {
  t.equal(payloadError({ operation: 'update_status', value: true }), null);
  t.ok(payloadError({ operation: 'update_status', value: 1 }));
  t.ok(payloadError({ operation: 'nope', value: 1 }));
  t.ok(payloadError({ operation: 'add_release_condition', value: {} }));
  t.same(patchFor({ operation: 'update_status', value: false }, {}), { active: false });
  t.same(patchFor({ operation: 'add_release_condition', value: { groups: [{ rollout_percentage: 5 }], payloads: { true: '1' } } }, { groups: [{ rollout_percentage: 1 }], payloads: { x: '2' } }), {
    filters: { groups: [{ rollout_percentage: 1 }, { rollout_percentage: 5 }], payloads: { x: '2', true: '1' } },
  });
  t.same(patchFor({ operation: 'update_variants', value: { variants: [{ key: 'b', rollout_percentage: 100 }] } }, { groups: [], multivariate: { variants: [] } }), {
    filters: { groups: [], multivariate: { variants: [{ key: 'b', rollout_percentage: 100 }] } },
  });
  const at = Date.parse('2026-01-31T09:00:00Z');
  t.equal(new Date(nextOccurrence(at, 'daily', at)).toISOString(), '2026-02-01T09:00:00.000Z');
  t.equal(new Date(nextOccurrence(at, 'weekly', at)).toISOString(), '2026-02-07T09:00:00.000Z');
  t.equal(new Date(nextOccurrence(at, 'monthly', at)).toISOString(), '2026-02-28T09:00:00.000Z', 'month ends clamp');
  t.equal(new Date(nextOccurrence(at, 'yearly', at)).toISOString(), '2027-01-31T09:00:00.000Z');
  t.equal(new Date(nextOccurrence(at, 'daily', at + 3.5 * DAY)).toISOString(), '2026-02-04T09:00:00.000Z', 'after a long downtime: the next one to come, not the missed ones');
});

t.test('usage counters: per set, taken and reset, old sets written then dropped', async (t) => {
  const set = compileFlagSet([flag(10, 'a', { groups: [{ rollout_percentage: 100 }] }), flag(11, 'b', { groups: [{ rollout_percentage: 100 }] })], [], {});
  const usage = new FlagUsage();
  const now = Date.parse('2026-06-01T12:00:00Z');
  for (let i = 0; i < 3; i++) usage.noteResults(7, set, evaluateFlags(set, ctx(`u${i}`)), now + i);
  usage.noteCalled(7, set, 'b', now + 10);
  usage.noteCalled(7, set, 'unknown', now + 10);
  const replaced = compileFlagSet([flag(10, 'a', { groups: [{ rollout_percentage: 100 }] })], [], {});
  usage.noteResults(7, replaced, evaluateFlags(replaced, ctx('v')), now + 20);
  t.same(usage.take().sort((x, y) => x.flagId - y.flagId || x.lastAt - y.lastAt), [
    { projectId: 7, flagId: 10, day: '2026-06-01', evaluations: 3, called: 0, lastAt: now + 2 },
    { projectId: 7, flagId: 10, day: '2026-06-01', evaluations: 1, called: 0, lastAt: now + 20 },
    { projectId: 7, flagId: 11, day: '2026-06-01', evaluations: 3, called: 1, lastAt: now + 10 },
  ]);
  t.same(usage.take(), [], 'taken once');
  t.notOk(usage.pending);
});
