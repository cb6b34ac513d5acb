// Funnels over HTTP with hand-built sequences, one rule at a time: order, strictness, unordered steps, equal
// consecutive steps, exclusions, the window's edge, breakdown attribution, trends and time-to-convert, the persons
// endpoint, a person spread over shards, and validation errors. Each test gets a project of its own.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
const enc = encodeURIComponent;
const T = (day: number, h = 12, m = 0, s = 0) => new Date(Date.UTC(2026, 10, day, h, m, s)).toISOString();

async function project(name: string, events: [string, string, string, Record<string, unknown>?][]) {
  const created = await server.api.post('/api/projects/', { name });
  const base = `/api/projects/${created.body.id}`;
  const batch = events.map(([distinct_id, event, timestamp, properties]) => ({ distinct_id, event, timestamp, properties: properties ?? {} }));
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
  return {
    funnel: async (steps: unknown[], extra: Record<string, unknown> = {}) => {
      const params = { events: steps, date_from: '2026-11-01', date_to: '2026-11-30', ...extra };
      const qs = Object.entries(params).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
      return server.api.get(`${base}/insights/funnel/?${qs}`);
    },
    persons: async (steps: unknown[], extra: Record<string, unknown>) => {
      const res = await server.api.post(`${base}/persons/funnel/`, { events: steps, date_from: '2026-11-01', date_to: '2026-11-30', ...extra });
      if (res.status !== 200) throw new Error(`persons: ${res.status} ${res.text}`);
      return res.body.results[0].people.map((p: any) => p.distinct_ids[0]).sort();
    },
  };
}
const steps = (...names: (string | [string, object[]])[]) => names.map((n, i) => (typeof n === 'string' ? { id: n, order: i } : { id: n[0], order: i, properties: n[1] }));
const counts = (res: any) => (Array.isArray(res.body.result[0]) ? res.body.result.map((r: any) => r.map((s: any) => s.count)) : res.body.result.map((s: any) => s.count));

t.test('ordered: each step after the previous, all within the window from the first', async (t) => {
  const p = await project('ordered', [
    ['a', 'view', T(10, 10)], ['a', 'signup', T(10, 11)], ['a', 'buy', T(12, 9)],
    ['b', 'signup', T(10, 9)], ['b', 'view', T(10, 10)],
    ['c', 'view', T(1, 10)], ['c', 'signup', T(20, 10)],
    ['d', 'view', T(10, 10)], ['d', 'view', T(15, 10)], ['d', 'signup', T(16, 10)], ['d', 'buy', T(17, 10)],
  ]);
  const res = await p.funnel(steps('view', 'signup', 'buy'));
  t.same(counts(res), [4, 2, 2], 'b signed up before viewing; c took longer than 14 days; d\'s later attempt counts');
  t.match(res.body.result[1], { action_id: 'signup', name: 'signup', order: 1, type: 'events', average_conversion_time: Number, converted_people_url: /funnel_step=2/, dropped_people_url: /funnel_step=-2/ });
  t.equal(res.body.result[0].average_conversion_time, null);
  t.equal(res.body.result[1].average_conversion_time, (3600 + (6 * 86400 + 86400) / 2) / 2, 'a: 1 h; d: both its attempts reach the end (6 days and 1 day)');
  t.equal(res.body.result[1].median_conversion_time, (3600 + 3.5 * 86400) / 2, 'the median of the persons\' medians');
  t.equal(res.body.result[2].median_conversion_time, (46 * 3600 + 86400) / 2);
  t.same(counts(await p.funnel(steps('view', 'signup'), { funnel_window_interval: 30, funnel_window_interval_unit: 'day' })), [4, 3], 'a wider window takes c');
  t.same(counts(await p.funnel(steps('view', 'signup'), { funnel_window_days: 30 })), [4, 3], 'the legacy window in days');
  t.same(counts(await p.funnel(steps('view', 'signup'), { funnel_window_interval: 2, funnel_window_interval_unit: 'hour' })), [4, 1], 'a 2-hour window: a only');
  t.same(await p.persons(steps('view', 'signup', 'buy'), { funnel_step: 3 }), ['a', 'd']);
  t.same(await p.persons(steps('view', 'signup', 'buy'), { funnel_step: -2 }), ['b', 'c'], 'dropped before step 2');
  t.same(await p.persons(steps('view', 'signup', 'buy'), { funnel_custom_steps: [1, 3] }), ['a', 'b', 'c', 'd']);
});

