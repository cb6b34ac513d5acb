// Retention, lifecycle and stickiness over HTTP on a hand-built dataset whose every number is known, with their
// persons endpoints, a person whose distinct ids live on both shards, every period, and bad parameters.
import t from 'tap';
import { quillForFile } from '../helpers/quill.js';

const server = quillForFile(t, { workers: 2 });
let P = '';
let token = '';
const enc = encodeURIComponent;
const D = (day: number, h = 12) => new Date(Date.UTC(2026, 10, day, h)).toISOString();
const PV = enc('[{"id":"$pageview"}]');

async function get(path: string) {
  return server.api.get(`${P}/${path}`);
}
async function ok(path: string): Promise<any> {
  const res = await get(path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.body;
}

t.before(async () => {
  const project = await server.api.post('/api/projects/', { name: 'comebacks' });
  P = `/api/projects/${project.body.id}`;
  token = project.body.api_token;
  // a: 10, 11, 12, 14; b: 10, 12; c: 11, 12, 13; d: 13. "m" browses as two anonymous ids (two shards among
  // them, whatever the hash) on the 10th and 11th, then identifies both as one person on the 12th.
  const activity: Record<string, number[]> = { a: [10, 11, 12, 14], b: [10, 12], c: [11, 12, 13], d: [13] };
  const batch: object[] = [];
  for (const [id, days] of Object.entries(activity)) for (const d of days) batch.push({ event: '$pageview', distinct_id: id, timestamp: D(d) });
  for (const [i, anon] of ['m-phone', 'm-laptop', 'm-tablet', 'm-watch'].entries()) batch.push({ event: 'visit', distinct_id: anon, timestamp: D(10 + (i % 2), 8) });
  for (const anon of ['m-phone', 'm-laptop', 'm-tablet', 'm-watch']) batch.push({ event: '$identify', distinct_id: 'm', timestamp: D(12, 9), properties: { $anon_distinct_id: anon } });
  const res = await fetch(`${server.q.base}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) });
  if (res.status !== 200) throw new Error(`batch: ${res.status}`);
});

const counts = (body: any) => body.result.map((r: any) => r.values.map((v: any) => v.count));

t.test('retention: recurring and first time, every period', async (t) => {
  const daily = await ok(`insights/retention/?date_to=2026-11-14&total_intervals=5`);
  t.same(counts(daily), [[2, 1, 2, 0, 1], [2, 2, 1, 1], [3, 1, 1], [2, 0], [1]]);
  t.match(daily.result[0], { label: 'Day 0', date: '2026-11-10T00:00:00+00:00', people_url: /persons\/retention\/.*breakdown_values/ });
  t.match(daily, { timezone: 'UTC', is_cached: Boolean, last_refresh: String });
  const first = await ok(`insights/retention/?date_to=2026-11-14&total_intervals=5&retention_type=retention_first_time`);
  t.same(counts(first), [[2, 1, 2, 0, 1], [1, 1, 1, 0], [0, 0, 0], [1, 0], [0]], 'each person in the cohort of its first time only');
  const visits = await ok(`insights/retention/?date_to=2026-11-12&total_intervals=3&target_entity=${enc('{"id":"visit","type":"events"}')}&returning_entity=${enc('{"id":"$identify","type":"events"}')}`);
  t.same(counts(visits), [[1, 0, 1], [1, 1], [0]], 'm, seen under four ids, is one person in each cohort');
  const hourly = await ok(`insights/retention/?date_to=2026-11-10T13:00:00&total_intervals=3&period=Hour`);
  t.same(hourly.result.map((r: any) => r.label), ['Hour 0', 'Hour 1', 'Hour 2']);
  t.equal(hourly.result[1].values[0].count, 2, 'a and b at 12:00 on the 10th');
  const weekly = await ok(`insights/retention/?date_to=2026-11-14&total_intervals=2&period=Week`);
  t.same(weekly.result.map((r: any) => r.date.slice(0, 10)), ['2026-11-01', '2026-11-08'], 'weeks from Sunday');
  t.same(counts(weekly), [[0, 0], [4]]);
  const monthly = await ok(`insights/retention/?date_to=2026-11-14&total_intervals=2&period=Month`);
  t.same(counts(monthly), [[0, 0], [4]]);
  const byBrowser = await ok(`insights/retention/?date_to=2026-11-14&total_intervals=5&breakdowns=${enc('[{"property":"$browser","type":"event"}]')}`);
  t.same(byBrowser.result.map((r: any) => [r.label, r.values.map((v: any) => v.count)]), [['', [4, 2, 3, 1, 1]]], 'a breakdown row per value');
});

t.test('the persons of a retention cohort with their appearances', async (t) => {
  const body = await ok(`persons/retention/?date_to=2026-11-14&total_intervals=5&breakdown_values=${enc('[0]')}`);
  t.same(body.result.map((r: any) => [r.person.distinct_ids[0], r.appearances]), [['a', [1, 1, 1, 0, 1]], ['b', [1, 0, 1, 0, 0]]]);
  t.match(body, { next: null, missing_persons: 0 });
  const paged = await ok(`persons/retention/?date_to=2026-11-14&total_intervals=5&breakdown_values=${enc('[0]')}&limit=1`);
  t.equal(paged.result.length, 1);
  t.match(paged.next, /offset=1/);
  const bad = await get(`persons/retention/?date_to=2026-11-14&total_intervals=5&breakdown_values=${enc('[9]')}`);
  t.same([bad.status, bad.body.attr], [400, 'breakdown_values']);
});

t.test('lifecycle: new, returning, resurrecting, dormant', async (t) => {
  const body = await ok(`insights/trend/?insight=LIFECYCLE&shown_as=Lifecycle&events=${PV}&date_from=2026-11-10&date_to=2026-11-14`);
  t.same(body.result.map((s: any) => [s.status, s.data]), [
    ['new', [2, 1, 0, 1, 0]], ['returning', [0, 1, 2, 1, 0]], ['resurrecting', [0, 0, 1, 0, 1]], ['dormant', [0, -1, 0, -2, -2]],
  ]);
  t.match(body.result[0], { label: '$pageview - new', days: ['2026-11-10', '2026-11-11', '2026-11-12', '2026-11-13', '2026-11-14'], labels: Array });
  const people = await ok(`persons/lifecycle/?events=${PV}&date_from=2026-11-10&date_to=2026-11-14&target_date=2026-11-13&lifecycle_type=dormant`);
  t.same(people.results[0].people.map((p: any) => p.distinct_ids[0]).sort(), ['a', 'b']);
  t.match(people.results[0].people[0], { id: Number, uuid: String, name: String, properties: Object, created_at: String });
  const missingDate = await get(`persons/lifecycle/?events=${PV}&lifecycle_type=new`);
  t.same([missingDate.status, missingDate.body], [400, { type: 'validation_error', code: 'required', detail: 'Must include specified date', attr: 'target_date', message: 'Missing parameter' }]);
  const missingType = await get(`persons/lifecycle/?events=${PV}&target_date=2026-11-13`);
  t.same([missingType.status, missingType.body.detail, missingType.body.message], [400, 'Must include lifecycle type', 'Missing parameter']);
  const weekly = await ok(`insights/trend/?insight=LIFECYCLE&events=${PV}&date_from=2026-11-08&date_to=2026-11-14&interval=week`);
  t.same(weekly.result.map((s: any) => s.data), [[4], [0], [0], [0]], 'everyone is new in their first week');
  const two = await get(`insights/trend/?insight=LIFECYCLE&events=${enc('[{"id":"$pageview"},{"id":"visit"}]')}`);
  t.same([two.status, two.body.attr], [400, 'events']);
});

t.test('stickiness and its persons', async (t) => {
  const body = await ok(`insights/trend/?insight=STICKINESS&events=${PV}&date_from=2026-11-10&date_to=2026-11-14`);
  t.same([body.result[0].data, body.result[0].labels, body.result[0].days], [[1, 1, 1, 1, 0], ['1 day', '2 days', '3 days', '4 days', '5 days'], [1, 2, 3, 4, 5]]);
  t.match(body.result[0].persons_urls[2], { filter: { stickiness_days: 3 }, url: /persons\/stickiness/ });
  const three = await ok(body.result[0].persons_urls[2].url.replace(/^\/api\/projects\/\d+\//, ''));
  t.same(three.results[0].people.map((p: any) => p.distinct_ids[0]), ['c']);
  const shown = await ok(`insights/trend/?shown_as=Stickiness&events=${PV}&date_from=2026-11-10&date_to=2026-11-14&compare=true`);
  t.same(shown.result.map((s: any) => s.compare_label), ['current', 'previous']);
  const weekly = await ok(`insights/trend/?insight=STICKINESS&events=${PV}&date_from=2026-11-08&date_to=2026-11-21&interval=week`);
  t.same([weekly.result[0].data, weekly.result[0].labels[1]], [[4, 0], '2 weeks']);
  const visits = await ok(`insights/trend/?insight=STICKINESS&events=${enc('[{"id":"visit"}]')}&date_from=2026-11-10&date_to=2026-11-12`);
  t.same(visits.result[0].data, [0, 1, 0], 'm visited on two days under four ids: one person, two days');
  const noDays = await get(`persons/stickiness/?events=${PV}&entity_id=%24pageview`);
  t.same([noDays.status, noDays.body.attr], [400, 'stickiness_days']);
});

t.test('bad retention parameters', async (t) => {
  for (const [query, attr] of [
    ['period=Fortnight', 'period'], ['retention_type=forever', 'retention_type'], ['total_intervals=0', 'total_intervals'],
    ['target_entity=%7B%22id%22%3A1%2C%22type%22%3A%22actions%22%7D', 'target_entity'], ['date_to=someday', 'date_to'],
    [`breakdowns=${enc('[{"property":"$browser"},{"property":"$os"}]')}`, 'breakdowns'],
  ]) {
    const res = await get(`insights/retention/?${query}`);
    t.equal(res.status, 400, query);
    t.match(res.body, { type: 'validation_error', attr }, query);
  }
});
