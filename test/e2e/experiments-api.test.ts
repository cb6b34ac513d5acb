// The experiments API over HTTP: create (with a new flag or an existing multivariate one), validation errors,
// list / retrieve / PATCH / soft delete, the refused hard delete, the `experiment` key scope, the activity log,
// edit permissions through the flag, the flag's `experiment_set`; and results end to end: posthog-node evaluates
// the experiment's flag for 200 users and sends its `$feature_flag_called` events, conversions follow at a seeded
// rate per variant, and the results count exactly what was sent, carry the statistics, and pass the sample-ratio
// check; a skewed split is flagged.
import t from 'tap';
import { PostHog } from 'posthog-node';
import { PROJECT_KEY, quillForFile } from '../helpers/quill.js';

const EXP = '/api/projects/@current/experiments/';
const FF = '/api/projects/@current/feature_flags/';
const server = quillForFile(t, { workers: 2 });

const funnel = (event: string) => ({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event }] });
const mean = (event: string, math?: string, math_property?: string) =>
  ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event, ...(math ? { math } : {}), ...(math_property ? { math_property } : {}) } });

/** A deterministic generator (mulberry32), so the conversions are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

async function batch(events: unknown[]): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    const res = await fetch(`${server.q.base}/batch/`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: PROJECT_KEY, batch: events.slice(i, i + 500) }),
    });
    if (res.status !== 200) throw new Error(`batch ${res.status}`);
  }
}

t.test('create with a new flag key: the flag is created multivariate control/test 50/50', async (t) => {
  const res = await server.api.post(EXP, { name: 'Checkout button', description: 'Blue or green', feature_flag_key: 'exp-checkout', metrics: [funnel('purchase')] });
  t.equal(res.status, 201, res.text);
  t.match(res.body, {
    id: Number, name: 'Checkout button', description: 'Blue or green', feature_flag_key: 'exp-checkout', start_date: null, end_date: null,
    status: 'draft', conclusion: null, archived: false, deleted: false, stats_config: { method: 'bayesian' }, metrics: [funnel('purchase')],
    metrics_secondary: [], exposure_criteria: {}, parameters: {}, created_by: { email: 'admin@quill.local' }, created_at: String,
    feature_flag: { id: Number, key: 'exp-checkout', active: true },
  });
  t.same(res.body.feature_flag.filters.multivariate.variants, [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }]);
  const flag = await server.api.get(`${FF}${res.body.feature_flag.id}/`);
  t.equal(flag.status, 200);
  t.same(flag.body.experiment_set, [res.body.id], 'the flag lists its experiment');
  const listed = await server.api.get(`${FF}?search=exp-checkout`);
  t.same(listed.body.results[0].experiment_set, [res.body.id]);

  const three = await server.api.post(EXP, {
    name: 'Three ways', feature_flag_key: 'exp-three',
    parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }], minimum_detectable_effect: 5 },
  });
  t.equal(three.status, 201, three.text);
  t.same(three.body.feature_flag.filters.multivariate.variants.map((v: any) => v.key), ['control', 'a', 'b']);
});

t.test('create on an existing flag: it must be multivariate with a control variant', async (t) => {
  const mv = (keys: string[]) => ({ groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: keys.map((key, i) => ({ key, rollout_percentage: i === 0 ? 100 - 50 * (keys.length - 1) : 50 })) } });
  t.equal((await server.api.post(FF, { key: 'plain-bool' })).status, 201);
  t.equal((await server.api.post(FF, { key: 'no-control', filters: mv(['a', 'b']) })).status, 201);
  const good = await server.api.post(FF, { key: 'with-control', filters: mv(['control', 'test']) });
  t.equal(good.status, 201);
  const bool = await server.api.post(EXP, { name: 'x', feature_flag_key: 'plain-bool' });
  t.equal(bool.status, 400);
  t.match(bool.body, { type: 'validation_error', code: 'invalid_input', attr: 'feature_flag_key', detail: /multivariate/ });
  const nocontrol = await server.api.post(EXP, { name: 'x', feature_flag_key: 'no-control' });
  t.equal(nocontrol.status, 400);
  t.match(nocontrol.body, { type: 'validation_error', attr: 'feature_flag_key', detail: /control/ });
  const ok = await server.api.post(EXP, { name: 'x', feature_flag_key: 'with-control' });
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.feature_flag.id, good.body.id, 'the existing flag is used');
  t.same((await server.api.get(`${FF}${good.body.id}/`)).body.experiment_set, [ok.body.id]);
});

t.test('validation errors: the documented 400 body', async (t) => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ feature_flag_key: 'v1' }, 'name', 'required'],
    [{ name: 'n' }, 'feature_flag_key', 'required'],
    [{ name: 'n', feature_flag_key: 'has space' }, 'feature_flag_key', 'invalid_key'],
    [{ name: 'n', feature_flag_key: 'v2', metrics: [{ kind: 'Nope' }] }, 'metrics', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v3', metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'x', math: 'sum' } }] }, 'metrics', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v4', metrics_secondary: [{ kind: 'ExperimentMetric', metric_type: 'funnel', series: [] }] }, 'metrics_secondary', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v5', stats_config: { method: 'magic' } }, 'stats_config', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v6', conclusion: 'great' }, 'conclusion', 'invalid_choice'],
    [{ name: 'n', feature_flag_key: 'v7', parameters: { feature_flag_variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } }, 'parameters', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v8', parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 50 }] } }, 'parameters', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v9', exposure_criteria: { multiple_variant_handling: 'both' } }, 'exposure_criteria', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v10', start_date: 'yesterday-ish' }, 'start_date', 'invalid_input'],
    [{ name: 'n', feature_flag_key: 'v11', start_date: '2026-11-02T00:00:00Z', end_date: '2026-11-01T00:00:00Z' }, 'end_date', 'invalid_input'],
  ];
  for (const [body, attr, code] of cases) {
    const res = await server.api.post(EXP, body);
    t.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    t.match(res.body, { type: 'validation_error', code, attr, detail: String });
    t.same(Object.keys(res.body).sort(), ['attr', 'code', 'detail', 'type']);
  }
  t.equal((await server.api.get(`${FF}?search=v1`)).body.results.length, 0, 'a refused experiment creates no flag');
});

t.test('list, retrieve, PATCH (status from the dates), refused hard delete, soft delete', async (t) => {
  const created = await server.api.post(EXP, { name: 'Lifecycle', feature_flag_key: 'exp-lifecycle' });
  const url = `${EXP}${created.body.id}/`;
  t.same((await server.api.get(url)).body, created.body, 'retrieve returns the created record');
  const list = await server.api.get(EXP);
  t.equal(list.status, 200);
  t.ok(list.body.results.some((e: any) => e.id === created.body.id));
  t.match(list.body, { count: Number, next: null, previous: null });

  const started = await server.api.patch(url, { start_date: '2026-11-01T00:00:00Z', stats_config: { method: 'frequentist' } });
  t.equal(started.status, 200, started.text);
  t.match(started.body, { status: 'running', start_date: '2026-11-01T00:00:00.000Z', stats_config: { method: 'frequentist' } });
  const early = await server.api.patch(url, { end_date: '2026-10-01T00:00:00Z' });
  t.equal(early.status, 400);
  t.equal(early.body.attr, 'end_date');
  const stopped = await server.api.patch(url, { end_date: '2026-11-20T00:00:00Z', conclusion: 'won', conclusion_comment: 'Clear win' });
  t.match(stopped.body, { status: 'stopped', conclusion: 'won', conclusion_comment: 'Clear win' });
  const keyChange = await server.api.patch(url, { feature_flag_key: 'another' });
  t.equal(keyChange.status, 400);
  t.equal(keyChange.body.attr, 'feature_flag_key');
  const archived = await server.api.patch(url, { archived: true });
  t.equal(archived.body.archived, true);
  t.equal((await server.api.get(`${EXP}?archived=false`)).body.results.some((e: any) => e.id === created.body.id), false);

  const del = await server.api.delete(url);
  t.equal(del.status, 405);
  t.match(del.body, { type: 'invalid_request', code: 'method_not_allowed' });
  t.equal((await server.api.get(url)).status, 200, 'the hard delete changed nothing');
  const flagUrl = `${FF}${created.body.feature_flag.id}/`;
  const flagDelete = await server.api.patch(flagUrl, { deleted: true });
  t.equal(flagDelete.status, 400, 'a flag an experiment uses cannot be deleted');
  t.match(flagDelete.body, { type: 'validation_error', code: 'invalid_input', detail: new RegExp(`experiments use \\(${created.body.id}\\)`) });
  t.equal((await server.api.get(flagUrl)).body.deleted, false);
  const soft = await server.api.patch(url, { deleted: true });
  t.equal(soft.status, 200);
  t.equal(soft.body.deleted, true);
  t.equal((await server.api.get(EXP)).body.results.some((e: any) => e.id === created.body.id), false, 'deleted experiments leave the list');
  t.same((await server.api.get(`${FF}${created.body.feature_flag.id}/`)).body.experiment_set, [], 'and the flag\'s experiment_set');
  t.equal((await server.api.patch(flagUrl, { deleted: true })).status, 200, 'then the flag can be deleted');
  t.equal((await server.api.get(`${EXP}999999/`)).status, 404);
});

t.test('personal key scope `experiment`', async (t) => {
  const key = async (scopes: string[]) => {
    const res = await server.api.post('/api/personal_api_keys/', { label: `exp ${scopes.join(',')}`, scopes });
    if (res.status !== 201) throw new Error(`key: ${res.status} ${res.text}`);
    return server.api.withKey(res.body.value);
  };
  const reader = await key(['experiment:read']);
  const writer = await key(['experiment:write']);
  const flagsOnly = await key(['feature_flag:write']);
  t.equal((await reader.get(EXP)).status, 200);
  const refused = await reader.post(EXP, { name: 'r', feature_flag_key: 'exp-reader' });
  t.equal(refused.status, 403);
  t.match(refused.body, { code: 'permission_denied', detail: "API key missing required scope 'experiment:write'" });
  t.equal((await flagsOnly.get(EXP)).status, 403);
  t.equal((await writer.post(EXP, { name: 'w', feature_flag_key: 'exp-writer' })).status, 201);
});

t.test('results end to end: posthog-node exposures, seeded conversions, statistics and the sample-ratio check', async (t) => {
  const created = await server.api.post(EXP, {
    name: 'Pricing page', feature_flag_key: 'exp-pricing',
    metrics: [funnel('purchase'), mean('purchase', 'sum', 'amount')],
    metrics_secondary: [mean('purchase')],
  });
  t.equal(created.status, 201, created.text);
  const url = `${EXP}${created.body.id}/`;
  const draft = await server.api.get(`${url}results/`);
  t.equal(draft.status, 400, 'a draft has no results');
  t.equal(draft.body.attr, 'start_date');
  const start = new Date(Date.now() - 60_000).toISOString();
  t.equal((await server.api.patch(url, { start_date: start })).status, 200);

  // Before the start: exposures that do not count.
  await batch([{ event: '$feature_flag_called', distinct_id: 'early-bird', timestamp: new Date(Date.now() - 3_600_000).toISOString(), properties: { $feature_flag: 'exp-pricing', $feature_flag_response: 'test' } }]);

  const sdk = new PostHog(PROJECT_KEY, { host: server.q.base, fetchRetryCount: 0, flushAt: 100, flushInterval: 60_000 });
  const errors: unknown[] = [];
  sdk.on('error', (e: unknown) => errors.push(e));
  const assigned = new Map<string, string>();
  for (let i = 0; i < 200; i++) {
    const id = `exp-user-${i}`;
    const variant = await sdk.getFeatureFlag('exp-pricing', id);
    if (typeof variant !== 'string') throw new Error(`user ${id} got ${String(variant)}`);
    assigned.set(id, variant);
  }
  await sdk.shutdown();
  t.same(errors, [], 'the SDK reported no error');
  const users = (v: string) => [...assigned].filter(([, x]) => x === v).map(([id]) => id);
  t.equal(users('control').length + users('test').length, 200);
  t.ok(users('control').length > 60 && users('test').length > 60, `an even-ish split: ${users('control').length}/${users('test').length}`);

  // Conversions after exposure: 20 % in control, 45 % in test; amounts 10–59.
  const rand = seeded(34);
  const sent = { control: { purchasers: 0, purchases: 0, amount: 0, squares: 0 }, test: { purchasers: 0, purchases: 0, amount: 0, squares: 0 } };
  const conversions: unknown[] = [];
  // A purchase before anyone's exposure does not count (and a non-exposed user's purchases never do).
  conversions.push({ event: 'purchase', distinct_id: 'exp-user-0', timestamp: new Date(Date.now() - 30_000).toISOString(), properties: { amount: 1000 } });
  conversions.push({ event: 'purchase', distinct_id: 'never-exposed', properties: { amount: 1000 } });
  for (const [id, variant] of assigned) {
    const s = sent[variant as 'control' | 'test'];
    if (rand() >= (variant === 'test' ? 0.45 : 0.2)) continue;
    const times = 1 + Math.floor(rand() * 2);
    let total = 0;
    for (let k = 0; k < times; k++) {
      const amount = 10 + Math.floor(rand() * 50);
      total += amount;
      conversions.push({ event: 'purchase', distinct_id: id, properties: { amount } });
    }
    s.purchasers++;
    s.purchases += times;
    s.amount += total;
    s.squares += total * total;
  }
  await batch(conversions);

  const res = await server.api.get(`${url}results/`);
  t.equal(res.status, 200, res.text);
  const r = res.body;
  t.same(r.exposures, { control: users('control').length, test: users('test').length }, 'exposures per variant = users per variant');
  t.equal(r.stats_method, 'bayesian');
  const perDay = r.exposures_timeline;
  t.ok(perDay.days.length >= 1 && perDay.days.every((d: string) => !Number.isNaN(Date.parse(d))), `${perDay.days.length} days in the exposures timeline`);
  for (const key of ['control', 'test']) {
    t.equal(perDay.counts[key].length, perDay.days.length);
    t.equal(perDay.counts[key].reduce((a: number, b: number) => a + b, 0), r.exposures[key], `${key}: first exposures per day add up to its exposures`);
  }
  t.equal(r.srm.flagged, false, `an even split is not flagged (p = ${r.srm.p_value})`);

  const [f, m] = r.metrics;
  t.equal(f.metric_type, 'funnel');
  t.match(f.baseline, { key: 'control', exposures: users('control').length, step_counts: [sent.control.purchasers], success_count: sent.control.purchasers });
  t.match(f.variant_results[0], { key: 'test', exposures: users('test').length, step_counts: [sent.test.purchasers], chance_to_win: Number, credible_interval: Array, significant: Boolean });
  t.ok(f.variant_results[0].chance_to_win > 0.9, `test converts better: chance_to_win ${f.variant_results[0].chance_to_win}`);
  t.equal(f.srm.flagged, false);
  t.equal(m.metric_type, 'mean');
  t.match(m.baseline, { key: 'control', number_of_samples: users('control').length, sum: sent.control.amount, sum_squares: sent.control.squares });
  t.match(m.variant_results[0], { key: 'test', number_of_samples: users('test').length, sum: sent.test.amount, sum_squares: sent.test.squares, chance_to_win: Number });
  const [count] = r.metrics_secondary;
  t.equal(count.baseline.sum, sent.control.purchases, 'math total counts events');
  t.equal(count.variant_results[0].sum, sent.test.purchases);

  // Results come through the analyses' cache: the same answer again without a scan, until refresh=true, a change
  // of the experiment, or a new event of the project.
  // Each worker thread keeps its own cache, and requests go to either: within three more asks one is a hit.
  t.equal(r.is_cached, false, 'the first answer was computed');
  const asks = [];
  for (let i = 0; i < 3; i++) asks.push((await server.api.get(`${url}results/`)).body);
  const hit = asks.find((a) => a.is_cached === true);
  t.ok(hit, `asked again: from the cache (${asks.map((a) => a.is_cached).join(', ')})`);
  t.same(hit?.metrics, r.metrics, 'the same answer');
  t.equal((await server.api.get(`${url}results/?refresh=true`)).body.is_cached, false, 'refresh=true recomputes');
  await batch([{ event: 'unrelated', distinct_id: 'cache-buster', properties: {} }]);
  t.equal((await server.api.get(`${url}results/`)).body.is_cached, false, 'a newly applied event of the project makes it stale');

  // The same data, frequentist.
  t.equal((await server.api.patch(url, { stats_config: { method: 'frequentist' } })).status, 200);
  const freq = await server.api.get(`${url}results/`);
  t.equal(freq.body.stats_method, 'frequentist');
  t.equal(freq.body.is_cached, false, 'a change of the experiment makes it stale');
  t.match(freq.body.metrics[0].variant_results[0], { key: 'test', p_value: Number, confidence_interval: Array, significant: Boolean });
  t.ok(freq.body.metrics[0].variant_results[0].p_value < 0.05, `p = ${freq.body.metrics[0].variant_results[0].p_value}`);
  t.equal(freq.body.metrics[0].sequential, null, 'no planned sample size: no sequential intervals');

  // A planned sample size (PostHog's parameters.recommended_sample_size, over all variants): the peeking note and
  // the always-valid intervals.
  t.equal((await server.api.patch(url, { parameters: { recommended_sample_size: 1000 } })).status, 200);
  const planned = await server.api.get(`${url}results/`);
  t.match(planned.body.metrics[0].peeking, { planned_sample_size: 1000, current_sample_size: 200, before_plan: true });
  t.match(planned.body.metrics[0].sequential, [{ key: 'test', method: 'sequential', p_value: Number, confidence_interval_absolute: Array }]);
  const badPlan = await server.api.patch(url, { parameters: { recommended_sample_size: 'lots' } });
  t.equal(badPlan.status, 400);
  t.equal(badPlan.body.attr, 'parameters');

  // The query API's ExperimentQuery: the same scan and statistics for one metric.
  const query = (metric?: unknown) => server.api.post('/api/projects/@current/query/', { query: { kind: 'ExperimentQuery', experiment_id: created.body.id, ...(metric ? { metric } : {}) } });
  const q = await query(mean('purchase', 'sum', 'amount'));
  t.equal(q.status, 200, q.text);
  t.match(q.body, { kind: 'ExperimentQuery', metric_type: 'mean', method: 'frequentist', is_cached: false });
  t.match(q.body.baseline, { key: 'control', number_of_samples: users('control').length, sum: sent.control.amount, sum_squares: sent.control.squares });
  t.match(q.body.variant_results[0], { key: 'test', sum: sent.test.amount, p_value: Number });
  const qDefault = await query();
  t.same(qDefault.body.baseline.step_counts, [sent.control.purchasers], 'without a metric: the first primary metric');
  const bad = await server.api.post('/api/projects/@current/query/', { query: { kind: 'ExperimentQuery', experiment_id: 987654 } });
  t.equal(bad.status, 400);
  t.match(bad.body, { type: 'validation_error', attr: 'experiment_id' });

  // An end date before the conversions: only exposures and purchases up to it count.
  const ended = await server.api.patch(url, { end_date: new Date(Date.parse(start) + 1000).toISOString() });
  t.equal(ended.body.status, 'stopped');
  const none = await server.api.get(`${url}results/`);
  t.same(none.body.exposures, { control: 0, test: 0 });
  const qEnded = await query(mean('purchase', 'sum', 'amount'));
  t.equal(qEnded.body.is_cached, false, 'editing the experiment makes the cached query answer stale');
  t.equal(qEnded.body.baseline.exposures, 0);
});

t.test('results: a skewed split is flagged; persons seen in both variants are excluded (or kept by first_seen)', async (t) => {
  const created = await server.api.post(EXP, { name: 'Skewed', feature_flag_key: 'exp-skewed', start_date: new Date(Date.now() - 60_000).toISOString(), metrics: [funnel('signup')] });
  t.equal(created.status, 201, created.text);
  const url = `${EXP}${created.body.id}/`;
  const called = (id: string, variant: string) => ({ event: '$feature_flag_called', distinct_id: id, properties: { $feature_flag: 'exp-skewed', $feature_flag_response: variant } });
  const events: unknown[] = [];
  for (let i = 0; i < 150; i++) events.push(called(`skew-c-${i}`, 'control'));
  for (let i = 0; i < 50; i++) events.push(called(`skew-t-${i}`, 'test'));
  // Another flag's exposures are not this experiment's.
  for (let i = 0; i < 20; i++) events.push({ event: '$feature_flag_called', distinct_id: `other-${i}`, properties: { $feature_flag: 'exp-other', $feature_flag_response: 'test' } });
  await batch(events);
  await batch([called('skew-c-0', 'test')]);
  const res = await server.api.get(`${url}results/`);
  t.equal(res.status, 200, res.text);
  t.same(res.body.exposures, { control: 149, test: 50 }, 'the person seen in both variants is left out');
  t.equal(res.body.excluded_multiple_variants, 1);
  t.equal(res.body.srm.flagged, true, `150 vs 50 at 50/50 is flagged (p = ${res.body.srm.p_value})`);
  t.ok(res.body.srm.p_value < 0.001);
  t.equal(res.body.metrics[0].srm.flagged, true);
  t.equal(res.body.metrics[0].guard.meaningful, false, 'no conversions: the minimum-sample guard says so');
  // A second experiment on the same flag, without metrics: the exposure scan alone.
  const bare = await server.api.post(EXP, { name: 'Bare', feature_flag_key: 'exp-skewed', start_date: new Date(Date.now() - 60_000).toISOString() });
  t.equal(bare.status, 201, bare.text);
  const bareResults = await server.api.get(`${EXP}${bare.body.id}/results/`);
  t.same([bareResults.body.exposures, bareResults.body.metrics, bareResults.body.srm.flagged], [{ control: 149, test: 50 }, [], true]);
  t.same((await server.api.get(`${FF}${created.body.feature_flag.id}/`)).body.experiment_set, [created.body.id, bare.body.id]);

  t.equal((await server.api.patch(url, { exposure_criteria: { multiple_variant_handling: 'first_seen' } })).status, 200);
  const first = await server.api.get(`${url}results/`);
  t.same(first.body.exposures, { control: 150, test: 50 }, 'first_seen keeps the person in the first variant');

  // A custom exposure event: the variant comes from `$feature/<flag key>`.
  t.equal((await server.api.patch(url, { exposure_criteria: { exposure_config: { event: 'viewed pricing', properties: [] } } })).status, 200);
  await batch([
    { event: 'viewed pricing', distinct_id: 'custom-1', properties: { '$feature/exp-skewed': 'control' } },
    { event: 'viewed pricing', distinct_id: 'custom-2', properties: { '$feature/exp-skewed': 'test' } },
    { event: 'viewed pricing', distinct_id: 'custom-3', properties: {} },
  ]);
  const custom = await server.api.get(`${url}results/`);
  t.same(custom.body.exposures, { control: 1, test: 1 });
});

t.test('results count persons: distinct ids merged by $identify are one person; test accounts can be left out (project filters, as of each event)', async (t) => {
  const project = await server.api.post('/api/projects/', { name: 'experiments merged' });
  t.equal(project.status, 201, project.text);
  const base = `/api/projects/${project.body.id}`;
  t.equal((await server.api.patch(`${base}/`, { test_account_filters: [{ key: 'email', value: '@internal.example', operator: 'not_icontains', type: 'person' }] })).status, 200);
  const created = await server.api.post(`${base}/experiments/`, { name: 'Merged', feature_flag_key: 'exp-merged', start_date: new Date(Date.now() - 3_600_000).toISOString(), metrics: [funnel('signup')] });
  t.equal(created.status, 201, created.text);
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const send = async (batch: unknown[]) => {
    const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.body.api_token, batch }) });
    t.equal(res.status, 200);
  };
  // Person properties are read as they were when each event arrived: the staff emails are set (and applied: any
  // results call waits for that) before the exposures.
  await send([0, 1].map((i) => ({ event: '$set', distinct_id: `anon-${i}`, timestamp: at(31), properties: { $set: { email: `staff${i}@internal.example` } } })));
  t.equal((await server.api.get(`${base}/experiments/${created.body.id}/results/`)).status, 200);
  const events: unknown[] = [];
  for (let i = 0; i < 8; i++) {
    const variant = i % 2 === 0 ? 'control' : 'test';
    // Exposed anonymously, identified, then converted under the identified id.
    events.push({ event: '$feature_flag_called', distinct_id: `anon-${i}`, timestamp: at(30), properties: { $feature_flag: 'exp-merged', $feature_flag_response: variant } });
    events.push({ event: '$identify', distinct_id: `user-${i}`, timestamp: at(29), properties: { $anon_distinct_id: `anon-${i}` } });
    if (i < 6) events.push({ event: 'signup', distinct_id: `user-${i}`, timestamp: at(28) });
  }
  await send(events);
  const url = `${base}/experiments/${created.body.id}/`;
  const all = await server.api.get(`${url}results/`);
  t.equal(all.status, 200, all.text);
  t.same(all.body.exposures, { control: 4, test: 4 });
  t.same([all.body.metrics[0].baseline.step_counts, all.body.metrics[0].variant_results[0].step_counts], [[3], [3]], 'conversions under the identified id count for the anonymous exposure');
  t.equal((await server.api.patch(url, { exposure_criteria: { filterTestAccounts: true } })).status, 200);
  const filtered = await server.api.get(`${url}results/`);
  t.same(filtered.body.exposures, { control: 3, test: 3 }, 'the two staff persons are left out');
  t.same([filtered.body.metrics[0].baseline.step_counts, filtered.body.metrics[0].variant_results[0].step_counts], [[2], [2]]);
});

t.test('results with CUPED (stats_config.cuped.lookback_days): pre-exposure covariates from the same scan', async (t) => {
  const bad = await server.api.post(EXP, { name: 'c', feature_flag_key: 'exp-cuped-bad', stats_config: { cuped: { lookback_days: 0 } } });
  t.equal(bad.status, 400);
  t.equal(bad.body.attr, 'stats_config');
  const created = await server.api.post(EXP, {
    name: 'CUPED', feature_flag_key: 'exp-cuped', start_date: new Date(Date.now() - 3_600_000).toISOString(),
    metrics: [mean('page_view')], stats_config: { cuped: { lookback_days: 7 } },
  });
  t.equal(created.status, 201, created.text);
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const events: unknown[] = [];
  const expected = { control: { x: 0, x2: 0, xy: 0, y: 0 }, test: { x: 0, x2: 0, xy: 0, y: 0 } };
  for (let i = 0; i < 40; i++) {
    const variant = i % 2 === 0 ? 'control' : 'test';
    const id = `cuped-${i}`;
    const x = 1 + (i % 4);
    const y = x + (variant === 'test' ? 1 : 0);
    // Before the start (within the lookback), the exposure, then the metric's events.
    for (let k = 0; k < x; k++) events.push({ event: 'page_view', distinct_id: id, timestamp: at(120 + k) });
    events.push({ event: '$feature_flag_called', distinct_id: id, timestamp: at(30), properties: { $feature_flag: 'exp-cuped', $feature_flag_response: variant } });
    for (let k = 0; k < y; k++) events.push({ event: 'page_view', distinct_id: id, timestamp: at(10 - k) });
    const e = expected[variant];
    e.x += x;
    e.x2 += x * x;
    e.xy += x * y;
    e.y += y;
  }
  await batch(events);
  const res = await server.api.get(`${EXP}${created.body.id}/results/`);
  t.equal(res.status, 200, res.text);
  const m = res.body.metrics[0];
  t.same(res.body.exposures, { control: 20, test: 20 });
  t.match(m.baseline, { sum: expected.control.y, covariate: { sum: expected.control.x, sum_squares: expected.control.x2, sum_product: expected.control.xy } });
  t.match(m.variant_results[0], { sum: expected.test.y, covariate: { sum: expected.test.x, sum_squares: expected.test.x2, sum_product: expected.test.xy } });
  t.ok(Math.abs(m.cuped.theta - 1) < 1e-9, `y = x + effect: theta ${m.cuped.theta}`);
  t.ok(m.cuped.variance_reduction.every((r: any) => r.reduction > 0.99), 'the covariate explains the variance');
  // Without the lookback, the pre-exposure events count for nothing.
  t.equal((await server.api.patch(`${EXP}${created.body.id}/`, { stats_config: {} })).status, 200);
  const plain = await server.api.get(`${EXP}${created.body.id}/results/`);
  t.equal(plain.body.metrics[0].cuped, null);
  t.equal(plain.body.metrics[0].baseline.sum, expected.control.y);
  t.notOk('covariate' in plain.body.metrics[0].baseline);
});

t.test('activity log, and edits only by users who may change the flag', async (t) => {
  const created = await server.api.post(EXP, { name: 'Logged', feature_flag_key: 'logged-exp' });
  t.equal(created.status, 201);
  const id = created.body.id;
  t.equal((await server.api.patch(`${EXP}${id}/`, { description: 'why', start_date: '2026-11-01T00:00:00Z' })).status, 200);
  t.equal((await server.api.patch(`${EXP}${id}/`, { description: 'why' })).status, 200, 'a PATCH that changes nothing');
  const log = await server.api.get(`${EXP}${id}/activity/`);
  t.equal(log.status, 200);
  t.same(log.body.results.map((e: any) => e.activity), ['updated', 'created'], 'newest first; no entry for a PATCH that changed nothing');
  t.match(log.body.results[0], { scope: 'Experiment', item_id: String(id), user: { email: 'admin@quill.local' }, detail: { name: 'Logged' } });
  t.same(log.body.results[0].detail.changes.map((c: any) => c.field).sort(), ['description', 'start_date']);
  t.match(log.body.results[0].detail.changes.find((c: any) => c.field === 'description'), { type: 'Experiment', action: 'changed', before: '', after: 'why' });
  t.ok((await server.api.get(`${EXP}activity/`)).body.results.some((e: any) => e.item_id === String(id)), 'the project-wide experiments log has it');
  t.equal((await server.api.get(`${EXP}987654/activity/`)).status, 404);

  // Role access as flags have it: with the organization on "view only", a member cannot change the experiment.
  const member = await server.api.post('/api/organizations/@current/members/', { email: 'analyst@example.com', first_name: 'Ana' });
  t.equal(member.status, 201);
  const ana = server.api.withKey(member.body.personal_api_key);
  t.equal((await ana.patch(`${EXP}${id}/`, { description: 'by ana' })).status, 200, 'default "can always edit"');
  t.equal((await server.api.patch('/api/organizations/@current/', { feature_flags_access_level: 21 })).status, 200);
  try {
    const denied = await ana.patch(`${EXP}${id}/`, { description: 'again' });
    t.equal(denied.status, 403);
    t.same(denied.body, { type: 'authentication_error', code: 'permission_denied', detail: "You don't have edit permissions for this experiment's feature flag.", attr: null });
    t.equal((await ana.post(EXP, { name: 'Hijack', feature_flag_key: 'logged-exp' })).status, 403, 'nor start another experiment on that flag');
    t.equal((await ana.get(`${EXP}${id}/`)).status, 200, 'reading stays open');
    t.equal((await server.api.patch(`${EXP}${id}/`, { description: 'by the admin' })).status, 200, 'an admin still may');
  } finally {
    await server.api.patch('/api/organizations/@current/', { feature_flags_access_level: 37 });
  }
});