t.test('the window edge: exactly the window converts, a second more does not', async (t) => {
  const p = await project('edge', [['a', 'view', T(10, 10)], ['a', 'signup', T(11, 10)], ['b', 'view', T(10, 10)], ['b', 'signup', T(11, 10, 0, 1)]]);
  t.same(counts(await p.funnel(steps('view', 'signup'), { funnel_window_interval: 1, funnel_window_interval_unit: 'day' })), [2, 1]);
});

t.test('equal consecutive steps need different events; strict and unordered orders', async (t) => {
  const p = await project('orders', [
    ['a', 'view', T(10, 10)],
    ['b', 'view', T(10, 10)], ['b', 'view', T(10, 11)],
    ['c', 'view', T(10, 10)], ['c', 'other', T(10, 10, 30)], ['c', 'signup', T(10, 11)],
    ['d', 'signup', T(10, 9)], ['d', 'view', T(10, 10)],
  ]);
  t.same(counts(await p.funnel(steps('view', 'view'))), [4, 1], 'one view cannot be both steps');
  t.same(counts(await p.funnel(steps('view', ['view', [{ key: 'x', value: 1, operator: 'is_not' }]]))), [4, 1], 'a narrower step counts as equal');
  t.same(counts(await p.funnel(steps('view', 'signup'), { funnel_order_type: 'strict' })), [4, 0], 'strict: the very next event');
  t.same(counts(await p.funnel(steps('view', 'other', 'signup'), { funnel_order_type: 'strict' })), [4, 1, 1]);
  const unordered = await p.funnel(steps('view', 'signup'), { funnel_order_type: 'unordered' });
  t.same(counts(unordered), [4, 2], 'unordered: d signed up first');
  t.same(unordered.body.result.map((s: any) => [s.name, s.action_id]), [['Completed 1 step', null], ['Completed 2 steps', null]]);
});

t.test('one event, one step: a later step that widens an earlier one needs an event of its own', async (t) => {
  const pro = [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }];
  const p = await project('one-event-one-step', [
    ['a', 'signup', T(10, 10), { plan: 'pro' }],
    ['b', 'signup', T(10, 10), { plan: 'pro' }], ['b', 'signup', T(10, 11), { plan: 'free' }],
    ['c', 'signup', T(10, 10), { plan: 'free' }], ['c', 'signup', T(10, 11), { plan: 'pro' }],
  ]);
  const widening = steps(['signup', pro], 'signup');
  t.same(counts(await p.funnel(widening)), [3, 1], 'a: its one signup fills step 1 only; b: a second signup after the pro one; c: its pro signup comes last');
  t.same(await p.persons(widening, { funnel_step: 2 }), ['b'], 'the persons of step 2 agree');
  t.same(await p.persons(widening, { funnel_step: -2 }), ['a', 'c'], 'and those who dropped off before it');
  t.same(counts(await p.funnel(widening, { funnel_order_type: 'strict' })), [3, 1], 'strict: the same');
  // Unordered: a's single event cannot be both steps; b's and c's two events can (either may come first).
  t.same(counts(await p.funnel(widening, { funnel_order_type: 'unordered' })), [3, 2], 'unordered: b and c, each with two signups');
  const three = steps(['signup', pro], 'signup', 'signup');
  t.same(counts(await p.funnel(three, { funnel_order_type: 'unordered' })), [3, 2, 0], 'three steps need three events');
});

t.test('exclusions drop the attempt, other clean attempts of the person still count', async (t) => {
  const p = await project('exclusions', [
    ['a', 'view', T(10, 10)], ['a', 'cancel', T(10, 10, 30)], ['a', 'signup', T(10, 11)],
    ['b', 'view', T(10, 10)], ['b', 'cancel', T(10, 10, 30)], ['b', 'view', T(11, 10)], ['b', 'signup', T(11, 11)],
    ['c', 'view', T(10, 10)], ['c', 'signup', T(10, 11)], ['c', 'cancel', T(10, 12)],
  ]);
  const exclusions = [{ id: 'cancel', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }];
  t.same(counts(await p.funnel(steps('view', 'signup'), { exclusions })), [2, 2], 'a is dropped, b\'s second attempt and c count');
  for (const [bad, why] of [
    [[{ id: 'cancel', funnel_from_step: 1, funnel_to_step: 1 }], 'from < to'],
    [[{ id: 'view', funnel_from_step: 0, funnel_to_step: 1 }], 'an exclusion equal to a step'],
    [[{ id: 'cancel', funnel_from_step: 0, funnel_to_step: 2 }], 'to past the last step'],
  ] as const) {
    const res = await p.funnel(steps('view', 'signup'), { exclusions: bad });
    t.same([res.status, res.body.attr], [400, 'exclusions'], why);
  }
  const partial = await p.funnel(steps('view', 'signup', 'buy'), { funnel_order_type: 'unordered', exclusions: [{ id: 'cancel', funnel_from_step: 0, funnel_to_step: 1 }] });
  t.same([partial.status, partial.body.detail], [400, 'Partial Exclusions not allowed in unordered funnels']);
});

