// Paths over HTTP with hand-built sessions: items of each event type, sessions split at 30 minutes, repeated items
// collapsed, start and end points, step limits, groupings and cleaning rules, edge weights and limits, the persons
// of an edge or a drop-off, and bad parameters.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t);
const enc = encodeURIComponent;
const T = (h: number, m = 0) => new Date(Date.UTC(2026, 10, 10, h, m)).toISOString();
let P = '';

async function paths(params: Record<string, unknown>) {
  const qs = Object.entries({ date_from: '2026-11-01', date_to: '2026-11-30', ...params }).map(([k, v]) => `${k}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`).join('&');
  return server.api.get(`${P}/insights/path/?${qs}`);
}
const edges = async (params: Record<string, unknown>) => {
  const res = await paths(params);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.body.result.map((e: any) => `${e.source} > ${e.target} ${e.value}`);
};

t.before(async () => {
  const created = await server.api.post('/api/projects/', { name: 'paths' });
  P = `/api/projects/${created.body.id}`;
  const pv = (id: string, url: string, h: number, m = 0) => ({ event: '$pageview', distinct_id: id, timestamp: T(h, m), properties: { $current_url: url } });
  const batch = [
    pv('a', 'https://x.test/', 10), pv('a', 'https://x.test/pricing/', 10, 1), pv('a', 'https://x.test/pricing', 10, 2), pv('a', 'https://x.test/signup', 10, 5),
    pv('a', 'https://x.test/', 12), pv('a', 'https://x.test/docs/1', 12, 1),
    pv('b', 'https://x.test/', 10), pv('b', 'https://x.test/pricing', 10, 3), { event: 'clicked', distinct_id: 'b', timestamp: T(10, 4) },
    { event: '$screen', distinct_id: 'c', timestamp: T(9), properties: { $screen_name: 'Home' } }, { event: '$screen', distinct_id: 'c', timestamp: T(9, 1), properties: { $screen_name: 'Settings' } },
    pv('d', 'https://x.test/docs/2', 11), pv('d', 'https://x.test/docs/3', 11, 1), pv('d', 'https://x.test/signup', 11, 2),
  ];
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: created.body.api_token, batch }) });
  if (res.status !== 200) throw new Error(`batch ${res.status}`);
});

t.test('pageview paths: sessions, repeats, weights', async (t) => {
  t.same(await edges({}), [
    '1_https://x.test > 2_https://x.test/pricing 2',
    '1_https://x.test > 2_https://x.test/docs/1 1',
    '1_https://x.test/docs/2 > 2_https://x.test/docs/3 1',
    '2_https://x.test/docs/3 > 3_https://x.test/signup 1',
    '2_https://x.test/pricing > 3_https://x.test/signup 1',
  ], 'a\'s two sessions (2 hours apart), the trailing slash and the repeated pricing page collapsed');
  const res = await paths({});
  t.match(res.body.result[0], { source: '1_https://x.test', target: '2_https://x.test/pricing', value: 2, average_conversion_time: 120_000 });
  t.same(await edges({ min_edge_weight: 2 }), ['1_https://x.test > 2_https://x.test/pricing 2']);
  t.same((await edges({ edge_limit: 1 })).length, 1);
});

t.test('event types, custom events, exclusions, groupings and cleaning', async (t) => {
  t.same(await edges({ include_event_types: ['$screen'] }), ['1_Home > 2_Settings 1']);
  t.same(await edges({ include_event_types: ['$pageview', 'custom_event'], start_point: 'https://x.test/pricing' }), ['1_https://x.test/pricing > 2_clicked 1', '1_https://x.test/pricing > 2_https://x.test/signup 1']);
  t.same(await edges({ include_custom_events: ['clicked'], start_point: 'https://x.test/pricing' }), ['1_https://x.test/pricing > 2_clicked 1', '1_https://x.test/pricing > 2_https://x.test/signup 1'], 'named custom events beside pageviews');
  t.same(await edges({ path_groupings: ['https://x.test/docs/*'] }), [
    '1_https://x.test > 2_https://x.test/pricing 2',
    '1_https://x.test > 2_https://x.test/docs/* 1',
    '1_https://x.test/docs/* > 2_https://x.test/signup 1',
    '2_https://x.test/pricing > 3_https://x.test/signup 1',
  ], 'grouped docs pages collapse into one item');
  t.same(await edges({ local_path_cleaning_filters: [{ regex: 'https://x\\.test', alias: '' }], exclude_events: ['/docs/1'] }), [
    '1_ > 2_/pricing 2', '1_/docs/2 > 2_/docs/3 1', '2_/docs/3 > 3_/signup 1', '2_/pricing > 3_/signup 1',
  ]);
  t.equal((await server.api.patch(`${P}/`, { path_cleaning_filters: [{ regex: '^https://x\\.test', alias: '' }] })).status, 200);
  t.same((await edges({ path_replacements: true }))[0], '1_ > 2_/pricing 2', 'the project\'s rules with path_replacements');
});