t.test('breakdowns with each attribution, trends and time to convert', async (t) => {
  const p = await project('breakdowns', [
    ['a', 'view', T(10, 10), { $browser: 'Chrome' }], ['a', 'signup', T(10, 11), { $browser: 'Safari' }],
    ['b', 'view', T(10, 10), { $browser: 'Safari' }], ['b', 'signup', T(11, 10), { $browser: 'Safari' }],
    ['c', 'view', T(11, 10)], ['c', 'view', T(11, 11), { $browser: 'Firefox' }],
  ]);
  const by = async (extra: Record<string, unknown>) => Object.fromEntries((await p.funnel(steps('view', 'signup'), { breakdown: '$browser', ...extra })).body.result.map((r: any) => [r[0].breakdown_value[0], r.map((s: any) => s.count)]));
  t.same(await by({}), { Chrome: [1, 1], Safari: [1, 1], Firefox: [1, 0] }, 'first touch (the default)');
  t.same(await by({ breakdown_attribution_type: 'last_touch' }), { Safari: [2, 2], Firefox: [1, 0] });
  t.same(await by({ breakdown_attribution_type: 'all_events' }), { Chrome: [1, 0], Safari: [1, 1], '': [1, 0], Firefox: [1, 0] }, 'every step must carry the value');
  t.same(await by({ breakdown_attribution_type: 'step', breakdown_attribution_value: 1 }), { Safari: [2, 2], '': [1, 0] }, 'the value on step 1');
  t.same(await by({ breakdown_limit: 1 }), { Chrome: [1, 1], Other: [2, 1] }, 'values past the limit are Other');
  const trends = await p.funnel(steps('view', 'signup'), { funnel_viz_type: 'trends', date_from: '2026-11-10', date_to: '2026-11-12' });
  t.same(trends.body.result.map((r: any) => [r.days, r.data]), [[['2026-11-10', '2026-11-11', '2026-11-12'], [100, 0, 0]]], 'conversion rate per entrance day');
  const dropped = await p.persons(steps('view', 'signup'), { funnel_viz_type: 'trends', date_from: '2026-11-10', date_to: '2026-11-12', entrance_period_start: '2026-11-11', drop_off: true });
  t.same(dropped, ['c']);
  const ttc = await p.funnel(steps('view', 'signup'), { funnel_viz_type: 'time_to_convert', bin_count: 2 });
  t.match(ttc.body.result, { average_conversion_time: (3600 + 86400) / 2, bins: [[3600, 1], [3600 + 41400, 0], [3600 + 82800, 1]] });
});

t.test('a person whose distinct ids live on different shards is one person in the funnel', async (t) => {
  const events: [string, string, string, Record<string, unknown>?][] = [];
  for (let i = 0; i < 6; i++) {
    events.push([`anon-${i}`, 'view', T(10, 10)]);
    events.push([`user-${i}`, '$identify', T(10, 10, 30), { $anon_distinct_id: `anon-${i}` }]);
    events.push([`user-${i}`, 'signup', T(10, 11)]);
  }
  const p = await project('merged', events);
  t.same(counts(await p.funnel(steps('view', 'signup'))), [6, 6], 'the view (anonymous) and the signup (identified) are one person\'s');
});

t.test('bad funnel parameters', async (t) => {
  const p = await project('bad', [['a', 'view', T(10)]]);
  for (const [extra, attr] of [
    [{ funnel_order_type: 'sideways' }, 'funnel_order_type'], [{ funnel_viz_type: 'pie' }, 'funnel_viz_type'],
    [{ funnel_window_interval: 3, funnel_window_interval_unit: 'fortnight' }, 'funnel_window_interval_unit'],
    [{ funnel_window_interval: 0 }, 'funnel_window_interval'], [{ breakdown_attribution_type: 'magic' }, 'breakdown_attribution_type'],
    [{ breakdown: '$browser', breakdown_attribution_type: 'step' }, 'breakdown_attribution_value'],
    [{ breakdown: 1, breakdown_type: 'cohort' }, 'breakdown_type'],
  ] as const) {
    const res = await p.funnel(steps('view', 'signup'), extra);
    t.equal(res.status, 400, JSON.stringify(extra));
    t.match(res.body, { type: 'validation_error', attr }, JSON.stringify(extra));
  }
  t.same((await p.funnel([])).body.result, [], 'no steps: []');
});