t.test('start and end points, step limits', async (t) => {
  t.same(await edges({ end_point: 'https://x.test/signup' }), [
    '1_https://x.test > 2_https://x.test/pricing 1', '1_https://x.test/docs/2 > 2_https://x.test/docs/3 1',
    '2_https://x.test/docs/3 > 3_https://x.test/signup 1', '2_https://x.test/pricing > 3_https://x.test/signup 1',
  ]);
  t.same(await edges({ step_limit: 2 }), ['1_https://x.test > 2_https://x.test/pricing 2', '1_https://x.test > 2_https://x.test/docs/1 1', '1_https://x.test/docs/2 > 2_https://x.test/docs/3 1']);
  t.same(await edges({ start_point: 'https://x.test/docs/2', end_point: 'https://x.test/signup', step_limit: 2 }), ['1_https://x.test/docs/2 > 2_... 1', '2_... > 3_https://x.test/signup 1'], 'long anchored paths keep both ends around "..."');
});

t.test('every step asked is answered, unless its transitions are not among the edge_limit most frequent', async (t) => {
  // The console draws what this answers; a diagram with fewer steps than asked comes from here. 30 groups of three
  // persons go home → p<k> → q<k> (60 transitions of weight 3); two persons walk six pages (weight 2 each).
  const project = await server.api.post('/api/projects/', { name: 'paths depth' });
  const base = `/api/projects/${project.body.id}`;
  const pv = (id: string, url: string, m: number) => ({ event: '$pageview', distinct_id: id, timestamp: T(10, m), properties: { $current_url: url } });
  const batch = [];
  for (let k = 0; k < 30; k++) for (let p = 0; p < 3; p++) batch.push(pv(`g${k}-${p}`, '/home', 0), pv(`g${k}-${p}`, `/p${k}`, 1), pv(`g${k}-${p}`, `/q${k}`, 2));
  for (const id of ['long-1', 'long-2']) ['/home', '/a', '/b', '/c', '/d', '/e'].forEach((u, i) => batch.push(pv(id, u, i)));
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: project.body.api_token, batch }) });
  t.equal(res.status, 200);
  const deepest = async (params: Record<string, unknown>) => {
    const qs = Object.entries({ date_from: '2026-11-01', date_to: '2026-11-30', ...params }).map(([k, v]) => `${k}=${enc(String(v))}`).join('&');
    const answer = await server.api.get(`${base}/insights/path/?${qs}`);
    t.equal(answer.status, 200);
    return { steps: Math.max(...answer.body.result.map((e: any) => Number(e.target.split('_')[0]))), edges: answer.body.result.length };
  };
  t.same(await deepest({ step_limit: 6, edge_limit: 100 }), { steps: 6, edges: 65 }, 'all six steps when every transition is kept');
  t.same(await deepest({ step_limit: 4, edge_limit: 100 }), { steps: 4, edges: 63 }, 'four asked, four answered');
  t.same(await deepest({ step_limit: 6 }), { steps: 3, edges: 50 }, 'the default 50 most frequent are all weight 3: the long path\'s steps are cut');
});

t.test('the persons of an edge and of a drop-off', async (t) => {
  const persons = async (params: Record<string, unknown>) => {
    const res = await server.api.post(`${P}/persons/path/`, { date_from: '2026-11-01', date_to: '2026-11-30', ...params });
    t.equal(res.status, 200);
    return res.body.results[0].people.map((p: any) => p.distinct_ids[0]).sort();
  };
  t.same(await persons({ path_start_key: '1_https://x.test', path_end_key: '2_https://x.test/pricing' }), ['a', 'b']);
  t.same(await persons({ path_end_key: '3_https://x.test/signup' }), ['a', 'd']);
  t.same(await persons({ path_dropoff_key: '2_https://x.test/pricing' }), ['b'], 'b\'s path ends at pricing');
});

t.test('bad path parameters', async (t) => {
  for (const [params, attr] of [
    [{ include_event_types: ['$autocapture'] }, 'include_event_types'], [{ min_edge_weight: 5, max_edge_weight: 2 }, 'max_edge_weight'],
    [{ include_event_types: ['custom_event'], include_custom_events: ['x'] }, 'include_custom_events'],
    [{ step_limit: 1 }, 'step_limit'], [{ local_path_cleaning_filters: [{ regex: '(', alias: '' }] }, 'local_path_cleaning_filters'],
    [{ funnel_paths: 'funnel_path_after_step' }, 'funnel_paths'],
  ] as const) {
    const res = await paths(params);
    t.equal(res.status, 400, JSON.stringify(params));
    t.match(res.body, { type: 'validation_error', attr }, JSON.stringify(params));
  }
});
